// Package evidence provides the evidence CSV formats, their validation, and
// the release gates that judge measured speedups.
package evidence
