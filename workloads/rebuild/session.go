package rebuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Defaults of Config.
const (
	// DefaultCheckEvery is the device loop's rounds per host check.
	DefaultCheckEvery = 8
	// DefaultThreads is the block size of the step kernels.
	DefaultThreads = 256
	// DefaultPersistentThreads is the persistent kernel's block size.
	DefaultPersistentThreads = 1024
	// DefaultPersistentBlocksPerSM is the persistent kernel's blocks per
	// SM: one, whose grid barrier is the cheapest.
	DefaultPersistentBlocksPerSM = 1
	// stepGridWaves bounds a striding step launch: at most this many times
	// the step kernel's co-resident grid.
	stepGridWaves = 4
)

// Config tunes a Session; the zero value picks the defaults.
type Config struct {
	// CheckEvery is the device loop's rounds per host check (0:
	// DefaultCheckEvery).
	CheckEvery int `json:"check_every"`
	// Threads is the block size of the step kernels (0: DefaultThreads).
	Threads int `json:"threads"`
	// PersistentThreads is the persistent kernel's block size (0:
	// DefaultPersistentThreads).
	PersistentThreads int `json:"persistent_threads"`
	// PersistentBlocksPerSM caps the persistent kernel's co-resident blocks
	// per SM (0: DefaultPersistentBlocksPerSM); the occupancy model and the
	// driver bound it from above.
	PersistentBlocksPerSM int `json:"persistent_blocks_per_sm"`
	// MaxResidentBytes caps the memory budget the plans use (0: the
	// executor's live resident budget, which is never exceeded).
	MaxResidentBytes uint64 `json:"max_resident_bytes,omitempty"`
	// MaxGroupBytes is the launch fusion planner's budget for one fused
	// launch (0: the memory budget).
	MaxGroupBytes uint64 `json:"max_group_bytes,omitempty"`
	// Incremental runs the rounds of egraph.RebuildIncremental: after the
	// first, a round touches only the rows its unions changed, in a hash
	// table kept across rounds. It adds the incremental buffers to the
	// memory plan (PlanIncrementalSizes); ArmPersistent runs them as one
	// launch of KernelIncremental, the host and device loops as launches
	// of KernelIncrementalStep, a phase each. The incremental arms
	// (IncrementalArms) run the same rounds under their own names, and
	// only on such a session.
	Incremental bool `json:"incremental,omitempty"`
	// splitStages, in tests, gives every stage its own layout hash, so
	// that the fusion plan launches each stage alone.
	splitStages bool
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	harness.Fill(&c.CheckEvery, DefaultCheckEvery)
	harness.Fill(&c.Threads, DefaultThreads)
	harness.Fill(&c.PersistentThreads, DefaultPersistentThreads)
	harness.Fill(&c.PersistentBlocksPerSM, DefaultPersistentBlocksPerSM)
	return c
}

// validate checks a Config after withDefaults.
func (c Config) validate() error {
	switch {
	case c.CheckEvery < 1:
		return harness.ConfigError("rebuild", "CheckEvery", c.CheckEvery, "Fix: check at least every round, or pass 0 for the default")
	case !harness.ValidBlockSize(c.Threads):
		return harness.ConfigError("rebuild", "Threads", c.Threads, harness.BlockSizeFix)
	case !harness.ValidBlockSize(c.PersistentThreads):
		return harness.ConfigError("rebuild", "PersistentThreads", c.PersistentThreads, harness.BlockSizeFix)
	case c.PersistentBlocksPerSM < 1:
		return harness.ConfigError("rebuild", "PersistentBlocksPerSM", c.PersistentBlocksPerSM, "Fix: use a positive cap, or 0 for the default")
	}
	return nil
}

// buffers are a session's resident device buffers, in allocation order.
type buffers struct {
	image, unions, pairs, parent, cls, canon, table, ctl, out executor.Buffer
}

// incBuffers are the incremental rounds' buffers (Config.Incremental), in
// allocation order.
type incBuffers struct {
	useStart, uses, link, slot, stamp, lists, ctl executor.Buffer
}

// kernels are a session's entry points.
type kernels struct {
	reset, step, persistent, barrier, buckets, incremental, incStep *executor.Kernel
}

