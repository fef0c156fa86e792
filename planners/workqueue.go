package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// WorkQueueHostSync says when the host may observe a device work queue.
// Only WorkQueueFinalOnly is accepted by the planners: the host reads the
// completion state once, after the device has drained the queue.
type WorkQueueHostSync uint8

const (
	// WorkQueueFinalOnly lets the host read the queue state once, at the end.
	// It is the zero value. JSON: "final_only".
	WorkQueueFinalOnly WorkQueueHostSync = iota
	// WorkQueueHostParticipates asks the host to take part in draining the
	// queue. It is always rejected. JSON: "host_participates".
	WorkQueueHostParticipates
)

// String returns the JSON spelling of s.
func (s WorkQueueHostSync) String() string {
	switch s {
	case WorkQueueFinalOnly:
		return "final_only"
	case WorkQueueHostParticipates:
		return "host_participates"
	}
	return fmt.Sprintf("WorkQueueHostSync(%d)", uint8(s))
}

// MarshalText encodes s as "final_only" or "host_participates".
func (s WorkQueueHostSync) MarshalText() ([]byte, error) {
	switch s {
	case WorkQueueFinalOnly, WorkQueueHostParticipates:
		return []byte(s.String()), nil
	}
	return nil, fmt.Errorf("host_sync value %d is not defined. Fix: use final_only or host_participates", uint8(s))
}

// UnmarshalText decodes "final_only" or "host_participates".
func (s *WorkQueueHostSync) UnmarshalText(text []byte) error {
	switch string(text) {
	case "final_only":
		*s = WorkQueueFinalOnly
	case "host_participates":
		*s = WorkQueueHostParticipates
	default:
		return fmt.Errorf("host_sync %q is not a host sync policy. Fix: use \"final_only\" or \"host_participates\"", string(text))
	}
	return nil
}

// DeviceWorkQueueProfile describes a device-resident work queue.
type DeviceWorkQueueProfile struct {
	// InitialItems is the number of items in the queue at launch.
	InitialItems uint64 `json:"initial_items"`
	// QueueCapacity is the number of entries the queue can hold.
	QueueCapacity uint64 `json:"queue_capacity"`
	// EntryBytes is the size of one queue entry.
	EntryBytes uint64 `json:"entry_bytes"`
	// ControlBytes holds the head/tail counters and flags.
	ControlBytes uint64 `json:"control_bytes"`
	// BudgetBytes is the device memory the queue may occupy.
	BudgetBytes uint64 `json:"budget_bytes"`
	// HostSync is the host synchronisation policy; only final_only plans.
	HostSync WorkQueueHostSync `json:"host_sync"`
}

// DeviceWorkQueuePlan is the memory plan of a device work queue.
type DeviceWorkQueuePlan struct {
	// QueueCapacity is the planned number of entries (the profile's
	// capacity, or the capacity chosen by PlanDeviceWorkQueueWithExpansion).
	QueueCapacity uint64 `json:"queue_capacity"`
	// QueueBytes = QueueCapacity × entry bytes.
	QueueBytes uint64 `json:"queue_bytes"`
	// ControlBytes is copied from the profile.
	ControlBytes uint64 `json:"control_bytes"`
	// ResidentBytes = QueueBytes + ControlBytes, never above the budget.
	ResidentBytes uint64 `json:"resident_bytes"`
	// InitialOccupancyBPS = floor(initial × 10000 / capacity), at most 10000.
	InitialOccupancyBPS uint32 `json:"initial_occupancy_bps"`
	// FinalOnlyHostSync is always true: the host syncs once, at the end.
	FinalOnlyHostSync bool `json:"final_only_host_sync"`
}

// DrainStrategy says how a queue is drained on the device.
type DrainStrategy uint8

const (
	// SingleResidentDrain drains the whole queue in one launch.
	SingleResidentDrain DrainStrategy = iota + 1
	// ChunkedResidentDrain drains the queue in several bounded launches.
	ChunkedResidentDrain
)

// String returns the JSON spelling of d.
func (d DrainStrategy) String() string {
	switch d {
	case SingleResidentDrain:
		return "single_resident_drain"
	case ChunkedResidentDrain:
		return "chunked_resident_drain"
	}
	return fmt.Sprintf("DrainStrategy(%d)", uint8(d))
}

