package executor

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MetricPrefix is the prefix of every Prometheus metric the executor
// exposes. vyre names its metrics vyre_cuda_<suffix>; gpuplan keeps every
// suffix and its order and replaces the prefix with gpuplan_, so
// vyre_cuda_kernel_launches_total becomes gpuplan_kernel_launches_total and
// vyre_cuda_graph_launches_total becomes gpuplan_graph_launches_total.
const MetricPrefix = "gpuplan_"

// Telemetry holds the executor's counters (§23f). Counters are atomic and
// never wrap: an addition that would overflow leaves the counter unchanged
// and increments TelemetryCounterOverflows instead. The zero value is ready.
type Telemetry struct {
	c [numCounters]atomic.Uint64
}

type counter int

const (
	cHostToDeviceBytes counter = iota
	cDeviceToHostBytes
	cReadbackBytes
	cTransientAllocBytes
	cResidentAllocBytes
	cParamUploadBytes
	cKernelLaunches
	cGraphLaunches
	cGraphMaterializedHits
	cGraphReplayChunks
	cGraphReplayLanes
	cSyncPoints
	cHostUploadOps
	cDeviceReadbackOps
	cTimedDispatches
	cTimedDeviceMeasurements
	cTimedMissingDevice
	cTimedWallNs
	cTimedDeviceNs
	cTimedDeviceNsMax
	cTimedEnqueueNs
	cTimedWaitNs
	cScheduledSlots
	cScheduledSlotOverflows
	cCounterOverflows
	cResidentBorrowedFallback
	cLaunchedElements
	numCounters
)

// TelemetrySnapshot is a consistent-enough copy of the counters plus the
// derived utilisation ratios. Field names follow vyre's
// CudaTelemetrySnapshot.
type TelemetrySnapshot struct {
	HostToDeviceBytes                  uint64 `json:"host_to_device_bytes"`
	DeviceToHostBytes                  uint64 `json:"device_to_host_bytes"`
	ReadbackBytes                      uint64 `json:"readback_bytes"`
	TransientAllocationBytesRequested  uint64 `json:"transient_allocation_bytes_requested"`
	ResidentAllocationBytesRequested   uint64 `json:"resident_allocation_bytes_requested"`
	ParamUploadBytes                   uint64 `json:"param_upload_bytes"`
	KernelLaunches                     uint64 `json:"kernel_launches"`
	GraphLaunches                      uint64 `json:"graph_launches"`
	GraphMaterializedCacheHits         uint64 `json:"graph_materialized_cache_hits"`
	GraphBatchedReplayChunks           uint64 `json:"graph_batched_replay_chunks"`
	GraphBatchedReplayLanes            uint64 `json:"graph_batched_replay_lanes"`
	SyncPoints                         uint64 `json:"sync_points"`
	HostUploadOperations               uint64 `json:"host_upload_operations"`
	DeviceReadbackOperations           uint64 `json:"device_readback_operations"`
	TimedDispatches                    uint64 `json:"timed_dispatches"`
	TimedDeviceMeasurements            uint64 `json:"timed_device_measurements"`
	TimedDispatchesMissingDeviceTime   uint64 `json:"timed_dispatches_missing_device_time"`
	TimedWallNs                        uint64 `json:"timed_wall_ns"`
	TimedDeviceNs                      uint64 `json:"timed_device_ns"`
	TimedDeviceNsMax                   uint64 `json:"timed_device_ns_max"`
	TimedEnqueueNs                     uint64 `json:"timed_enqueue_ns"`
	TimedWaitNs                        uint64 `json:"timed_wait_ns"`
	ScheduledThreadSlots               uint64 `json:"scheduled_thread_slots"`
	ScheduledThreadSlotOverflows       uint64 `json:"scheduled_thread_slot_overflows"`
	TelemetryCounterOverflows          uint64 `json:"telemetry_counter_overflows"`
	ResidentBorrowedFallbackDispatches uint64 `json:"resident_borrowed_fallback_dispatches"`
	LaunchedElements                   uint64 `json:"launched_elements"`
	// WastedThreadSlots = slots − min(launched elements, slots).
	WastedThreadSlots uint64 `json:"wasted_thread_slots"`
	// LogicalThreadUtilizationBPS = min(10000, floor(elements·10000/slots)).
	LogicalThreadUtilizationBPS uint32 `json:"logical_thread_utilization_bps"`
	// LogicalThreadWasteBPS = min(10000, floor(wasted·10000/slots)).
	LogicalThreadWasteBPS uint32 `json:"logical_thread_waste_bps"`
	// LogicalElementsPerThreadSlotBPS is elements·10000/slots, not clamped.
	LogicalElementsPerThreadSlotBPS uint64 `json:"logical_elements_per_thread_slot_bps"`
}

