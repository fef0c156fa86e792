package wavedag

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/internal/ptxsym"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Emulation runs linked wave programs on the executor's CPU fake backend:
// the generated launch wrappers run each tile of a wave with its Go
// reference (tiles in a random order), and the two persistent schedulers
// are emulated from the plan image the session uploaded, with the same
// queue, counters, flags, barriers, statistics and watchdog records as the
// CUDA runtime. Virtual blocks of the grid interleave in a random order
// (seeded); a wave with a prologue runs up to its Wait while its producers
// are unfinished. Together with the fake's deferred streams and random
// graph orders, a missing dependency in any arm changes the result.
type Emulation struct {
	funcs    map[string]HostFunc
	seed     uint64
	launches uint64
}

// NewEmulation returns an emulation of the wave functions named in funcs.
func NewEmulation(funcs map[string]HostFunc, seed uint64) *Emulation {
	return &Emulation{funcs: maps.Clone(funcs), seed: seed}
}

// NewFake returns a fake backend for dev that links and runs wave programs
// with their Go references: streams deferred and interleaved, a kernel
// failure sticky as on a GPU.
func NewFake(dev occupancy.Device, funcs map[string]HostFunc, seed uint64) *executor.Fake {
	e := NewEmulation(funcs, seed)
	return executor.NewFake(executor.FakeConfig{Device: dev, Link: e.Link, DeferStreams: true, Seed: seed, FaultsLoseContext: true,
		MaxPTXVersion: 90})
}

// emulatedAttrs are the attributes the fake reports for generated and
// runtime kernels: what ptxas reports for the linked schedulers on sm_90.
var emulatedAttrs = executor.FuncAttributes{NumRegs: 72, StaticSharedBytes: 112, MaxThreadsPerBlock: 1024}

// Link gives the kernels of a linked wave program: each generated launch
// wrapper and the two schedulers. It is executor.FakeConfig.Link.
func (e *Emulation) Link(inputs []executor.LinkInput) (map[string]executor.FakeKernel, error) {
	out := map[string]executor.FakeKernel{}
	for _, in := range inputs {
		m, err := ptxsym.Parse(in.PTX)
		if err != nil {
			return nil, err
		}
		funcs := make([]string, len(m.Externs))
		for i, f := range m.Externs {
			funcs[i] = f.Name
		}
		switch in.Name {
		case LaunchInputName:
			for _, en := range m.Entries {
				k, err := e.launchKernel(en.Name, funcs)
				if err != nil {
					return nil, err
				}
				out[en.Name] = k
			}
		case RuntimeInputName:
			out[KernelCopy] = executor.FakeKernel{Attrs: emulatedAttrs, Run: kernelabi.Emulate(kernelabi.EmulateCopy)}
		case DispatchInputName:
			refs, err := e.refs(funcs)
			if err != nil {
				return nil, err
			}
			out[KernelWaits] = executor.FakeKernel{Attrs: emulatedAttrs, Run: func(l *executor.FakeLaunch) error { return e.runScheduler(l, funcs, refs, false) }}
			out[KernelBarriers] = executor.FakeKernel{Attrs: emulatedAttrs, Run: func(l *executor.FakeLaunch) error { return e.runScheduler(l, funcs, refs, true) }}
		}
	}
	return out, nil
}

// refs returns the Go references of funcs, in order.
func (e *Emulation) refs(funcs []string) ([]HostFunc, error) {
	out := make([]HostFunc, len(funcs))
	for i, f := range funcs {
		fn, ok := e.funcs[f]
		if !ok {
			return nil, fmt.Errorf("wave function %s has no Go reference, so the fake backend cannot run it. Fix: register its HostFunc with the emulation (the examples ship theirs), or run on a GPU", f)
		}
		out[i] = fn
	}
	return out, nil
}

