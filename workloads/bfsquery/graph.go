package bfsquery

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// Defaults of Options.
const (
	// DefaultBatchWidth is the roots of one multi-source pass.
	DefaultBatchWidth = 64
	// MaxBatchRoots bounds the roots of one Batch call.
	MaxBatchRoots = 1 << 16
	// ReservedTargets, ReservedPassTargets and ReservedLevels size the GPU
	// answer buffers at Open (the vertices whose levels one traversal, or
	// one multi-source pass for all its roots, reads back, and the levels
	// counted), so that warm queries within them allocate no device
	// memory; larger ones grow the buffers once.
	ReservedTargets     = 1 << 16
	ReservedPassTargets = 1 << 20
	ReservedLevels      = 1 << 12
)

// Options configure a resident graph.
type Options struct {
	// Directed takes the graph's adjacency as out-edges only: a query
	// follows edges from source to target, and a parent is an in-neighbour.
	// The GPU then runs every level top-down, and batches root by root.
	Directed bool
	// Arm runs single-root queries on the GPU. Zero picks per graph the
	// fastest of bfs.DefaultArms on the graph's own queries: the first few
	// single-root queries try each arm in turn (three runs each after a
	// warm-up), then the cheapest by the median of its latest runs keeps
	// running (the megakernel on high-diameter graphs, the device loop on
	// Kronecker graphs, as the benchmarks measure them), and every other
	// arm runs once more after each 64 of its runs, so a choice made on
	// noisy trials is corrected.
	Arm bfs.Arm
	// BatchWidth is the roots of one multi-source pass, 32 or 64 (0:
	// DefaultBatchWidth).
	BatchWidth int
	// Session configures the GPU session (its zero value picks the
	// defaults).
	Session bfs.Config
}

// Graph is a graph kept resident for BFS queries: on a GPU, one session
// holds it uploaded once and every query reuses it; on the CPU, the
// parallel CPU reference answers. Its methods are safe for concurrent use;
// device work is serialised.
type Graph struct {
	name     string
	out      *frontier.CSR
	in       *frontier.CSR
	directed bool
	opts     Options

	mu     sync.Mutex
	gpu    *bfs.Session
	ms     *bfs.MultiSource
	x      *executor.Executor
	policy passPolicy
	arms   armPolicy
	closed bool
}

// Open keeps g resident on x and answers queries there: one bfs.Session
// (the graph uploaded once, every buffer planned and allocated once) and,
// for an undirected graph, one multi-source pass's buffers for batches. A
// graph of more than frontier.MaxOffsets32Entries adjacency entries runs
// on the 64-bit kernels (bfs.PlanOffsetWidth): its single-root runs take
// the arms those have (bfs.Session.ArmFits; a configured arm they lack is
// refused) and its batches run one root at a time, without multi-source
// passes.
func Open(x *executor.Executor, g *frontier.CSR, opts Options) (*Graph, error) {
	r, err := newGraph(g, opts)
	if err != nil {
		return nil, err
	}
	cfg := opts.Session
	if opts.Directed {
		cfg.Direction = bfs.DirectionTopDown
	}
	if r.gpu, err = bfs.NewSession(x, g, cfg); err != nil {
		return nil, err
	}
	r.x = x
	if err := r.fitArms(); err != nil {
		return nil, errors.Join(err, r.gpu.Close())
	}
	targets, levels := min(ReservedTargets, g.NumVertices()), min(ReservedLevels, g.NumVertices())
	if err := r.gpu.ReserveAnswers(targets, levels); err != nil {
		return nil, errors.Join(err, r.gpu.Close())
	}
	if !opts.Directed && !r.gpu.OffsetWidth().Wide() {
		if r.ms, err = r.gpu.NewMultiSource(r.opts.BatchWidth, r.opts.BatchWidth); err != nil {
			return nil, errors.Join(err, r.gpu.Close())
		}
		pass := min(ReservedPassTargets, r.opts.BatchWidth*g.NumVertices())
		if err := r.ms.ReserveAnswers(pass, levels); err != nil {
			return nil, errors.Join(err, r.ms.Close(), r.gpu.Close())
		}
	}
	return r, nil
}

// OpenCPU answers queries over g with the parallel CPU reference.
func OpenCPU(g *frontier.CSR, opts Options) (*Graph, error) { return newGraph(g, opts) }

