package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// DiagnosticShard is one shard of candidate items checked on the device
// (vyre's DiagnosticShard).
type DiagnosticShard struct {
	// Shard is the shard id; ids are unique within one call.
	Shard uint32 `json:"shard"`
	// CandidateItems is the number of candidate token/fact items.
	CandidateItems uint64 `json:"candidate_items"`
	// EmittedDiagnostics is the number of diagnostics the shard emitted, at
	// most CandidateItems.
	EmittedDiagnostics uint64 `json:"emitted_diagnostics"`
	// RawItemBytes is the width of one candidate record; must not be 0.
	RawItemBytes uint64 `json:"raw_item_bytes"`
	// DiagnosticRecordBytes is the width of one compact diagnostic record;
	// must not be 0 when the shard emits anything.
	DiagnosticRecordBytes uint64 `json:"diagnostic_record_bytes"`
	// CounterBytes is the shard's counter block, read back even when empty.
	CounterBytes uint64 `json:"counter_bytes"`
	// SeverityMask holds the severity class bits; must not be 0 when the
	// shard emits anything.
	SeverityMask uint32 `json:"severity_mask"`
}

// DiagnosticCompactRange is one shard's records in the compact readback.
type DiagnosticCompactRange struct {
	// Shard is the shard id.
	Shard uint32 `json:"shard"`
	// CompactOffset is the range's byte offset in the compact buffer.
	CompactOffset uint64 `json:"compact_offset"`
	// Records = min(emitted, max records per shard).
	Records uint64 `json:"records"`
	// Bytes = Records × diagnostic record bytes.
	Bytes uint64 `json:"bytes"`
}

// DiagnosticAggregationPlan is the device-side aggregation of diagnostics
// and the one host readback that follows it.
type DiagnosticAggregationPlan struct {
	// CompactRanges are the non-empty shards by shard id, at increasing
	// offsets.
	CompactRanges []DiagnosticCompactRange `json:"compact_ranges"`
	// CounterReadbackBytes sums every shard's counter bytes.
	CounterReadbackBytes uint64 `json:"counter_readback_bytes"`
	// CompactReadbackBytes sums the ranges' bytes.
	CompactReadbackBytes uint64 `json:"compact_readback_bytes"`
	// HostReadbackBytes = counter + compact; at most the budget.
	HostReadbackBytes uint64 `json:"host_readback_bytes"`
	// RawCandidateReadbackBytes = Σ candidates × raw item bytes: what a
	// readback of every candidate would move.
	RawCandidateReadbackBytes uint64 `json:"raw_candidate_readback_bytes"`
	// AvoidedReadbackBytes = raw − host, or 0 when host is larger.
	AvoidedReadbackBytes uint64 `json:"avoided_readback_bytes"`
	// CompressionRatioBPS = floor(host × 10000 / raw), 0 when raw is 0,
	// pinned at math.MaxUint32.
	CompressionRatioBPS uint32 `json:"compression_ratio_bps"`
	// OverflowRecords counts diagnostics dropped by the per-shard cap.
	OverflowRecords uint64 `json:"overflow_records"`
	// RequiresOverflowFlag is OverflowRecords > 0.
	RequiresOverflowFlag bool `json:"requires_overflow_flag"`
	// RequiresDevicePrefixScan is true with more than one non-empty shard.
	RequiresDevicePrefixScan bool `json:"requires_device_prefix_scan"`
	// FinalOnlyHostReadback is always true.
	FinalOnlyHostReadback bool `json:"final_only_host_readback"`
}

// DiagnosticsErrorKind names a diagnostic-aggregation failure (vyre's
// DeviceDiagnosticAggregationError). vyre's ZeroCandidates is not a kind:
// emitted > 0 with zero candidates is always EmittedExceedsCandidates.
type DiagnosticsErrorKind uint8

const (
	// DiagnosticsZeroRecordCap: max_records_per_shard is 0.
	DiagnosticsZeroRecordCap DiagnosticsErrorKind = iota + 1
	// DiagnosticsDuplicateShard: a shard id repeats.
	DiagnosticsDuplicateShard
	// DiagnosticsZeroRawItemBytes: raw_item_bytes is 0.
	DiagnosticsZeroRawItemBytes
	// DiagnosticsEmittedExceedsCandidates: emitted > candidates.
	DiagnosticsEmittedExceedsCandidates
	// DiagnosticsZeroDiagnosticRecordBytes: emits with record bytes 0.
	DiagnosticsZeroDiagnosticRecordBytes
	// DiagnosticsMissingSeverityMask: emits with severity mask 0.
	DiagnosticsMissingSeverityMask
	// DiagnosticsOverBudget: the host readback exceeds budget_bytes.
	DiagnosticsOverBudget
)

var diagnosticsKindNames = [...]string{
	DiagnosticsZeroRecordCap:             "ZeroRecordCap",
	DiagnosticsDuplicateShard:            "DuplicateShard",
	DiagnosticsZeroRawItemBytes:          "ZeroRawItemBytes",
	DiagnosticsEmittedExceedsCandidates:  "EmittedExceedsCandidates",
	DiagnosticsZeroDiagnosticRecordBytes: "ZeroDiagnosticRecordBytes",
	DiagnosticsMissingSeverityMask:       "MissingSeverityMask",
	DiagnosticsOverBudget:                "OverBudget",
}

