package executor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/occupancy"
)

// dagPTX declares the fake's kernel "step" and a function the link must
// resolve from dagHelperPTX.
const (
	dagPTX = `.version 7.8
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) helper(.param .b32 x);
.visible .entry step(.param .u64 in, .param .u64 out, .param .u64 k)
{
	ret;
}
`
	dagHelperPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) helper(.param .b32 x)
{
	ret;
}
`
)

// dagFake is a fake whose kernel step writes out[i] = in[i]*3 + k over
// the whole buffer.
func dagFake(t *testing.T, deferred bool, seed uint64) (*Executor, *Fake) {
	t.Helper()
	dev, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	dev.TotalMemoryBytes = 1 << 30
	step := FakeKernel{Run: func(l *FakeLaunch) error {
		n, err := l.Len(DevPtr(l.Args[0]))
		if err != nil {
			return err
		}
		in, err := l.Bytes(DevPtr(l.Args[0]), n)
		if err != nil {
			return err
		}
		out, err := l.Bytes(DevPtr(l.Args[1]), n)
		if err != nil {
			return err
		}
		for i := 0; i+4 <= len(in); i += 4 {
			binary.LittleEndian.PutUint32(out[i:], binary.LittleEndian.Uint32(in[i:])*3+uint32(l.Args[2]))
		}
		return nil
	}, Attrs: FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}}
	f := NewFake(FakeConfig{Device: dev, Kernels: map[string]FakeKernel{"step": step}, DeferStreams: deferred, Seed: seed, MaxPTXVersion: 90})
	x, err := New(f, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x, f
}

func linkedStep(t *testing.T, x *Executor) *Kernel {
	t.Helper()
	m, err := x.LinkModule(LinkInput{Name: "dag.ptx", PTX: []byte(dagPTX)}, LinkInput{Name: "helper.ptx", PTX: []byte(dagHelperPTX)})
	require.NoError(t, err)
	k, err := m.Kernel("step")
	require.NoError(t, err)
	return k
}

func TestLinkModuleResolvesAndRefuses(t *testing.T) {
	x, _ := dagFake(t, false, 1)
	k := linkedStep(t, x)
	require.Equal(t, "step", k.Name())
	m2, err := x.LinkModule(LinkInput{Name: "dag.ptx", PTX: []byte(dagPTX)}, LinkInput{Name: "helper.ptx", PTX: []byte(dagHelperPTX)})
	require.NoError(t, err)
	require.Same(t, k.m, m2, "the same inputs hit the module cache")

	cases := []struct {
		name   string
		inputs []LinkInput
		want   string
	}{
		{"undefined", []LinkInput{{Name: "dag.ptx", PTX: []byte(dagPTX)}}, "Undefined reference to 'helper' in 'dag.ptx'"},
		{"defined twice", []LinkInput{{Name: "dag.ptx", PTX: []byte(dagPTX)}, {Name: "a.ptx", PTX: []byte(dagHelperPTX)}, {Name: "b.ptx", PTX: []byte(dagHelperPTX)}},
			"Multiple definition of 'helper' in 'b.ptx', first defined in 'a.ptx'"},
		{"prototype", []LinkInput{{Name: "dag.ptx", PTX: []byte(dagPTX)}, {Name: "h.ptx", PTX: []byte(`.version 7.8
