package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Defaults of Config.
const (
	// DefaultCheckEvery is the device loop's levels per host check.
	DefaultCheckEvery = 16
	// DefaultLevelThreads is the block size of the per-level kernels.
	DefaultLevelThreads = 256
	// DefaultMegakernelBlocksPerSM is the megakernel's default blocks per
	// SM: one block per SM, whose grid barrier is the cheapest.
	DefaultMegakernelBlocksPerSM = 1
	// DefaultMaxRunAhead is the megakernel's default deepest run-ahead:
	// the adaptive depth never passes it (32 measured best on a 2048 x
	// 2048 grid, where blocks running ahead lower few labels).
	DefaultMaxRunAhead = 32
	// DefaultMegakernelKeep is a megakernel block's default keep budget in
	// edges, the small one: about a fair share per SM of a 2048 x 2048
	// grid's frontier, which spreads a straight wave over every SM.
	DefaultMegakernelKeep = keepEdgesSmall
	// MaxMegakernelKeep is the large keep budget, the keep queue's
	// capacity: a winding frontier stays with the blocks that found it.
	MaxMegakernelKeep = keepEdges
	// maxLogEntries caps the decision log: a traversal of more levels
	// keeps the last maxLogEntries decisions.
	maxLogEntries = 1 << 14
)

// Direction is how a session chooses the direction of each level.
type Direction string

// The direction modes.
const (
	// DirectionAuto lets planners.PlanBFSDirection decide every level:
	// graphs under its degree gate run every level top-down (and the
	// megakernel runs ahead), the others are direction-optimizing (and the
	// megakernel is level-synchronous).
	DirectionAuto Direction = "auto"
	// DirectionTopDown runs every level top-down, whatever the graph.
	DirectionTopDown Direction = "top-down"
)

// ParseDirection returns the direction mode named s.
func ParseDirection(s string) (Direction, error) {
	switch Direction(s) {
	case DirectionAuto, DirectionTopDown:
		return Direction(s), nil
	}
	return "", fmt.Errorf("unknown BFS direction mode %q. Fix: use auto (the planner decides each level) or top-down", s)
}

// DefaultMegakernelThreads returns the megakernel's default block size for
// a graph: 512 threads for graphs of low degree (LowDegree: grids, road
// networks), whose levels are small and bound by latency, and 1,024 for the
// rest, whose levels are large.
func DefaultMegakernelThreads(lowDegree bool) int {
	if lowDegree {
		return 512
	}
	return 1024
}

