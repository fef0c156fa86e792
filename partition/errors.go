package partition

import "fmt"

// ErrorKind names a partition planning failure.
type ErrorKind uint8

// The partition planning failures, in the order they are checked.
const (
	// NoDevices: devices is empty.
	NoDevices ErrorKind = iota + 1
	// TooManyDevices: more than MaxDevices devices.
	TooManyDevices
	// BadStrategy: strategy is not blocked or edges.
	BadStrategy
	// BadOffsets: offsets is empty, does not start at 0, or
	// decreases at Index.
	BadOffsets
	// ZeroBudget: devices[Device].budget_bytes is 0.
	ZeroBudget
	// Overflow: a size of the part of Device does not fit 64
	// bits (Cause says which).
	Overflow
	// OverBudget: the part of Device needs more than its budget.
	OverBudget
)

// Error is a partition planning failure. Device is the rank of
// the device it concerns (for the per-device kinds), Part its part as far
// as it was planned.
type Error struct {
	Kind   ErrorKind
	Device int
	Name   string
	// Index and Value locate a bad offset (Index -1: there are none);
	// Value also holds a bad device count or strategy.
	Index int
	Value uint64
	Part  Part
	Cause error
}

// Field returns the input field the error is about.
func (e *Error) Field() string {
	switch e.Kind {
	case NoDevices, TooManyDevices:
		return "devices"
	case BadStrategy:
		return "strategy"
	case BadOffsets:
		if e.Index < 0 {
			return "offsets"
		}
		return fmt.Sprintf("offsets[%d]", e.Index)
	case ZeroBudget, OverBudget:
		return fmt.Sprintf("devices[%d].budget_bytes", e.Device)
	case Overflow:
		return fmt.Sprintf("devices[%d]", e.Device)
	}
	return ""
}

// Unwrap returns the overflow behind a Overflow.
func (e *Error) Unwrap() error { return e.Cause }

// Error describes the failure with its numbers, names the input field and
// ends with a "Fix:" sentence.
func (e *Error) Error() string {
	f := e.Field()
	switch e.Kind {
	case NoDevices:
		return fmt.Sprintf("partition: %s is empty. Fix: name at least one device", f)
	case TooManyDevices:
		return fmt.Sprintf("partition: %s has %d devices, above %d. Fix: spread the graph over at most %d devices", f, e.Value, MaxDevices, MaxDevices)
	case BadStrategy:
		return fmt.Sprintf("partition: %s is %d, not blocked (1) or edges (2). Fix: use blocked or edges", f, e.Value)
	case BadOffsets:
		if e.Index < 0 {
			return fmt.Sprintf("partition: %s is empty. Fix: pass the graph's row offsets, one more than there are vertices", f)
		}
		return fmt.Sprintf("partition: %s is %d, which breaks the CSR offsets (they start at 0 and never decrease). Fix: pass the graph's row offsets", f, e.Value)
	case ZeroBudget:
		return fmt.Sprintf("partition: device %d (%s): %s is 0. Fix: give every device the memory its part may use", e.Device, e.Name, f)
	case Overflow:
		return fmt.Sprintf("partition: device %d (%s, %s): the part of vertices [%d, %d) cannot be sized: %v", e.Device, e.Name, f, e.Part.First, e.Part.End, e.Cause)
	case OverBudget:
		return e.overBudget(f)
	}
	return fmt.Sprintf("partition error %d. Fix: check the request", uint8(e.Kind))
}

// overBudget spells out the part that does not fit.
func (e *Error) overBudget(f string) string {
	p, m := e.Part, e.Part.Memory
	return fmt.Sprintf("partition: device %d (%s): its part, vertices [%d, %d) (%d vertices, %d edge entries), needs %d bytes "+
		"(targets %d + offsets %d + levels %d + frontier %d + next %d + exchange %d + outbox %d + counts %d + bounds %d + scratch %d), above %s %d by %d. "+
		"Fix: spread the graph over more devices, use devices with more memory, or balance by edges",
		e.Device, e.Name, p.First, p.End, p.Vertices, p.EdgeEntries, p.ResidentBytes,
		m.Targets, m.Offsets, m.Levels, m.Frontier, m.Next, m.Exchange, m.Outbox, m.Counts, m.Bounds, m.Scratch,
		f, p.BudgetBytes, p.ResidentBytes-p.BudgetBytes)
}

// checkPartitionRequest returns the first failure in the order of the
// kinds (the budgets themselves are checked once the parts are sized).
func checkPartitionRequest(req Request) error {
	switch {
	case len(req.Devices) == 0:
		return &Error{Kind: NoDevices}
	case len(req.Devices) > MaxDevices:
		return &Error{Kind: TooManyDevices, Value: uint64(len(req.Devices))}
	case req.Strategy != Blocked && req.Strategy != EdgeBalanced:
		return &Error{Kind: BadStrategy, Value: uint64(req.Strategy)}
	case len(req.Offsets) == 0:
		return &Error{Kind: BadOffsets, Index: -1}
	case req.Offsets[0] != 0:
		return &Error{Kind: BadOffsets, Index: 0, Value: req.Offsets[0]}
	}
	for i := 1; i < len(req.Offsets); i++ {
		if req.Offsets[i] < req.Offsets[i-1] {
			return &Error{Kind: BadOffsets, Index: i, Value: req.Offsets[i]}
		}
	}
	for d, dev := range req.Devices {
		if dev.BudgetBytes == 0 {
			return &Error{Kind: ZeroBudget, Device: d, Name: dev.Name}
		}
	}
	return nil
}
