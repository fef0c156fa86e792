package partbfs

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Config tunes a Session; the zero value picks the defaults.
type Config struct {
	// Strategy is the partition's cut (0: partition.EdgeBalanced).
	Strategy partition.Strategy `json:"strategy"`
	// BlockThreads is every launch's block size, a multiple of 32 (0:
	// DefaultBlockThreads).
	BlockThreads int `json:"block_threads"`
	// Direction are the direction planner's thresholds (zero:
	// planners.DefaultDirectionParams).
	Direction planners.DirectionParams `json:"direction"`
	// MaxResidentBytes caps every part's budget (0: the executor's live
	// resident budget, shared evenly by the parts on one executor).
	MaxResidentBytes uint64 `json:"max_resident_bytes,omitempty"`
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Strategy == 0 {
		c.Strategy = partition.EdgeBalanced
	}
	if c.BlockThreads == 0 {
		c.BlockThreads = DefaultBlockThreads
	}
	if c.Direction == (planners.DirectionParams{}) {
		c.Direction = planners.DefaultDirectionParams()
	}
	return c
}

// partBuffers are one part's resident buffers, in the plan's layout.
type partBuffers struct {
	offsets, targets, level, front0, front1, next, xbuf, outbox, counts, bounds, ctl executor.Buffer
}

// sizes returns the bytes of every buffer of partBuffers, in order, from
// the plan.
func sizes(m partition.Memory) []uint64 {
	return []uint64{m.Offsets, m.Targets, m.Levels, m.Frontier / 2, m.Frontier / 2, m.Next, m.Exchange, m.Outbox, m.Counts, m.Bounds, m.Scratch}
}

// front returns the frontier bitmap a step from depth reads (cur) and the
// one it fills (next).
func (b *partBuffers) front(depth int) (cur, next executor.Buffer) {
	if depth%2 == 0 {
		return b.front0, b.front1
	}
	return b.front1, b.front0
}

// kernelSet holds the entry points loaded on one executor and their
// launch shapes.
type kernelSet struct {
	init, expand, count, compact, apply, bottomUp *executor.Kernel
	cfg                                           map[*executor.Kernel]executor.LaunchConfig
}

// part is one device's share of the traversal.
type part struct {
	index int
	x     *executor.Executor
	k     *kernelSet
	plan  partition.Part
	buf   partBuffers
}

// traversal is the level protocol over the parts a process holds: every
// part of the plan (Session) or one rank's (RankSession). Its steps are
// the same either way; only the exchange between the parts differs.
type traversal struct {
	g    *frontier.CSR
	cfg  Config
	plan partition.Plan
	// parts are the parts held here, each with its plan index.
	parts   []*part
	ex      exchange
	profile planners.BFSGraphProfile
}

// newTraversal returns the traversal of g under cfg, before its plan.
func newTraversal(g *frontier.CSR, cfg Config) traversal {
	return traversal{g: g, cfg: cfg, profile: planners.BFSGraphProfile{Vertices: uint64(g.NumVertices()), EdgeEntries: uint64(g.NumEdgeEntries())}}
}

// numParts is the plan's part count (every part, held here or not).
func (t *traversal) numParts() uint64 { return uint64(len(t.plan.Parts)) }

// Session holds a graph partitioned over several devices, resident
// (uploaded once), and runs BFS from any root. It runs by its partition
// plan: each part allocates exactly the plan's bytes, a part that does not
// fit is refused before anything is allocated, and every level exchanges
// as the plan says. Every part is held by this process; RankSession holds
// one part of the same plan per process.
type Session struct {
	traversal
	tr nccl.Collectives
}

