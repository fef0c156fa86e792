package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/planners"
)

// compactInput is the JSON input of `gpuplan compact`.
type compactInput struct {
	MaxCompactRecordBytes uint64                `json:"max_compact_record_bytes"`
	Slots                 []planners.ResultSlot `json:"slots"`
}

const compactAbout = `Plan a compact readback of kernel result slots (vyre result_compaction).
Non-empty slots whose meaningful bytes are at most max_compact_record_bytes are
packed, in slot id order, into one compact buffer; larger ones are read
directly; empty slots are skipped. The plan reports the bytes read back
against a readback of every slot's full capacity.

Input (JSON object, every field required):
  max_compact_record_bytes  largest output packed into the compact buffer
                            (0 reads every non-empty slot directly)
  slots                     list of {slot, meaningful_bytes, capacity_bytes}

Example:
  {"max_compact_record_bytes": 32, "slots": [
    {"slot": 1, "meaningful_bytes": 12, "capacity_bytes": 128}]}`

func runCompact(e *env, args []string) error {
	var in compactInput
	f, _, err := e.jsonInput("compact", compactAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.PlanResultCompaction(in.Slots, in.MaxCompactRecordBytes)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "full capacity bytes\t%d\n", plan.FullCapacityBytes)
		fmt.Fprintf(tw, "compact bytes\t%d in %d records\n", plan.CompactBytes, len(plan.CompactRecords))
		fmt.Fprintf(tw, "direct bytes\t%d in %d slots\n", plan.DirectBytes, len(plan.DirectSlots))
		fmt.Fprintf(tw, "selected readback bytes\t%d\n", plan.SelectedReadbackBytes)
		fmt.Fprintf(tw, "avoided readback bytes\t%d (%d bps, %s)\n", plan.AvoidedReadbackBytes,
			plan.AvoidedReadbackBasisPoints, bps(uint64(plan.AvoidedReadbackBasisPoints)))
		fmt.Fprintf(tw, "direct slots\t%s\n", joinUints(plan.DirectSlots))
		fmt.Fprintf(tw, "\nslot\tcompact offset\tbytes\n")
		for _, r := range plan.CompactRecords {
			fmt.Fprintf(tw, "%d\t%d\t%d\n", r.Slot, r.CompactOffset, r.Bytes)
		}
	})
}