// Config tunes a Session; the zero value picks the defaults.
type Config struct {
	// Chunk is the most edges per frontier-queue item (0: DefaultChunk).
	Chunk int `json:"chunk"`
	// CheckEvery is the most levels the device loop enqueues per host
	// check (0: DefaultCheckEvery). It enqueues as many as the session's
	// deepest traversal so far took, up to CheckEvery (all CheckEvery
	// before the first), so that a shallow graph's traversals do not
	// launch empty levels past their end.
	CheckEvery int `json:"check_every"`
	// LevelThreads is the block size of the per-level kernels (0:
	// DefaultLevelThreads); at most LevelW64MaxThreads in a session of
	// 64-bit offsets.
	LevelThreads int `json:"level_threads"`
	// MegakernelThreads is the megakernel's block size (0:
	// DefaultMegakernelThreads).
	MegakernelThreads int `json:"megakernel_threads"`
	// MegakernelBlocksPerSM caps the megakernel's co-resident blocks per SM
	// (0: DefaultMegakernelBlocksPerSM); the occupancy model and the driver
	// bound it from above.
	MegakernelBlocksPerSM int `json:"megakernel_blocks_per_sm"`
	// MegakernelAhead is the most levels a megakernel block expands from
	// its own kept frontier between two grid barriers (0:
	// DefaultMaxRunAhead; 1: one barrier per level). The depth adapts below
	// it from each step's lowered labels unless MegakernelFixedAhead.
	MegakernelAhead int `json:"megakernel_ahead"`
	// MegakernelFixedAhead keeps the run-ahead depth at MegakernelAhead
	// instead of adapting it.
	MegakernelFixedAhead bool `json:"megakernel_fixed_ahead,omitempty"`
	// MegakernelKeep is a megakernel block's keep budget: the most edges of
	// its own discoveries it keeps in shared memory for its next level,
	// DefaultMegakernelKeep or MaxMegakernelKeep (0: the default); the
	// kernel compiles the keep test for each. Session.TuneMegakernel
	// measures which pays.
	MegakernelKeep int `json:"megakernel_keep,omitempty"`
	// MegakernelTopDown runs the megakernel's levels top-down, running
	// ahead, even where the session is direction-optimizing (whose
	// megakernel is otherwise level-synchronous): on a graph of long
	// diameter whose levels the direction rule almost never takes
	// bottom-up, running ahead pays more than the rule saves.
	// Session.TuneMegakernel measures which pays.
	MegakernelTopDown bool `json:"megakernel_top_down,omitempty"`
	// MegakernelAsync runs the megakernel's top-down levels without grid
	// barriers between them: each block takes work as it appears and
	// expands it while its label is within MegakernelAhead - 1 labels of
	// the lowest label pending anywhere. It needs top-down levels
	// (in a direction-optimizing session, MegakernelTopDown), blocks of at most
	// MegakernelNarrowThreads threads and a Chunk of at most
	// AsyncItemEdges. A graph whose frontier queue holds fewer than 64
	// items (too few for its counters) runs with grid barriers instead.
	// Session.TuneMegakernel measures whether it pays.
	MegakernelAsync bool `json:"megakernel_async,omitempty"`
	// Direction chooses each level's direction ("": DirectionAuto).
	Direction Direction `json:"direction"`
	// WideOffsets runs the 64-bit kernels (OffsetWidth Offsets64) even
	// where the graph fits 32-bit offsets, which it otherwise runs with;
	// a graph of more adjacency entries runs with 64-bit offsets anyway.
	WideOffsets bool `json:"wide_offsets,omitempty"`
	// MaxResidentBytes caps the memory budget the plans use (0: the
	// executor's live resident budget, which is never exceeded).
	MaxResidentBytes uint64 `json:"max_resident_bytes,omitempty"`
	// queueCap, when not 0, replaces the queue capacity the plan derives
	// from the graph, so that tests can drive the overflow paths.
	queueCap uint64
}

// withDefaults fills the zero fields.
func (c Config) withDefaults(g *frontier.CSR) Config {
	low := LowDegree(g)
	if c.Direction == "" {
		c.Direction = DirectionAuto
	}
	harness.Fill(&c.Chunk, DefaultChunk)
	harness.Fill(&c.CheckEvery, DefaultCheckEvery)
	harness.Fill(&c.LevelThreads, DefaultLevelThreads)
	harness.Fill(&c.MegakernelThreads, DefaultMegakernelThreads(low))
	harness.Fill(&c.MegakernelBlocksPerSM, DefaultMegakernelBlocksPerSM)
	harness.Fill(&c.MegakernelAhead, DefaultMaxRunAhead)
	harness.Fill(&c.MegakernelKeep, DefaultMegakernelKeep)
	return c
}

