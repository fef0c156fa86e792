package rebuild

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePeerScript stands in for egg-bench: it copies $FAKE_DUMP and
// $FAKE_POST to --out as --name's files and prints a SUMMARY line with
// reps=$FAKE_REPS (default: the --reps it was given).
const fakePeerScript = `#!/bin/sh
out=""; name=""; reps=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2;;
    --name) name="$2"; shift 2;;
    --reps) reps="$2"; shift 2;;
    *) shift;;
  esac
done
if [ -n "$FAKE_FAIL" ]; then echo "thread 'main' panicked" >&2; exit 101; fi
if [ -n "$FAKE_CHATTY" ]; then head -c 2000000 /dev/zero | tr '\0' 'x'; echo; fi
cp "$FAKE_DUMP" "$out/$name.pre.txt"
cp "$FAKE_POST" "$out/$name.post.txt"
echo "SUMMARY name=$name reps=${FAKE_REPS:-$reps} t1_rebuild_ms_median=0.5 t1_cold_ms=1.0 t2_unions_rebuild_ms_median=1.25"
`

// eggFiles unpacks egg's 1e4 dump and partition into a folder and returns
// their paths and the dump's SHA-256.
func eggFiles(t *testing.T) (dump, post, sum string) {
	t.Helper()
	dir := t.TempDir()
	unpack := func(name string) string {
		data, err := io.ReadAll(openSample(t, name))
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		if name == "math-1e4.pre.txt" {
			h := sha256.Sum256(data)
			sum = hex.EncodeToString(h[:])
		}
		return p
	}
	return unpack("math-1e4.pre.txt"), unpack("math-1e4.post.txt"), sum
}

// fakePeer writes the fake egg-bench and points it at egg's 1e4 files.
func fakePeer(t *testing.T) (path, dumpSum string) {
	t.Helper()
	dump, post, sum := eggFiles(t)
	path = filepath.Join(t.TempDir(), "egg-bench")
	require.NoError(t, os.WriteFile(path, []byte(fakePeerScript), 0o755))
	t.Setenv("FAKE_DUMP", dump)
	t.Setenv("FAKE_POST", post)
	return path, sum
}

// TestBenchOnFake runs the benchmark protocol over the emulated kernels on
// egg's 1e4 dump with a stand-in egg peer: every sample's checksum is the
// reference's, the arms launch what their plans say, the structural-
// equivalence path agrees with its CPU reference, and the peer's samples
// are arm egg's.
func TestBenchOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 3)
	peer, sum := fakePeer(t)
	g, _ := eggDump(t)
	var logs []string
	res, err := Bench(x, g, "math-1e4", BenchConfig{Samples: 2, CPUSamples: 2, FloorRounds: 10, Structural: true, InputSHA256: sum,
		Peer: &PeerConfig{Path: peer, Samples: 3}, Reporting: harness.Reporting{Log: func(f string, a ...any) { logs = append(logs, f) }}})
	require.NoError(t, err)
	counts := map[string]int{}
	for _, s := range res.Samples {
		counts[s.Arm]++
		assert.Equal(t, res.ReferenceChecksum, s.Checksum, s.Arm)
		assert.Zero(t, s.TimedUploads+s.TimedAllocations+s.TimedHostSyncs, s.Arm)
	}
	assert.Equal(t, map[string]int{"host-loop": 2, "device-loop": 2, "persistent": 2, "host-loop-incremental": 2, "device-loop-incremental": 2,
		"persistent-incremental": 2, ArmCPU: 2, ArmEgg: 3}, counts)
	assert.Contains(t, res.ReferenceChecksum, "-in-"+sum[:16])
	assert.Len(t, res.FloorSamples, floorLaunches)
	require.NotNil(t, res.Structural)
	assert.True(t, res.Structural.Same())
	require.Len(t, res.Launches, len(Arms()))
	for _, l := range res.Launches {
		switch l.Arm.Driver() {
		case ArmDeviceLoop:
			assert.Equal(t, l.PlannedLaunches, l.ExecutedLaunches)
		case ArmPersistent:
			assert.Equal(t, l.PlannedBarriers, l.ExecutedBarriers)
		case ArmHostLoop:
			assert.Equal(t, l.PlannedLaunches, l.ExecutedLaunches)
		}
	}
	s := res.Summary
	assert.Equal(t, 8728, s.Nodes)
	assert.Equal(t, 3575, s.Classes)
	assert.Equal(t, 7835, s.DistinctNodes)
	assert.InDelta(t, 0.5e6, s.EggT1Ns, 1)
	for _, n := range s.Notes {
		assert.NotContains(t, n, "against the plan", "every arm launched what its plan says")
	}
	for _, a := range s.Arms {
		if a.Arm == "device-loop" {
			assert.Positive(t, a.SpeedupVsEgg)
			assert.Positive(t, a.SpeedupVsCPU)
		}
		assert.Equal(t, a.Arm == ArmEgg, a.External)
	}
	assert.NotEmpty(t, logs)
}

