// Package wavedag runs a wave DAG of the user's own kernels by its plans,
// in four execution arms side by side.
package wavedag