// validate checks a Config after withDefaults.
func (c Config) validate() error {
	bad := func(field string, v int, fix string) error { return harness.ConfigError("BFS", field, v, fix) }
	switch {
	case c.Chunk < 1:
		return bad("Chunk", c.Chunk, "Fix: use a positive chunk, or 0 for the default")
	case c.CheckEvery < 1:
		return bad("CheckEvery", c.CheckEvery, "Fix: check at least every level, or pass 0 for the default")
	case !harness.ValidBlockSize(c.LevelThreads):
		return bad("LevelThreads", c.LevelThreads, harness.BlockSizeFix)
	case !harness.ValidBlockSize(c.MegakernelThreads):
		return bad("MegakernelThreads", c.MegakernelThreads, harness.BlockSizeFix)
	case c.MegakernelBlocksPerSM < 1:
		return bad("MegakernelBlocksPerSM", c.MegakernelBlocksPerSM, "Fix: use a positive cap, or 0 for the default")
	case c.MegakernelAhead < 1 || c.MegakernelAhead > MaxRunAhead:
		return bad("MegakernelAhead", c.MegakernelAhead, fmt.Sprintf("Fix: use 1 (one grid barrier per level) up to %d levels, or 0 for the default", MaxRunAhead))
	case c.MegakernelKeep != DefaultMegakernelKeep && c.MegakernelKeep != MaxMegakernelKeep:
		return bad("MegakernelKeep", c.MegakernelKeep, fmt.Sprintf("Fix: use %d or %d edges, or 0 for the default", DefaultMegakernelKeep, MaxMegakernelKeep))
	}
	if _, err := ParseDirection(string(c.Direction)); err != nil {
		return fmt.Errorf("BFS config Direction: %w", err)
	}
	return c.validateAsync()
}

// validateAsync checks what MegakernelAsync needs.
func (c Config) validateAsync() error {
	switch {
	case !c.MegakernelAsync:
		return nil
	case c.MegakernelThreads > MegakernelNarrowThreads:
		return fmt.Errorf("BFS config MegakernelThreads = %d with MegakernelAsync: the asynchronous megakernel runs blocks of at most %d threads. Fix: set MegakernelThreads to at most %d", c.MegakernelThreads, MegakernelNarrowThreads, MegakernelNarrowThreads)
	case c.Chunk > AsyncItemEdges:
		return fmt.Errorf("BFS config Chunk = %d with MegakernelAsync: the asynchronous megakernel's queue items hold at most %d edges. Fix: set Chunk to at most %d", c.Chunk, AsyncItemEdges, AsyncItemEdges)
	}
	return nil
}

// checkAsyncDirection checks that MegakernelAsync comes with top-down
// megakernel levels in a direction-optimizing session (optimizing).
func (c Config) checkAsyncDirection(optimizing bool) error {
	if c.MegakernelAsync && optimizing && !c.MegakernelTopDown {
		return fmt.Errorf("BFS config MegakernelAsync in a direction-optimizing session: the asynchronous megakernel runs every level top-down. Fix: set MegakernelTopDown too, or Direction %q", DirectionTopDown)
	}
	return nil
}

// buffers are a session's resident device buffers: the graph, the levels,
// the two frontier queues and the two visited bitmaps, the control words
// and the decision log.
type buffers struct {
	offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.Buffer
}

// kernels are a session's entry points.
type kernels struct {
	init, scan, level, doLevel, mega, megaAsync, barrier, copy, msInit, msLevel, msFinish *executor.Kernel
	// The answer kernels (answer.go).
	gather, counts, msGather, msCounts *executor.Kernel
}

// Session holds one graph resident on the device (uploaded once) and runs
// BFS from many roots with any arm. It is driven by its Plans: memory,
// queues, launch shapes and convergence. A Session is used by one
// goroutine at a time.
type Session struct {
	x      *executor.Executor
	g      *frontier.CSR
	cfg    Config
	lowDeg bool
	// width is the kernels' offset width (PlanOffsetWidth).
	width OffsetWidth
	// layout is the graph's layout hash (layoutHash), 0 until it is
	// first asked for.
	layout uint64
	// optimizing is whether the levels' directions are the planner's
	// (DirectionAuto on a graph past its degree gate).
	optimizing bool
	// asyncFits is whether the asynchronous megakernel runs on the
	// megakernel's grid (as many of its blocks fit an SM).
	asyncFits bool
	plans     Plans
	mod       *executor.Module
	k         kernels
	buf       buffers
	// ans is the answer kernels' buffers, grown on demand (answer.go);
	// ran is whether a traversal has reset the levels since the session
	// opened.
	ans  answerBuffers
	ran  bool
	word []byte
	// deepest is the most levels a traversal of the session has taken (0
	// before the first), which sizes the device loop's batches.
	deepest int
	// opened is the telemetry the session's setup produced (the one graph
	// upload and its allocations).
	opened executor.TelemetrySnapshot
}