// String returns the vyre variant name.
func (k DiagnosticsErrorKind) String() string {
	if int(k) < len(diagnosticsKindNames) && diagnosticsKindNames[k] != "" {
		return diagnosticsKindNames[k]
	}
	return fmt.Sprintf("DiagnosticsErrorKind(%d)", uint8(k))
}

// DiagnosticsError is a diagnostic-aggregation failure. Arithmetic overflow
// is reported as *checked.OverflowError naming the quantity.
type DiagnosticsError struct {
	Kind DiagnosticsErrorKind
	// Index and Shard locate the shard (every kind but ZeroRecordCap and
	// OverBudget).
	Index int
	Shard uint32
	// EmittedDiagnostics and CandidateItems are set for
	// EmittedExceedsCandidates.
	EmittedDiagnostics uint64
	CandidateItems     uint64
	// RequiredBytes and BudgetBytes are set for OverBudget.
	RequiredBytes uint64
	BudgetBytes   uint64
}

// Field returns the input field the error is about.
func (e *DiagnosticsError) Field() string {
	switch e.Kind {
	case DiagnosticsZeroRecordCap:
		return "max_records_per_shard"
	case DiagnosticsDuplicateShard:
		return fmt.Sprintf("shards[%d].shard", e.Index)
	case DiagnosticsZeroRawItemBytes:
		return fmt.Sprintf("shards[%d].raw_item_bytes", e.Index)
	case DiagnosticsEmittedExceedsCandidates:
		return fmt.Sprintf("shards[%d].emitted_diagnostics", e.Index)
	case DiagnosticsZeroDiagnosticRecordBytes:
		return fmt.Sprintf("shards[%d].diagnostic_record_bytes", e.Index)
	case DiagnosticsMissingSeverityMask:
		return fmt.Sprintf("shards[%d].severity_mask", e.Index)
	case DiagnosticsOverBudget:
		return "budget_bytes"
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *DiagnosticsError) Error() string {
	f := e.Field()
	switch e.Kind {
	case DiagnosticsZeroRecordCap:
		return "max_records_per_shard is 0: no diagnostic could be read back. Fix: set max_records_per_shard to 1 or more"
	case DiagnosticsDuplicateShard:
		return fmt.Sprintf("%s: shard id %d appears twice. Fix: give every shard a unique id", f, e.Shard)
	case DiagnosticsZeroRawItemBytes:
		return fmt.Sprintf("%s: shard %d has raw_item_bytes 0. Fix: set raw_item_bytes to the width of one candidate record", f, e.Shard)
	case DiagnosticsEmittedExceedsCandidates:
		return fmt.Sprintf("%s: shard %d emitted %d diagnostics from %d candidate items. Fix: emitted_diagnostics must be at most candidate_items; check both counters",
			f, e.Shard, e.EmittedDiagnostics, e.CandidateItems)
	case DiagnosticsZeroDiagnosticRecordBytes:
		return fmt.Sprintf("%s: shard %d emits diagnostics with 0-byte records. Fix: set diagnostic_record_bytes to the width of one compact record", f, e.Shard)
	case DiagnosticsMissingSeverityMask:
		return fmt.Sprintf("%s: shard %d emits diagnostics with severity_mask 0. Fix: set the severity class bits of the shard's diagnostics", f, e.Shard)
	case DiagnosticsOverBudget:
		return fmt.Sprintf("the host readback needs %d bytes (counters + compact records) but budget_bytes is %d. Fix: raise budget_bytes to at least %d or lower max_records_per_shard",
			e.RequiredBytes, e.BudgetBytes, e.RequiredBytes)
	}
	return fmt.Sprintf("diagnostic aggregation error %d. Fix: check the shards", uint8(e.Kind))
}

// DiagnosticCompressionRatioBPS is floor(host × 10000 / raw) computed
// exactly, 0 when raw is 0, pinned at math.MaxUint32.
func DiagnosticCompressionRatioBPS(hostBytes, rawBytes uint64) uint32 {
	return checked.RatioBPS(hostBytes, rawBytes, 0)
}

// PlanDiagnosticAggregation plans aggregating diagnostics on the device: at
// most maxRecordsPerShard compact records per non-empty shard, packed in
// shard id order after a prefix scan, read back once with every shard's
// counters.
//
// Errors, in order: DiagnosticsZeroRecordCap; per shard in input order
// DiagnosticsDuplicateShard, DiagnosticsZeroRawItemBytes,
// DiagnosticsEmittedExceedsCandidates, DiagnosticsZeroDiagnosticRecordBytes,
// DiagnosticsMissingSeverityMask; then, once every shard is valid, the raw
// candidate and counter totals; then DiagnosticsOverBudget. Overflow labels:
// "shard raw candidate bytes", "raw candidate readback bytes", "counter
// readback bytes", "compact range bytes", "compact readback bytes",
// "overflow records" and "host readback bytes".
func PlanDiagnosticAggregation(shards []DiagnosticShard, maxRecordsPerShard, budgetBytes uint64) (DiagnosticAggregationPlan, error) {
	if maxRecordsPerShard == 0 {
		return DiagnosticAggregationPlan{}, &DiagnosticsError{Kind: DiagnosticsZeroRecordCap}
	}
	order, firstDup := positionsByID(len(shards), func(i int) uint32 { return shards[i].Shard })
	var plan DiagnosticAggregationPlan
	for i, s := range shards {
		fail := func(kind DiagnosticsErrorKind) error {
			return &DiagnosticsError{Kind: kind, Index: i, Shard: s.Shard,
				EmittedDiagnostics: s.EmittedDiagnostics, CandidateItems: s.CandidateItems}
		}
		switch {
		case i == firstDup:
			return DiagnosticAggregationPlan{}, fail(DiagnosticsDuplicateShard)
		case s.RawItemBytes == 0:
			return DiagnosticAggregationPlan{}, fail(DiagnosticsZeroRawItemBytes)
		case s.EmittedDiagnostics > s.CandidateItems:
			// This also covers emitted > 0 with zero candidates, vyre's
			// unreachable ZeroCandidates.
			return DiagnosticAggregationPlan{}, fail(DiagnosticsEmittedExceedsCandidates)
		case s.EmittedDiagnostics > 0 && s.DiagnosticRecordBytes == 0:
			return DiagnosticAggregationPlan{}, fail(DiagnosticsZeroDiagnosticRecordBytes)
		case s.EmittedDiagnostics > 0 && s.SeverityMask == 0:
			return DiagnosticAggregationPlan{}, fail(DiagnosticsMissingSeverityMask)
		}
	}
	// Every shard is valid; only now are the totals summed, so an overflow
	// never hides a later shard's validation error (the spec's order).
	for i, s := range shards {
		raw, err := checked.Mul(s.CandidateItems, s.RawItemBytes, "shard raw candidate bytes")
		if err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, fmt.Sprintf("shards[%d].candidate_items x raw_item_bytes", i))
		}
		if plan.RawCandidateReadbackBytes, err = checked.Add(plan.RawCandidateReadbackBytes, raw, "raw candidate readback bytes"); err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, fmt.Sprintf("candidate_items x raw_item_bytes of shards[0..%d]", i))
		}
		if plan.CounterReadbackBytes, err = checked.Add(plan.CounterReadbackBytes, s.CounterBytes, "counter readback bytes"); err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, fmt.Sprintf("counter_bytes of shards[0..%d]", i))
		}
	}
	plan.CompactRanges = []DiagnosticCompactRange{}
	for _, i := range order {
		s := shards[i]
		if s.EmittedDiagnostics == 0 {
			continue
		}
		records := min(s.EmittedDiagnostics, maxRecordsPerShard)
		bytes, err := checked.Mul(records, s.DiagnosticRecordBytes, "compact range bytes")
		if err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, fmt.Sprintf("min(shards[%d].emitted_diagnostics, max_records_per_shard) x shards[%d].diagnostic_record_bytes", i, i))
		}
		plan.CompactRanges = append(plan.CompactRanges, DiagnosticCompactRange{
			Shard: s.Shard, CompactOffset: plan.CompactReadbackBytes, Records: records, Bytes: bytes,
		})
		if plan.CompactReadbackBytes, err = checked.Add(plan.CompactReadbackBytes, bytes, "compact readback bytes"); err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, fmt.Sprintf("the compact records of the shards up to shards[%d] (emitted_diagnostics x diagnostic_record_bytes)", i))
		}
		// Dropped records never exceed the candidates, whose raw bytes
		// fit, so this sum cannot overflow; it is checked all the same.
		if plan.OverflowRecords, err = checked.Add(plan.OverflowRecords, s.EmittedDiagnostics-records, "overflow records"); err != nil {
			return DiagnosticAggregationPlan{}, checked.Inputs(err, "emitted_diagnostics of the shards")
		}
	}
	host, err := checked.Add(plan.CounterReadbackBytes, plan.CompactReadbackBytes, "host readback bytes")
	if err != nil {
		return DiagnosticAggregationPlan{}, checked.Inputs(err, "counter_bytes and the compact records of every shard")
	}
	if host > budgetBytes {
		return DiagnosticAggregationPlan{}, &DiagnosticsError{Kind: DiagnosticsOverBudget, RequiredBytes: host, BudgetBytes: budgetBytes}
	}
	plan.HostReadbackBytes = host
	if plan.RawCandidateReadbackBytes > host {
		plan.AvoidedReadbackBytes = plan.RawCandidateReadbackBytes - host
	}
	plan.CompressionRatioBPS = DiagnosticCompressionRatioBPS(host, plan.RawCandidateReadbackBytes)
	plan.RequiresOverflowFlag = plan.OverflowRecords > 0
	plan.RequiresDevicePrefixScan = len(plan.CompactRanges) > 1
	plan.FinalOnlyHostReadback = true
	return plan, nil
}
