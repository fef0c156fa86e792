package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/executor/nccl/rendezvous"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

// fakeRankOpener is fakePartitionOpener with the fake communicator of
// ranks that are goroutines of this process.
func fakeRankOpener(t *testing.T, present int) partbfs.Opener {
	o := fakePartitionOpener(t, present)
	o.UniqueID = func() (nccl.UniqueID, error) { return nccl.NewFakeUniqueID(), nil }
	o.Rank = func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error) {
		c, err := nccl.OpenFakeRank(x, id, rank, ranks, nccl.Options{InitTimeout: 20 * time.Second, CollectiveTimeout: 20 * time.Second})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return o
}

// envOf is a lookup over KEY=VALUE pairs, for an env's lookupEnv.
func envOf(vars ...string) func(string) (string, bool) {
	m := map[string]string{}
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		m[k] = val
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// goroutineRanks starts every rank as a goroutine that runs gpuplan with
// args (after "bench") in the rank's environment, with opener(rank)'s
// devices: the launch of --processes with fake ranks in place of child
// processes.
func goroutineRanks(args []string, opener func(rank int) partbfs.Opener) rankStart {
	return func(ctx context.Context, rank int, vars []string, stdout, stderr io.Writer) (func() error, error) {
		e := &env{stdout: stdout, stderr: stderr, ctx: ctx, lookupEnv: envOf(vars...)}
		done := make(chan error, 1)
		go func() {
			o, err := parseBenchArgs(e, args)
			if err == nil {
				o.opener = opener(rank)
				err = runBenchOptions(e, o)
			}
			if err != nil {
				fmt.Fprintf(stderr, "gpuplan bench: %v\n", err)
			}
			done <- err
		}()
		return func() error { return <-done }, nil
	}
}

func TestBenchProcessesArgs(t *testing.T) {
	rankEnv := []string{rendezvous.RankEnv + "=1", rendezvous.WorldSizeEnv + "=2", rendezvous.AddressEnv + "=127.0.0.1:29500"}
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no devices", nil, []string{"--processes"}, "--processes needs --devices N with N > 1"},
		{"simulated", nil, []string{"--processes", "--simulate-devices", "2"}, "--processes and --simulate-devices 2 exclude each other"},
		{"launch timeout alone", nil, []string{"--devices", "2", "--launch-timeout", "1m"}, "--launch-timeout applies only with --processes"},
		{"zero launch timeout", nil, []string{"--devices", "2", "--processes", "--launch-timeout", "0s"}, "--launch-timeout 0s is not positive"},
		{"device in the launcher", nil, []string{"--devices", "2", "--processes", "--device", "1"}, "--device does not apply with --devices 2 --processes"},
		{"rank without an address", rankEnv[:2], []string{"--processes"}, "neither GPUPLAN_RENDEZVOUS nor GPUPLAN_RENDEZVOUS_FILE is set"},
		{"rank out of the world", []string{rendezvous.RankEnv + "=2", rendezvous.WorldSizeEnv + "=2", rankEnv[2]}, []string{"--processes"}, "rank 2 is outside 0..1"},
		{"rank of another world size", rankEnv, []string{"--processes", "--devices", "3"}, "--devices 3 but GPUPLAN_WORLD_SIZE=2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, lookupEnv: envOf(tc.env...)}
			_, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "kron:8"}, tc.args...))
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, lookupEnv: envOf(rankEnv...)}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "kron:8", "--processes", "--device", "1"})
	require.NoError(t, err, "a rank picks its GPU with --device")
	assert.Equal(t, 2, o.devices, "a rank's part count is the world size")
	assert.Equal(t, 1, o.rank.Rank)
	assert.True(t, o.partitioned())
}