// NewSession plans a resident BFS of g and sets it up: the memory plan
// first (a graph that does not fit is refused before anything is loaded or
// allocated, with the plan's numbers), then the kernels, the launch shapes
// from the occupancy model, the queue plan, exactly the planned buffers,
// and one upload of the graph. A graph of more than
// frontier.MaxOffsets32Entries adjacency entries runs on the kernels'
// 64-bit entry points (PlanOffsetWidth), which the host loop and the device
// loop take (ArmFits).
func NewSession(x *executor.Executor, g *frontier.CSR, cfg Config) (*Session, error) {
	if x == nil || g == nil {
		return nil, fmt.Errorf("BFS session needs an executor and a graph. Fix: open an executor and build or load a graph")
	}
	cfg = cfg.withDefaults(g)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	s := &Session{x: x, g: g, cfg: cfg, lowDeg: LowDegree(g), width: PlanOffsetWidth(g, cfg.WideOffsets), word: make([]byte, 8*ResultWords)}
	if err := s.checkLevelThreads(); err != nil {
		return nil, err
	}
	s.optimizing = cfg.Direction == DirectionAuto && DirectionOptimizing(g)
	if err := cfg.checkAsyncDirection(s.optimizing); err != nil {
		return nil, err
	}
	var queue planners.DeviceWorkQueueProfile
	plan := func() (err error) {
		queue, err = s.planMemory()
		return err
	}
	launches := func() error { return s.planLaunches(queue) }
	opened, err := harness.Open(x, plan, []func() error{s.loadKernels, launches, s.allocate, s.upload}, s.Close)
	if err != nil {
		return nil, err
	}
	s.opened = opened
	return s, nil
}

// upload uploads the graph, once: its offsets as they are for the 64-bit
// kernels, narrowed to uint32 for the others.
func (s *Session) upload() error {
	offsets := bytesOf64(s.g.Offsets)
	if !s.width.Wide() {
		narrow, err := s.g.Offsets32()
		if err != nil {
			return err
		}
		offsets = bytesOf(narrow)
	}
	targets := bytesOf(s.g.Targets)
	if len(targets) == 0 { // a graph without edges has a 4-byte targets buffer
		targets = make([]byte, 4)
	}
	return s.x.UploadMany([]executor.Upload{{Buffer: s.buf.offsets, Data: offsets}, {Buffer: s.buf.targets, Data: targets}})
}

// planMemory plans one frontier queue's bytes and the resident memory, and
// returns the queue profile.
func (s *Session) planMemory() (planners.DeviceWorkQueueProfile, error) {
	budget, err := harness.Budget(s.x, s.cfg.MaxResidentBytes)
	if err != nil {
		return planners.DeviceWorkQueueProfile{}, err
	}
	qp, err := QueueProfile(s.g, s.width, s.cfg.Chunk, budget)
	if err != nil {
		return qp, err
	}
	if s.cfg.queueCap != 0 {
		qp.QueueCapacity = s.cfg.queueCap
		qp.InitialItems = min(qp.InitialItems, qp.QueueCapacity)
	}
	q, err := planners.PlanDeviceWorkQueue(qp)
	if err != nil {
		return qp, fmt.Errorf("BFS over %s: frontier queue: %w", s.g.Name, err)
	}
	s.plans.OffsetBytes = s.width
	if s.plans.Memory, err = PlanMemory(s.g, s.width, q.QueueBytes, budget); err != nil {
		return qp, err
	}
	conv, err := megakernel.PlanDeviceConvergence(uint32(min(s.g.NumVertices(), 1<<31)), megakernel.ChangedFlagBytes, 0)
	if err != nil {
		return qp, err
	}
	s.plans.Convergence = conv
	return qp, nil
}

