package executor

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleTelemetry() TelemetrySnapshot {
	var tel Telemetry
	tel.RecordLaunch(Linear(4, 256), 1000)
	tel.RecordTimed(Timing{WallNs: 10, EnqueueNs: 3, WaitNs: 5, DeviceNs: 7, HasDeviceTime: true})
	tel.RecordTimed(Timing{WallNs: 20})
	return tel.Snapshot()
}

func TestPrometheusTextNamesAndOrder(t *testing.T) {
	txt := sampleTelemetry().PrometheusText()
	var samples []string
	for _, l := range strings.Split(strings.TrimSpace(txt), "\n") {
		if !strings.HasPrefix(l, "#") {
			samples = append(samples, l)
		}
	}
	want := []string{
		"gpuplan_host_to_device_bytes_total 0",
		"gpuplan_device_to_host_bytes_total 0",
		"gpuplan_readback_bytes_total 0",
		"gpuplan_transient_allocation_requested_bytes_total 0",
		"gpuplan_resident_allocation_requested_bytes_total 0",
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
		"gpuplan_timed_wall_seconds_total 3e-08",
		"gpuplan_timed_device_seconds_total 7e-09",
		"gpuplan_timed_device_seconds_max 7e-09",
		"gpuplan_timed_enqueue_seconds_total 3e-09",
		"gpuplan_timed_wait_seconds_total 5e-09",
		"gpuplan_scheduled_thread_slots_total 1024",
		"gpuplan_scheduled_thread_slot_overflows_total 0",
		"gpuplan_telemetry_overflows_total 0",
		"gpuplan_resident_borrowed_fallback_dispatches_total 0",
		"gpuplan_launched_elements_total 1000",
		"gpuplan_wasted_thread_slots 24",
		"gpuplan_logical_thread_utilization_ratio 0.9765",
		"gpuplan_logical_thread_waste_ratio 0.0234",
		"gpuplan_logical_elements_per_thread_slot_ratio 0.9765",
	}
	assert.Equal(t, want, samples)
}

// Every metric has a # HELP and a # TYPE line before its sample, the
// gpuplan_ prefix, a _total suffix exactly when it is a counter, and no
// abbreviated unit; the text parses back to MetricFamilies.
func TestPrometheusExpositionShape(t *testing.T) {
	snap := sampleTelemetry()
	txt := snap.PrometheusText()
	lines := strings.Split(strings.TrimSpace(txt), "\n")
	fams := snap.MetricFamilies()
	require.Len(t, lines, 3*len(fams))
	for i, mf := range fams {
		name := mf.GetName()
		assert.True(t, strings.HasPrefix(name, MetricPrefix), name)
		typ := strings.ToLower(mf.GetType().String())
		assert.Equal(t, "# HELP "+name+" "+mf.GetHelp(), lines[3*i])
		assert.Equal(t, "# TYPE "+name+" "+typ, lines[3*i+1])
		assert.True(t, strings.HasPrefix(lines[3*i+2], name+" "))
		assert.NotEmpty(t, mf.GetHelp())
		assert.Equal(t, typ == "counter", strings.HasSuffix(name, "_total"), name)
		for _, abbrev := range []string{"_ns", "_ms", "_us", "_bps", "_b_"} {
			assert.NotContains(t, name+"_", abbrev+"_", name)
		}
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := p.TextToMetricFamilies(strings.NewReader(txt))
	require.NoError(t, err)
	require.Len(t, parsed, len(fams))
	for _, mf := range fams {
		got := parsed[mf.GetName()]
		require.NotNil(t, got, mf.GetName())
		assert.Equal(t, mf.GetType(), got.GetType())
		assert.Equal(t, mf.GetHelp(), got.GetHelp())
		assert.InDelta(t, value(mf.Metric[0]), value(got.Metric[0]), 0, mf.GetName())
	}
}

func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// promtool, Prometheus's own checker, accepts the exposition: run when it
// is on PATH (Debian's prometheus package ships it), and required when
// GPUPLAN_REQUIRE_PROMTOOL is set (make lint sets it where promtool is).
func TestPrometheusExpositionPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("GPUPLAN_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not on PATH. Fix: install it (apt-get install prometheus) or unset GPUPLAN_REQUIRE_PROMTOOL")
		}
		t.Skip("promtool is not on PATH")
	}
	var busy Telemetry
	busy.RecordLaunch(Linear(132, 256), 1<<20)
	busy.add(cTimedWallNs, math.MaxUint64)
	busy.add(cTimedWallNs, 1)
	for _, snap := range []TelemetrySnapshot{{}, sampleTelemetry(), busy.Snapshot()} {
		checkPromtool(t, promtool, snap.PrometheusText())
	}
}

// checkPromtool fails t unless `promtool check metrics` accepts text.
func checkPromtool(t *testing.T, promtool, text string) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool check metrics: %s\n%s", out, text)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritePrometheusError(t *testing.T) {
	err := sampleTelemetry().WritePrometheus(failingWriter{})
	require.ErrorContains(t, err, "gpuplan_host_to_device_bytes_total")
	require.ErrorContains(t, err, "Fix:")
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

func ExampleTelemetrySnapshot_WritePrometheus() {
	var t Telemetry
	t.RecordLaunch(Linear(2, 128), 200)
	var b strings.Builder
	if err := t.Snapshot().WritePrometheus(&b); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "kernel_launches") || strings.Contains(l, "utilization") {
			fmt.Println(l)
		}
	}
	// Output:
	// # HELP gpuplan_kernel_launches_total Kernel launches.
	// # TYPE gpuplan_kernel_launches_total counter
	// gpuplan_kernel_launches_total 1
	// # HELP gpuplan_logical_thread_utilization_ratio Launched elements over scheduled thread slots, at most 1.
	// # TYPE gpuplan_logical_thread_utilization_ratio gauge
	// gpuplan_logical_thread_utilization_ratio 0.7812
}