// NewSession plans the partition of g over the devices (one part per
// executor), loads the kernels, allocates every part's buffers and uploads
// its rows of the graph. The kernels take 32-bit offsets, rebased to each
// part's first row: a part of more than frontier.MaxOffsets32Entries
// adjacency entries is refused with a *frontier.Offsets32Error before
// anything is allocated, though the whole graph may hold more.
func NewSession(devs *Devices, g *frontier.CSR, cfg Config) (*Session, error) {
	if devs == nil || len(devs.Executors) == 0 || devs.Transport == nil || g == nil {
		return nil, fmt.Errorf("partitioned BFS session needs devices, an exchange and a graph. Fix: open devices with an Opener and build or load a graph")
	}
	cfg, err := checkConfig(cfg, g)
	if err != nil {
		return nil, err
	}
	if devs.Transport.Ranks() != len(devs.Executors) {
		return nil, fmt.Errorf("partitioned BFS: the exchange has %d ranks for %d parts. Fix: create it over the parts' executors", devs.Transport.Ranks(), len(devs.Executors))
	}
	s := &Session{traversal: newTraversal(g, cfg), tr: devs.Transport}
	s.ex = &partsExchange{t: &s.traversal, tr: s.tr}
	if s.plan, err = s.planPartition(devs.Executors); err != nil {
		return nil, err
	}
	if err := checkParts(g.Name, s.plan); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	if err := s.setUp(devs.Executors); err != nil {
		return nil, err
	}
	if r, can := s.tr.(interface{ Reserve(uint64) error }); can {
		if err := r.Reserve(s.plan.Parts[0].Memory.Exchange + s.plan.Parts[0].Memory.Counts); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// checkConfig fills cfg's defaults, checks them and checks g.
func checkConfig(cfg Config, g *frontier.CSR) (Config, error) {
	cfg = cfg.withDefaults()
	if cfg.BlockThreads < 32 || cfg.BlockThreads > 1024 || cfg.BlockThreads%32 != 0 {
		return cfg, fmt.Errorf("partitioned BFS config BlockThreads = %d. Fix: use a multiple of 32 from 32 to 1024", cfg.BlockThreads)
	}
	return cfg, g.Check()
}

// planPartition plans the partition under every part's budget: its
// executor's live budget, shared evenly by the parts on one executor.
func (s *Session) planPartition(xs []*executor.Executor) (partition.Plan, error) {
	share := map[*executor.Executor]uint64{}
	for _, x := range xs {
		share[x]++
	}
	devs := make([]partition.Device, len(xs))
	for i, x := range xs {
		budget, err := x.Budget()
		if err != nil {
			return partition.Plan{}, err
		}
		devs[i] = partition.Device{Name: x.Device().Name, BudgetBytes: s.cfg.budget(budget / share[x])}
	}
	return s.planOver(devs)
}

// budget caps a part's budget by MaxResidentBytes.
func (c Config) budget(b uint64) uint64 {
	if c.MaxResidentBytes != 0 {
		return min(b, c.MaxResidentBytes)
	}
	return b
}

// planOver plans the partition of the graph over devs.
func (t *traversal) planOver(devs []partition.Device) (partition.Plan, error) {
	plan, err := partition.New(partition.Request{Offsets: t.g.Offsets, Devices: devs, Strategy: t.cfg.Strategy, ScratchBytes: ControlBytes})
	if err != nil {
		return plan, fmt.Errorf("partitioned BFS over %s: %w", t.g.Name, err)
	}
	return plan, nil
}

// checkParts refuses a plan with a part of more adjacency entries than the
// kernels' 32-bit offsets address (each part's offsets are rebased to 0, so
// the whole graph may hold more), before anything is allocated.
func checkParts(graph string, plan partition.Plan) error {
	for _, p := range plan.Parts {
		if p.EdgeEntries > frontier.MaxOffsets32Entries {
			return &frontier.Offsets32Error{Source: graph, Part: fmt.Sprintf("device %d's part, vertices [%d, %d),", p.Device, p.First, p.End),
				Entries: p.EdgeEntries, Limit: frontier.MaxOffsets32Entries}
		}
	}
	return nil
}

// setUp loads the kernels on every executor and sets every part up.
func (s *Session) setUp(xs []*executor.Executor) error {
	sets := map[*executor.Executor]*kernelSet{}
	for i, x := range xs {
		k, ok := sets[x]
		if !ok {
			var err error
			if k, err = loadKernels(x, s.cfg.BlockThreads); err != nil {
				return err
			}
			sets[x] = k
		}
		if err := s.addPart(i, x, k); err != nil {
			return err
		}
	}
	return nil
}

// addPart sets up part i of the plan on x: it allocates the part's
// buffers and uploads its rows.
func (t *traversal) addPart(i int, x *executor.Executor, k *kernelSet) error {
	p := &part{index: i, x: x, k: k, plan: t.plan.Parts[i]}
	t.parts = append(t.parts, p)
	if err := t.allocate(p); err != nil {
		return err
	}
	return t.upload(p)
}

// loadKernels loads the module on x and sizes every kernel's grid from
// the occupancy model (all co-resident blocks; the kernels loop over
// their work).
func loadKernels(x *executor.Executor, threads int) (*kernelSet, error) {
	mod, err := x.LoadModule(partPTX)
	if err != nil {
		return nil, err
	}
	k := &kernelSet{cfg: map[*executor.Kernel]executor.LaunchConfig{}}
	for _, e := range []struct {
		dst  **executor.Kernel
		name string
	}{{&k.init, KernelInit}, {&k.expand, KernelExpand}, {&k.count, KernelCount}, {&k.compact, KernelCompact},
		{&k.apply, KernelApply}, {&k.bottomUp, KernelBottomUp}} {
		if *e.dst, err = mod.Kernel(e.name); err != nil {
			return nil, err
		}
		grid, err := x.CooperativeGrid(*e.dst, threads, 0)
		if err != nil {
			return nil, err
		}
		cfg := grid.Config()
		cfg.Cooperative = false
		k.cfg[*e.dst] = cfg
	}
	return k, nil
}

// allocate allocates the part's buffers, exactly the plan's bytes.
func (t *traversal) allocate(p *part) error {
	var total uint64
	bufs := harness.Buffers(&p.buf)
	for i, size := range sizes(p.plan.Memory) {
		b, err := p.x.Alloc(size)
		if err != nil {
			return fmt.Errorf("partitioned BFS: device %d: %w", p.index, err)
		}
		*bufs[i] = b
		total += size
	}
	if total != p.plan.ResidentBytes {
		return fmt.Errorf("partitioned BFS: device %d allocated %d bytes but its plan requires %d. Fix: this is a bug in the session's layout; report it", p.index, total, p.plan.ResidentBytes)
	}
	return nil
}

// upload copies the part's rows (offsets rebased to 0 and narrowed to the
// kernels' uint32, targets as global ids) and the partition bounds.
func (t *traversal) upload(p *part) error {
	first, end := p.plan.First, p.plan.End
	offsets := make([]uint32, end-first+1)
	if err := frontier.NarrowOffsets(t.g.Name, offsets, t.g.Offsets[first:end+1], t.g.Offsets[first]); err != nil {
		return err
	}
	targets := t.g.Targets[t.g.Offsets[first]:t.g.Offsets[end]]
	tbytes := bytesOf(targets)
	if len(tbytes) == 0 {
		tbytes = make([]byte, 4)
	}
	bounds := make([]uint32, 0, len(t.plan.Parts)+1)
	for _, b := range t.plan.Bounds() {
		bounds = append(bounds, uint32(b))
	}
	return p.x.UploadMany([]executor.Upload{{Buffer: p.buf.offsets, Data: bytesOf(offsets)}, {Buffer: p.buf.targets, Data: tbytes},
		{Buffer: p.buf.bounds, Data: bytesOf(bounds)}})
}

// Plan returns the partition plan the session runs by.
func (s *Session) Plan() partition.Plan { return s.plan }

// Config returns the configuration with its defaults filled in.
func (s *Session) Config() Config { return s.cfg }

// Graph returns the resident graph.
func (s *Session) Graph() *frontier.CSR { return s.g }

// Close frees every part's buffers.
func (s *Session) Close() error { return s.free() }

// free frees the buffers of every part held here.
func (t *traversal) free() error {
	var first error
	for _, p := range t.parts {
		if err := harness.Free(p.x, harness.Buffers(&p.buf)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Levels checks every part's error flags and downloads the levels of the
// last run, every part's in vertex order.
func (s *Session) Levels() ([]int32, error) { return s.levels() }

// levels checks the error flags of the parts held here and downloads
// their levels of the last run, in vertex order.
func (t *traversal) levels() ([]int32, error) {
	if err := t.checkFlags(); err != nil {
		return nil, err
	}
	var out []int32
	for _, p := range t.parts {
		if p.plan.Vertices == 0 {
			continue
		}
		raw, err := p.x.DownloadRange(p.buf.level, 0, 4*p.plan.Vertices)
		if err != nil {
			return nil, err
		}
		out = appendWords(out, raw)
	}
	return out, nil
}

// appendWords appends raw's little-endian 4-byte words to out.
func appendWords(out []int32, raw []byte) []int32 {
	out = slices.Grow(out, len(raw)/4)
	for i := 0; i+4 <= len(raw); i += 4 {
		out = append(out, int32(binary.LittleEndian.Uint32(raw[i:])))
	}
	return out
}

// checkFlags reads the misuse and overflow words of the parts held here.
func (t *traversal) checkFlags() error {
	for _, p := range t.parts {
		raw, err := p.x.DownloadRange(p.buf.ctl, 8*CtlMisuse, 16)
		if err != nil {
			return err
		}
		misuse, overflow := binary.LittleEndian.Uint64(raw), binary.LittleEndian.Uint64(raw[8:])
		if misuse != 0 || overflow != 0 {
			return fmt.Errorf("partitioned BFS: device %d's kernels report misuse %d and queue overflow %d. Fix: this is a bug in the exchange plan or the kernels; report it with the graph", p.index, misuse, overflow)
		}
	}
	return nil
}

// bytesOf views a slice of 4-byte values as bytes (for uploads).
func bytesOf[T int32 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}
