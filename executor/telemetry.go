package executor

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MetricPrefix is the prefix of every Prometheus metric the executor
// exposes. vyre names its metrics vyre_cuda_<suffix>; gpuplan keeps vyre's
// metrics and their order under the gpuplan_ prefix, so
// vyre_cuda_kernel_launches_total becomes gpuplan_kernel_launches_total,
// and names the units as Prometheus asks: times in seconds
// (vyre_cuda_timed_wall_ns_total becomes gpuplan_timed_wall_seconds_total,
// vyre_cuda_timed_device_ns_max becomes gpuplan_timed_device_seconds_max),
// basis points as ratios (vyre_cuda_logical_thread_utilization_bps becomes
// gpuplan_logical_thread_utilization_ratio), the byte unit last
// (vyre_cuda_transient_allocation_bytes_requested_total becomes
// gpuplan_transient_allocation_requested_bytes_total), and a value that
// can fall is a gauge without _total (gpuplan_wasted_thread_slots); a
// name does not repeat its type (vyre_cuda_telemetry_counter_overflows_total
// becomes gpuplan_telemetry_overflows_total).
const MetricPrefix = "gpuplan_"

// Telemetry holds the executor's counters. Counters are atomic and
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

// metricKind is a metric's Prometheus type.
type metricKind int

const (
	kindCounter metricKind = iota
	kindGauge
)

// metricDef is one exposed metric: its name after MetricPrefix, its type,
// its help text and its value in the metric's unit.
type metricDef struct {
	name  string
	kind  metricKind
	help  string
	value float64
}

// nsToSeconds converts a nanosecond count to seconds, the base unit
// Prometheus names use.
func nsToSeconds(ns uint64) float64 { return float64(ns) / 1e9 }

// bpsToRatio converts basis points to a ratio (10,000 bps is 1).
func bpsToRatio[T uint32 | uint64](bps T) float64 { return float64(bps) / 1e4 }

// metrics lists the snapshot's metrics in vyre's order. Counters end in
// _total; units are in the names, in Prometheus's base units (bytes,
// seconds, ratios).
func (s TelemetrySnapshot) metrics() []metricDef {
	c := func(name, help string, v uint64) metricDef { return metricDef{name, kindCounter, help, float64(v)} }
	return []metricDef{
		c("host_to_device_bytes_total", "Bytes copied from host to device memory.", s.HostToDeviceBytes),
		c("device_to_host_bytes_total", "Bytes copied from device to host memory.", s.DeviceToHostBytes),
		c("readback_bytes_total", "Bytes of results read back to the host.", s.ReadbackBytes),
		c("transient_allocation_requested_bytes_total", "Bytes requested by transient device allocations.", s.TransientAllocationBytesRequested),
		c("resident_allocation_requested_bytes_total", "Bytes requested by resident device allocations.", s.ResidentAllocationBytesRequested),
		c("param_upload_bytes_total", "Bytes of kernel parameters uploaded.", s.ParamUploadBytes),
		c("kernel_launches_total", "Kernel launches.", s.KernelLaunches),
		c("graph_launches_total", "CUDA graph launches.", s.GraphLaunches),
		c("graph_materialized_cache_hits_total", "Launches that reused a materialized CUDA graph.", s.GraphMaterializedCacheHits),
		c("graph_batched_replay_chunks_total", "Chunks of batched CUDA graph replays.", s.GraphBatchedReplayChunks),
		c("graph_batched_replay_lanes_total", "Lanes of batched CUDA graph replays.", s.GraphBatchedReplayLanes),
		c("sync_points_total", "Host synchronisations with the device.", s.SyncPoints),
		c("host_upload_operations_total", "Host-to-device upload operations.", s.HostUploadOperations),
		c("device_readback_operations_total", "Device-to-host readback operations.", s.DeviceReadbackOperations),
		c("timed_dispatches_total", "Timed dispatches.", s.TimedDispatches),
		c("timed_device_measurements_total", "Timed dispatches with a device (CUDA event) time.", s.TimedDeviceMeasurements),
		c("timed_dispatches_missing_device_time_total", "Timed dispatches without a device time.", s.TimedDispatchesMissingDeviceTime),
		{"timed_wall_seconds_total", kindCounter, "Host wall-clock time of timed dispatches.", nsToSeconds(s.TimedWallNs)},
		{"timed_device_seconds_total", kindCounter, "Device (CUDA event) time of timed dispatches.", nsToSeconds(s.TimedDeviceNs)},
		{"timed_device_seconds_max", kindGauge, "Longest device time of one timed dispatch.", nsToSeconds(s.TimedDeviceNsMax)},
		{"timed_enqueue_seconds_total", kindCounter, "Host time spent enqueueing timed dispatches.", nsToSeconds(s.TimedEnqueueNs)},
		{"timed_wait_seconds_total", kindCounter, "Host time spent waiting for timed dispatches.", nsToSeconds(s.TimedWaitNs)},
		c("scheduled_thread_slots_total", "Thread slots of launched grids (grid times block threads).", s.ScheduledThreadSlots),
		c("scheduled_thread_slot_overflows_total", "Launches whose thread slots overflowed 64 bits and were not counted.", s.ScheduledThreadSlotOverflows),
		c("telemetry_overflows_total", "Additions dropped because a telemetry value would have overflowed.", s.TelemetryCounterOverflows),
		c("resident_borrowed_fallback_dispatches_total", "Dispatches that fell back from borrowed resident buffers.", s.ResidentBorrowedFallbackDispatches),
		c("launched_elements_total", "Logical elements of launched kernels.", s.LaunchedElements),
		{"wasted_thread_slots", kindGauge, "Scheduled thread slots beyond the launched elements.", float64(s.WastedThreadSlots)},
		{"logical_thread_utilization_ratio", kindGauge, "Launched elements over scheduled thread slots, at most 1.", bpsToRatio(s.LogicalThreadUtilizationBPS)},
		{"logical_thread_waste_ratio", kindGauge, "Wasted thread slots over scheduled thread slots, at most 1.", bpsToRatio(s.LogicalThreadWasteBPS)},
		{"logical_elements_per_thread_slot_ratio", kindGauge, "Launched elements over scheduled thread slots, not clamped.", bpsToRatio(s.LogicalElementsPerThreadSlotBPS)},
	}
}