// loadKernels loads the module and its entry points.
func (s *Session) loadKernels() error {
	var err error
	init, level, doLevel := KernelInit, KernelQueueLevel, KernelDoLevel
	if s.width.Wide() {
		init, level, doLevel = KernelInitW64, KernelQueueLevelW64, KernelDoLevelW64
	}
	s.mod, err = harness.LoadKernels(s.x, bfsPTX, []harness.Entry{{Dst: &s.k.init, Name: init}, {Dst: &s.k.scan, Name: KernelWaveScan},
		{Dst: &s.k.level, Name: level}, {Dst: &s.k.doLevel, Name: doLevel},
		{Dst: &s.k.mega, Name: megakernelFor(s.cfg.MegakernelThreads)}, {Dst: &s.k.megaAsync, Name: KernelMegakernelAsync},
		{Dst: &s.k.barrier, Name: KernelBarrierOnly}, {Dst: &s.k.copy, Name: KernelCopy},
		{Dst: &s.k.msInit, Name: KernelMSInit}, {Dst: &s.k.msLevel, Name: KernelMSLevel}, {Dst: &s.k.msFinish, Name: KernelMSFinish},
		{Dst: &s.k.gather, Name: KernelGather}, {Dst: &s.k.counts, Name: KernelLevelCounts},
		{Dst: &s.k.msGather, Name: KernelMSGather}, {Dst: &s.k.msCounts, Name: KernelMSLevelCounts}})
	return err
}

// megakernelFor returns the megakernel entry point for blocks of threads:
// the narrow one when they are small enough for it.
func megakernelFor(threads int) string {
	if threads <= MegakernelNarrowThreads {
		return KernelMegakernelNarrow
	}
	return KernelMegakernel
}

// planLaunches sizes the level and megakernel grids from the occupancy
// model and plans the queue's drain over the level grid.
func (s *Session) planLaunches(qp planners.DeviceWorkQueueProfile) error {
	x, p := s.x, &s.plans
	var err error
	if p.LevelGrid, err = s.levelGrid(); err != nil {
		return err
	}
	if p.MegakernelGrid, err = harness.PersistentGrid(x, s.k.mega, s.cfg.MegakernelThreads, harness.GridCap{BlocksPerSM: s.cfg.MegakernelBlocksPerSM,
		MaxBlocks: MaxMegakernelBlocks, Kernel: "BFS megakernel", Field: "MegakernelBlocksPerSM"}); err != nil {
		return err
	}
	// The asynchronous entry point runs on the same grid where as many of
	// its blocks fit an SM.
	if s.cfg.MegakernelThreads <= MegakernelNarrowThreads {
		ag, err := x.CooperativeGrid(s.k.megaAsync, s.cfg.MegakernelThreads, 0)
		s.asyncFits = err == nil && ag.BlocksPerSM >= p.MegakernelGrid.BlocksPerSM
	}
	if s.cfg.MegakernelAsync && !s.asyncFits {
		return fmt.Errorf("BFS config MegakernelBlocksPerSM = %d with MegakernelAsync: the asynchronous megakernel does not fit as many blocks of %d threads on an SM. Fix: lower MegakernelBlocksPerSM", p.MegakernelGrid.BlocksPerSM, s.cfg.MegakernelThreads)
	}
	warps := uint64(p.LevelGrid.GridBlocks) * uint64(p.LevelGrid.BlockThreads/32)
	if p.Queue, err = planners.PlanDeviceWorkQueueBackpressure(qp, max(warps, 1)); err != nil {
		return fmt.Errorf("BFS over %s: frontier queue drain: %w", s.g.Name, err)
	}
	return nil
}