// TestBenchOnGenerated runs the protocol without peer or CPU samples on a
// generated e-graph, each arm alone and all together.
func TestBenchOnGenerated(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 4)
	g := generate(t, "gen:5000:11:cycle")
	for i, arms := range [][]Arm{{ArmPersistent}, nil} {
		// The second run has no data-parallel reference: the arms' rounds
		// must agree with each other.
		res, err := Bench(x, g, "gen-5000", BenchConfig{Arms: arms, Samples: 1, roundsLimit: 1 + i*(g.NodeCount()-2)})
		require.NoError(t, err)
		assert.Equal(t, "part-", res.ReferenceChecksum[:5])
		assert.Contains(t, res.ReferenceChecksum, "-in-unknown")
		assert.Equal(t, 64, res.Summary.Rounds, "a cycle of 64 merges one step per round")
		assert.NotEmpty(t, res.Summary.FastestArm)
	}
}

// TestEggArgsFromDump derives egg-bench's options from the 1e4 dump's
// header, and refuses a header that does not name them.
func TestEggArgsFromDump(t *testing.T) {
	dump, _, _ := eggFiles(t)
	head, err := os.ReadFile(dump)
	require.NoError(t, err)
	args, err := EggArgsFromDump(head[:2048])
	require.NoError(t, err)
	assert.Equal(t, []string{"--iters", "4", "--scheduler", "simple", "--expr", "(i (ln x) x)", "--expr", "(i (+ x (cos x)) x)",
		"--expr", "(i (* (cos x) x) x)", "--expr", "(d x (+ 1 (* 2 x)))", "--expr", "(d x (- (pow x 3) (* 7 (pow x 2))))",
		"--expr", "(+ (* y (+ x y)) (- (+ x 2) (+ x x)))", "--expr", "(/ 1 (- (/ (+ 1 (sqrt five)) 2) (/ (- 1 (sqrt five)) 2)))"}, args)
	args, err = EggArgsFromDump([]byte("egg-prerebuild-dump v1\n# egg 0.9.5, BackoffScheduler, 12 iterations\n# expr (+ a b)\nops 1\n# expr (not this)\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"--iters", "12", "--scheduler", "backoff", "--expr", "(+ a b)"}, args)
	for _, head := range []string{"egg-prerebuild-dump v1\nops 1\n", "egg-prerebuild-dump v1\n# expr (+ a b)\n", ""} {
		_, err := EggArgsFromDump([]byte(head))
		var pe *PeerError
		require.ErrorAs(t, err, &pe, head)
		assert.Contains(t, err.Error(), "Fix: pass the egg-bench options")
	}
}

// TestPeerFailures checks that a missing, failing or mismatched peer is an
// error naming the binary, never a silently missing arm.
func TestPeerFailures(t *testing.T) {
	peer, sum := fakePeer(t)
	ok := PeerConfig{Path: peer, Samples: 2, DumpSHA256: sum}
	got, err := RunEggPeer(ok, nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.InDelta(t, 1.25e6, got[1].T2Ns, 1)
	assert.Equal(t, 7835, got[0].DistinctNodes)
	g, _ := eggDump(t)
	ref, err := egraph.Rebuild(g)
	require.NoError(t, err)
	assert.Equal(t, PartitionChecksum(ref.NodeClasses(g)), got[0].Checksum, "egg's partition is the reference's up to renaming")

	cases := map[string]struct {
		cfg  PeerConfig
		env  map[string]string
		want string
	}{
		"no path":       {PeerConfig{DumpSHA256: sum}, nil, "no egg-bench binary"},
		"missing":       {PeerConfig{Path: filepath.Join(t.TempDir(), "none"), DumpSHA256: sum}, nil, "not an executable file"},
		"no dump sum":   {PeerConfig{Path: peer}, nil, "SHA-256 is unknown"},
		"own option":    {PeerConfig{Path: peer, DumpSHA256: sum, Args: []string{"--reps", "3"}}, nil, "--reps is the peer's own"},
		"other dump":    {PeerConfig{Path: peer, DumpSHA256: sum[1:] + "0"}, nil, "not the measured file's"},
		"fails":         {ok, map[string]string{"FAKE_FAIL": "1"}, "panicked"},
		"reps ignored":  {ok, map[string]string{"FAKE_REPS": "11"}, "reps=\"11\""},
		"no partition":  {ok, map[string]string{"FAKE_POST": "/nonexistent"}, "partition could not be read"},
		"bad partition": {ok, map[string]string{"FAKE_POST": peer}, "partition is malformed"},
		"chatty":        {ok, map[string]string{"FAKE_CHATTY": "1"}, "printed more than 1048576 bytes"},
	}
	for name, c := range cases {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		_, err := RunEggPeer(c.cfg, nil)
		var pe *PeerError
		require.ErrorAs(t, err, &pe, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
		for k := range c.env {
			os.Unsetenv(k)
		}
		t.Setenv("FAKE_POST", os.Getenv("FAKE_POST"))
	}
}