// Session holds one e-graph resident on the device (its device image and
// pending unions, uploaded once) and rebuilds it with any arm, as often as
// asked. It is driven by its Plans: memory, waves, launch fusion, launch
// shapes and convergence.
type Session struct {
	x      *executor.Executor
	g      *egraph.Graph
	name   string
	cfg    Config
	img    *egraph.DeviceImage
	view   egraph.KernelView
	plans  Plans
	mod    *executor.Module
	k      kernels
	buf    buffers
	inc    incBuffers
	uses   [2][]int32 // egraph.UsesIndex: start, uses (Config.Incremental)
	word   []byte
	opened executor.TelemetrySnapshot
}

// NewSession plans a resident rebuild of g (name names it in messages) and
// sets it up: the device image from PackDeviceImage and its upload plan,
// the memory plan (an e-graph that does not fit is refused before anything
// is loaded or allocated, with the plan's numbers), the convergence plan,
// the kernels, the wave plan, the launch fusion plan, the launch shapes
// from the occupancy model, exactly the planned buffers, and one upload of
// the image and the pending unions.
func NewSession(x *executor.Executor, g *egraph.Graph, name string, cfg Config) (*Session, error) {
	if x == nil || g == nil {
		return nil, fmt.Errorf("e-graph rebuild session needs an executor and an e-graph. Fix: open an executor and read or generate an e-graph")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Session{x: x, g: g, name: name, cfg: cfg, word: make([]byte, 4*ResultWords)}
	upload, err := s.planImage()
	if err != nil {
		return nil, err
	}
	steps := []func() error{s.loadKernels, s.planLaunches, s.allocate, func() error { return s.upload(upload) }}
	if s.opened, err = harness.Open(x, s.planMemory, steps, s.Close); err != nil {
		return nil, err
	}
	return s, nil
}

// denseSnapshot is g as a snapshot whose e-class ids are g's dense class
// ids, the ids the union-find runs over.
func denseSnapshot(g *egraph.Graph) (*egraph.Snapshot, error) {
	dense := *g
	dense.ClassIDs = nil
	return dense.ToSnapshot()
}

// planImage packs the device image and plans its upload; the sizes come
// from its layout.
func (s *Session) planImage() (egraph.UploadPlan, error) {
	snap, err := denseSnapshot(s.g)
	if err != nil {
		return egraph.UploadPlan{}, fmt.Errorf("e-graph rebuild of %s: %w", s.name, err)
	}
	if s.img, err = egraph.PackDeviceImage(snap); err != nil {
		return egraph.UploadPlan{}, fmt.Errorf("e-graph rebuild of %s: %w", s.name, err)
	}
	up, err := egraph.PlanDeviceUploadFromImage(s.img)
	if err != nil {
		return up, err
	}
	s.plans.Image = up.Layout
	if s.plans.Sizes, err = PlanSizes(up.Layout, up.ByteLen, uint64(s.g.UnionCount())); err != nil || !s.cfg.Incremental {
		return up, err
	}
	if s.uses[0], s.uses[1], err = egraph.UsesIndex(s.g); err != nil {
		return up, fmt.Errorf("e-graph rebuild of %s: %w", s.name, err)
	}
	s.plans.Sizes, err = PlanIncrementalSizes(s.plans.Sizes)
	return up, err
}

// planMemory plans the resident memory and the convergence.
func (s *Session) planMemory() error {
	budget, err := harness.Budget(s.x, s.cfg.MaxResidentBytes)
	if err != nil {
		return err
	}
	if s.plans.Memory, err = PlanMemory(s.name, s.plans.Sizes, budget); err != nil {
		return err
	}
	s.plans.Convergence, err = PlanConvergence(s.plans.Sizes.Classes)
	return err
}

// loadKernels loads the module and its entry points.
func (s *Session) loadKernels() error {
	var err error
	s.mod, err = harness.LoadKernels(s.x, rebuildPTX, []harness.Entry{{Dst: &s.k.reset, Name: KernelReset}, {Dst: &s.k.step, Name: KernelStep},
		{Dst: &s.k.persistent, Name: KernelPersistent}, {Dst: &s.k.barrier, Name: KernelBarrierOnly}, {Dst: &s.k.buckets, Name: KernelBucketPairs},
		{Dst: &s.k.incremental, Name: KernelIncremental}, {Dst: &s.k.incStep, Name: KernelIncrementalStep}})
	return err
}

// planLaunches plans the waves, the launch fusion and the launch shapes.
func (s *Session) planLaunches() error {
	p := &s.plans
	view, err := egraph.NewKernelView(0, egraph.UploadPlan{Layout: p.Image, ByteLen: p.Sizes.ImageBytes})
	if err != nil {
		return err
	}
	lc := egraph.LaunchConfig{ThreadsPerBlock: uint32(s.cfg.Threads), MaxBlocksPerLaunch: egraph.DefaultMaxBlocksPerLaunch}
	if p.Work, err = egraph.PlanKernelWork(view, lc); err != nil {
		return err
	}
	maxGroup := s.cfg.MaxGroupBytes
	if maxGroup == 0 {
		maxGroup = p.Memory.BudgetBytes
	}
	p.Stages, p.CompactStages = FusionStages(p.Sizes), CompactFusionStages(p.Sizes)
	if s.cfg.splitStages {
		for i := range p.Stages {
			p.Stages[i].LayoutHash = layoutHash(Stage(i).String())
		}
	}
	if p.Fusion, p.CompactFusion, err = planFusion(p.Stages, p.CompactStages, maxGroup); err != nil {
		return err
	}
	if p.StepGrid, err = s.x.CooperativeGrid(s.k.step, s.cfg.Threads, 0); err != nil {
		return err
	}
	if p.PersistentGrid, err = s.persistentGrid(s.k.persistent, "rebuild persistent"); err != nil || !s.cfg.Incremental {
		return err
	}
	grid, err := s.persistentGrid(s.k.incremental, "rebuild incremental")
	p.IncrementalGrid = &grid
	return err
}

// persistentGrid plans the co-resident grid of a cooperative kernel.
func (s *Session) persistentGrid(k *executor.Kernel, name string) (executor.GridPlan, error) {
	return harness.PersistentGrid(s.x, k, s.cfg.PersistentThreads, harness.GridCap{BlocksPerSM: s.cfg.PersistentBlocksPerSM,
		MaxBlocks: MaxPersistentBlocks, Kernel: name, Field: "PersistentBlocksPerSM"})
}

// allocate allocates the buffers the memory plan counts, and checks that
// they add up to its required bytes.
func (s *Session) allocate() error {
	bufs, sizes := harness.Buffers(&s.buf), s.plans.Sizes.buffers()
	if s.cfg.Incremental {
		bufs, sizes = append(bufs, harness.Buffers(&s.inc)...), append(sizes, s.plans.Sizes.incBuffers()...)
	}
	return harness.Allocate(s.x, "e-graph rebuild session", bufs, sizes, s.plans.Memory.RequiredBytes)
}

// upload uploads the image and the pending unions, once, and builds the
// kernel view over the image's device address.
func (s *Session) upload(up egraph.UploadPlan) error {
	unions := harness.BytesOf(s.g.Unions)
	if len(unions) == 0 {
		unions = make([]byte, 8)
	}
	uploads := []executor.Upload{{Buffer: s.buf.image, Data: harness.BytesOf(up.Words)}, {Buffer: s.buf.unions, Data: unions}}
	if s.cfg.Incremental {
		uploads = append(uploads, executor.Upload{Buffer: s.inc.useStart, Data: harness.BytesOf(s.uses[0])}, executor.Upload{Buffer: s.inc.uses, Data: harness.BytesOf(s.uses[1])})
	}
	if err := s.x.UploadMany(uploads); err != nil {
		return err
	}
	base, err := s.x.DevicePtr(s.buf.image)
	if err != nil {
		return err
	}
	if s.view, err = egraph.NewKernelView(uint64(base), up); err != nil {
		return err
	}
	s.plans.Work.View = s.view
	return nil
}

// section returns the word offset of an image section in the kernel view.
func (s *Session) section(sec egraph.Section) uint64 {
	return (s.view.Pointers[sec] - s.view.Base) / 4
}

// Plans returns the plans the session runs by.
func (s *Session) Plans() Plans { return s.plans }

// Config returns the session's configuration with its defaults filled in.
func (s *Session) Config() Config { return s.cfg }

// Graph returns the resident e-graph.
func (s *Session) Graph() *egraph.Graph { return s.g }

// Image returns the resident device image.
func (s *Session) Image() *egraph.DeviceImage { return s.img }

// Name returns the input's name.
func (s *Session) Name() string { return s.name }

// Close frees the session's device buffers.
func (s *Session) Close() error {
	return harness.Free(s.x, append(harness.Buffers(&s.buf), harness.Buffers(&s.inc)...))
}