.target sm_80
.address_size 64
.visible .func helper(.param .b64 x)
{
	ret;
}`)}}, "Prototype doesn't match for 'helper'"},
		{"not PTX", []LinkInput{{Name: "junk.ptx", PTX: []byte("hello")}}, "no .version directive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := x.LinkModule(c.inputs...)
			var le *LinkError
			require.ErrorAs(t, err, &le)
			require.Contains(t, err.Error(), c.want)
			require.Contains(t, err.Error(), "Fix:")
		})
	}
	_, err = x.LinkModule()
	require.ErrorContains(t, err, "Fix: pass 1 to 64 PTX inputs")
	_, err = x.LinkModule(LinkInput{Name: "empty.ptx"})
	require.ErrorContains(t, err, "link input 0 (empty.ptx)")
}

func TestLinkModuleWithRegisterCap(t *testing.T) {
	x, _ := dagFake(t, false, 1)
	inputs := []LinkInput{{Name: "dag.ptx", PTX: []byte(dagPTX)}, {Name: "helper.ptx", PTX: []byte(dagHelperPTX)}}
	plain, err := x.LinkModule(inputs...)
	require.NoError(t, err)
	capped, err := x.LinkModuleWith(LinkOptions{MaxRegisters: 64}, inputs...)
	require.NoError(t, err)
	require.NotSame(t, plain, capped, "a register cap is another image")
	again, err := x.LinkModuleWith(LinkOptions{MaxRegisters: 64}, inputs...)
	require.NoError(t, err)
	require.Same(t, capped, again, "the same cap hits the module cache")
	none, err := x.LinkModuleWith(LinkOptions{}, inputs...)
	require.NoError(t, err)
	require.Same(t, plain, none, "no cap is LinkModule's image")
	for _, r := range []int{-1, 1, MinLinkRegisters - 1, MaxLinkRegisters + 1, 1 << 20} {
		_, err := x.LinkModuleWith(LinkOptions{MaxRegisters: r}, inputs...)
		require.ErrorContains(t, err, "MaxRegisters", r)
		require.ErrorContains(t, err, "Fix: use 0 for no cap", r)
	}
}

// word reads word 0 of b.
func word(t *testing.T, x *Executor, b Buffer) uint32 {
	got, err := x.Download(b)
	require.NoError(t, err)
	return binary.LittleEndian.Uint32(got)
}

func TestStreamsOrderByEvents(t *testing.T) {
	for seed := range uint64(6) {
		x, _ := dagFake(t, true, seed)
		k := linkedStep(t, x)
		in, err := x.Alloc(64)
		require.NoError(t, err)
		mid, err := x.Alloc(64)
		require.NoError(t, err)
		out, err := x.Alloc(64)
		require.NoError(t, err)
		require.NoError(t, x.Upload(in, make([]byte, 64)))
		a, err := x.NewStream()
		require.NoError(t, err)
		b, err := x.NewStream()
		require.NoError(t, err)
		ev, err := x.NewEvent(false)
		require.NoError(t, err)
		require.ErrorContains(t, b.Wait(ev), "was never recorded")
		require.NoError(t, a.Launch(k, Linear(1, 32), Ptr(in), Ptr(mid), U64(1)))
		require.NoError(t, a.Record(ev))
		require.NoError(t, b.Wait(ev))
		require.NoError(t, b.Launch(k, Linear(1, 32), Ptr(mid), Ptr(out), U64(2)))
		var inflight *InFlightError
		require.ErrorAs(t, x.Free(mid), &inflight, "a stream's buffers stay in flight until it is synchronised")
		require.Error(t, x.Close(), "the executor refuses to close under unsynchronised streams")
		require.NoError(t, b.Synchronize())
		require.NoError(t, a.Synchronize())
		require.Equal(t, uint32(1*3+2), word(t, x, out), "seed %d", seed)
		require.NoError(t, a.Close())
		require.NoError(t, b.Close())
		require.NoError(t, ev.Close())
		require.NoError(t, x.Free(mid))
	}
}

// Without the event, some interleaving runs the consumer first: the fake
// shows the missing dependency.
func TestDeferredStreamsShowAMissingWait(t *testing.T) {
	wrong := false
	for seed := range uint64(16) {
		x, _ := dagFake(t, true, seed)
		k := linkedStep(t, x)
		bufs := make([]Buffer, 3)
		for i := range bufs {
			var err error
			bufs[i], err = x.Alloc(64)
			require.NoError(t, err)
			require.NoError(t, x.Upload(bufs[i], make([]byte, 64)))
		}
		a, _ := x.NewStream()
		b, _ := x.NewStream()
		require.NoError(t, a.Launch(k, Linear(1, 32), Ptr(bufs[0]), Ptr(bufs[1]), U64(1)))
		require.NoError(t, b.Launch(k, Linear(1, 32), Ptr(bufs[1]), Ptr(bufs[2]), U64(2)))
		require.NoError(t, b.Synchronize())
		require.NoError(t, a.Synchronize())
		wrong = wrong || word(t, x, bufs[2]) != 1*3+2
		require.NoError(t, a.Close())
		require.NoError(t, b.Close())
	}
	require.True(t, wrong)
}

func TestGraphReplaysInDependencyOrder(t *testing.T) {
	x, f := dagFake(t, true, 3)
	k := linkedStep(t, x)
	bufs := make([]Buffer, 4)
	for i := range bufs {
		var err error
		bufs[i], err = x.Alloc(64)
		require.NoError(t, err)
		require.NoError(t, x.Upload(bufs[i], make([]byte, 64)))
	}
	gb, err := x.NewGraph()
	require.NoError(t, err)
	n0, err := gb.AddKernel(k, Linear(1, 32), nil, Ptr(bufs[0]), Ptr(bufs[1]), U64(1))
	require.NoError(t, err)
	n1, err := gb.AddKernel(k, Linear(1, 32), []GraphDep{{Node: n0}}, Ptr(bufs[1]), Ptr(bufs[2]), U64(2))
	require.NoError(t, err)
	_, err = gb.AddKernel(k, Linear(1, 32), []GraphDep{{Node: n1, Programmatic: true}}, Ptr(bufs[2]), Ptr(bufs[3]), U64(3))
	require.NoError(t, err)
	_, err = gb.AddKernel(k, Linear(1, 32), []GraphDep{{Node: 7}})
	require.ErrorContains(t, err, "depend on a node AddKernel returned earlier")
	g, err := gb.Instantiate()
	require.NoError(t, err)
	require.Equal(t, 3, g.Nodes())
	s, err := x.NewStream()
	require.NoError(t, err)
	before := f.Stats().Launches
	for range 3 {
		require.NoError(t, g.Launch(s))
	}
	require.NoError(t, s.Synchronize())
	require.Equal(t, before+9, f.Stats().Launches)
	require.Equal(t, uint32((1*3+2)*3+3), word(t, x, bufs[3]))
	require.Equal(t, uint64(3), x.Telemetry().GraphLaunches)
	var inflight *InFlightError
	require.True(t, errors.As(x.Free(bufs[1]), &inflight), "a graph keeps its buffers in flight")
	require.NoError(t, g.Close())
	require.NoError(t, s.Close())
	require.NoError(t, x.Free(bufs[1]))
	_, err = gb.AddKernel(k, Linear(1, 32), nil)
	require.ErrorContains(t, err, "was instantiated or closed")
}

// faultingExecutor opens an executor on a fake whose kernel "step" always
// faults and loses the context; deferred defers its streams' work.
func faultingExecutor(t *testing.T, deferred bool) (*Fake, *Executor, *Kernel) {
	t.Helper()
	dev, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	dev.TotalMemoryBytes = 1 << 20
	f := NewFake(FakeConfig{Device: dev, DeferStreams: deferred, FaultsLoseContext: true, Kernels: map[string]FakeKernel{
		"step": {Run: func(*FakeLaunch) error { return errors.New("out of bounds") }}}})
	x, err := New(f, Options{})
	require.NoError(t, err)
	m, err := x.LoadModule([]byte(dagPTX))
	require.NoError(t, err)
	k, err := m.Kernel("step")
	require.NoError(t, err)
	return f, x, k
}

func TestFaultsLoseTheContext(t *testing.T) {
	_, x, k := faultingExecutor(t, false)
	_, err := x.Launch(k, Linear(1, 32), U64(0), U64(0), U64(0))
	var de *DriverError
	require.ErrorAs(t, err, &de)
	require.Equal(t, cuErrIllegalAddress, de.Code)
	require.Contains(t, err.Error(), "kernel step: out of bounds")
	_, err = x.Alloc(64)
	require.ErrorAs(t, err, &de, "every later call fails")
	require.Equal(t, cuErrIllegalAddress, de.Code)
}

func TestCloseReleasesALostContextWithWorkInFlight(t *testing.T) {
	f, x, k := faultingExecutor(t, true)
	b, err := x.Alloc(64)
	require.NoError(t, err)
	p, err := x.LaunchAsync(k, Linear(1, 32), Out(b), U64(0), U64(0))
	require.NoError(t, err, "a deferred launch fails when it runs")
	require.NotNil(t, p)
	require.Positive(t, x.InFlight(b), "not waited for, the buffer stays in flight")
	var queued []StreamRef
	for s := range f.async.queues {
		queued = append(queued, s)
	}
	require.NotEmpty(t, queued)
	require.Error(t, f.StreamSync(queued[0]), "the device runs the launch, which faults")
	_, _, err = f.MemInfo()
	require.True(t, ContextLost(err), "the fault loses the context: %v", err)
	closeErr := x.Close()
	var busy *InFlightError
	var pending *PendingError
	require.False(t, errors.As(closeErr, &busy) || errors.As(closeErr, &pending), "a lost context is released with work in flight: %v", closeErr)
	require.NoError(t, x.Close(), "closed once")
}

func TestContextLost(t *testing.T) {
	for _, tc := range []struct {
		err  error
		lost bool
	}{
		{nil, false},
		{errors.New("plain"), false},
		{newDriverError("cuLaunchKernel", 700, ""), true},
		{newDriverError("cuLaunchKernel", 719, ""), true},
		{newDriverError("cuMemAlloc", 2, ""), false},
		{fmt.Errorf("wrapped: %w", newDriverError("cuStreamSynchronize", 716, "")), true},
	} {
		assert.Equal(t, tc.lost, ContextLost(tc.err), "%v", tc.err)
	}
}
