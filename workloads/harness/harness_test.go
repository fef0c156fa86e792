package harness

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPTX is a module of three entry points the fake runs in Go.
const testPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry store_u32(.param .u64 p0, .param .u64 p1) { ret; }
.visible .entry nothing() { ret; }
.visible .entry grid(.param .u64 p0) { ret; }
`

// newFake opens an executor over the fake backend on an H100 profile with
// mem bytes of device memory: store_u32 writes its second argument at its
// first, nothing does nothing, and grid is a large-block persistent kernel.
func newFake(t testing.TB, mem int64) *executor.Executor {
	t.Helper()
	dev, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	dev.TotalMemoryBytes = mem
	attrs := executor.FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}
	f := executor.NewFake(executor.FakeConfig{Device: dev, Kernels: map[string]executor.FakeKernel{
		"store_u32": {Attrs: attrs, Run: func(l *executor.FakeLaunch) error {
			b, err := l.Bytes(executor.DevPtr(l.Args[0]), 4)
			if err != nil {
				return err
			}
			binary.LittleEndian.PutUint32(b, uint32(l.Args[1]))
			return nil
		}},
		"nothing": {Attrs: attrs, Run: func(*executor.FakeLaunch) error { return nil }},
		"grid":    {Attrs: executor.FuncAttributes{NumRegs: 32, MaxThreadsPerBlock: 1024}, Run: func(*executor.FakeLaunch) error { return nil }},
	}})
	x, err := executor.New(f, executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// kernel loads the test module's entry point name.
func kernel(t testing.TB, x *executor.Executor, name string) *executor.Kernel {
	t.Helper()
	var k *executor.Kernel
	_, err := LoadKernels(x, []byte(testPTX), []Entry{{Dst: &k, Name: name}})
	require.NoError(t, err)
	return k
}

// TestValidBlockSize checks the block sizes the kernels take: whole warps up to 1,024 threads.
func TestValidBlockSize(t *testing.T) {
	for _, c := range []struct {
		threads int
		ok      bool
	}{{0, false}, {16, false}, {32, true}, {48, false}, {256, true}, {1024, true}, {1056, false}, {-32, false}} {
		assert.Equal(t, c.ok, ValidBlockSize(c.threads), "%d threads", c.threads)
	}
}

// TestFill checks that a zero field takes its default and any other value stays.
func TestFill(t *testing.T) {
	for _, c := range []struct {
		name       string
		v, d, want int
	}{{"zero takes the default", 0, 7, 7}, {"set stays", 3, 7, 3}, {"negative stays for validation", -1, 7, -1}} {
		v := c.v
		Fill(&v, c.d)
		assert.Equal(t, c.want, v, c.name)
	}
}

// TestConfigError checks the message of a Config field out of range.
func TestConfigError(t *testing.T) {
	err := ConfigError("BFS", "LevelThreads", 100, BlockSizeFix)
	assert.EqualError(t, err, "BFS config LevelThreads = 100: Fix: use a multiple of 32 from 32 to 1024")
}

// TestBudget checks the budget a session plans under: the live one, capped.
func TestBudget(t *testing.T) {
	x := newFake(t, 1<<30)
	live, err := x.Budget()
	require.NoError(t, err)
	for _, c := range []struct {
		name         string
		limit, wants uint64
	}{{"no limit: the live budget", 0, live}, {"a lower limit", 4096, 4096}, {"a higher limit: the live budget", live + 1, live}} {
		got, err := Budget(x, c.limit)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.wants, got, c.name)
	}
	require.NoError(t, x.Close())
	_, err = Budget(x, 0)
	assert.ErrorIs(t, err, executor.ErrClosed)
}

// TestPlanMemory checks the sparse plan of a request and its refusal over budget, named.
func TestPlanMemory(t *testing.T) {
	req := megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: 10, EdgeCount: 20}, BytesPerNode: 4, BytesPerEdge: 4,
		FrontierBytes: 64, ScratchBytes: 8, OutputBytes: 40}
	for _, c := range []struct {
		name   string
		budget uint64
		over   bool
	}{{"fits", 1 << 20, false}, {"exactly", 232, false}, {"one byte short", 231, true}} {
		req.BudgetBytes = c.budget
		p, err := PlanMemory("test over g", req)
		if !c.over {
			require.NoError(t, err, c.name)
			assert.EqualValues(t, 232, p.RequiredBytes, c.name)
			continue
		}
		var ob *megakernel.OverBudgetError
		require.ErrorAs(t, err, &ob, c.name)
		assert.ErrorContains(t, err, "test over g: ", c.name)
		assert.EqualValues(t, 232, ob.RequiredBytes, c.name)
	}
}

// TestAllocateAndFree checks that a session holds exactly its plan, and that
// Free frees whatever was allocated, once.
func TestAllocateAndFree(t *testing.T) {
	for _, c := range []struct {
		name     string
		sizes    []uint64
		required uint64
		err      string
	}{
		{"exactly the plan", []uint64{16, 32}, 48, ""},
		{"a plan of other bytes", []uint64{16, 32}, 64, "test session allocated 48 bytes but its memory plan requires 64"},
		{"a size per buffer", []uint64{16}, 16, "test session has 2 buffers but 1 sizes"},
		{"an allocation refused", []uint64{16, 0}, 16, "zero"},
	} {
		x := newFake(t, 1<<30)
		var a, b executor.Buffer
		bufs := []*executor.Buffer{&a, &b}
		err := Allocate(x, "test session", bufs, c.sizes, c.required)
		if c.err == "" {
			require.NoError(t, err, c.name)
			assert.EqualValues(t, c.required, x.ResidentBytes(), c.name)
		} else {
			assert.ErrorContains(t, err, c.err, c.name)
		}
		require.NoError(t, Free(x, bufs), c.name)
		assert.Zero(t, x.ResidentBytes(), c.name)
		assert.Zero(t, a.ID+b.ID, "%s: freed buffers are zeroed", c.name)
		require.NoError(t, Free(x, bufs), "%s: freeing again does nothing", c.name)
	}
}

// TestBuffers checks that a buffers struct's buffer fields come in
// declaration order, other fields skipped, as pointers into the struct, and
// that anything but a pointer to a struct panics.
func TestBuffers(t *testing.T) {
	var b struct {
		in    executor.Buffer
		name  string
		out   executor.Buffer
		Extra executor.Buffer
	}
	got := Buffers(&b)
	require.Len(t, got, 3)
	assert.Same(t, &b.in, got[0])
	assert.Same(t, &b.out, got[1])
	assert.Same(t, &b.Extra, got[2])
	assert.Panics(t, func() { Buffers(b) }, "a struct, not a pointer")
	n := 1
	assert.Panics(t, func() { Buffers(&n) }, "a pointer to an int")
}

// TestLoadKernels checks the entry points a module gives, and the errors of a
// missing entry point and of a module that does not load.
func TestLoadKernels(t *testing.T) {
	x := newFake(t, 1<<30)
	var k1, k2 *executor.Kernel
	mod, err := LoadKernels(x, []byte(testPTX), []Entry{{Dst: &k1, Name: "store_u32"}, {Dst: &k2, Name: "nothing"}})
	require.NoError(t, err)
	assert.NotNil(t, mod)
	assert.NotNil(t, k1)
	assert.NotNil(t, k2)
	mod, err = LoadKernels(x, []byte(testPTX), []Entry{{Dst: &k1, Name: "missing"}})
	assert.Error(t, err)
	assert.NotNil(t, mod, "the module loaded is returned with the entry point's error")
	_, err = LoadKernels(x, []byte("not ptx"), nil)
	assert.Error(t, err)
}

// TestPersistentGrid checks the cap of a persistent grid per SM and its refusal
// past the barrier's count.
func TestPersistentGrid(t *testing.T) {
	x := newFake(t, 1<<30)
	k := kernel(t, x, "grid")
	full, err := x.CooperativeGrid(k, 256, 0)
	require.NoError(t, err)
	require.Greater(t, full.BlocksPerSM, 1, "the test needs a kernel of several blocks per SM")
	for _, c := range []struct {
		name      string
		perSM     int
		maxBlocks uint32
		blocks    uint32
		err       string
	}{
		{"one block per SM", 1, 1 << 16, uint32(full.SMCount), ""},
		{"a cap above the model's", full.BlocksPerSM + 4, 1 << 16, full.GridBlocks, ""},
		{"over the barrier's count", full.BlocksPerSM, uint32(full.SMCount), full.GridBlocks, "test kernel grid of"},
	} {
		g, err := PersistentGrid(x, k, 256, GridCap{BlocksPerSM: c.perSM, MaxBlocks: c.maxBlocks, Kernel: "test kernel", Field: "BlocksPerSM"})
		assert.Equal(t, c.blocks, g.GridBlocks, c.name)
		if c.err == "" {
			require.NoError(t, err, c.name)
			continue
		}
		assert.ErrorContains(t, err, c.err, c.name)
		assert.ErrorContains(t, err, "Config.BlocksPerSM", c.name)
	}
}

// TestOpen checks the order of a session's setup: a refused plan sets nothing
// up, a failed step closes what the steps set up.
func TestOpen(t *testing.T) {
	fail := errors.New("step failed")
	for _, c := range []struct {
		name            string
		planErr, errAt  int // 1: the plan fails; errAt: the step that fails (0: none)
		ran, closed     int
		wantErr, opened bool
	}{
		{name: "every step", ran: 3, opened: true},
		{name: "the plan refuses", planErr: 1, wantErr: true},
		{name: "a step fails", errAt: 2, ran: 2, closed: 1, wantErr: true},
	} {
		x := newFake(t, 1<<30)
		var buf executor.Buffer
		ran, closed := 0, 0
		step := func() error {
			ran++
			if ran == c.errAt {
				return fail
			}
			if ran == 1 {
				var err error
				buf, err = x.Alloc(64)
				return err
			}
			return nil
		}
		plan := func() error {
			if c.planErr == 1 {
				return fail
			}
			return nil
		}
		closeFn := func() error { closed++; return Free(x, []*executor.Buffer{&buf}) }
		tel, err := Open(x, plan, []func() error{step, step, step}, closeFn)
		assert.Equal(t, c.wantErr, err != nil, c.name)
		assert.Equal(t, c.ran, ran, "%s: steps run", c.name)
		assert.Equal(t, c.closed, closed, "%s: closes", c.name)
		if c.opened {
			assert.EqualValues(t, 64, tel.ResidentAllocationBytesRequested, c.name)
		} else {
			assert.Zero(t, x.ResidentBytes(), "%s: nothing stays allocated", c.name)
		}
	}
}

// TestBytesOf checks the byte view of 4-byte values.
func TestBytesOf(t *testing.T) {
	assert.Nil(t, BytesOf([]uint32(nil)))
	assert.Equal(t, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, BytesOf([]int32{1, -1}))
	v := []uint32{0x01020304}
	b := BytesOf(v)
	b[0] = 9
	assert.Equal(t, uint32(0x01020309), v[0], "a view, not a copy")
}

// TestMeter checks an arm run's accounting against the telemetry of what
// its timed region did.
func TestMeter(t *testing.T) {
	fail := errors.New("region failed")
	for _, c := range []struct {
		name                            string
		launches, uploads, reads, alloc int
		own                             uint64
		err                             error
		want                            Accounting
	}{
		// A synchronous launch and a read sync once each: the arm's own.
		{name: "a clean arm", launches: 3, reads: 2, own: 5,
			want: Accounting{Launches: 3, Syncs: 6, Readbacks: 3, ReadbackBytes: 12}},
		{name: "pollution", launches: 1, uploads: 2, reads: 2, alloc: 1, own: 1,
			// The uploads synchronise too.
			want: Accounting{Launches: 1, TimedUploads: 2, TimedAllocations: 1, TimedHostSyncs: 4, Syncs: 6, Readbacks: 3, ReadbackBytes: 12}},
		{name: "own syncs beyond the telemetry's", reads: 1, own: 5,
			want: Accounting{Syncs: 2, Readbacks: 2, ReadbackBytes: 8}},
		{name: "a failed region", launches: 2, err: fail},
	} {
		x := newFake(t, 1<<30)
		k := kernel(t, x, "store_u32")
		buf, err := x.Alloc(4)
		require.NoError(t, err)
		m := NewMeter(x)
		err = m.Time(func() (uint64, error) {
			for range c.launches {
				_, err := x.Launch(k, executor.Linear(1, 32), executor.Ptr(buf), executor.U64(7))
				require.NoError(t, err)
			}
			for range c.uploads {
				require.NoError(t, x.Upload(buf, []byte{1, 2, 3, 4}))
			}
			for range c.alloc {
				b, err := x.Alloc(8)
				require.NoError(t, err)
				require.NoError(t, x.Free(b))
			}
			for range c.reads {
				_, err := x.DownloadRange(buf, 0, 4)
				require.NoError(t, err)
			}
			return c.own, c.err
		})
		require.ErrorIs(t, err, c.err, c.name)
		assert.Positive(t, m.WallNs, c.name)
		if c.err != nil {
			assert.Equal(t, Accounting{WallNs: m.WallNs}, m.Accounting, "%s: only the wall time", c.name)
			continue
		}
		_, err = x.DownloadRange(buf, 0, 4) // the read of the result words, after the timed region
		require.NoError(t, err)
		a := m.Finish()
		c.want.WallNs = a.WallNs
		assert.Equal(t, c.want, a, c.name)
	}
}

// TestRepeat checks that the warm-up is dropped and an error stops.
func TestRepeat(t *testing.T) {
	fail := errors.New("launch failed")
	for _, c := range []struct {
		name       string
		reps, fail int // fail: the call that fails (0: none)
		want       []int
		calls      int
	}{
		{name: "the warm-up is dropped", reps: 3, want: []int{2, 3, 4}, calls: 4},
		{name: "no repetition", reps: 0, want: []int{}, calls: 1},
		{name: "a failure stops", reps: 5, fail: 2, calls: 2},
		{name: "a failed warm-up", reps: 5, fail: 1, calls: 1},
	} {
		calls := 0
		got, err := Repeat(c.reps, func() (int, error) {
			calls++
			if calls == c.fail {
				return 0, fail
			}
			return calls, nil
		})
		assert.Equal(t, c.calls, calls, c.name)
		if c.fail != 0 {
			assert.ErrorIs(t, err, fail, c.name)
			assert.Nil(t, got, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
}

// TestLaunchOverhead checks that the overhead is timed over OverheadLaunches
// launches and reads.
func TestLaunchOverhead(t *testing.T) {
	x := newFake(t, 1<<30)
	k := kernel(t, x, "store_u32")
	buf, err := x.Alloc(8)
	require.NoError(t, err)
	word := make([]byte, 4)
	for _, c := range []struct {
		name string
		p    Probe
		err  string
	}{
		{name: "empty launches and their reads", p: Probe{Kernel: k, Config: executor.Linear(1, 32), Args: []executor.Arg{executor.Ptr(buf), executor.U64(5)},
			Buffer: buf, Offset: 4, Into: word}},
		{name: "a read out of range", p: Probe{Kernel: k, Config: executor.Linear(1, 32), Args: []executor.Arg{executor.Ptr(buf), executor.U64(5)},
			Buffer: buf, Offset: 8, Into: word}, err: "measuring the launch overhead"},
	} {
		before := x.Telemetry()
		ns, err := LaunchOverhead(x, c.p)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Positive(t, ns, c.name)
		d := x.Telemetry().Sub(before)
		assert.EqualValues(t, OverheadLaunches, d.KernelLaunches, c.name)
		assert.EqualValues(t, OverheadLaunches, d.DeviceReadbackOperations, c.name)
	}
}

// TestInterleave checks the rotation of the arms, the progress reports and the
// stop at the first error.
func TestInterleave(t *testing.T) {
	for _, c := range []struct {
		name    string
		arms    []string
		samples int
		want    []string
	}{
		{"three arms rotate", []string{"a", "b", "c"}, 3, []string{"0a", "0b", "0c", "1b", "1c", "1a", "2c", "2a", "2b"}},
		{"two arms", []string{"a", "b"}, 3, []string{"0a", "0b", "1b", "1a", "2a", "2b"}},
		{"one arm", []string{"a"}, 2, []string{"0a", "1a"}},
		{"no samples", []string{"a", "b"}, 0, nil},
		{"no arms", nil, 4, nil},
	} {
		var got, labels []string
		var done []int
		progress := func(d, total int, label string) {
			assert.Equal(t, c.samples*len(c.arms), total, c.name)
			done = append(done, d)
			labels = append(labels, label)
		}
		err := Interleave("w", c.arms, c.samples, progress, func(smp, a int) error {
			got = append(got, fmt.Sprint(smp, c.arms[a]))
			return nil
		})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
		for i, l := range labels {
			assert.Equal(t, i+1, done[i], c.name)
			assert.Equal(t, ProgressLabel("w", got[i][1:], i/len(c.arms), c.samples), l, c.name)
		}
	}
	fail := errors.New("sample failed")
	runs := 0
	err := Interleave("w", []string{"a", "b"}, 5, nil, func(smp, a int) error {
		runs++
		if smp == 1 {
			return fail
		}
		return nil
	})
	assert.ErrorIs(t, err, fail)
	assert.Equal(t, 3, runs, "the first error stops the samples")
}

// TestFloor checks when a floor is measured, its median per step and that
// a measurement's error is returned.
func TestFloor(t *testing.T) {
	times := func(steps int) ([]uint64, error) {
		return []uint64{uint64(30 * steps), uint64(10 * steps), uint64(20 * steps)}, nil
	}
	for _, c := range []struct {
		name   string
		arms   []string
		steps  int
		ns     []uint64
		median float64
	}{
		{"measured", []string{"loop", "persistent"}, 4, []uint64{120, 40, 80}, 20},
		{"its arm is not measured", []string{"loop"}, 4, nil, 0},
		{"no steps", []string{"persistent"}, 0, nil, 0},
	} {
		ns, median, err := Floor(c.arms, "persistent", c.steps, times)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.ns, ns, c.name)
		assert.InDelta(t, c.median, median, 1e-9, c.name)
	}
	_, _, err := Floor([]string{"persistent"}, "persistent", 1, func(int) ([]uint64, error) { return nil, errors.New("no grid") })
	assert.EqualError(t, err, "no grid")
}

// TestProgressLabel checks the label of a sample in a progress report.
func TestProgressLabel(t *testing.T) {
	assert.Equal(t, "grid-512 megakernel sample 3/30", ProgressLabel("grid-512", "megakernel", 2, 30))
}

// TestNames checks the arms as strings.
func TestNames(t *testing.T) {
	type arm string
	assert.Equal(t, []string{"host-loop", "device-loop"}, Names([]arm{"host-loop", "device-loop"}))
	assert.Empty(t, Names([]arm(nil)))
}

// TestLogOr checks the default of a nil log.
func TestLogOr(t *testing.T) {
	var lines []string
	log := func(f string, args ...any) { lines = append(lines, fmt.Sprintf(f, args...)) }
	for _, c := range []struct {
		name string
		log  func(string, ...any)
		want []string
	}{{"nil discards", nil, nil}, {"a log is kept", log, []string{"x 1"}}} {
		lines = nil
		LogOr(c.log)("x %d", 1)
		assert.Equal(t, c.want, lines, c.name)
	}
}

type testArm string

type testProfile struct{ Steps int }

func armFor(t megakernel.Topology) testArm {
	if Persistent(t) {
		return "persistent"
	}
	return "device-loop"
}

// TestPersistent checks which topologies run as one persistent launch.
func TestPersistent(t *testing.T) {
	for _, c := range []struct {
		t    megakernel.Topology
		want bool
	}{{megakernel.WarpSparseFrontier, true}, {megakernel.SparseFrontier, false}, {megakernel.BlockDenseFrontier, false},
		{megakernel.DenseFrontier, false}, {megakernel.HybridFrontier, false}, {megakernel.FusedWave, true}} {
		assert.Equal(t, c.want, Persistent(c.t), c.t.String())
	}
}

// TestPlanArm checks the arm plan against the topology selection, and its
// refusal of an invalid sample.
func TestPlanArm(t *testing.T) {
	graph := megakernel.GraphShape{NodeCount: 1 << 20, EdgeCount: 4 << 20}
	mem := megakernel.MemoryPlan{RequiredBytes: 1 << 20, BudgetBytes: 1 << 30}
	for _, c := range []struct {
		name     string
		sample   megakernel.ScheduleSample
		overhead float64
		err      bool
	}{
		{"small frontiers, large overhead", megakernel.ScheduleSample{DispatchCostNS: 3000, FrontierDensity: 0.001, ReadbackBytes: 4}, 2500, false},
		{"large frontiers", megakernel.ScheduleSample{DispatchCostNS: 1e6, FrontierDensity: 0.6, ReadbackBytes: 4}, 2500, false},
		{"a density above 1", megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 2}, 2500, true},
		{"a negative overhead", megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.1}, -1, true},
	} {
		p, err := PlanArm(testProfile{Steps: 9}, c.sample, c.overhead, graph, mem, armFor)
		if c.err {
			assert.Error(t, err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		d, fp, err := SelectTopology(c.sample, c.overhead, graph, megakernel.MemoryBudget{RequiredBytes: mem.RequiredBytes, BudgetBytes: mem.BudgetBytes})
		require.NoError(t, err, c.name)
		assert.Equal(t, ArmPlan[testArm, testProfile]{Arm: armFor(d.Topology), Decision: d, Sample: c.sample, LaunchOverheadNs: c.overhead,
			FusionPressure: fp, Profile: testProfile{Steps: 9}}, p, c.name)
	}
}

// TestPlanStep checks that a step's plan is PlanArm's for the schedule
// sample of the step's cost, readback and frontier density.
func TestPlanStep(t *testing.T) {
	graph := megakernel.GraphShape{NodeCount: 1 << 20, EdgeCount: 4 << 20}
	mem := megakernel.MemoryPlan{RequiredBytes: 1 << 20, BudgetBytes: 1 << 30}
	cost := StepCost{LaunchOverheadNs: 2500, ReadbackBytes: 4}
	got, err := PlanStep(testProfile{Steps: 9}, cost, 3000, 0.001, graph, mem, armFor)
	require.NoError(t, err)
	want, err := PlanArm(testProfile{Steps: 9}, megakernel.ScheduleSample{DispatchCostNS: 3000, FrontierDensity: 0.001, ReadbackBytes: 4}, 2500, graph, mem, armFor)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = PlanStep(testProfile{}, cost, 3000, 2, graph, mem, armFor)
	assert.Error(t, err, "a density above 1")
}

// TestArmPlanDescribe checks the arm plan's log line.
func TestArmPlanDescribe(t *testing.T) {
	p := ArmPlan[testArm, testProfile]{Arm: "persistent", Decision: megakernel.TopologyDecision{Topology: megakernel.WarpSparseFrontier},
		Sample: megakernel.ScheduleSample{FrontierDensity: 0.0012345}, LaunchOverheadNs: 2500, FusionPressure: 0.875}
	assert.Equal(t, "persistent (topology WarpSparseFrontier, ultra_sparse_warp_specialized; level 12.00 µs, launch overhead 2.50 µs, frontier density 0.0012, fusion pressure 0.88)",
		p.Describe("level", 12000))
}

// TestLimitedBuffer checks what the buffer keeps and that a write never reports a
// short count.
func TestLimitedBuffer(t *testing.T) {
	for _, c := range []struct {
		name   string
		limit  int64
		writes []string
		kept   string
		over   bool
	}{
		{"under the limit", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly the limit", 6, []string{"abc", "def"}, "abcdef", false},
		{"past the limit", 4, []string{"abc", "def", "gh"}, "abcd", true},
		{"no room at all", 0, []string{"a"}, "", true},
	} {
		b := &LimitedBuffer{Limit: c.limit}
		for _, w := range c.writes {
			n, err := b.Write([]byte(w))
			require.NoError(t, err, c.name)
			assert.Equal(t, len(w), n, "%s: a write reports every byte", c.name)
		}
		assert.Equal(t, c.kept, b.String(), c.name)
		assert.Equal(t, c.over, b.Over(), c.name)
	}
}

// TestCheckExecutable checks the peer binaries refused before any measurement.
func TestCheckExecutable(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "exe"), filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	for _, c := range []struct {
		name, path  string
		notExec, ok bool
	}{{"an executable", exe, false, true}, {"not executable", plain, true, false}, {"a folder", dir, true, false},
		{"missing", filepath.Join(dir, "none"), false, false}} {
		err := CheckExecutable(c.path)
		assert.Equal(t, c.ok, err == nil, c.name)
		assert.Equal(t, c.notExec, errors.Is(err, ErrNotExecutable), c.name)
	}
	assert.ErrorIs(t, CheckExecutable(filepath.Join(dir, "none")), os.ErrNotExist)
}

// TestCommand runs processes through sh: their outputs, environment, failure,
// timeout, and an output over the buffer's limit.
func TestCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh: ", err)
	}
	for _, c := range []struct {
		name, script   string
		env            []string
		stdout, stderr string
		err            bool
	}{
		{"both outputs", "echo out; echo err >&2", nil, "out\n", "err\n", false},
		{"the environment added", `echo "$HARNESS_TEST"`, []string{"HARNESS_TEST=yes"}, "yes\n", "", false},
		{"a failure", "echo partial; exit 3", nil, "partial\n", "", true},
	} {
		var out, errOut LimitedBuffer
		out.Limit, errOut.Limit = 1<<10, 1<<10
		err := Command(context.Background(), sh, []string{"-c", c.script}, c.env, &out, &errOut)
		assert.Equal(t, c.err, err != nil, c.name)
		assert.Equal(t, c.stdout, out.String(), c.name)
		assert.Equal(t, c.stderr, errOut.String(), c.name)
	}
	both := &LimitedBuffer{Limit: 1 << 10}
	require.NoError(t, Exec(context.Background(), sh, []string{"-c", "echo a; echo b >&2"}, nil, both))
	assert.ElementsMatch(t, []string{"a", "b"}, strings.Fields(both.String()))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.Error(t, Command(ctx, sh, []string{"-c", "sleep 5"}, nil, nil, nil), "the context bounds the run")
	small := &LimitedBuffer{Limit: 3}
	require.NoError(t, Exec(context.Background(), sh, []string{"-c", "head -c 100000 /dev/zero"}, nil, small), "an overlong output does not stop the process")
	assert.True(t, small.Over())
	assert.Equal(t, 3, small.Len(), "the limit holds for a process's output too")
	assert.Equal(t, []byte{0, 0, 0}, small.Bytes())
}

// TestTempDir checks that the cleanup removes the folder.
func TestTempDir(t *testing.T) {
	d, cleanup, err := TempDir("harness-test-")
	require.NoError(t, err)
	assert.Contains(t, filepath.Base(d), "harness-test-")
	require.NoError(t, os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644))
	cleanup()
	_, err = os.Stat(d)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestTailAndLastLines checks the ends of a peer's output kept for its errors.
func TestTailAndLastLines(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(string, int) string
		s    string
		n    int
		want string
	}{
		{"Tail", Tail, "abcdef", 3, "def"}, {"Tail", Tail, "ab", 3, "ab"}, {"Tail", Tail, "", 3, ""},
		{"LastLines", LastLines, "a\n\n b \nc\n", 2, "b | c"}, {"LastLines", LastLines, "a\nb\n", 5, "a | b"},
		{"LastLines", LastLines, "\n\n", 1, ""},
	} {
		assert.Equal(t, c.want, c.f(c.s, c.n), "%s(%q, %d)", c.name, c.s, c.n)
	}
}

// TestParseArm checks the arm names and the error that lists them.
func TestParseArm(t *testing.T) {
	arms := []testArm{"host-loop", "device-loop", "megakernel"}
	for _, c := range []struct {
		name, s string
		arms    []testArm
		want    testArm
		err     string
	}{
		{"a known arm", "device-loop", arms, "device-loop", ""},
		{"an unknown arm lists them", "warp-drive", arms, "", `unknown BFS arm "warp-drive". Fix: use host-loop, device-loop or megakernel`},
		{"one arm", "x", arms[:1], "", `unknown BFS arm "x". Fix: use host-loop`},
		{"two arms", "", arms[:2], "", `unknown BFS arm "". Fix: use host-loop or device-loop`},
	} {
		a, err := ParseArm("BFS", c.arms, c.s)
		assert.Equal(t, c.want, a, c.name)
		if c.err == "" {
			assert.NoError(t, err, c.name)
		} else {
			assert.EqualError(t, err, c.err, c.name)
		}
	}
}

// TestChecked checks that a run, its read and its check run in order and
// stop at the first error, the run's result coming back.
func TestChecked(t *testing.T) {
	errRun, errRead, errCheck := errors.New("run"), errors.New("read"), errors.New("check")
	for _, c := range []struct {
		name          string
		run, read, ck error
		want          error
		reads, checks int
	}{
		{"every step", nil, nil, nil, nil, 1, 1},
		{"the run fails", errRun, nil, nil, errRun, 0, 0},
		{"the read fails", nil, errRead, nil, errRead, 1, 0},
		{"the check fails", nil, nil, errCheck, errCheck, 1, 1},
	} {
		reads, checks := 0, 0
		r, err := Checked(func() (int, error) { return 7, c.run },
			func(r int) (string, error) { reads++; return fmt.Sprint(r), c.read },
			func(r int, out string) error {
				checks++
				assert.Equal(t, "7", out, c.name)
				return c.ck
			})
		assert.Equal(t, 7, r, "%s: the run's result comes back", c.name)
		assert.ErrorIs(t, err, c.want, c.name)
		assert.Equal(t, c.reads, reads, c.name)
		assert.Equal(t, c.checks, checks, c.name)
	}
}

// TestTopologyArm checks the arm of each topology.
func TestTopologyArm(t *testing.T) {
	for _, c := range []struct {
		t    megakernel.Topology
		want testArm
	}{{megakernel.FusedWave, "megakernel"}, {megakernel.WarpSparseFrontier, "megakernel"}, {megakernel.DenseFrontier, "device-loop"},
		{megakernel.SparseFrontier, "device-loop"}} {
		assert.Equal(t, c.want, TopologyArm(c.t, testArm("megakernel"), testArm("device-loop")), c.t.String())
	}
}