// launchKernel is the fake kernel of a generated launch wrapper.
func (e *Emulation) launchKernel(entry string, funcs []string) (executor.FakeKernel, error) {
	rest, ok := strings.CutPrefix(entry, "gp_launch_")
	if !ok {
		return executor.FakeKernel{}, fmt.Errorf("entry %s is not a launch wrapper", entry)
	}
	fn, err := strconv.Atoi(strings.TrimSuffix(rest, "_prologue"))
	if err != nil || fn < 0 || fn >= len(funcs) {
		return executor.FakeKernel{}, fmt.Errorf("entry %s names no declared function", entry)
	}
	refs, err := e.refs(funcs[fn : fn+1])
	if err != nil {
		return executor.FakeKernel{}, err
	}
	name := funcs[fn]
	return executor.FakeKernel{Attrs: emulatedAttrs, Run: func(l *executor.FakeLaunch) error {
		var p LaunchParams[executor.DevPtr]
		if err := kernelabi.Decode(l.Args, &p); err != nil {
			return err
		}
		if uint64(l.Config.Grid[0]) != p.Tiles {
			return fmt.Errorf("%s launched with %d blocks for %d tiles", entry, l.Config.Grid[0], p.Tiles)
		}
		shared := make([]byte, l.Config.DynamicSharedBytes)
		for _, tile := range e.order(p.Tiles) {
			clear(shared)
			t := &Tile{Index: uint32(tile), Count: uint32(p.Tiles), Threads: l.Config.Block[0], args: p.Args, mem: l, shared: shared}
			if err := callTile(name, refs[0], t); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

// order returns 0..n-1 in a random order, seeded per launch.
func (e *Emulation) order(n uint64) []uint64 {
	e.launches++
	r := rand.New(rand.NewPCG(e.seed, e.launches))
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i)
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// words views n uint32 words at p.
func words(l *executor.FakeLaunch, p executor.DevPtr, n uint64) ([]uint32, error) {
	return viewMem[uint32](l, p, n)
}

func viewMem[T any](l *executor.FakeLaunch, p executor.DevPtr, n uint64) ([]T, error) {
	var z T
	b, err := l.Bytes(p, n*uint64(unsafe.Sizeof(z)))
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), nil
}

// schedState is an emulated scheduler launch: the plan image's tables and
// the run state, viewed in fake memory.
type schedState struct {
	p        SchedParams[executor.DevPtr]
	l        *executor.FakeLaunch
	waves    []uint32
	ctl      []uint64
	counters []uint64
	funcs    []string
	refs     []HostFunc
	shared   []byte
	threads  uint32
	rng      *rand.Rand
	waits    uint64
}

func (e *Emulation) runScheduler(l *executor.FakeLaunch, funcs []string, refs []HostFunc, barriers bool) error {
	s := &schedState{l: l, funcs: funcs, refs: refs, shared: make([]byte, l.Config.DynamicSharedBytes), threads: l.Config.Block[0]}
	if err := kernelabi.Decode(l.Args, &s.p); err != nil {
		return err
	}
	e.launches++
	s.rng = rand.New(rand.NewPCG(e.seed, e.launches))
	var err error
	if s.ctl, err = viewMem[uint64](l, s.p.Ctl, ctlWords); err != nil {
		return err
	}
	n := s.p.NWaves
	if s.waves, err = words(l, s.p.Waves, n*waveWords); err != nil {
		return err
	}
	if s.counters, err = viewMem[uint64](l, s.p.Counters, max(n, 1)); err != nil {
		return err
	}
	if barriers {
		err = s.barriers()
	} else {
		err = s.queue()
	}
	if err != nil {
		return err
	}
	s.ctl[ctlWaits] += s.waits
	return nil
}

func (s *schedState) wave(v uint32) []uint32 { return s.waves[v*waveWords : (v+1)*waveWords] }

// call runs wave v's reference on tile with the block's shared memory
// and wait as its gp_wait.
func (s *schedState) call(v, tile uint32, shared []byte, wait func()) error {
	w := s.wave(v)
	if w[waveThreads] > s.threads {
		return fmt.Errorf("wave %d needs %d threads, the block has %d", v, w[waveThreads], s.threads)
	}
	clear(shared)
	t := &Tile{Index: tile, Count: w[waveTiles], Threads: w[waveThreads], args: s.p.Args + executor.DevPtr(8*uint64(w[waveArgFirst])),
		mem: s.l, shared: shared, wait: wait}
	fn := w[waveFn]
	if int(fn) >= len(s.refs) {
		return nil // as gp_dispatch, an unknown id does nothing
	}
	return callTile(s.funcs[fn], s.refs[fn], t)
}

// publish marks tile of wave v done, as the runtime does.
func (s *schedState) publish(v, tile uint32) error {
	w := s.wave(v)
	if w[waveFlagBits]&wavePublishes != 0 {
		f, err := words(s.l, s.p.Flags+executor.DevPtr(4*(uint64(w[waveFlagFirst])+uint64(tile))), 1)
		if err != nil {
			return err
		}
		f[0] = uint32(s.p.Epoch)
	}
	s.counters[v]++
	return nil
}

// pending is the first unsatisfied wait of tile of wave v, or ok; each
// satisfied check counts once, as the device counts it.
type pendingWait struct {
	ok                          bool
	kind, producer, ptile       uint64
	observed, target, satisfied uint64
}

func (s *schedState) check(v, tile uint32) (pendingWait, error) {
	w := s.wave(v)
	ws, err := words(s.l, s.p.Waits+executor.DevPtr(4*uint64(w[waveWaitFirst])*waitWords), uint64(w[waveWaitCount])*waitWords)
	if err != nil {
		return pendingWait{}, err
	}
	var done uint64
	for i := 0; i < len(ws); i += waitWords {
		p, kind := ws[i+waitProducer], ws[i+waitKind]
		ptiles := uint64(s.wave(p)[waveTiles])
		if kind == mapAll {
			target := s.p.Epoch * ptiles
			if s.counters[p] < target {
				return pendingWait{kind: DiagCounter, producer: uint64(p), ptile: ^uint64(0), observed: s.counters[p], target: target, satisfied: done}, nil
			}
			done++
			continue
		}
		lo, hi := uint64(tile), uint64(tile)+1
		if kind == mapBlock {
			b := uint64(ws[i+waitBlock])
			lo = min(uint64(tile)*b, ptiles)
			hi = min(lo+b, ptiles)
		}
		flags, err := words(s.l, s.p.Flags+executor.DevPtr(4*uint64(s.wave(p)[waveFlagFirst])), ptiles)
		if err != nil {
			return pendingWait{}, err
		}
		for q := lo; q < hi; q++ {
			if int32(flags[q]-uint32(s.p.Epoch)) < 0 {
				return pendingWait{kind: DiagFlag, producer: uint64(p), ptile: q, observed: uint64(flags[q]), target: s.p.Epoch, satisfied: done}, nil
			}
			done++
		}
	}
	return pendingWait{ok: true, satisfied: done}, nil
}

// record writes a watchdog record of a blocked wait and raises the abort
// flag.
func (s *schedState) record(v, tile uint32, pw pendingWait) error {
	n := s.ctl[ctlDiagN]
	s.ctl[ctlDiagN]++
	s.ctl[ctlAbort] = 1
	if n >= diagMax {
		return nil
	}
	d, err := viewMem[uint64](s.l, s.p.Diag+executor.DevPtr(8*n*diagWords), diagWords)
	if err != nil {
		return err
	}
	d[diagWave], d[diagTile], d[diagProducer], d[diagPTile] = uint64(v), uint64(tile), pw.producer, pw.ptile
	d[diagObserved], d[diagTarget], d[diagWaitedNs], d[diagKind] = pw.observed, pw.target, s.p.WatchdogNs, pw.kind
	return nil
}
