package wavedag

import (
	"cmp"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
)

//go:embed kernels/runtime.ptx
var runtimePTX []byte

// RuntimePTX returns a copy of the schedulers' relocatable PTX, generated
// by nvcc 11.8 for compute_80.
func RuntimePTX() []byte { return append([]byte(nil), runtimePTX...) }

//go:embed kernels/gpuplan_wave.h
var waveHeader []byte

// Header returns gpuplan_wave.h, the header that documents the wave ABI.
func Header() []byte { return append([]byte(nil), waveHeader...) }

// Session defaults.
const (
	// DefaultWatchdog is how long a persistent arm's block waits for one
	// producer or grid barrier before the run is aborted with a report.
	DefaultWatchdog = 2 * time.Second
	// DefaultHangMargin is added to the watchdog for the host's wait on a
	// launch: past it, a wave function is taken not to return.
	DefaultHangMargin = 10 * time.Second
	// DefaultStreams is the streams arm's pool.
	DefaultStreams = 4
	// MaxStreams bounds the pool.
	MaxStreams = 64
)

// Options configure a session.
type Options struct {
	// Watchdog bounds a persistent arm's wait for one producer or grid
	// barrier (0: DefaultWatchdog).
	Watchdog time.Duration
	// HangTimeout bounds the host's wait for any arm's run (0: Watchdog +
	// DefaultHangMargin).
	HangTimeout time.Duration
	// Grid sets the persistent arms' grid (0: the occupancy model's
	// co-resident grid); a grid that cannot be co-resident is refused.
	Grid uint32
	// Streams is the streams arm's pool (0: DefaultStreams).
	Streams int
	// MaxRegisters caps the registers per thread of the persistent
	// schedulers' image, which takes the heaviest wave function's count
	// (0: no cap; else executor.MinLinkRegisters..MaxLinkRegisters). A
	// lower cap can give the persistent grid more blocks per SM; the
	// launch arms keep each function's own count.
	MaxRegisters int
}

// Session is a program resident on one device: its buffers, argument
// slots, plan image and run state uploaded, its two images linked (the
// launch arms' wrappers and the persistent schedulers), ready to run any
// arm many times. Outputs reads the results back and Reset restores the
// written buffers. A Session is not safe for concurrent use.
type Session struct {
	x    *executor.Executor
	p    *Program
	im   *Image
	opts Options

	bufs     []executor.Buffer
	initial  [][]byte // the written buffers' initial contents (nil: read-only)
	argBuf   executor.Buffer
	planBuf  executor.Buffer
	stateBuf executor.Buffer

	wrappers          []*executor.Kernel
	waitsK, barriersK *executor.Kernel
	// Block and SharedBytes are the persistent arms' block and dynamic
	// shared memory: the largest wave's.
	block, shared uint32
	waitsGrid     executor.GridPlan
	// waitsBlocks is the waits arm's grid set by SetWaitsGrid (0: none).
	waitsBlocks         uint32
	barriersGrid        executor.GridPlan
	epoch               uint64
	streams             *streamPool
	graphs              map[Arm]*executor.Graph
	ctl                 [ctlWords]uint64
	lost                error
	launchMod, schedMod *executor.Module
}

// MemoryPlan is what a session holds on the device.
type MemoryPlan struct {
	BufferBytes uint64 `json:"buffer_bytes"`
	PlanBytes   uint64 `json:"plan_image_bytes"`
	StateBytes  uint64 `json:"state_bytes"`
	ArgBytes    uint64 `json:"argument_bytes"`
	TotalBytes  uint64 `json:"total_bytes"`
	BudgetBytes uint64 `json:"budget_bytes"`
}

// OverBudgetError is a program whose session does not fit the plan's
// memory budget.
type OverBudgetError struct {
	Source string
	Plan   MemoryPlan
}

// Error gives the plan's numbers and ends with a "Fix:" sentence.
func (e *OverBudgetError) Error() string {
	m := e.Plan
	return fmt.Sprintf("%s: the run needs %d bytes on the device (buffers %d, plan image %d, state %d, argument slots %d) but the memory budget is %d. Fix: shrink the buffers, or raise memory_budget_bytes if the device has the room",
		e.Source, m.TotalBytes, m.BufferBytes, m.PlanBytes, m.StateBytes, m.ArgBytes, m.BudgetBytes)
}