// add adds v to counter k with a checked addition.
func (t *Telemetry) add(k counter, v uint64) {
	for {
		old := t.c[k].Load()
		n, carry := bits.Add64(old, v, 0)
		if carry != 0 {
			if k != cCounterOverflows {
				t.add(cCounterOverflows, 1)
			}
			return
		}
		if t.c[k].CompareAndSwap(old, n) {
			return
		}
	}
}

// max raises counter k to v.
func (t *Telemetry) max(k counter, v uint64) {
	for {
		old := t.c[k].Load()
		if v <= old || t.c[k].CompareAndSwap(old, v) {
			return
		}
	}
}

// RecordLaunch counts one kernel launch of the given shape over elements
// logical elements.
func (t *Telemetry) RecordLaunch(cfg LaunchConfig, elements uint64) {
	t.add(cKernelLaunches, 1)
	t.add(cLaunchedElements, elements)
	slots := uint64(1)
	var err error
	for _, d := range [6]uint32{cfg.Grid[0], cfg.Grid[1], cfg.Grid[2], cfg.Block[0], cfg.Block[1], cfg.Block[2]} {
		if slots, err = checked.Mul(slots, uint64(d), "scheduled thread slots"); err != nil {
			t.add(cScheduledSlotOverflows, 1)
			return
		}
	}
	t.add(cScheduledSlots, slots)
}

// RecordTimed counts one timed dispatch. deviceNs, enqueueNs and waitNs are
// added only when present (ok flags).
func (t *Telemetry) RecordTimed(tm Timing) {
	t.add(cTimedDispatches, 1)
	t.add(cTimedWallNs, tm.WallNs)
	if tm.HasDeviceTime {
		t.add(cTimedDeviceMeasurements, 1)
		t.add(cTimedDeviceNs, tm.DeviceNs)
		t.max(cTimedDeviceNsMax, tm.DeviceNs)
	} else {
		t.add(cTimedMissingDevice, 1)
	}
	t.add(cTimedEnqueueNs, tm.EnqueueNs)
	t.add(cTimedWaitNs, tm.WaitNs)
}

// Reset zeroes every counter.
func (t *Telemetry) Reset() {
	for i := range t.c {
		t.c[i].Store(0)
	}
}

// Snapshot copies the counters and derives the utilisation ratios.
func (t *Telemetry) Snapshot() TelemetrySnapshot {
	g := func(k counter) uint64 { return t.c[k].Load() }
	s := TelemetrySnapshot{
		HostToDeviceBytes: g(cHostToDeviceBytes), DeviceToHostBytes: g(cDeviceToHostBytes),
		ReadbackBytes: g(cReadbackBytes), TransientAllocationBytesRequested: g(cTransientAllocBytes),
		ResidentAllocationBytesRequested: g(cResidentAllocBytes), ParamUploadBytes: g(cParamUploadBytes),
		KernelLaunches: g(cKernelLaunches), GraphLaunches: g(cGraphLaunches),
		GraphMaterializedCacheHits: g(cGraphMaterializedHits), GraphBatchedReplayChunks: g(cGraphReplayChunks),
		GraphBatchedReplayLanes: g(cGraphReplayLanes), SyncPoints: g(cSyncPoints),
		HostUploadOperations: g(cHostUploadOps), DeviceReadbackOperations: g(cDeviceReadbackOps),
		TimedDispatches: g(cTimedDispatches), TimedDeviceMeasurements: g(cTimedDeviceMeasurements),
		TimedDispatchesMissingDeviceTime: g(cTimedMissingDevice), TimedWallNs: g(cTimedWallNs),
		TimedDeviceNs: g(cTimedDeviceNs), TimedDeviceNsMax: g(cTimedDeviceNsMax),
		TimedEnqueueNs: g(cTimedEnqueueNs), TimedWaitNs: g(cTimedWaitNs),
		ScheduledThreadSlots: g(cScheduledSlots), ScheduledThreadSlotOverflows: g(cScheduledSlotOverflows),
		TelemetryCounterOverflows: g(cCounterOverflows), ResidentBorrowedFallbackDispatches: g(cResidentBorrowedFallback),
		LaunchedElements: g(cLaunchedElements),
	}
	s.deriveRatios()
	return s
}