// TestBenchProcessesOnFake runs bench frontier --devices 2 --processes
// end to end with the ranks as goroutines on the fake communicator (each
// in its own environment, meeting through the rendezvous file): rank 0
// writes the evidence with the process-per-GPU arms, the plan and the
// steps; the exchange equals the one-process run's and the prediction;
// every rank's log lines carry its rank.
func TestBenchProcessesOnFake(t *testing.T) {
	base := []string{"frontier", "--graph", "kron:10", "--roots", "2", "--samples", "3"}
	oneCSV := filepath.Join(t.TempDir(), "one.csv")
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, lookupEnv: envOf()}
	o, err := parseBenchArgs(e, append(base, "--devices", "2", "-o", oneCSV))
	require.NoError(t, err)
	o.opener = fakePartitionOpener(t, 2)
	require.NoError(t, runBenchOptions(e, o), errb.String())

	out.Reset()
	errb.Reset()
	csv := filepath.Join(t.TempDir(), "ranks.csv")
	args := append(base, "--devices", "2", "--processes", "-o", csv)
	o, err = parseBenchArgs(e, args)
	require.NoError(t, err)
	o.opener = fakeRankOpener(t, 2)
	o.startRank = goroutineRanks(args, func(int) partbfs.Opener { return fakeRankOpener(t, 2) })
	require.NoError(t, runBenchOptions(e, o), errb.String())

	trav, exch := partbfs.ProcessArmNames(2)
	assert.Contains(t, out.String(), "| "+trav+" |")
	assert.Contains(t, out.String(), "one process each")
	assert.Contains(t, out.String(), "largest step deviation 0.0%")
	assert.Contains(t, errb.String(), "rank 0: bench: rank 0 of 2")
	assert.Contains(t, errb.String(), "rank 1: bench: rank 1 done; rank 0 writes the results")
	rows := readSamples(t, csv)
	require.Len(t, rows, 6)
	assert.Equal(t, trav, rows[0].Arm)
	assert.Equal(t, exch, rows[5].Arm)
	one := readSamples(t, oneCSV)
	for i := range rows {
		assert.Equal(t, one[i].BytesMoved, rows[i].BytesMoved, "row %d: the ranks moved what one process moves", i)
		assert.Equal(t, one[i].Checksum, rows[i].Checksum)
	}
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# partition-plan {")
	assert.Contains(t, string(data), "# steps [")
}

// readSamples reads an evidence CSV.
func readSamples(t *testing.T, path string) []evidence.Sample {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rows, err := evidence.ReadSamples(path, bytes.NewReader(data))
	require.NoError(t, err)
	return rows
}

// TestBenchProcessesRankFails: a rank that cannot open its device fails
// the launch, naming it, and the launcher stops the other rank instead of
// letting it wait for the rendezvous.
func TestBenchProcessesRankFails(t *testing.T) {
	args := []string{"frontier", "--graph", "kron:8", "--roots", "1", "--samples", "1", "--devices", "3", "--processes"}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, lookupEnv: envOf()}
	o, err := parseBenchArgs(e, args)
	require.NoError(t, err)
	o.opener = fakeRankOpener(t, 3)
	o.startRank = goroutineRanks(args, func(rank int) partbfs.Opener {
		op := fakeRankOpener(t, 3)
		if rank == 1 {
			op.Open = func(int) (*executor.Executor, error) { return nil, errors.New("the device is gone") }
		}
		return op
	})
	t0 := time.Now()
	err = runBenchOptions(e, o)
	require.Error(t, err)
	assert.Less(t, time.Since(t0), 10*time.Second)
	assert.Contains(t, err.Error(), "rank 1 failed (partitioned BFS rank 1: opening device 0: the device is gone)")
	assert.Contains(t, err.Error(), "; ranks 0, 2 ended with errors after it (stopped by the launcher")
	assert.Contains(t, err.Error(), "Fix: fix what rank 1 reports")
}

// TestBenchProcessesTooFewDevices: the launcher counts the devices before
// it starts any rank.
func TestBenchProcessesTooFewDevices(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, lookupEnv: envOf()}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "kron:8", "--devices", "4", "--processes"})
	require.NoError(t, err)
	o.opener = fakeRankOpener(t, 2)
	o.startRank = func(context.Context, int, []string, io.Writer, io.Writer) (func() error, error) {
		t.Fatal("no rank starts")
		return nil, nil
	}
	assert.ErrorContains(t, runBenchOptions(e, o), "4 devices asked for, 2 present")
}