func newGraph(g *frontier.CSR, opts Options) (*Graph, error) {
	if g == nil {
		return nil, errors.New("the graph is nil. Fix: load or generate one with the frontier package")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	if opts.Arm != "" {
		if _, err := bfs.ParseArm(string(opts.Arm)); err != nil {
			return nil, err
		}
	}
	if opts.Directed && opts.Arm == bfs.ArmHostLoopScan {
		return nil, fmt.Errorf("arm %s reads a vertex's neighbours as its in-neighbours, which a directed graph's out-edges are not. Fix: use host-loop, device-loop or megakernel", opts.Arm)
	}
	if opts.BatchWidth == 0 {
		opts.BatchWidth = DefaultBatchWidth
	}
	if opts.BatchWidth != 32 && opts.BatchWidth != 64 {
		return nil, fmt.Errorf("batch width %d. Fix: use 32 or 64 roots per multi-source pass", opts.BatchWidth)
	}
	r := &Graph{name: g.Name, out: g, in: g, directed: opts.Directed, opts: opts, arms: newArmPolicy(opts.Arm)}
	if opts.Directed {
		r.in = Transpose(g)
	}
	return r, nil
}

// Name returns the graph's name.
func (g *Graph) Name() string { return g.name }

// Vertices returns the vertex count.
func (g *Graph) Vertices() int { return g.out.NumVertices() }

// Edges returns the edges: out-edges of a directed graph, undirected edges
// (half the adjacency entries) of an undirected one.
func (g *Graph) Edges() int64 {
	if g.directed {
		return int64(g.out.NumEdgeEntries())
	}
	return int64(g.out.NumEdgeEntries() / 2)
}

// Directed reports whether the graph's edges have a direction.
func (g *Graph) Directed() bool { return g.directed }

// Arm returns the arm the graph's next single-root GPU run takes ("" on
// the CPU): the configured one, or the automatic policy's current pick.
func (g *Graph) Arm() bfs.Arm {
	if g.gpu == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arms.arm()
}

// OnGPU reports whether queries run on a GPU session.
func (g *Graph) OnGPU() bool { return g.gpu != nil }

// Executor returns the executor a GPU graph is resident on (nil on the
// CPU).
func (g *Graph) Executor() *executor.Executor { return g.x }

// CSR returns the graph's out-edges.
func (g *Graph) CSR() *frontier.CSR { return g.out }

// Query answers one query.
func (g *Graph) Query(ctx context.Context, q Query) (Answer, error) {
	as, err := g.Batch(ctx, []Query{q})
	if err != nil {
		return Answer{}, err
	}
	return as[0], nil
}

// Batch answers many queries at once. An undirected graph's roots run in
// multi-source passes (a root repeated runs once): of BatchWidth roots on a
// GPU, of up to 64 on the CPU; a directed graph's one at a time. On the GPU
// a chunk of roots runs one root at a time where the single-root runs this
// graph measured cost less than a pass (a pass always runs BatchWidth
// roots). A
// cancelled context stops between traversals. Every query is checked first
// (*QueryError), so a bad one answers none.
func (g *Graph) Batch(ctx context.Context, qs []Query) ([]Answer, error) {
	as, _, err := g.BatchPhases(ctx, qs)
	return as, err
}

// Phases is where a batch's time went: the traversals themselves (on the
// GPU, the timed region of each run or multi-source pass), their setup on
// the GPU (placing the roots, clearing the state, reading the result
// words; for a single root, also reading its answer, which shares the
// result words' dispatch), reading back the levels the answers need, and
// building the answers from them; and how its roots ran on the GPU: in Passes
// multi-source passes and Singles single-root traversals, Arms of them
// by the arm that ran them.
type Phases struct {
	Traverse, Setup, Read, Answer time.Duration
	Passes, Singles               int
	Arms                          map[bfs.Arm]int
}

// gpuTime accumulates a batch's GPU phases and runs.
type gpuTime struct {
	traverse, setup time.Duration
	passes, singles int
	arms            map[bfs.Arm]int
}

// single counts one single-root traversal run by arm.
func (gt *gpuTime) single(arm bfs.Arm) {
	gt.singles++
	if gt.arms == nil {
		gt.arms = map[bfs.Arm]int{}
	}
	gt.arms[arm]++
}

// BatchPhases is Batch, also returning where the batch's time went.
func (g *Graph) BatchPhases(ctx context.Context, qs []Query) ([]Answer, Phases, error) {
	var ph Phases
	if len(qs) == 0 {
		return nil, ph, nil
	}
	if len(qs) > MaxBatchRoots {
		return nil, ph, &QueryError{Field: "queries", Msg: fmt.Sprintf("%d queries in one batch", len(qs)), Fix: fmt.Sprintf("send at most %d", MaxBatchRoots)}
	}
	for i := range qs {
		if err := qs[i].check(g.Vertices(), i); err != nil {
			return nil, ph, err
		}
	}
	roots := distinctRoots(qs)
	views, err := g.levels(ctx, roots, needs(g.in, qs), &ph)
	if err != nil {
		return nil, ph, err
	}
	t0 := time.Now()
	index := make(map[int32]int, len(roots))
	for i, r := range roots {
		index[r] = i
	}
	out := make([]Answer, len(qs))
	// Each answer scans its root's levels once: they are built in parallel,
	// a query per worker at a time.
	forEach(len(qs), func(i int) { out[i] = g.answer(qs[i], views[index[qs[i].Root]]) })
	ph.Answer = time.Since(t0)
	return out, ph, nil
}

// Check reports whether the graph would answer q, as Batch checks every
// query first: nil, or a *QueryError naming the field.
func (g *Graph) Check(q Query) error { return q.check(g.Vertices(), 0) }

// ResidentBytes returns the bytes of the graph's adjacency (its offsets and
// targets as the GPU session keeps them resident; a directed graph's
// in-neighbour lists are kept on the host).
func (g *Graph) ResidentBytes() uint64 {
	return 4*uint64(len(g.out.Offsets)) + 4*uint64(len(g.out.Targets))
}

// forEach runs f(0..n-1) on up to GOMAXPROCS workers.
func forEach(n int, f func(int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// distinctRoots lists the queries' roots once each, in first use.
func distinctRoots(qs []Query) []int32 {
	var roots []int32
	seen := map[int32]bool{}
	for _, q := range qs {
		if !seen[q.Root] {
			seen[q.Root] = true
			roots = append(roots, q.Root)
		}
	}
	return roots
}

// levels runs a BFS from every root and returns each one's levels as its
// queries need them (nd): an undirected graph's roots in multi-source
// passes (on the GPU, in chunks of BatchWidth roots, each a pass or single
// runs as the policy says; on the CPU, of up to
// frontier.MaxMultiSourceRoots), a directed graph's one at a time.
// It adds the traversals' time and the rest of the levels' time to ph.
func (g *Graph) levels(ctx context.Context, roots []int32, nd map[int32]*need, ph *Phases) ([]*levelView, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("the graph is closed. Fix: open it again")
	}
	t0 := time.Now()
	var gt gpuTime
	var out []*levelView
	var err error
	switch {
	case len(roots) > 1 && g.ms != nil:
		out, err = inPasses(ctx, roots, g.opts.BatchWidth, func(chunk []int32) ([]*levelView, error) { return g.gpuChunk(ctx, chunk, nd, &gt) })
	case len(roots) > 1 && g.gpu == nil && !g.directed:
		out, err = inPasses(ctx, roots, frontier.MaxMultiSourceRoots, func(pass []int32) ([]*levelView, error) {
			lv, err := frontier.MultiSourceBFS(g.out, pass)
			return fullViews(lv), err
		})
	default:
		out, err = inPasses(ctx, roots, 1, func(pass []int32) ([]*levelView, error) {
			w, err := g.one(pass[0], nd[pass[0]], &gt)
			return []*levelView{w}, err
		})
	}
	all := time.Since(t0)
	if g.gpu == nil {
		gt.traverse = all
	}
	ph.Traverse += gt.traverse
	ph.Setup += gt.setup
	ph.Passes += gt.passes
	ph.Singles += gt.singles
	for arm, n := range gt.arms {
		if ph.Arms == nil {
			ph.Arms = map[bfs.Arm]int{}
		}
		ph.Arms[arm] += n
	}
	ph.Read += all - min(all, gt.traverse+gt.setup)
	return out, err
}

// fullViews views every root's full levels.
func fullViews(lv [][]int32) []*levelView {
	out := make([]*levelView, len(lv))
	for i, l := range lv {
		out[i] = fullView(l)
	}
	return out
}

// inPasses runs roots in passes of at most width, stopping between passes
// once ctx ends, and returns every root's levels in order.
func inPasses(ctx context.Context, roots []int32, width int, run func(pass []int32) ([]*levelView, error)) ([]*levelView, error) {
	out := make([]*levelView, 0, len(roots))
	for lo := 0; lo < len(roots); lo += width {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lv, err := run(roots[lo:min(lo+width, len(roots))])
		if err != nil {
			return nil, err
		}
		out = append(out, lv...)
	}
	return out, nil
}

// gpuChunk runs a chunk of at most BatchWidth roots on the GPU as the
// policy says: in one multi-source pass, or one root at a time where that
// costs less on this graph.
func (g *Graph) gpuChunk(ctx context.Context, chunk []int32, nd map[int32]*need, gt *gpuTime) ([]*levelView, error) {
	if g.policy.singly(len(chunk)) {
		return inPasses(ctx, chunk, 1, func(r []int32) ([]*levelView, error) {
			w, err := g.one(r[0], nd[r[0]], gt)
			return []*levelView{w}, err
		})
	}
	out, err := g.gpuPass(chunk, nd, gt)
	if err == nil {
		gt.passes++
	}
	return out, err
}

// gpuPass runs one multi-source pass on the GPU. A pass runs exactly
// BatchWidth roots: a short one is padded with its first root, whose
// repeats cost little. It reads back only the vertices nd names for each
// root, and the per-level counts, unless a root needs every vertex. Such a
// sparse pass's wall time is counted for the policy.
func (g *Graph) gpuPass(chunk []int32, nd map[int32]*need, gt *gpuTime) ([]*levelView, error) {
	t0 := time.Now()
	pass := append(slices.Clone(chunk), slices.Repeat([]int32{chunk[0]}, g.opts.BatchWidth-len(chunk))...)
	if slices.ContainsFunc(chunk, func(r int32) bool { return nd[r] == nil || nd[r].full }) {
		r, lv, err := g.ms.Run(pass, true)
		gt.traverse += time.Duration(r.WallNs)
		gt.setup += time.Duration(r.StartNs)
		if err != nil {
			return nil, err
		}
		return fullViews(lv[:len(chunk)]), nil
	}
	targets := make([][]int32, len(pass))
	for i, r := range chunk {
		targets[i] = nd[r].vertices
	}
	r, as, err := g.ms.RunAnswers(pass, targets)
	gt.traverse += time.Duration(r.WallNs)
	gt.setup += time.Duration(r.StartNs)
	if err != nil {
		return nil, err
	}
	out := make([]*levelView, len(chunk))
	for i := range chunk {
		out[i] = sparseView(targets[i], as[i].Levels, as[i].Counts)
	}
	g.policy.pass.add(time.Since(t0))
	return out, nil
}

// one runs a BFS from root on the GPU or the CPU, adding the GPU run's
// traversal time and the rest of the run (its setup) to gt. On the GPU it
// reads back only the levels of the vertices nd names, and the per-level
// counts, in the dispatch that reads the run's result words
// (bfs.Session.RunAnswer), unless nd needs every vertex.
func (g *Graph) one(root int32, nd *need, gt *gpuTime) (*levelView, error) {
	if g.gpu == nil {
		lv, err := frontier.BFSParallel(g.out, root)
		return fullView(lv), err
	}
	t0 := time.Now()
	arm := g.arms.pick()
	full := nd == nil || nd.full
	var r bfs.Run
	var a bfs.RootAnswer
	var err error
	if full {
		r, err = g.gpu.Run(g.arms.arms[arm], root)
	} else {
		r, a, err = g.gpu.RunAnswer(g.arms.arms[arm], root, nd.vertices)
	}
	if err == nil {
		g.arms.add(arm, time.Since(t0), r.Levels)
	}
	traverse := time.Duration(r.WallNs)
	gt.traverse += traverse
	gt.setup += max(0, time.Since(t0)-traverse)
	if err != nil {
		return nil, err
	}
	gt.single(g.arms.arms[arm])
	if full {
		lv, err := g.gpu.Levels()
		return fullView(lv), err
	}
	g.policy.one.add(time.Since(t0))
	return sparseView(nd.vertices, a.Levels, a.Counts), nil
}

// Close releases the GPU session; closing twice is a no-op.
func (g *Graph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var errs []error
	if g.ms != nil {
		errs = append(errs, g.ms.Close())
	}
	if g.gpu != nil {
		errs = append(errs, g.gpu.Close())
	}
	return errors.Join(errs...)
}

// Footprint is the memory one query holds while its batch runs: its share
// of the traversal's state (Frontier) and what it reads back and answers
// (Output). A multi-query plan sums them over a batch.
type Footprint struct {
	// Frontier is the query's traversal state: its root's share of a
	// multi-source pass's masks and level planes, or one root's levels
	// and vertex queue.
	Frontier uint64
	// Output is what its root's traversal reads back to the host (every
	// level when it has no targets, or on the CPU; on the GPU otherwise the
	// levels of its targets, and of their in-neighbours with parents) and
	// its answer's levels and parents.
	Output uint64
}

// Footprint returns what q holds while its batch runs on g.
func (g *Graph) Footprint(q Query) Footprint {
	n := uint64(g.Vertices())
	f := Footprint{Frontier: 8 * n}
	if g.ms != nil {
		p := g.ms.Plan()
		f.Frontier = (p.MaskBytes + p.OutputBytes + p.Width - 1) / p.Width
	}
	answered, read := n, n
	if q.Targets != nil {
		answered = uint64(len(q.Targets))
		if g.gpu != nil {
			read = answered
			if q.Parents {
				for _, t := range q.Targets {
					read += uint64(g.in.Degree(t))
				}
			}
		}
	}
	if q.Parents {
		answered *= 2
	}
	f.Output = 4*read + 4*answered
	return f
}