// Memory returns the session's memory plan, refusing one over the
// program's budget before anything is allocated.
func (p *Program) Memory(im *Image) (MemoryPlan, error) {
	m := MemoryPlan{PlanBytes: uint64(len(im.Plan)), StateBytes: im.StateBytes, ArgBytes: (im.ArgSlots + 1) * 8, BudgetBytes: p.Plan.BudgetBytes}
	for _, b := range p.Workload.Buffers {
		var err error
		if m.BufferBytes, err = checked.Add(m.BufferBytes, *b.Bytes, "buffer bytes"); err != nil {
			return m, err
		}
	}
	var err error
	if m.TotalBytes, err = checked.Sum("session bytes", m.BufferBytes, m.PlanBytes, m.StateBytes, m.ArgBytes); err != nil {
		return m, err
	}
	if m.TotalBytes > m.BudgetBytes {
		return m, &OverBudgetError{Source: p.Source, Plan: m}
	}
	return m, nil
}

// Open makes p resident on x: it checks the memory plan, allocates and
// fills the buffers, writes the argument slots and the plan image, links
// both images and sizes the persistent grid. On failure nothing stays
// allocated.
func Open(x *executor.Executor, p *Program, opts Options) (*Session, error) {
	if opts.Watchdog <= 0 {
		opts.Watchdog = DefaultWatchdog
	}
	if opts.HangTimeout <= 0 {
		opts.HangTimeout = opts.Watchdog + DefaultHangMargin
	}
	if opts.Streams <= 0 {
		opts.Streams = DefaultStreams
	}
	if opts.Streams > MaxStreams {
		return nil, fmt.Errorf("a pool of %d streams. Fix: use at most %d", opts.Streams, MaxStreams)
	}
	if err := checkRegisterCap(opts.MaxRegisters); err != nil {
		return nil, err
	}
	im, err := BuildImage(p)
	if err != nil {
		return nil, err
	}
	if _, err := p.Memory(im); err != nil {
		return nil, err
	}
	s := &Session{x: x, p: p, im: im, opts: opts, graphs: map[Arm]*executor.Graph{}}
	for _, step := range []func() error{s.allocate, s.writeArgs, s.link, s.sizeGrid} {
		if err := step(); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	return s, nil
}

// allocate allocates and fills the buffers, the plan image and the state.
func (s *Session) allocate() error {
	w := s.p.Workload
	s.initial = make([][]byte, len(w.Buffers))
	data := make([][]byte, 0, len(w.Buffers)+3)
	for i, b := range w.Buffers {
		buf, err := s.x.Alloc(*b.Bytes)
		if err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		s.bufs = append(s.bufs, buf)
		init := s.p.InitialContents(i)
		if !b.ReadOnly {
			s.initial[i] = init
		}
		data = append(data, init)
	}
	var err error
	if s.argBuf, err = s.x.Alloc((s.im.ArgSlots + 1) * 8); err != nil {
		return err
	}
	if s.planBuf, err = s.x.Alloc(uint64(len(s.im.Plan))); err != nil {
		return err
	}
	if s.stateBuf, err = s.x.Alloc(s.im.StateBytes); err != nil {
		return err
	}
	bufs := append(append([]executor.Buffer(nil), s.bufs...), s.planBuf, s.stateBuf)
	data = append(data, s.im.Plan, make([]byte, s.im.StateBytes))
	return s.x.UploadBuffers(bufs, data)
}

// writeArgs writes every wave's argument slots: buffer addresses plus
// offsets, and scalars.
func (s *Session) writeArgs() error {
	slots := make([]byte, (s.im.ArgSlots+1)*8)
	addr := make([]executor.DevPtr, len(s.bufs))
	for i, b := range s.bufs {
		var err error
		if addr[i], err = s.x.DevicePtr(b); err != nil {
			return err
		}
	}
	for v := range s.p.Waves() {
		for j := range s.p.wave(v).Kernel.Args {
			a := &s.p.wave(v).Kernel.Args[j]
			slot := a.Slot()
			if a.Kind() == megakernel.ArgBuffer {
				slot = uint64(addr[a.BufferIndex()]) + a.Offset
			}
			binary.LittleEndian.PutUint64(slots[8*(s.im.waveArgFirst[v]+uint64(j)):], slot)
		}
	}
	return s.x.Upload(s.argBuf, slots)
}

// link links the launch image and the scheduler image and looks up their
// kernels.
func (s *Session) link() error {
	launch, dispatch := GeneratedPTX(s.p, s.x.PTXTarget())
	user := executor.LinkInput{Name: s.p.ModuleName, PTX: s.p.PTX}
	var err error
	s.launchMod, err = s.x.LinkModule(user, executor.LinkInput{Name: LaunchInputName, PTX: launch})
	if err != nil {
		return fmt.Errorf("%s: linking the launch arms' wrappers with %s: %w", s.p.Source, s.p.ModuleName, err)
	}
	s.wrappers = make([]*executor.Kernel, s.p.Waves())
	for v := range s.wrappers {
		if s.wrappers[v], err = s.launchMod.Kernel(LaunchEntry(s.p.waveFn[v], s.p.Prologue(v))); err != nil {
			return err
		}
	}
	return s.linkSchedulers(dispatch)
}

// linkSchedulers links the persistent schedulers' image (the user's module,
// the runtime and the generated dispatch) under the session's register cap.
func (s *Session) linkSchedulers(dispatch []byte) error {
	user := executor.LinkInput{Name: s.p.ModuleName, PTX: s.p.PTX}
	var err error
	s.schedMod, err = s.x.LinkModuleWith(executor.LinkOptions{MaxRegisters: s.opts.MaxRegisters}, user, executor.LinkInput{Name: RuntimeInputName, PTX: runtimePTX},
		executor.LinkInput{Name: DispatchInputName, PTX: dispatch})
	if err != nil {
		return fmt.Errorf("%s: linking the persistent schedulers with %s: %w", s.p.Source, s.p.ModuleName, err)
	}
	if s.waitsK, err = s.schedMod.Kernel(KernelWaits); err != nil {
		return err
	}
	s.barriersK, err = s.schedMod.Kernel(KernelBarriers)
	return err
}

// SetMaxRegisters relinks the persistent schedulers under a new register
// cap (0: none; else executor.MinLinkRegisters..MaxLinkRegisters) and sizes
// their grid again; the launch arms are unchanged. A lower cap can give
// more co-resident blocks, at the price of spills.
func (s *Session) SetMaxRegisters(r int) error {
	if err := checkRegisterCap(r); err != nil {
		return err
	}
	s.opts.MaxRegisters = r
	_, dispatch := GeneratedPTX(s.p, s.x.PTXTarget())
	if err := s.linkSchedulers(dispatch); err != nil {
		return err
	}
	return s.sizeGrid()
}

// MaxRegisters returns the persistent schedulers' register cap (0: none).
func (s *Session) MaxRegisters() int { return s.opts.MaxRegisters }

// Registers returns the registers per thread of the linked persistent
// schedulers.
func (s *Session) Registers() int { return s.waitsK.Attributes().NumRegs }

// checkRegisterCap refuses a cap the linker does not take.
func checkRegisterCap(r int) error {
	if r != 0 && (r < executor.MinLinkRegisters || r > executor.MaxLinkRegisters) {
		return fmt.Errorf("a register cap of %d per thread. Fix: use 0 for no cap, or %d to %d", r, executor.MinLinkRegisters, executor.MaxLinkRegisters)
	}
	return nil
}

// sizeGrid sizes the persistent grid from the occupancy model for the
// linked scheduler (its registers are the heaviest wave function's) at the
// largest wave's block and shared memory.
func (s *Session) sizeGrid() error {
	for _, wv := range s.p.Workload.Waves {
		s.block = max(s.block, uint32(*wv.Kernel.Block))
		s.shared = max(s.shared, uint32(wv.Kernel.SharedBytes))
	}
	// More blocks than a launch has tasks at once would only claim
	// nothing: the waits arm needs at most one block per task, the
	// barriers arm one per task of its widest group.
	widest := s.widestTiles(s.p.Plan.Groups)
	var err error
	for _, g := range []struct {
		k     *executor.Kernel
		plan  *executor.GridPlan
		tasks uint64
		set   uint32
	}{{s.waitsK, &s.waitsGrid, max(s.im.NTasks, 1), cmp.Or(s.waitsBlocks, s.opts.Grid)}, {s.barriersK, &s.barriersGrid, widest, s.opts.Grid}} {
		if *g.plan, err = s.x.CooperativeGrid(g.k, int(s.block), int(s.shared)); err != nil {
			return fmt.Errorf("%s: the persistent grid: %w", s.p.Source, err)
		}
		// A grid set by the caller only has to be co-resident: blocks
		// beyond the tasks claim nothing.
		if g.set > 0 {
			if g.set > g.plan.GridBlocks {
				return &executor.CoResidencyError{Kernel: g.k.Name(), GridBlocks: uint64(g.set), BlocksPerSM: g.plan.BlocksPerSM,
					SMCount: g.plan.SMCount, Limit: uint64(g.plan.GridBlocks), BlockThreads: int(s.block), DynamicSmem: int(s.shared)}
			}
			g.plan.GridBlocks = g.set
			continue
		}
		if uint64(g.plan.GridBlocks) > g.tasks {
			g.plan.GridBlocks = uint32(g.tasks)
		}
	}
	return nil
}

// SetWaitsGrid sets the waits arm's grid to blocks (0: the default, the
// co-resident grid or one block per task, whichever is smaller; or
// Options.Grid), refused when not co-resident. Fewer blocks than the
// co-resident grid claim fewer tasks ahead and poll less.
func (s *Session) SetWaitsGrid(blocks uint32) error {
	old := s.waitsBlocks
	s.waitsBlocks = blocks
	if err := s.sizeGrid(); err != nil {
		s.waitsBlocks = old
		return errors.Join(err, s.sizeGrid())
	}
	return nil
}

// WidestLayerTiles returns the tiles of the program's widest dependency
// layer: the most tasks that can be ready at once between layers.
func (s *Session) WidestLayerTiles() uint64 { return s.widestTiles(s.p.Plan.Layers) }

// widestTiles returns the most tiles of one set of waves (at least 1).
func (s *Session) widestTiles(sets [][]int) uint64 {
	widest := uint64(1)
	for _, set := range sets {
		var tiles uint64
		for _, v := range set {
			tiles += *s.p.wave(v).Kernel.Tiles
		}
		widest = max(widest, tiles)
	}
	return widest
}

// Program returns the session's program.
func (s *Session) Program() *Program { return s.p }

// Image returns the plan image.
func (s *Session) Image() *Image { return s.im }

// Grid returns the persistent waits arm's grid plan.
func (s *Session) Grid() executor.GridPlan { return s.waitsGrid }

// Reset restores every buffer a wave may write to its initial contents.
func (s *Session) Reset() error {
	if s.lost != nil {
		return s.lost
	}
	var bufs []executor.Buffer
	var data [][]byte
	for i, init := range s.initial {
		if init != nil {
			bufs, data = append(bufs, s.bufs[i]), append(data, init)
		}
	}
	return s.x.UploadBuffers(bufs, data)
}

// Outputs reads back the workload's outputs, in its order.
func (s *Session) Outputs() ([][]byte, error) {
	if s.lost != nil {
		return nil, s.lost
	}
	reqs := make([]executor.ReadRequest, len(s.p.Workload.Outputs))
	for i, o := range s.p.Workload.Outputs {
		b := s.bufs[s.p.Workload.BufferIndexOf(o.Buffer)]
		reqs[i] = executor.ReadRequest{Buffer: b, Len: b.Len}
	}
	return s.x.DownloadMany(reqs)
}

// Close releases the session's streams, graphs and buffers; the modules
// stay in the executor's cache. Closing a lost session releases nothing:
// its context is gone, and its executor must be discarded.
func (s *Session) Close() error {
	if s.lost != nil {
		return nil
	}
	var errs []error
	if s.streams != nil {
		errs = append(errs, s.streams.close())
		s.streams = nil
	}
	for a, g := range s.graphs {
		errs = append(errs, g.Close())
		delete(s.graphs, a)
	}
	for _, b := range append(s.bufs, s.argBuf, s.planBuf, s.stateBuf) {
		if b.ID != 0 {
			errs = append(errs, s.x.Free(b))
		}
	}
	s.bufs, s.argBuf, s.planBuf, s.stateBuf = nil, executor.Buffer{}, executor.Buffer{}, executor.Buffer{}
	return errors.Join(errs...)
}

// CopyRun is one timed copy of the copy ceiling: Bytes read plus written.
type CopyRun struct {
	Bytes            uint64
	WallNs, DeviceNs uint64
}

// CopyCeiling times reps copies between two buffers of size bytes (after
// one untimed copy), with the runtime's 16-byte copy kernel on a
// co-resident grid: the device's copy bandwidth, beside the arms.
func (s *Session) CopyCeiling(size uint64, reps int) ([]CopyRun, error) {
	n16 := size / 16
	if n16 == 0 || reps < 1 {
		return nil, fmt.Errorf("copy ceiling of %d bytes, %d copies: copy at least 16 bytes at least once. Fix: pass a larger size", size, reps)
	}
	k, err := s.schedMod.Kernel(KernelCopy)
	if err != nil {
		return nil, err
	}
	var bufs [2]executor.Buffer
	for i := range bufs {
		if bufs[i], err = s.x.Alloc(16 * n16); err != nil {
			return nil, errors.Join(err, s.freeAll(bufs[:i]))
		}
	}
	defer s.freeAll(bufs[:])
	plan, err := s.x.CooperativeGrid(k, 512, 0)
	if err != nil {
		return nil, err
	}
	cfg := plan.Config()
	cfg.Cooperative = false
	args := []executor.Arg{executor.Ptr(bufs[0]), executor.Ptr(bufs[1]), executor.U64(n16)}
	out := make([]CopyRun, 0, reps)
	for i := -1; i < reps; i++ {
		t, err := s.x.Launch(k, cfg, args...)
		if err != nil {
			return nil, s.classify("copy-ceiling", err)
		}
		if i >= 0 {
			out = append(out, CopyRun{Bytes: 2 * 16 * n16, WallNs: t.WallNs, DeviceNs: t.DeviceNs})
		}
	}
	return out, nil
}

// freeAll frees buffers.
func (s *Session) freeAll(bufs []executor.Buffer) error {
	var errs []error
	for _, b := range bufs {
		errs = append(errs, s.x.Free(b))
	}
	return errors.Join(errs...)
}