// MarshalText encodes d as "single_resident_drain" or "chunked_resident_drain".
func (d DrainStrategy) MarshalText() ([]byte, error) {
	switch d {
	case SingleResidentDrain, ChunkedResidentDrain:
		return []byte(d.String()), nil
	}
	return nil, fmt.Errorf("drain strategy %d is not defined. Fix: use a plan returned by PlanDeviceWorkQueueBackpressure", uint8(d))
}

// UnmarshalText decodes "single_resident_drain" or "chunked_resident_drain".
func (d *DrainStrategy) UnmarshalText(text []byte) error {
	switch string(text) {
	case "single_resident_drain":
		*d = SingleResidentDrain
	case "chunked_resident_drain":
		*d = ChunkedResidentDrain
	default:
		return fmt.Errorf("strategy %q is not a drain strategy. Fix: use \"single_resident_drain\" or \"chunked_resident_drain\"", string(text))
	}
	return nil
}

// DeviceWorkQueueBackpressurePlan adds a drain strategy to a queue plan.
type DeviceWorkQueueBackpressurePlan struct {
	// Queue is the plan of the queue itself.
	Queue DeviceWorkQueuePlan `json:"queue"`
	// Strategy is single when one launch drains the whole capacity.
	Strategy DrainStrategy `json:"strategy"`
	// ItemsPerChunk = min(max items per drain launch, capacity).
	ItemsPerChunk uint64 `json:"items_per_chunk"`
	// Chunks = ceil(capacity / max items per drain launch), at least 1.
	Chunks uint64 `json:"chunks"`
	// FinalOnlyHostSync is always true.
	FinalOnlyHostSync bool `json:"final_only_host_sync"`
}

// DeviceWorkQueueExpansionProfile describes a queue that starts with
// InitialItems and may grow by up to ExpansionItems; the planner picks the
// capacity that fits the budget.
type DeviceWorkQueueExpansionProfile struct {
	// InitialItems is the number of items at launch; the capacity is never
	// below it.
	InitialItems uint64 `json:"initial_items"`
	// ExpansionItems is how many items the device may enqueue while running.
	ExpansionItems uint64 `json:"expansion_items"`
	// EntryBytes is the size of one queue entry.
	EntryBytes uint64 `json:"entry_bytes"`
	// ControlBytes holds the head/tail counters and flags.
	ControlBytes uint64 `json:"control_bytes"`
	// BudgetBytes is the device memory the queue may occupy.
	BudgetBytes uint64 `json:"budget_bytes"`
	// HostSync is the host synchronisation policy; only final_only plans.
	HostSync WorkQueueHostSync `json:"host_sync"`
}

// WorkQueueErrorKind names a work-queue planning failure (vyre's
// DeviceWorkQueueError variants).
type WorkQueueErrorKind uint8

const (
	// WorkQueueZeroCapacity: queue_capacity is 0.
	WorkQueueZeroCapacity WorkQueueErrorKind = iota + 1
	// WorkQueueZeroEntryBytes: entry_bytes is 0.
	WorkQueueZeroEntryBytes
	// WorkQueueInitialItemsExceedCapacity: initial_items > queue_capacity.
	WorkQueueInitialItemsExceedCapacity
	// WorkQueueHostParticipationRejected: host_sync is not final_only.
	WorkQueueHostParticipationRejected
	// WorkQueueOverBudget: resident bytes exceed budget_bytes.
	WorkQueueOverBudget
	// WorkQueueZeroDrainChunk: max_items_per_drain_launch is 0.
	WorkQueueZeroDrainChunk
)

var workQueueKindNames = [...]string{
	WorkQueueZeroCapacity:               "ZeroCapacity",
	WorkQueueZeroEntryBytes:             "ZeroEntryBytes",
	WorkQueueInitialItemsExceedCapacity: "InitialItemsExceedCapacity",
	WorkQueueHostParticipationRejected:  "HostParticipationRejected",
	WorkQueueOverBudget:                 "OverBudget",
	WorkQueueZeroDrainChunk:             "ZeroDrainChunk",
}

