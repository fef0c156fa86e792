package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/planners"
)

// queueInput is the JSON input of `gpuplan queue`. Exactly one of
// queue_capacity (a fixed queue) and expansion_items (capacity chosen from
// the budget) is given; max_items_per_drain_launch adds a drain strategy to
// a fixed queue.
type queueInput struct {
	InitialItems           uint64                     `json:"initial_items"`
	QueueCapacity          *uint64                    `json:"queue_capacity,omitempty"`
	ExpansionItems         *uint64                    `json:"expansion_items,omitempty"`
	EntryBytes             uint64                     `json:"entry_bytes"`
	ControlBytes           uint64                     `json:"control_bytes"`
	BudgetBytes            uint64                     `json:"budget_bytes"`
	HostSync               planners.WorkQueueHostSync `json:"host_sync"`
	MaxItemsPerDrainLaunch *uint64                    `json:"max_items_per_drain_launch,omitempty"`
}

const queueAbout = `Plan a device-resident work queue (vyre device_work_queue): its queue,
control and resident bytes against a budget, its initial occupancy, and with
max_items_per_drain_launch the drain strategy (one resident drain or chunks).
Only host_sync "final_only" plans: the host reads the completion state once.

Input (JSON object, every field required unless marked optional):
  initial_items               items in the queue at launch
  queue_capacity              entries (or give expansion_items instead)
  expansion_items             items the device may add; the capacity becomes
                              max(min(initial+expansion, budget fit), initial)
  entry_bytes, control_bytes  bytes per entry; bytes of counters and flags
  budget_bytes                device bytes the queue may occupy
  host_sync                   "final_only" or "host_participates" (rejected)
  max_items_per_drain_launch  optional, with queue_capacity only

Example:
  {"initial_items": 256, "queue_capacity": 65536, "entry_bytes": 16,
   "control_bytes": 128, "budget_bytes": 2097152, "host_sync": "final_only",
   "max_items_per_drain_launch": 8192}`

func runQueue(e *env, args []string) error {
	var in queueInput
	f, source, err := e.jsonInput("queue", queueAbout, args, &in)
	if err != nil {
		return err
	}
	switch {
	case in.QueueCapacity == nil && in.ExpansionItems == nil:
		return strictjson.Required(source, "queue_capacity", `give "queue_capacity" for a fixed queue or "expansion_items" to size it from the budget`)
	case in.QueueCapacity != nil && in.ExpansionItems != nil:
		return &strictjson.Error{Source: source, Field: "expansion_items", Msg: "queue_capacity and expansion_items are both given",
			Fix: "keep queue_capacity for a fixed queue or expansion_items to size it from the budget, not both"}
	case in.ExpansionItems != nil && in.MaxItemsPerDrainLaunch != nil:
		return &strictjson.Error{Source: source, Field: "max_items_per_drain_launch", Msg: "a drain strategy is planned for a fixed queue only",
			Fix: "remove max_items_per_drain_launch or give queue_capacity instead of expansion_items"}
	}
	if in.ExpansionItems != nil {
		plan, err := planners.PlanDeviceWorkQueueWithExpansion(planners.DeviceWorkQueueExpansionProfile{
			InitialItems: in.InitialItems, ExpansionItems: *in.ExpansionItems, EntryBytes: in.EntryBytes,
			ControlBytes: in.ControlBytes, BudgetBytes: in.BudgetBytes, HostSync: in.HostSync,
		})
		if err != nil {
			return err
		}
		return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
			writeQueueText(tw, plan, in.EntryBytes, in.BudgetBytes)
		})
	}
	profile := planners.DeviceWorkQueueProfile{
		InitialItems: in.InitialItems, QueueCapacity: *in.QueueCapacity, EntryBytes: in.EntryBytes,
		ControlBytes: in.ControlBytes, BudgetBytes: in.BudgetBytes, HostSync: in.HostSync,
	}
	if in.MaxItemsPerDrainLaunch == nil {
		plan, err := planners.PlanDeviceWorkQueue(profile)
		if err != nil {
			return err
		}
		return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
			writeQueueText(tw, plan, in.EntryBytes, in.BudgetBytes)
		})
	}
	plan, err := planners.PlanDeviceWorkQueueBackpressure(profile, *in.MaxItemsPerDrainLaunch)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		writeQueueText(tw, plan.Queue, in.EntryBytes, in.BudgetBytes)
		fmt.Fprintf(tw, "drain strategy\t%s\n", plan.Strategy)
		fmt.Fprintf(tw, "drain launches\t%d of up to %d items\n", plan.Chunks, plan.ItemsPerChunk)
	})
}

func writeQueueText(tw *tabwriter.Writer, plan planners.DeviceWorkQueuePlan, entry, budget uint64) {
	fmt.Fprintf(tw, "queue capacity\t%d entries of %d B\n", plan.QueueCapacity, entry)
	fmt.Fprintf(tw, "queue bytes\t%d\n", plan.QueueBytes)
	fmt.Fprintf(tw, "control bytes\t%d\n", plan.ControlBytes)
	fmt.Fprintf(tw, "resident bytes\t%d of %d budget\n", plan.ResidentBytes, budget)
	fmt.Fprintf(tw, "initial occupancy\t%d bps (%s)\n", plan.InitialOccupancyBPS, bps(uint64(plan.InitialOccupancyBPS)))
	fmt.Fprintf(tw, "host sync\tfinal only\n")
}
