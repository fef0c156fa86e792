package executor

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrometheusTextNamesAndOrder(t *testing.T) {
	var tel Telemetry
	tel.RecordLaunch(Linear(4, 256), 1000)
	tel.RecordTimed(Timing{WallNs: 10, EnqueueNs: 3, WaitNs: 5, DeviceNs: 7, HasDeviceTime: true})
	tel.RecordTimed(Timing{WallNs: 20})
	txt := tel.Snapshot().PrometheusText()
	lines := strings.Split(strings.TrimSpace(txt), "\n")
	want := []string{
		"gpuplan_host_to_device_bytes_total 0",
		"gpuplan_device_to_host_bytes_total 0",
		"gpuplan_readback_bytes_total 0",
		"gpuplan_transient_allocation_bytes_requested_total 0",
		"gpuplan_resident_allocation_bytes_requested_total 0",
		"gpuplan_param_upload_bytes_total 0",
		"gpuplan_kernel_launches_total 1",
		"gpuplan_graph_launches_total 0",
		"gpuplan_graph_materialized_cache_hits_total 0",
		"gpuplan_graph_batched_replay_chunks_total 0",
		"gpuplan_graph_batched_replay_lanes_total 0",
		"gpuplan_sync_points_total 0",
		"gpuplan_host_upload_operations_total 0",
		"gpuplan_device_readback_operations_total 0",
		"gpuplan_timed_dispatches_total 2",
		"gpuplan_timed_device_measurements_total 1",
		"gpuplan_timed_dispatches_missing_device_time_total 1",
		"gpuplan_timed_wall_ns_total 30",
		"gpuplan_timed_device_ns_total 7",
		"gpuplan_timed_device_ns_max 7",
		"gpuplan_timed_enqueue_ns_total 3",
		"gpuplan_timed_wait_ns_total 5",
		"gpuplan_scheduled_thread_slots_total 1024",
		"gpuplan_scheduled_thread_slot_overflows_total 0",
		"gpuplan_telemetry_counter_overflows_total 0",
		"gpuplan_resident_borrowed_fallback_dispatches_total 0",
		"gpuplan_launched_elements_total 1000",
		"gpuplan_wasted_thread_slots_total 24",
		"gpuplan_logical_thread_utilization_bps 9765",
		"gpuplan_logical_thread_waste_bps 234",
		"gpuplan_logical_elements_per_thread_slot_bps 9765",
	}
	assert.Equal(t, want, lines)
}

func TestTelemetryDerivedAndOverflow(t *testing.T) {
	var tel Telemetry
	s := tel.Snapshot()
	assert.Zero(t, s.LogicalThreadUtilizationBPS, "no slots: 0")
	tel.RecordLaunch(Linear(1, 10), 25) // more elements than slots
	s = tel.Snapshot()
	assert.Equal(t, uint32(10000), s.LogicalThreadUtilizationBPS, "clamped")
	assert.Equal(t, uint64(25000), s.LogicalElementsPerThreadSlotBPS, "not clamped")
	assert.Zero(t, s.WastedThreadSlots)
	tel.RecordLaunch(LaunchConfig{Grid: [3]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32}, Block: [3]uint32{1024, 1, 1}}, 0)
	s = tel.Snapshot()
	assert.Equal(t, uint64(1), s.ScheduledThreadSlotOverflows)
	tel.add(cTimedWallNs, math.MaxUint64)
	tel.add(cTimedWallNs, 1)
	s = tel.Snapshot()
	assert.Equal(t, uint64(math.MaxUint64), s.TimedWallNs, "never wraps")
	assert.Equal(t, uint64(1), s.TelemetryCounterOverflows)
	tel.Reset()
	assert.Equal(t, TelemetrySnapshot{}, tel.Snapshot())
}

func TestMsToNs(t *testing.T) {
	ns, err := msToNs(1.5)
	require.NoError(t, err)
	assert.Equal(t, uint64(1_500_000), ns)
	ns, err = msToNs(0.0000004)
	require.NoError(t, err)
	assert.Zero(t, ns)
	for _, bad := range []float64{math.NaN(), math.Inf(1), -1, 1e20} {
		_, err := msToNs(bad)
		assert.ErrorContains(t, err, "Fix:", "%v", bad)
	}
}

func BenchmarkTelemetryRecordLaunch(b *testing.B) {
	var tel Telemetry
	cfg := Linear(132, 256)
	b.ReportAllocs()
	for b.Loop() {
		tel.RecordLaunch(cfg, 4096)
	}
}

func TestLaunchElementsForTelemetry(t *testing.T) {
	assert.Equal(t, uint64(1024), Linear(4, 256).elements())
	c := Linear(4, 256)
	c.Elements = 1000
	assert.Equal(t, uint64(1000), c.elements())
	big := LaunchConfig{Grid: [3]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32}, Block: [3]uint32{1024, 1, 1}}
	assert.Equal(t, uint64(math.MaxUint64), big.elements())
}