// levelGrid plans the grid the per-level kernels share (the queue level,
// the direction-optimizing level and the multi-source level and finish
// kernels all launch on it): the co-resident grid of whichever fits the
// fewest blocks on an SM, so that none of them runs a second wave of
// blocks behind the first. The 64-bit direction-optimizing level needs
// more registers than the queue level, and fits fewer blocks.
func (s *Session) levelGrid() (executor.GridPlan, error) {
	var best executor.GridPlan
	for i, k := range []*executor.Kernel{s.k.level, s.k.doLevel, s.k.msLevel, s.k.msFinish} {
		g, err := s.x.CooperativeGrid(k, s.cfg.LevelThreads, 0)
		if err != nil {
			return g, err
		}
		if i == 0 || g.BlocksPerSM < best.BlocksPerSM {
			best = g
		}
	}
	return best, nil
}

// allocate allocates the buffers the memory plan counts, and checks that
// they add up to its required bytes.
func (s *Session) allocate() error {
	n := uint64(s.g.NumVertices())
	q := s.plans.Queue.Queue.QueueBytes
	vis := VisitedBytes(s.g)
	sizes := []uint64{uint64(s.width) * (n + 1), 4 * uint64(max(1, s.g.NumEdgeEntries())), 4 * n, q, q, vis, vis, 4 * CtlWords, s.logBytes()}
	return harness.Allocate(s.x, "BFS session", harness.Buffers(&s.buf), sizes, s.plans.Memory.RequiredBytes)
}

// Plans returns the plans the session runs by.
func (s *Session) Plans() Plans { return s.plans }

// Config returns the session's configuration with its defaults filled in.
func (s *Session) Config() Config { return s.cfg }

// Graph returns the resident graph.
func (s *Session) Graph() *frontier.CSR { return s.g }

// qcap is the capacity of each frontier queue, in items.
func (s *Session) qcap() uint64 { return s.plans.Queue.Queue.QueueCapacity }

// logEntries is the decision log's capacity.
func (s *Session) logEntries() uint64 { return LogEntries(s.g) }

// logBytes is the decision log's size.
func (s *Session) logBytes() uint64 { return s.width.LogEntryBytes() * s.logEntries() }

// ArmOptimizing reports whether the arm's levels are direction-optimizing:
// the session's (Optimizing), except a megakernel set to run top-down
// (Config.MegakernelTopDown).
func (s *Session) ArmOptimizing(arm Arm) bool {
	return s.optimizing && !(arm == ArmMegakernel && s.cfg.MegakernelTopDown)
}

// Optimizing reports whether the session's levels are direction-optimizing:
// Config.Direction is DirectionAuto and the graph passes the planner's
// degree gate.
func (s *Session) Optimizing() bool { return s.optimizing }

// Close frees the session's device buffers, the answer kernels' included.
func (s *Session) Close() error {
	err := harness.Free(s.x, harness.Buffers(&s.buf))
	if aerr := harness.Free(s.x, harness.Buffers(&s.ans)); err == nil {
		err = aerr
	}
	return err
}

// Levels downloads the level of every vertex from the last run into a new
// slice: LevelsInto(nil).
func (s *Session) Levels() ([]int32, error) { return s.LevelsInto(nil) }

// LevelsInto downloads the level of every vertex from the last run into
// dst and returns dst[:n] for the graph's n vertices: dst's own array when
// its capacity holds n levels, else a new one (dst is then untouched). The
// executor copies the level words into the slice's memory as they are, the
// inverse of the session's uploads (bytesOf), and allocates no result of
// its own, so a caller that reads the levels after every run (the
// benchmark's check) keeps one buffer for all of them. On an error it
// returns nil, and what dst's first n levels hold is undefined.
func (s *Session) LevelsInto(dst []int32) ([]int32, error) {
	n := int(s.buf.level.Len / 4)
	if cap(dst) < n {
		dst = make([]int32, n)
	}
	dst = dst[:n]
	if err := s.x.DownloadRangeInto(s.buf.level, 0, bytesOf(dst)); err != nil {
		return nil, err
	}
	return dst, nil
}

// bytesOf views a slice of 4-byte values as bytes (for uploads, and for
// LevelsInto's download).
func bytesOf[T int32 | uint32](s []T) []byte { return harness.BytesOf(s) }
