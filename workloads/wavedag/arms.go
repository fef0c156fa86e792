package wavedag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// Arm is one way to execute a program.
type Arm string

// The arms.
const (
	// ArmStreams launches each wave on a small pool of streams, its
	// dependencies as events: what a user writes by hand.
	ArmStreams Arm = "streams"
	// ArmGraph replays the DAG as one CUDA graph of kernel nodes and
	// edges, instantiated once.
	ArmGraph Arm = "graph"
	// ArmGraphPDL is ArmGraph with programmatic dependent launch edges
	// (Hopper and later): a wave's prologue overlaps its producers.
	ArmGraphPDL Arm = "graph-pdl"
	// ArmBarriers is one cooperative persistent launch that runs the
	// barrier plan's groups with a grid barrier between them.
	ArmBarriers Arm = "barriers"
	// ArmWaits is one persistent launch that runs the tile plan: each tile
	// starts once the producer tiles it reads are done, with no grid
	// barrier.
	ArmWaits Arm = "waits"
)

// Arms returns every arm, in the order runs report them.
func Arms() []Arm { return []Arm{ArmStreams, ArmGraph, ArmGraphPDL, ArmBarriers, ArmWaits} }

// ParseArms reads a comma-separated list of arm names.
func ParseArms(list string) ([]Arm, error) {
	var out []Arm
	seen := map[Arm]bool{}
	for _, f := range strings.Split(list, ",") {
		a := Arm(strings.TrimSpace(f))
		known := false
		for _, k := range Arms() {
			known = known || a == k
		}
		if !known {
			return nil, fmt.Errorf("arm %q is unknown. Fix: list arms among streams, graph, graph-pdl, barriers and waits", clip(string(a)))
		}
		if seen[a] {
			return nil, fmt.Errorf("arm %s is listed twice. Fix: list each arm once", a)
		}
		seen[a] = true
		out = append(out, a)
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Persistent reports whether the arm is one persistent launch.
func (a Arm) Persistent() bool { return a == ArmBarriers || a == ArmWaits }

// Run is one execution of a program by one arm: its times and what it
// executed, to hold against the plans.
type Run struct {
	Arm      Arm    `json:"arm"`
	WallNs   uint64 `json:"wall_ns"`
	DeviceNs uint64 `json:"device_ns"`
	// Launches are the kernel launches the host made; GraphLaunches the
	// graph replays.
	Launches      uint64 `json:"launches"`
	GraphLaunches uint64 `json:"graph_launches"`
	// Barriers, CounterWaits, Tasks and Unwaited are what a persistent
	// launch counted: grid barriers crossed, counter and flag checks,
	// tasks run, and tasks of prologue waves that returned without
	// gp_wait.
	Barriers     uint64 `json:"grid_barriers"`
	CounterWaits uint64 `json:"counter_waits"`
	Tasks        uint64 `json:"tasks"`
	Unwaited     uint64 `json:"unwaited_prologues"`
	// Grid is the persistent launch's grid.
	Grid uint32 `json:"grid_blocks,omitempty"`
}

// Run executes the program once with arm, from the buffers' current
// contents, and waits for it. A persistent run that stops making progress
// returns a *WatchdogError (the state is reset and the session stays
// usable); a kernel fault a *FaultError and a launch that never finishes a
// *HangError, after which the device context is lost.
func (s *Session) Run(arm Arm) (Run, error) {
	if s.lost != nil {
		return Run{}, s.lost
	}
	before := s.x.Telemetry()
	var r Run
	var err error
	switch arm {
	case ArmStreams:
		r, err = s.runStreams()
	case ArmGraph, ArmGraphPDL:
		r, err = s.runGraph(arm)
	case ArmBarriers, ArmWaits:
		r, err = s.runPersistent(arm)
	default:
		return Run{}, fmt.Errorf("arm %q is unknown. Fix: use one of %v", arm, Arms())
	}
	r.Arm = arm
	after := s.x.Telemetry()
	r.Launches = after.KernelLaunches - before.KernelLaunches
	r.GraphLaunches = after.GraphLaunches - before.GraphLaunches
	return r, err
}

// await waits for a run on a goroutine of its own, up to the hang
// timeout: past it the session is lost (the wait stays blocked).
func (s *Session) await(arm Arm, wait func() (executor.Timing, error)) (executor.Timing, error) {
	type result struct {
		t   executor.Timing
		err error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := wait()
		ch <- result{t, err}
	}()
	timer := time.NewTimer(s.opts.HangTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.t, s.classify(arm, r.err)
	case <-timer.C:
		s.lost = &HangError{Arm: arm, Program: s.p.Name(), Timeout: s.opts.HangTimeout}
		return executor.Timing{}, s.lost
	}
}

// classify turns a kernel fault into a *FaultError, which loses the
// session.
func (s *Session) classify(arm Arm, err error) error {
	if !executor.ContextLost(err) {
		return err
	}
	s.lost = &FaultError{Arm: arm, Program: s.p.Name(), Wave: -1, Err: err}
	return s.lost
}

// streamPool is the streams arm's streams and events: each wave's stream
// (a wave follows a producer whose stream it was last on, or takes the
// next stream in turn), the events its consumers on other streams wait on,
// and the events around a run.
type streamPool struct {
	streams     []*executor.Stream
	start, stop *executor.Event
	ends        []*executor.Event
	events      []*executor.Event
	of          []int
	order       []int
	cross       [][]int
}

func (s *Session) pool() (*streamPool, error) {
	if s.streams != nil {
		return s.streams, nil
	}
	n := s.p.Waves()
	width := 1
	for _, g := range s.p.Plan.Layers {
		width = max(width, len(g))
	}
	sp := &streamPool{of: make([]int, n), events: make([]*executor.Event, n), cross: make([][]int, n)}
	count := min(s.opts.Streams, width)
	last := make([]int, count)
	for i := range last {
		last[i] = -1
	}
	next := 0
	for _, layer := range s.p.Plan.Layers {
		for _, v := range layer {
			sp.order = append(sp.order, v)
			st := -1
			for _, q := range s.p.Plan.Waits[v] {
				if last[sp.of[q]] == q {
					st = sp.of[q]
					break
				}
			}
			if st < 0 {
				st, next = next, (next+1)%count
			}
			sp.of[v], last[st] = st, v
			for _, q := range s.p.Plan.Waits[v] {
				if sp.of[q] != st {
					sp.cross[v] = append(sp.cross[v], q)
				}
			}
		}
	}
	var err error
	fail := func(e error) (*streamPool, error) { return nil, errors.Join(e, sp.close()) }
	for range count {
		st, err := s.x.NewStream()
		if err != nil {
			return fail(err)
		}
		sp.streams = append(sp.streams, st)
	}
	if sp.start, err = s.x.NewEvent(true); err != nil {
		return fail(err)
	}
	if sp.stop, err = s.x.NewEvent(true); err != nil {
		return fail(err)
	}
	for range count {
		e, err := s.x.NewEvent(false)
		if err != nil {
			return fail(err)
		}
		sp.ends = append(sp.ends, e)
	}
	for v := range n {
		for _, q := range sp.cross[v] {
			if sp.events[q] == nil {
				if sp.events[q], err = s.x.NewEvent(false); err != nil {
					return fail(err)
				}
			}
		}
	}
	s.streams = sp
	return sp, nil
}

func (sp *streamPool) close() error {
	var errs []error
	for _, st := range sp.streams {
		errs = append(errs, st.Close())
	}
	for _, e := range append(append([]*executor.Event{sp.start, sp.stop}, sp.ends...), sp.events...) {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	return errors.Join(errs...)
}

// launchArgs are wave v's wrapper arguments: its argument slots and tiles.
func (s *Session) launchArgs(v int) (executor.LaunchConfig, []executor.Arg) {
	k := s.p.wave(v).Kernel
	cfg := executor.Linear(uint32(*k.Tiles), uint32(*k.Block))
	cfg.DynamicSharedBytes = uint32(k.SharedBytes)
	return cfg, []executor.Arg{executor.PtrAt(s.argBuf, 8*s.im.waveArgFirst[v]), executor.U64(*k.Tiles)}
}

// runStreams enqueues every wave in Kahn order on its stream, waiting on
// its producers' events across streams, between two timing events.
func (s *Session) runStreams() (Run, error) {
	sp, err := s.pool()
	if err != nil {
		return Run{}, err
	}
	t0 := time.Now()
	enqueue := func() error {
		root := sp.streams[0]
		if err := root.Record(sp.start); err != nil {
			return err
		}
		for _, st := range sp.streams[1:] {
			if err := st.Wait(sp.start); err != nil {
				return err
			}
		}
		for _, v := range sp.order {
			st := sp.streams[sp.of[v]]
			for _, q := range sp.cross[v] {
				if err := st.Wait(sp.events[q]); err != nil {
					return err
				}
			}
			cfg, args := s.launchArgs(v)
			if err := st.Launch(s.wrappers[v], cfg, args...); err != nil {
				return fmt.Errorf("%s: %w", s.p.WaveLabel(v), err)
			}
			if sp.events[v] != nil {
				if err := st.Record(sp.events[v]); err != nil {
					return err
				}
			}
		}
		for i, st := range sp.streams[1:] {
			if err := st.Record(sp.ends[i+1]); err != nil {
				return err
			}
			if err := root.Wait(sp.ends[i+1]); err != nil {
				return err
			}
		}
		return root.Record(sp.stop)
	}
	if err := enqueue(); err != nil {
		return Run{}, s.classify(ArmStreams, err)
	}
	t, err := s.await(ArmStreams, func() (executor.Timing, error) { return s.finishEvents(t0, sp.start, sp.stop, sp.streams) })
	return Run{WallNs: t.WallNs, DeviceNs: t.DeviceNs}, err
}

// finishEvents waits for stop, reads the device time from start and
// synchronises the streams (which have finished) to release their buffers.
func (s *Session) finishEvents(t0 time.Time, start, stop *executor.Event, streams []*executor.Stream) (executor.Timing, error) {
	if err := stop.Synchronize(); err != nil {
		return executor.Timing{}, err
	}
	wall := uint64(time.Since(t0))
	ns, err := executor.ElapsedNs(start, stop)
	if err != nil {
		return executor.Timing{}, err
	}
	for _, st := range streams {
		if err := st.Synchronize(); err != nil {
			return executor.Timing{}, err
		}
	}
	return executor.Timing{WallNs: wall, DeviceNs: ns, HasDeviceTime: true}, nil
}

// graph builds and instantiates the arm's graph once: one kernel node per
// wave, an edge per wait of the producer wait plan, programmatic for
// ArmGraphPDL.
func (s *Session) graph(arm Arm) (*executor.Graph, error) {
	if g, ok := s.graphs[arm]; ok {
		return g, nil
	}
	pdl := arm == ArmGraphPDL
	if pdl && s.x.Device().Major < 9 {
		return nil, fmt.Errorf("arm graph-pdl needs programmatic dependent launch, which %s (sm %d.%d) lacks. Fix: run it on Hopper or later, or leave it out of --arms", s.x.Device().Name, s.x.Device().Major, s.x.Device().Minor)
	}
	b, err := s.x.NewGraph()
	if err != nil {
		return nil, err
	}
	nodes := make([]executor.GraphNode, s.p.Waves())
	for _, layer := range s.p.Plan.Layers {
		for _, v := range layer {
			deps := make([]executor.GraphDep, 0, len(s.p.Plan.Waits[v]))
			for _, q := range s.p.Plan.Waits[v] {
				deps = append(deps, executor.GraphDep{Node: nodes[q], Programmatic: pdl})
			}
			cfg, args := s.launchArgs(v)
			if nodes[v], err = b.AddKernel(s.wrappers[v], cfg, deps, args...); err != nil {
				return nil, errors.Join(fmt.Errorf("%s: %w", s.p.WaveLabel(v), err), b.Close())
			}
		}
	}
	g, err := b.Instantiate()
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	s.graphs[arm] = g
	return g, nil
}

// runGraph replays the arm's graph between two timing events.
func (s *Session) runGraph(arm Arm) (Run, error) {
	g, err := s.graph(arm)
	if err != nil {
		return Run{}, err
	}
	sp, err := s.pool()
	if err != nil {
		return Run{}, err
	}
	root := sp.streams[0]
	t0 := time.Now()
	for _, f := range []func() error{func() error { return root.Record(sp.start) }, func() error { return g.Launch(root) },
		func() error { return root.Record(sp.stop) }} {
		if err := f(); err != nil {
			return Run{}, s.classify(arm, err)
		}
	}
	t, err := s.await(arm, func() (executor.Timing, error) {
		return s.finishEvents(t0, sp.start, sp.stop, sp.streams[:1])
	})
	return Run{WallNs: t.WallNs, DeviceNs: t.DeviceNs}, err
}

// schedArgs are a scheduler's arguments, in SchedParams' order, over the
// task table tasks.
func (s *Session) schedArgs(tasks Section) []executor.Arg {
	im := s.im
	plan := func(sec Section) executor.Arg { return executor.PtrAt(s.planBuf, sec.Offset) }
	state := func(sec Section) executor.Arg { return executor.PtrAt(s.stateBuf, sec.Offset) }
	return []executor.Arg{state(im.Ctl), plan(im.Waves), plan(im.Waits), plan(im.Units), plan(im.Order), plan(tasks), plan(im.Groups),
		state(im.Counters), state(im.Flags), executor.Ptr(s.argBuf), state(im.Diag), executor.U64(uint64(s.p.Waves())),
		executor.U64(im.NTasks), executor.U64(im.NGroups), executor.U64(s.epoch), executor.U64(uint64(s.opts.Watchdog.Nanoseconds()))}
}

// runPersistent runs one persistent launch and reads what it counted.
func (s *Session) runPersistent(arm Arm) (Run, error) {
	k, grid, tasks := s.waitsK, s.waitsGrid, s.im.Tasks
	if arm == ArmBarriers {
		k, grid, tasks = s.barriersK, s.barriersGrid, s.im.BarrierTasks
	}
	s.epoch++
	cfg := executor.Linear(grid.GridBlocks, s.block)
	cfg.DynamicSharedBytes = s.shared
	cfg.Cooperative = arm == ArmBarriers
	pend, err := s.x.LaunchAsync(k, cfg, s.schedArgs(tasks)...)
	if err != nil {
		return Run{}, s.classify(arm, err)
	}
	t, err := s.await(arm, pend.Wait)
	if err != nil {
		return Run{}, err
	}
	r := Run{WallNs: t.WallNs, DeviceNs: t.DeviceNs, Grid: grid.GridBlocks}
	return r, s.readControl(arm, &r)
}

// readControl reads the control words after a persistent run: what it
// counted, and the watchdog's records if it aborted.
func (s *Session) readControl(arm Arm, r *Run) error {
	raw := make([]byte, ctlWords*8)
	if err := s.x.DownloadRangeInto(s.stateBuf, s.im.Ctl.Offset, raw); err != nil {
		return s.classify(arm, err)
	}
	var ctl [ctlWords]uint64
	for i := range ctl {
		ctl[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	d := func(i int) uint64 { return ctl[i] - s.ctl[i] }
	r.Barriers, r.CounterWaits, r.Tasks, r.Unwaited = d(ctlBarriers), d(ctlWaits), d(ctlTasks), d(ctlUnwaited)
	s.ctl = ctl
	if ctl[ctlAbort] == 0 {
		return nil
	}
	werr := &WatchdogError{Arm: arm, Program: s.p, Budget: s.opts.Watchdog, Found: ctl[ctlDiagN]}
	n := min(ctl[ctlDiagN], diagMax)
	if n > 0 {
		raw := make([]byte, n*diagWords*8)
		if err := s.x.DownloadRangeInto(s.stateBuf, s.im.Diag.Offset, raw); err != nil {
			return s.classify(arm, err)
		}
		for i := range n {
			rec := func(j int) uint64 { return binary.LittleEndian.Uint64(raw[8*(i*diagWords+uint64(j)):]) }
			werr.Records = append(werr.Records, WaitRecord{Wave: int(rec(diagWave)), Tile: rec(diagTile), Kind: int(rec(diagKind)),
				Producer: rec(diagProducer), ProducerTile: rec(diagPTile), Observed: rec(diagObserved), Target: rec(diagTarget), WaitedNs: rec(diagWaitedNs)})
		}
	}
	if err := s.resetState(); err != nil {
		return errors.Join(werr, err)
	}
	return werr
}

// resetState zeroes the run state after an aborted run: counters, flags
// and control words, and the epoch.
func (s *Session) resetState() error {
	s.epoch, s.ctl = 0, [ctlWords]uint64{}
	return s.x.Upload(s.stateBuf, make([]byte, s.im.StateBytes))
}

// Planned is what the plans say a run of an arm executes.
type Planned struct {
	Launches      uint64 `json:"launches"`
	GraphLaunches uint64 `json:"graph_launches"`
	Barriers      uint64 `json:"grid_barriers"`
	CounterWaits  uint64 `json:"counter_waits"`
	Tasks         uint64 `json:"tasks"`
}

// Planned returns what a run of arm should execute: a launch per wave on
// streams, one graph replay, the barrier plan's grid barriers and tiles,
// and the tile plan's counter waits and tasks.
func (s *Session) Planned(arm Arm) Planned {
	switch arm {
	case ArmStreams:
		return Planned{Launches: uint64(s.p.Waves())}
	case ArmGraph, ArmGraphPDL:
		return Planned{GraphLaunches: 1}
	case ArmBarriers:
		return Planned{Launches: 1, Barriers: uint64(s.p.Plan.GlobalBarriers), Tasks: s.im.BarrierTasks.Bytes / (4 * taskWords)}
	}
	return Planned{Launches: 1, CounterWaits: s.p.Plan.Tiles.CounterWaits, Tasks: s.p.Plan.Tiles.Tasks}
}

// PlanMismatchError is a run that executed other than its plan says.
type PlanMismatchError struct {
	Arm      Arm
	What     string
	Planned  uint64
	Executed uint64
}

// Error gives both numbers and ends with a "Fix:" sentence.
func (e *PlanMismatchError) Error() string {
	return fmt.Sprintf("arm %s executed %d %s, its plan says %d. Fix: this is a bug in gpuplan's runtime or plans; report it with the workload", e.Arm, e.Executed, e.What, e.Planned)
}

// CheckPlan holds a run against its arm's plan: launches, graph replays,
// grid barriers crossed, counter waits and tasks must all be the planned
// ones.
func (s *Session) CheckPlan(r Run) error {
	p := s.Planned(r.Arm)
	for _, c := range []struct {
		what        string
		plan, count uint64
	}{{"kernel launches", p.Launches, r.Launches}, {"graph launches", p.GraphLaunches, r.GraphLaunches},
		{"grid barriers", p.Barriers, r.Barriers}, {"counter waits", p.CounterWaits, r.CounterWaits}, {"tasks", p.Tasks, r.Tasks}} {
		if c.plan != c.count {
			return &PlanMismatchError{Arm: r.Arm, What: c.what, Planned: c.plan, Executed: c.count}
		}
	}
	return nil
}
