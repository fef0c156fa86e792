package executor

import (
	"encoding/binary"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"maps"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLaunchArgumentChecks(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	var seen []uint64
	f.cfg.Kernels["add_one"] = FakeKernel{Attrs: FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}, Run: func(l *FakeLaunch) error {
		seen = append([]uint64(nil), l.Args...)
		return nil
	}}
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("add_one")
	require.NoError(t, err)
	b, err := x.Alloc(256)
	require.NoError(t, err)
	ptr, err := x.DevicePtr(b)
	require.NoError(t, err)

	_, err = x.Launch(k, Linear(1, 1), Ptr(b), PtrAt(b, 100), U64(7), I64(-1), F64(1.5))
	require.NoError(t, err)
	assert.Equal(t, []uint64{uint64(ptr), uint64(ptr) + 100, 7, math.MaxUint64, math.Float64bits(1.5)}, seen)

	// A device parameter buffer is uploaded, passed by address and freed.
	var params []byte
	f.cfg.Kernels["heavy"] = FakeKernel{Attrs: FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}, Run: func(l *FakeLaunch) error {
		p, err := l.Bytes(DevPtr(l.Args[0]), 16)
		params = append([]byte(nil), p...)
		return err
	}}
	kh, err := m.Kernel("heavy")
	require.NoError(t, err)
	p := make([]byte, 16)
	binary.LittleEndian.PutUint64(p, uint64(ptr))
	binary.LittleEndian.PutUint64(p[8:], 42)
	before := f.Stats().DeviceAllocations
	_, err = x.Launch(kh, Linear(1, 1), Params(p))
	require.NoError(t, err)
	assert.Equal(t, p, params)
	assert.Equal(t, before, f.Stats().DeviceAllocations, "the parameter buffer is freed")
	assert.Equal(t, uint64(16), x.Telemetry().ParamUploadBytes)

	bad := []struct {
		name string
		cfg  LaunchConfig
		args []Arg
		want string
	}{
		{"offset outside the buffer", Linear(1, 1), []Arg{PtrAt(b, 256)}, "outside buffer"},
		{"unknown buffer", Linear(1, 1), []Arg{Ptr(Buffer{ID: 99})}, "unknown"},
		{"zero Arg", Linear(1, 1), []Arg{{}}, "zero Arg"},
		{"empty params", Linear(1, 1), []Arg{Params(nil)}, "empty"},
		{"too many", Linear(1, 1), make([]Arg, MaxKernelArgs+1), "arguments"},
		{"zero grid", Linear(0, 1), nil, "zero dimension"},
		{"block too large for the device", LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 65}}, nil, "exceed"},
		{"grid too large", LaunchConfig{Grid: [3]uint32{1, 65536, 1}, Block: [3]uint32{1, 1, 1}}, nil, "exceed"},
		{"threads per block", LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{64, 32, 1}}, nil, "threads per block"},
		{"dynamic shared memory above opt-in", LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}, DynamicSharedBytes: 300 << 10}, nil, "dynamic shared memory"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := x.Launch(k, c.cfg, c.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Zero(t, x.InFlight(b), "a refused launch leaves nothing in flight")
		})
	}
	_, err = x.Launch(nil, Linear(1, 1))
	assert.ErrorContains(t, err, "Fix:")

	// Above 48 KiB of dynamic shared memory the kernel is opted in first.
	_, err = x.Launch(k, LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, DynamicSharedBytes: 100 << 10}, Ptr(b))
	require.NoError(t, err)
	a, err := f.FuncAttributes(k.ref)
	require.NoError(t, err)
	assert.Equal(t, 100<<10, a.MaxDynamicSharedBytes)
	s := f.Stats()
	assert.LessOrEqual(t, s.Streams, LaunchResourceCache)
}

func TestSplitPhaseBounds(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("phased")
	require.NoError(t, err)
	for _, n := range []uint64{0, MaxSplitPhases + 1} {
		_, err := x.DispatchWithGridSyncSplit(k, Linear(1, 1), n, false)
		assert.ErrorContains(t, err, "Fix:")
	}
}

func FuzzLiveResidentBudget(f *testing.F) {
	f.Add(uint64(10_000), uint64(1_000), uint64(0))
	f.Add(uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64-1))
	f.Fuzz(func(t *testing.T, total, free, resident uint64) {
		b := LiveResidentBudget(total, free, resident)
		tb := TotalResidentBudget(total)
		if b < resident || (resident < tb && b > tb) {
			t.Fatalf("budget %d for total %d free %d resident %d", b, total, free, resident)
		}
	})
}

func FuzzConfigureJITCache(f *testing.F) {
	f.Add("/h", "", "1", "", "1073741824")
	f.Add("", "/x", "", "/p", "abc")
	f.Fuzz(func(t *testing.T, home, xdg, disable, path, maxsize string) {
		vars := map[string]string{}
		for k, v := range map[string]string{"HOME": home, "XDG_CACHE_HOME": xdg, "CUDA_CACHE_DISABLE": disable, "CUDA_CACHE_PATH": path, "CUDA_CACHE_MAXSIZE": maxsize} {
			if v != "" {
				vars[k] = v
			}
		}
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 16}, len(home+xdg+disable+path+maxsize), func() {
			_, _ = ConfigureJITCacheDefault(&MapEnvironment{Vars: maps.Clone(vars)})
		})
		env := &MapEnvironment{Vars: vars}
		cfg, err := ConfigureJITCacheDefault(env)
		if err != nil {
			var je *JITCacheError
			if !assert.ErrorAs(t, err, &je) || !assert.Contains(t, err.Error(), "Fix:") {
				t.FailNow()
			}
			return
		}
		if env.Vars["CUDA_CACHE_DISABLE"] != "0" || env.Vars["CUDA_CACHE_PATH"] != cfg.Path || cfg.MaxBytes < DefaultJITCacheMaxBytes {
			t.Fatalf("bad config %+v %v", cfg, env.Vars)
		}
	})
}

func FuzzPTXTarget(f *testing.F) {
	f.Add(90)
	f.Add(-5)
	f.Fuzz(func(t *testing.T, sm int) {
		c := PTXTargetCandidates(sm)
		for i, v := range c {
			if v > sm || (i > 0 && v >= c[i-1]) {
				t.Fatalf("candidates %v for %d", c, sm)
			}
		}
		if _, err := ProbePTX(sm); (err != nil) != (sm <= 0) {
			t.Fatalf("sm %d: %v", sm, err)
		}
	})
}