// TestBenchProcessesWithoutCUDA: a build without CUDA refuses the launch
// with a fix before it starts a process.
func TestBenchProcessesWithoutCUDA(t *testing.T) {
	if nccl.Available {
		t.Skip("the CUDA build opens GPUs")
	}
	_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "kron:8", "--devices", "2", "--processes")
	require.Equal(t, exitFailure, code, errs)
	assert.Contains(t, errs, "Fix: run a CUDA build (make build-cuda)")
}

// testRankChildEnv makes TestBenchRankChild run, in a child process of
// the launcher: its value is the rank that exits with status 3 ("none":
// every rank exits 0).
const testRankChildEnv = "GPUPLAN_TEST_RANK_CHILD"

// TestBenchRankChild is a rank of TestBenchProcessesLaunchesChildren: it
// prints what the launcher gave it and exits.
func TestBenchRankChild(t *testing.T) {
	fail := os.Getenv(testRankChildEnv)
	if fail == "" {
		t.Skip("runs only as a rank of TestBenchProcessesLaunchesChildren")
	}
	rank := os.Getenv(rendezvous.RankEnv)
	_, hasFile := os.LookupEnv(rendezvous.FileEnv)
	fmt.Printf("stdout of rank %s\n", rank)
	fmt.Fprintf(os.Stderr, "rank %s of %s sees GPU %s, address file %v, args %s\n", rank, os.Getenv(rendezvous.WorldSizeEnv),
		os.Getenv(visibleDevicesEnv), hasFile, strings.Join(flag.Args(), " "))
	if rank == fail {
		fmt.Fprintf(os.Stderr, "rank %s gives up", rank)
		os.Exit(3)
	}
	os.Exit(exitOK)
}

// TestBenchProcessesLaunchesChildren launches real child processes (this
// test binary as TestBenchRankChild): each gets its rank, the world size,
// the address file and one GPU of CUDA_VISIBLE_DEVICES, and the command
// line; rank 0's standard output is the command's; a rank's exit status
// and last line name its failure.
func TestBenchProcessesLaunchesChildren(t *testing.T) {
	for _, fail := range []string{"none", "2"} {
		t.Run("fail="+fail, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{stdout: &out, stderr: &errb, lookupEnv: envOf(visibleDevicesEnv + "=4,6,7")}
			e.child = func(ctx context.Context, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestBenchRankChild$", "-test.count=1", "--"}, args...)...)
				cmd.Env = append(os.Environ(), testRankChildEnv+"="+fail)
				return cmd, nil
			}
			o, err := parseBenchArgs(e, []string{"frontier", "--graph", "kron:8", "--devices", "3", "--processes"})
			require.NoError(t, err)
			o.opener = fakeRankOpener(t, 3)
			err = runBenchOptions(e, o)
			line := func(i int, gpu string) string {
				return fmt.Sprintf("rank %d: rank %d of 3 sees GPU %s, address file true, args bench frontier --graph kron:8 --devices 3 --processes\n", i, i, gpu)
			}
			if fail == "none" {
				require.NoError(t, err, errb.String())
				assert.Equal(t, "stdout of rank 0\n", out.String())
				for i, gpu := range []string{"4", "6", "7"} {
					assert.Contains(t, errb.String(), line(i, gpu))
				}
				return
			}
			// The launcher stops the other ranks once rank 2 fails, so
			// only rank 2's lines are sure to be there.
			require.Error(t, err)
			assert.Contains(t, errb.String(), line(2, "7"))
			assert.Contains(t, err.Error(), "rank 2 failed (exit status 3): rank 2 gives up")
			assert.Contains(t, err.Error(), "Fix: fix what rank 2 reports")
		})
	}
}

func TestVisibleDevices(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{"0", "1", "2"}},
		{[]string{visibleDevicesEnv + "="}, []string{"0", "1", "2"}},
		{[]string{visibleDevicesEnv + "=3, 5,GPU-abc"}, []string{"3", "5", "GPU-abc"}},
	} {
		assert.Equal(t, tc.want, visibleDevices(&env{lookupEnv: envOf(tc.env...)}, 3), "%v", tc.env)
	}
}
