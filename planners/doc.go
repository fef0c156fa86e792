// Package planners provides pure planners for dependent GPU work: launch
// fusion, device work queues, result compaction, multi-query batching,
// diagnostic aggregation, benchmark pass selection and resident graph
// sessions. Every planner is a pure function from inputs to a plan value.
package planners