// MetricFamilies returns the snapshot as Prometheus metric families (the
// client library's data model), named with MetricPrefix, each with its
// help text and type. Counters are float64 in this model: counts above
// 2^53 lose their last digits.
func (s TelemetrySnapshot) MetricFamilies() []*dto.MetricFamily {
	defs := s.metrics()
	out := make([]*dto.MetricFamily, len(defs))
	for i, d := range defs {
		m := &dto.Metric{}
		typ := dto.MetricType_COUNTER
		if d.kind == kindCounter {
			m.Counter = &dto.Counter{Value: proto.Float64(d.value)}
		} else {
			typ = dto.MetricType_GAUGE
			m.Gauge = &dto.Gauge{Value: proto.Float64(d.value)}
		}
		out[i] = &dto.MetricFamily{Name: proto.String(MetricPrefix + d.name), Help: proto.String(d.help), Type: typ.Enum(), Metric: []*dto.Metric{m}}
	}
	return out
}

// PrometheusText renders the snapshot in the Prometheus text exposition
// format (WritePrometheus).
func (s TelemetrySnapshot) PrometheusText() string {
	var b strings.Builder
	_ = s.WritePrometheus(&b)
	return b.String()
}

// WritePrometheus writes the snapshot to w in the Prometheus text
// exposition format, version 0.0.4, through the Prometheus client
// library's encoder (github.com/prometheus/common/expfmt): a # HELP and a
// # TYPE line and one sample for each metric of MetricFamilies, in vyre's
// order. A scraper or `promtool check metrics` accepts it as it is.
func (s TelemetrySnapshot) WritePrometheus(w io.Writer) error {
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range s.MetricFamilies() {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("writing the metric %s: %w. Fix: check that the output is writable", mf.GetName(), err)
		}
	}
	return nil
}

// msToNs converts cuEventElapsedTime milliseconds to rounded nanoseconds,
// rejecting non-finite, negative or too-large values.
func msToNs(ms float64) (uint64, error) {
	ns := math.Round(ms * 1e6)
	if math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0 || ns >= 18446744073709551616.0 {
		return 0, invalidArg("device elapsed time", "Fix: record both timing events on the same stream and synchronise before reading them.", "%v ms is not a finite, non-negative duration that fits in uint64 nanoseconds", ms)
	}
	return uint64(ns), nil
}