func (s *TelemetrySnapshot) deriveRatios() {
	slots, el := s.ScheduledThreadSlots, s.LaunchedElements
	s.WastedThreadSlots = slots - min(el, slots)
	s.LogicalThreadUtilizationBPS = min(10000, checked.RatioBPS(el, slots, 0))
	s.LogicalThreadWasteBPS = min(10000, checked.RatioBPS(s.WastedThreadSlots, slots, 0))
	s.LogicalElementsPerThreadSlotBPS = checked.RatioBPSWide(el, slots, 0)
}

// metricLines lists (suffix, value) in vyre's exposition order.
func (s TelemetrySnapshot) metricLines() []struct {
	name  string
	value uint64
} {
	type m = struct {
		name  string
		value uint64
	}
	return []m{
		{"host_to_device_bytes_total", s.HostToDeviceBytes},
		{"device_to_host_bytes_total", s.DeviceToHostBytes},
		{"readback_bytes_total", s.ReadbackBytes},
		{"transient_allocation_bytes_requested_total", s.TransientAllocationBytesRequested},
		{"resident_allocation_bytes_requested_total", s.ResidentAllocationBytesRequested},
		{"param_upload_bytes_total", s.ParamUploadBytes},
		{"kernel_launches_total", s.KernelLaunches},
		{"graph_launches_total", s.GraphLaunches},
		{"graph_materialized_cache_hits_total", s.GraphMaterializedCacheHits},
		{"graph_batched_replay_chunks_total", s.GraphBatchedReplayChunks},
		{"graph_batched_replay_lanes_total", s.GraphBatchedReplayLanes},
		{"sync_points_total", s.SyncPoints},
		{"host_upload_operations_total", s.HostUploadOperations},
		{"device_readback_operations_total", s.DeviceReadbackOperations},
		{"timed_dispatches_total", s.TimedDispatches},
		{"timed_device_measurements_total", s.TimedDeviceMeasurements},
		{"timed_dispatches_missing_device_time_total", s.TimedDispatchesMissingDeviceTime},
		{"timed_wall_ns_total", s.TimedWallNs},
		{"timed_device_ns_total", s.TimedDeviceNs},
		{"timed_device_ns_max", s.TimedDeviceNsMax},
		{"timed_enqueue_ns_total", s.TimedEnqueueNs},
		{"timed_wait_ns_total", s.TimedWaitNs},
		{"scheduled_thread_slots_total", s.ScheduledThreadSlots},
		{"scheduled_thread_slot_overflows_total", s.ScheduledThreadSlotOverflows},
		{"telemetry_counter_overflows_total", s.TelemetryCounterOverflows},
		{"resident_borrowed_fallback_dispatches_total", s.ResidentBorrowedFallbackDispatches},
		{"launched_elements_total", s.LaunchedElements},
		{"wasted_thread_slots_total", s.WastedThreadSlots},
		{"logical_thread_utilization_bps", uint64(s.LogicalThreadUtilizationBPS)},
		{"logical_thread_waste_bps", uint64(s.LogicalThreadWasteBPS)},
		{"logical_elements_per_thread_slot_bps", s.LogicalElementsPerThreadSlotBPS},
	}
}

// PrometheusText renders the snapshot in the Prometheus text exposition
// format: one "<name> <value>" line per metric, in vyre's order, names
// prefixed with MetricPrefix.
func (s TelemetrySnapshot) PrometheusText() string {
	var b strings.Builder
	_ = s.WritePrometheus(&b)
	return b.String()
}

// WritePrometheus writes PrometheusText to w.
func (s TelemetrySnapshot) WritePrometheus(w io.Writer) error {
	for _, m := range s.metricLines() {
		if _, err := fmt.Fprintf(w, "%s%s %d\n", MetricPrefix, m.name, m.value); err != nil {
			return err
		}
	}
	return nil
}

// msToNs converts cuEventElapsedTime milliseconds to rounded nanoseconds,
// rejecting non-finite, negative or too-large values (§23e).
func msToNs(ms float64) (uint64, error) {
	ns := math.Round(ms * 1e6)
	if math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0 || ns >= 18446744073709551616.0 {
		return 0, invalidArg("device elapsed time", "Fix: record both timing events on the same stream and synchronise before reading them.", "%v ms is not a finite, non-negative duration that fits in uint64 nanoseconds", ms)
	}
	return uint64(ns), nil
}
