package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/planners"
)

// diagnosticsInput is the JSON input of `gpuplan diagnostics`.
type diagnosticsInput struct {
	MaxRecordsPerShard uint64                     `json:"max_records_per_shard"`
	BudgetBytes        uint64                     `json:"budget_bytes"`
	Shards             []planners.DiagnosticShard `json:"shards"`
}

const diagnosticsAbout = `Plan aggregating diagnostics on the device (vyre
device_diagnostic_aggregation): each shard that emitted diagnostics writes at
most max_records_per_shard compact records, packed in shard id order, and the
host reads every shard's counters plus the compact records once, instead of
every candidate item.

Input (JSON object, every field required):
  max_records_per_shard  compact records kept per shard (1 or more)
  budget_bytes           bytes the host readback may use
  shards                 list of {shard, candidate_items, emitted_diagnostics,
                         raw_item_bytes, diagnostic_record_bytes,
                         counter_bytes, severity_mask}

Example:
  {"max_records_per_shard": 64, "budget_bytes": 1024, "shards": [
    {"shard": 1, "candidate_items": 1000, "emitted_diagnostics": 2,
     "raw_item_bytes": 32, "diagnostic_record_bytes": 24,
     "counter_bytes": 16, "severity_mask": 3}]}`

func runDiagnostics(e *env, args []string) error {
	var in diagnosticsInput
	f, _, err := e.jsonInput("diagnostics", diagnosticsAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.PlanDiagnosticAggregation(in.Shards, in.MaxRecordsPerShard, in.BudgetBytes)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "shards\t%d (%d emitted diagnostics)\n", len(in.Shards), len(plan.CompactRanges))
		fmt.Fprintf(tw, "counter readback bytes\t%d\n", plan.CounterReadbackBytes)
		fmt.Fprintf(tw, "compact readback bytes\t%d\n", plan.CompactReadbackBytes)
		fmt.Fprintf(tw, "host readback bytes\t%d of %d budget\n", plan.HostReadbackBytes, in.BudgetBytes)
		fmt.Fprintf(tw, "raw candidate bytes\t%d\n", plan.RawCandidateReadbackBytes)
		fmt.Fprintf(tw, "avoided readback bytes\t%d\n", plan.AvoidedReadbackBytes)
		fmt.Fprintf(tw, "compression ratio\t%d bps (%s)\n", plan.CompressionRatioBPS, bps(uint64(plan.CompressionRatioBPS)))
		fmt.Fprintf(tw, "overflow records\t%d (overflow flag %s)\n", plan.OverflowRecords, yesNo(plan.RequiresOverflowFlag))
		fmt.Fprintf(tw, "device prefix scan\t%s\n", yesNo(plan.RequiresDevicePrefixScan))
		fmt.Fprintf(tw, "\nshard\tcompact offset\trecords\tbytes\n")
		for _, r := range plan.CompactRanges {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\n", r.Shard, r.CompactOffset, r.Records, r.Bytes)
		}
	})
}

func yesNo(b bool) string {
	if b {
		return "needed"
	}
	return "not needed"
}
