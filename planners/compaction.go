package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// ResultSlot is one kernel output slot (vyre's ResultSlot).
type ResultSlot struct {
	// Slot is the slot id; ids are unique within one call.
	Slot uint32 `json:"slot"`
	// MeaningfulBytes is how much of the slot the kernel actually wrote.
	MeaningfulBytes uint64 `json:"meaningful_bytes"`
	// CapacityBytes is the slot's allocated size, at least MeaningfulBytes.
	CapacityBytes uint64 `json:"capacity_bytes"`
}

// CompactRecord places a small slot's meaningful bytes in the compact
// readback buffer.
type CompactRecord struct {
	// Slot is the slot id.
	Slot uint32 `json:"slot"`
	// CompactOffset is the record's byte offset in the compact buffer.
	CompactOffset uint64 `json:"compact_offset"`
	// Bytes is the slot's meaningful byte count.
	Bytes uint64 `json:"bytes"`
}

// ResultCompactionPlan says which slots are packed into one compact
// readback and which are read directly.
type ResultCompactionPlan struct {
	// CompactRecords are the packed slots, by slot id, at increasing offsets.
	CompactRecords []CompactRecord `json:"compact_records"`
	// DirectSlots are the non-empty slots above the threshold, by slot id.
	DirectSlots []uint32 `json:"direct_slots"`
	// FullCapacityBytes sums every slot's capacity, empty slots included:
	// what a naive readback of all slots would move.
	FullCapacityBytes uint64 `json:"full_capacity_bytes"`
	// CompactBytes sums the compact records' bytes.
	CompactBytes uint64 `json:"compact_bytes"`
	// DirectBytes sums the meaningful bytes of the direct slots.
	DirectBytes uint64 `json:"direct_bytes"`
	// SelectedReadbackBytes = CompactBytes + DirectBytes.
	SelectedReadbackBytes uint64 `json:"selected_readback_bytes"`
	// AvoidedReadbackBytes = FullCapacityBytes − SelectedReadbackBytes.
	AvoidedReadbackBytes uint64 `json:"avoided_readback_bytes"`
	// AvoidedReadbackBasisPoints = floor(avoided × 10000 / full), 0 when
	// full is 0.
	AvoidedReadbackBasisPoints uint32 `json:"avoided_readback_basis_points"`
}

// CompactionErrorKind names a result-compaction failure (vyre's
// ResultCompactionError).
type CompactionErrorKind uint8

const (
	// CompactionDuplicateSlot: a slot id repeats.
	CompactionDuplicateSlot CompactionErrorKind = iota + 1
	// CompactionMeaningfulExceedsCapacity: meaningful_bytes > capacity_bytes.
	CompactionMeaningfulExceedsCapacity
)

// String returns the vyre variant name.
func (k CompactionErrorKind) String() string {
	switch k {
	case CompactionDuplicateSlot:
		return "DuplicateSlot"
	case CompactionMeaningfulExceedsCapacity:
		return "MeaningfulExceedsCapacity"
	}
	return fmt.Sprintf("CompactionErrorKind(%d)", uint8(k))
}

// CompactionError is a result-compaction failure. Arithmetic overflow is
// reported as *checked.OverflowError with the spec's label.
type CompactionError struct {
	Kind CompactionErrorKind
	// Index is the slot's position in the input.
	Index int
	// Slot is the slot id.
	Slot uint32
	// MeaningfulBytes and CapacityBytes are set for MeaningfulExceedsCapacity.
	MeaningfulBytes uint64
	CapacityBytes   uint64
}

