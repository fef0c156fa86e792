package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchEgraphCSV runs "gpuplan bench egraph" with args over the emulated
// kernels, writing the evidence CSV, and returns the standard output, the
// log and the CSV's rows.
func benchEgraphCSV(t *testing.T, args ...string) (out, log string, rows []evidence.Sample) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr}
	csv := filepath.Join(t.TempDir(), "run.csv")
	o, err := parseBenchEgraphArgs(e, append(args, "-o", csv))
	require.NoError(t, err)
	o.open = openFake(t, rebuild.NewFake)
	require.NoError(t, benchEgraph(e, o), stderr.String())
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows, err = evidence.ReadSamples(csv, bytes.NewReader(data))
	require.NoError(t, err)
	return stdout.String(), stderr.String(), rows
}

// TestBenchEgraphIncremental runs the command on a small generated
// e-graph of each shape: by default it measures all six arms, the
// incremental ones as arms of their own in the evidence (accepted by the
// evidence reader), every sample with the reference's checksum; --arms
// persistent-incremental measures that arm alone.
func TestBenchEgraphIncremental(t *testing.T) {
	cases := []struct {
		spec, workload string
		arms           []string
		want           []rebuild.Arm
		note           string
	}{
		{spec: "gen:2000:1:random", workload: "egraph-gen-2000-1-random", want: rebuild.Arms(), note: "profiled host-loop rebuild took"},
		{spec: "gen:2000:2:chain", workload: "egraph-gen-2000-2-chain", want: rebuild.Arms(), note: "profiled host-loop rebuild took"},
		{spec: "gen:2000:7:giant", workload: "egraph-gen-2000-7-giant", want: rebuild.Arms(), note: "profiled host-loop rebuild took"},
		{spec: "gen:2000:7:giant", workload: "egraph-gen-2000-7-giant", arms: []string{"--arms", "persistent-incremental"},
			want: []rebuild.Arm{rebuild.ArmPersistentIncremental}, note: "the full rounds' arms are not measured"},
	}
	for _, c := range cases {
		t.Run(c.spec+" "+rebuildArmNames(c.want, ","), func(t *testing.T) {
			args := append([]string{"--egraph", c.spec, "--samples", "2", "--cpu-samples", "1", "--floor-rounds", "0"}, c.arms...)
			out, log, rows := benchEgraphCSV(t, args...)
			got := map[string]int{}
			for _, r := range rows {
				require.Equal(t, c.workload, r.Workload.Name)
				assert.Equal(t, rows[0].Checksum, r.Checksum, r.Arm)
				got[r.Arm]++
			}
			want := map[string]int{rebuild.ArmCPU: 1}
			for _, a := range c.want {
				want[string(a)] = 2
				assert.Contains(t, out, "| "+string(a)+" |")
			}
			assert.Equal(t, want, got)
			assert.Contains(t, out, c.note)
			assert.Contains(t, log, "correctness: ")
		})
	}
}

// TestBenchEgraphArmsFlag checks that --arms takes the incremental arms'
// names and refuses an unknown one with the whole list in its fix.
func TestBenchEgraphArmsFlag(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	cases := []struct {
		arms string
		want []rebuild.Arm
		err  string
	}{
		{arms: "persistent-incremental", want: []rebuild.Arm{rebuild.ArmPersistentIncremental}},
		{arms: "host-loop, device-loop-incremental", want: []rebuild.Arm{rebuild.ArmHostLoop, rebuild.ArmDeviceLoopIncremental}},
		{arms: "persistent-incremntal", err: `--arms: unknown arm "persistent-incremntal". Fix: use one or more of host-loop, device-loop, persistent, host-loop-incremental, device-loop-incremental, persistent-incremental`},
		{arms: "incremental", err: `unknown arm "incremental". Fix:`},
		{arms: "persistent-incremental,persistent-incremental", err: "listed twice. Fix:"},
	}
	for _, c := range cases {
		o, err := parseBenchEgraphArgs(e, []string{"--egraph", "gen:10", "--arms", c.arms})
		if c.err != "" {
			var ue *usageError
			require.ErrorAs(t, err, &ue, c.arms)
			assert.Contains(t, err.Error(), c.err, c.arms)
			continue
		}
		require.NoError(t, err, c.arms)
		assert.Equal(t, c.want, o.bench.Arms, c.arms)
	}
}