// String returns the vyre variant name.
func (k WorkQueueErrorKind) String() string {
	if int(k) < len(workQueueKindNames) && workQueueKindNames[k] != "" {
		return workQueueKindNames[k]
	}
	return fmt.Sprintf("WorkQueueErrorKind(%d)", uint8(k))
}

// WorkQueueError is a work-queue planning failure. Arithmetic overflow is
// reported separately as *checked.OverflowError with the spec's label.
type WorkQueueError struct {
	Kind WorkQueueErrorKind
	// InitialItems and QueueCapacity are set for InitialItemsExceedCapacity.
	InitialItems  uint64
	QueueCapacity uint64
	// RequiredBytes and BudgetBytes are set for OverBudget.
	RequiredBytes uint64
	BudgetBytes   uint64
}

// Field returns the input field the error is about.
func (e *WorkQueueError) Field() string {
	switch e.Kind {
	case WorkQueueZeroCapacity:
		return "queue_capacity"
	case WorkQueueZeroEntryBytes:
		return "entry_bytes"
	case WorkQueueInitialItemsExceedCapacity:
		return "initial_items"
	case WorkQueueHostParticipationRejected:
		return "host_sync"
	case WorkQueueOverBudget:
		return "budget_bytes"
	case WorkQueueZeroDrainChunk:
		return "max_items_per_drain_launch"
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *WorkQueueError) Error() string {
	switch e.Kind {
	case WorkQueueZeroCapacity:
		return "queue_capacity is 0: a device work queue needs at least one entry. Fix: set queue_capacity to 1 or more"
	case WorkQueueZeroEntryBytes:
		return "entry_bytes is 0: queue entries must occupy memory. Fix: set entry_bytes to the size of one queue entry"
	case WorkQueueInitialItemsExceedCapacity:
		return fmt.Sprintf("initial_items %d exceeds queue_capacity %d. Fix: raise queue_capacity to at least %d or seed fewer items",
			e.InitialItems, e.QueueCapacity, e.InitialItems)
	case WorkQueueHostParticipationRejected:
		return "host_sync is host_participates: the host must not take part in draining a device work queue. Fix: set host_sync to final_only and read the completion state once after the drain"
	case WorkQueueOverBudget:
		return fmt.Sprintf("the queue needs %d resident bytes but budget_bytes is %d. Fix: raise budget_bytes to at least %d or shrink queue_capacity, entry_bytes or control_bytes",
			e.RequiredBytes, e.BudgetBytes, e.RequiredBytes)
	case WorkQueueZeroDrainChunk:
		return "max_items_per_drain_launch is 0: a drain launch must take at least one item. Fix: set max_items_per_drain_launch to 1 or more"
	}
	return fmt.Sprintf("work queue error %d. Fix: check the profile", uint8(e.Kind))
}

// PlanDeviceWorkQueue plans the memory of a device work queue.
//
// Validation order: queue_capacity 0, entry_bytes 0, initial items above
// capacity, host participation, then the byte arithmetic (overflow labels
// "queue bytes" and "resident bytes") and the budget.
func PlanDeviceWorkQueue(p DeviceWorkQueueProfile) (DeviceWorkQueuePlan, error) {
	switch {
	case p.QueueCapacity == 0:
		return DeviceWorkQueuePlan{}, &WorkQueueError{Kind: WorkQueueZeroCapacity}
	case p.EntryBytes == 0:
		return DeviceWorkQueuePlan{}, &WorkQueueError{Kind: WorkQueueZeroEntryBytes}
	case p.InitialItems > p.QueueCapacity:
		return DeviceWorkQueuePlan{}, &WorkQueueError{Kind: WorkQueueInitialItemsExceedCapacity,
			InitialItems: p.InitialItems, QueueCapacity: p.QueueCapacity}
	case p.HostSync != WorkQueueFinalOnly:
		return DeviceWorkQueuePlan{}, &WorkQueueError{Kind: WorkQueueHostParticipationRejected}
	}
	queue, err := checked.Mul(p.QueueCapacity, p.EntryBytes, "queue bytes")
	if err != nil {
		return DeviceWorkQueuePlan{}, checked.Inputs(err, "queue_capacity x entry_bytes")
	}
	resident, err := checked.Add(queue, p.ControlBytes, "resident bytes")
	if err != nil {
		return DeviceWorkQueuePlan{}, checked.Inputs(err, "queue_capacity x entry_bytes + control_bytes")
	}
	if resident > p.BudgetBytes {
		return DeviceWorkQueuePlan{}, &WorkQueueError{Kind: WorkQueueOverBudget,
			RequiredBytes: resident, BudgetBytes: p.BudgetBytes}
	}
	return DeviceWorkQueuePlan{
		QueueCapacity: p.QueueCapacity,
		QueueBytes:    queue,
		ControlBytes:  p.ControlBytes,
		ResidentBytes: resident,
		// initial <= capacity, so the 128-bit ratio is at most 10000.
		InitialOccupancyBPS: checked.RatioBPS(p.InitialItems, p.QueueCapacity, 0),
		FinalOnlyHostSync:   true,
	}, nil
}

// PlanDeviceWorkQueueBackpressure plans a queue and the launches that drain
// it, at most maxItemsPerDrainLaunch items per launch. A zero drain size is
// rejected before the profile is looked at.
func PlanDeviceWorkQueueBackpressure(p DeviceWorkQueueProfile, maxItemsPerDrainLaunch uint64) (DeviceWorkQueueBackpressurePlan, error) {
	if maxItemsPerDrainLaunch == 0 {
		return DeviceWorkQueueBackpressurePlan{}, &WorkQueueError{Kind: WorkQueueZeroDrainChunk}
	}
	queue, err := PlanDeviceWorkQueue(p)
	if err != nil {
		return DeviceWorkQueueBackpressurePlan{}, err
	}
	// maxItemsPerDrainLaunch > 0 and (v-1)/d+1 cannot exceed v, so the
	// ceiling division can neither fail nor overflow ("drain chunks").
	chunks, _ := checked.CeilDiv(p.QueueCapacity, maxItemsPerDrainLaunch)
	strategy := ChunkedResidentDrain
	if chunks == 1 {
		strategy = SingleResidentDrain
	}
	return DeviceWorkQueueBackpressurePlan{
		Queue:             queue,
		Strategy:          strategy,
		ItemsPerChunk:     min(maxItemsPerDrainLaunch, p.QueueCapacity),
		Chunks:            chunks,
		FinalOnlyHostSync: true,
	}, nil
}

// PlanDeviceWorkQueueWithExpansion sizes a queue for InitialItems plus up to
// ExpansionItems enqueued on the device, capped by what the budget can hold
// but never below InitialItems, and plans it with PlanDeviceWorkQueue.
//
// desired = initial + expansion (overflow label "expansion queue items").
// With entry_bytes 0 the capacity is the desired count, so the profile check
// reports ZeroCapacity (desired 0) or ZeroEntryBytes. Otherwise the budget
// capacity is (budget − control, floored at 0) / entry and the capacity is
// max(min(desired, budget capacity), initial); a capacity forced up to
// initial that does not fit is reported as OverBudget.
func PlanDeviceWorkQueueWithExpansion(p DeviceWorkQueueExpansionProfile) (DeviceWorkQueuePlan, error) {
	desired, err := checked.Add(p.InitialItems, p.ExpansionItems, "expansion queue items")
	if err != nil {
		return DeviceWorkQueuePlan{}, checked.Inputs(err, "initial_items + expansion_items")
	}
	capacity := desired
	if p.EntryBytes != 0 {
		var room uint64 // budget left after the control block, floored at 0
		if p.BudgetBytes > p.ControlBytes {
			room = p.BudgetBytes - p.ControlBytes
		}
		capacity = max(min(desired, room/p.EntryBytes), p.InitialItems)
	}
	return PlanDeviceWorkQueue(DeviceWorkQueueProfile{
		InitialItems:  p.InitialItems,
		QueueCapacity: capacity,
		EntryBytes:    p.EntryBytes,
		ControlBytes:  p.ControlBytes,
		BudgetBytes:   p.BudgetBytes,
		HostSync:      p.HostSync,
	})
}