// Field returns the input field the error is about.
func (e *CompactionError) Field() string {
	switch e.Kind {
	case CompactionDuplicateSlot:
		return fmt.Sprintf("slots[%d].slot", e.Index)
	case CompactionMeaningfulExceedsCapacity:
		return fmt.Sprintf("slots[%d].meaningful_bytes", e.Index)
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *CompactionError) Error() string {
	switch e.Kind {
	case CompactionDuplicateSlot:
		return fmt.Sprintf("%s: slot id %d appears twice. Fix: give every result slot a unique id", e.Field(), e.Slot)
	case CompactionMeaningfulExceedsCapacity:
		return fmt.Sprintf("%s: slot %d has %d meaningful bytes but capacity_bytes is %d. Fix: lower meaningful_bytes to at most %d or raise capacity_bytes",
			e.Field(), e.Slot, e.MeaningfulBytes, e.CapacityBytes, e.CapacityBytes)
	}
	return fmt.Sprintf("result compaction error %d. Fix: check the slots", uint8(e.Kind))
}

// PlanResultCompaction packs every non-empty slot whose meaningful bytes are
// at most maxCompactRecordBytes into one compact readback, in slot id order,
// and reads larger slots directly. A threshold of 0 makes every non-empty
// slot direct; empty slots are read neither way.
//
// Every slot is validated first, in input order (CompactionDuplicateSlot,
// then CompactionMeaningfulExceedsCapacity for each slot); only then are the
// capacities summed (overflow label "full capacity bytes"). The other sums are
// still checked ("compact bytes", "direct bytes", "selected readback bytes")
// but cannot overflow once the capacities fit: every meaningful byte count
// is at most its capacity. For the same reason "avoided readback bytes"
// cannot underflow, and the spec's "compact record count" and "direct slot
// count" are bounded by the slice length.
func PlanResultCompaction(slots []ResultSlot, maxCompactRecordBytes uint64) (ResultCompactionPlan, error) {
	// Positions in slot id order; the earliest repeated id in input order.
	order, firstDup := positionsByID(len(slots), func(i int) uint32 { return slots[i].Slot })
	for i, s := range slots {
		if i == firstDup {
			return ResultCompactionPlan{}, &CompactionError{Kind: CompactionDuplicateSlot, Index: i, Slot: s.Slot}
		}
		if s.MeaningfulBytes > s.CapacityBytes {
			return ResultCompactionPlan{}, &CompactionError{Kind: CompactionMeaningfulExceedsCapacity, Index: i, Slot: s.Slot,
				MeaningfulBytes: s.MeaningfulBytes, CapacityBytes: s.CapacityBytes}
		}
	}
	// Every slot is valid; only now are the capacities summed, so an
	// overflow never hides a later slot's validation error (the spec's order).
	var full uint64
	for i, s := range slots {
		var err error
		if full, err = checked.Add(full, s.CapacityBytes, "full capacity bytes"); err != nil {
			return ResultCompactionPlan{}, checked.Inputs(err, fmt.Sprintf("capacity_bytes of slots[0..%d]", i))
		}
	}
	plan := ResultCompactionPlan{CompactRecords: []CompactRecord{}, DirectSlots: []uint32{}, FullCapacityBytes: full}
	for _, i := range order {
		s := slots[i]
		if s.MeaningfulBytes == 0 {
			continue
		}
		var err error
		if s.MeaningfulBytes <= maxCompactRecordBytes {
			plan.CompactRecords = append(plan.CompactRecords, CompactRecord{Slot: s.Slot, CompactOffset: plan.CompactBytes, Bytes: s.MeaningfulBytes})
			if plan.CompactBytes, err = checked.Add(plan.CompactBytes, s.MeaningfulBytes, "compact bytes"); err != nil {
				return ResultCompactionPlan{}, checked.Inputs(err, fmt.Sprintf("meaningful_bytes of the compacted slots up to slots[%d]", i))
			}
		} else {
			plan.DirectSlots = append(plan.DirectSlots, s.Slot)
			if plan.DirectBytes, err = checked.Add(plan.DirectBytes, s.MeaningfulBytes, "direct bytes"); err != nil {
				return ResultCompactionPlan{}, checked.Inputs(err, fmt.Sprintf("meaningful_bytes of the directly read slots up to slots[%d]", i))
			}
		}
	}
	selected, err := checked.Add(plan.CompactBytes, plan.DirectBytes, "selected readback bytes")
	if err != nil {
		return ResultCompactionPlan{}, checked.Inputs(err, "meaningful_bytes of every slot")
	}
	plan.SelectedReadbackBytes = selected
	plan.AvoidedReadbackBytes = full - selected // meaningful ≤ capacity per slot
	plan.AvoidedReadbackBasisPoints = checked.RatioBPS(plan.AvoidedReadbackBytes, full, 0)
	return plan, nil
}
