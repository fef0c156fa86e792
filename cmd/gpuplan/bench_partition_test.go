package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

// fakePartitionOpener opens fake executors with the partitioned kernels
// emulated, present of them, with the host-staged NCCL fake.
func fakePartitionOpener(t *testing.T, present int) partbfs.Opener {
	return partbfs.Opener{
		Count: func() (int, error) { return present, nil },
		Open: func(ordinal int) (*executor.Executor, error) {
			dev, err := occupancy.Lookup("h200")
			require.NoError(t, err)
			return executor.New(partbfs.NewFake(dev, uint64(ordinal)), executor.Options{})
		},
		DriverVersion: func(int) string { return "580.159.04" },
		Comm:          func(xs []*executor.Executor) (nccl.Collectives, error) { return nccl.NewFake(xs) },
	}
}

func TestBenchPartitionedArgs(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "kron:10"})
	require.NoError(t, err)
	assert.False(t, o.partitioned(), "one device is the single-GPU bench")
	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:10", "--devices", "4", "--partition", "blocked"})
	require.NoError(t, err)
	assert.True(t, o.partitioned())
	assert.Equal(t, partition.Blocked, o.strategy)
	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:10", "--simulate-devices", "1"})
	require.NoError(t, err)
	assert.True(t, o.partitioned())
	for name, args := range map[string][]string{
		"zero devices":  {"--devices", "0"},
		"many devices":  {"--devices", "65"},
		"negative sim":  {"--simulate-devices", "-2"},
		"both":          {"--devices", "2", "--simulate-devices", "2"},
		"bad partition": {"--partition", "random", "--devices", "2"},
	} {
		_, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "kron:10"}, args...))
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
}

// TestBenchPartitionedOnFake runs the partitioned benchmark command over
// the emulated kernels, on two fake devices and simulated on one: the
// evidence CSV is valid, carries both arms, the plan and the steps, and
// the prediction matches.
func TestBenchPartitionedOnFake(t *testing.T) {
	for _, args := range [][]string{{"--devices", "2"}, {"--simulate-devices", "3", "--partition", "blocked"}} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb}
		csv := filepath.Join(t.TempDir(), "kron.csv")
		o, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "kron:10", "--roots", "2", "--samples", "3", "-o", csv}, args...))
		require.NoError(t, err)
		o.opener = fakePartitionOpener(t, 2)
		require.NoError(t, runBenchOptions(e, o), errb.String())
		trav, exch := partbfs.ArmNames(o.devices, false)
		if o.simulate > 0 {
			trav, exch = partbfs.ArmNames(o.simulate, true)
		}
		assert.Contains(t, out.String(), "| "+trav+" |")
		assert.Contains(t, out.String(), "largest step deviation 0.0%")
		assert.Contains(t, out.String(), "| level | direction | collective |")
		data, err := os.ReadFile(csv)
		require.NoError(t, err)
		rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
		require.NoError(t, err)
		require.Len(t, rows, 6)
		assert.Equal(t, trav, rows[0].Arm)
		assert.Equal(t, exch, rows[5].Arm)
		assert.Contains(t, string(data), "# partition-plan {")
		assert.Contains(t, string(data), "# steps [")
	}
}

func TestBenchPartitionedRefusesMissingDevices(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "kron:10", "--devices", "4"})
	require.NoError(t, err)
	o.opener = fakePartitionOpener(t, 1)
	err = runBenchOptions(e, o)
	assert.ErrorContains(t, err, "4 devices asked for, 1 present")
	_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "kron:8", "--simulate-devices", "2")
	if code == exitFailure {
		assert.Contains(t, errs, "Fix:")
	}
}
