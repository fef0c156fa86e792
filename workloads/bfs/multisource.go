package bfs

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// msPullDivisor: a multi-source level pulls when its frontier's edges pass
// the graph's adjacency entries / msPullDivisor and pushes otherwise, the
// rule of frontier.MultiSourceBFS.
const msPullDivisor = 16

// MultiSource is a multi-source BFS over a session's resident graph:
// passes of up to 32 or 64 roots, one bit per root in each vertex's seen,
// frontier and next words, planned by planners.PlanMultiSourceBFS within
// the session's memory budget, with the pass's buffers allocated once and
// reused by every pass. A pass keeps its levels as bit planes (see
// planners.MultiSourceBFSRequest.LevelBits), decoded when they are read.
type MultiSource struct {
	s    *Session
	plan planners.MultiSourceBFSPlan
	// roots is the roots a run takes; bits the level planes (the bits of
	// the deepest level a pass may reach); dirty the plane groups that may
	// hold an earlier pass's bits, which the next pass's start clears.
	roots int
	bits  uint64
	dirty uint64
	buf   msBuffers
	// ans is the answer kernels' buffers (RunAnswers), grown on demand.
	ans answerBuffers
	// graphHubc counts the graph's hub list: hubs above bit 32, chunks
	// below.
	graphHubc uint64
}

// msBuffers are a pass's device buffers: hubs is a level's hub list,
// graphHubs the graph's, planes the levels.
type msBuffers struct {
	seen, cur, next, list0, list1, planes, roots, hubs, graphHubs executor.Buffer
}

// msGraphHubs returns the graph's hub list as the kernels read it (each
// hub's vertex and first chunk, 8 bytes a hub) and its count word: hubs
// above bit 32, their msHubChunk-edge chunks below. The hubs are the
// vertices of degree msHubEdges or more, whose edges a multi-source level
// spreads over the whole grid; a level's hub list holds at most all of
// them.
func msGraphHubs(g *frontier.CSR) ([]byte, uint64) {
	var raw []byte
	var hubs, chunks uint64
	for v := range g.NumVertices() {
		deg := uint64(g.Degree(int32(v)))
		if deg < msHubEdges {
			continue
		}
		raw = binary.LittleEndian.AppendUint32(raw, uint32(v))
		raw = binary.LittleEndian.AppendUint32(raw, uint32(chunks))
		hubs++
		// A graph's edge entries fit 32 bits, so its chunks do.
		chunks += (deg + msHubChunk - 1) / msHubChunk
	}
	return raw, hubs<<32 | chunks
}

// MultiSourceRun is the measurement of one multi-source run: every pass
// of a run of roots.
type MultiSourceRun struct {
	Roots  int `json:"roots"`
	Passes int `json:"passes"`
	// Levels is the sum over passes of their levels (a pass's levels are
	// those of its deepest root); PullLevels how many of them pulled.
	Levels     int `json:"levels"`
	PullLevels int `json:"pull_levels"`
	// WallNs and DeviceNs sum the passes' traversals (their starts, which
	// place the roots, and the reads of their levels are outside).
	WallNs   uint64 `json:"wall_ns"`
	DeviceNs uint64 `json:"device_ns"`
	// StartNs sums the passes' starts (the roots' upload and the init
	// kernel's clearing) and ReadNs what ran after each traversal (reading
	// its levels back, or RunAnswers' gathers and counts), host wall time,
	// untimed.
	StartNs  uint64 `json:"start_ns"`
	ReadNs   uint64 `json:"read_ns"`
	Launches uint64 `json:"launches"`
	// Pollution inside the timed regions, as in Run.
	TimedUploads     uint64 `json:"timed_uploads"`
	TimedAllocations uint64 `json:"timed_allocations"`
	TimedHostSyncs   uint64 `json:"timed_host_syncs"`
}

// multiSourceRequest is the request of roots roots at width over the
// session: its graph bytes are what the session keeps resident plus the
// pass's two vertex lists, its two hub lists (a level's and the graph's,
// two words per hub each) and its roots,
// so that the plan's resident bytes are everything a pass holds; its
// levels are planes of the bits of the deepest level the convergence plan
// allows.
func (s *Session) multiSourceRequest(roots, width int, hubs uint64) (planners.MultiSourceBFSRequest, error) {
	n := uint64(s.g.NumVertices())
	lists, err := checked.Mul(n, 8, "multi-source vertex lists (2 x 4 bytes per vertex)")
	if err != nil {
		return planners.MultiSourceBFSRequest{}, err
	}
	graph, err := checked.Sum("multi-source graph bytes (the session's resident bytes, the lists, the hubs and the roots)",
		s.plans.Memory.RequiredBytes, lists, 16*hubs, 4*frontier.MaxMultiSourceRoots)
	if err != nil {
		return planners.MultiSourceBFSRequest{}, err
	}
	return planners.MultiSourceBFSRequest{Roots: uint64(max(roots, 0)), Vertices: n, GraphBytes: graph, LevelBits: s.msLevelBits(),
		Width: uint64(max(width, 0)), BudgetBytes: s.plans.Memory.BudgetBytes}, nil
}

// msLevelBits is the level planes of a multi-source pass: the bits of its
// deepest label, at most the convergence plan's device iterations (a pass
// that would go deeper is stopped with an error).
func (s *Session) msLevelBits() uint64 {
	return uint64(bits.Len32(max(s.plans.Convergence.MaxDeviceIterations, 1)))
}

// NewMultiSource plans a multi-source BFS of roots roots over the session
// (width 32 or 64 roots per pass, or 0 to let the planner pick) and
// allocates its buffers. A pass that does not fit the session's budget
// is refused before anything is allocated, with the plan's numbers.
func (s *Session) NewMultiSource(roots, width int) (*MultiSource, error) {
	if s.width.Wide() {
		return nil, s.narrowOnly("a multi-source pass")
	}
	raw, graphHubc := msGraphHubs(s.g)
	hubs := graphHubc >> 32
	req, err := s.multiSourceRequest(roots, width, hubs)
	if err != nil {
		return nil, err
	}
	plan, err := planners.PlanMultiSourceBFS(req)
	if err != nil {
		return nil, fmt.Errorf("multi-source BFS over %s: %w", s.g.Name, err)
	}
	// A new buffer may hold anything: the first start clears every group.
	m := &MultiSource{s: s, plan: plan, roots: roots, bits: req.LevelBits, graphHubc: graphHubc}
	m.dirty = m.groups(m.bits)
	n := uint64(s.g.NumVertices())
	words := plan.MaskBytes / 3
	sizes := []uint64{words, words, words, 4 * n, 4 * n, plan.OutputBytes, 4 * frontier.MaxMultiSourceRoots, 8 * hubs, 8 * hubs}
	for i, b := range harness.Buffers(&m.buf) {
		if *b, err = s.x.Alloc(max(sizes[i], 4)); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	if len(raw) > 0 {
		if err := s.x.UploadAt(m.buf.graphHubs, 0, raw); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	return m, nil
}

// Plan returns the multi-source plan.
func (m *MultiSource) Plan() planners.MultiSourceBFSPlan { return m.plan }

// Close frees the pass's buffers, the answer kernels' included.
func (m *MultiSource) Close() error {
	return harness.Free(m.s.x, append(harness.Buffers(&m.buf), harness.Buffers(&m.ans)...))
}

// Run traverses from every root, in the plan's passes, and returns the
// measurement and, when keep, every root's levels (read back after each
// pass, outside its timed region): the same as frontier.BFS from that root.
func (m *MultiSource) Run(roots []int32, keep bool) (MultiSourceRun, [][]int32, error) {
	if err := m.checkRoots(roots); err != nil {
		return MultiSourceRun{}, nil, err
	}
	var levels [][]int32
	run, err := m.passes(roots, func(_, nroots int, depth uint64) error {
		if !keep {
			return nil
		}
		lv, err := m.passLevels(nroots, depth)
		levels = append(levels, lv...)
		return err
	})
	if err != nil {
		return run, nil, err
	}
	return run, levels, nil
}

// checkRoots refuses roots the plan was not made for, or that are not
// vertices of the graph.
func (m *MultiSource) checkRoots(roots []int32) error {
	if len(roots) != m.roots {
		return fmt.Errorf("multi-source run of %d roots on a plan for %d. Fix: plan the run with NewMultiSource(%d, ...)", len(roots), m.roots, len(roots))
	}
	for i, r := range roots {
		if err := frontier.CheckRoot(m.s.g, int64(r)); err != nil {
			return fmt.Errorf("roots[%d]: %w", i, err)
		}
	}
	return nil
}

// passes runs the plan's passes over roots (checked) and after each one,
// before the next overwrites its words and planes, calls after with the
// pass's first root, its number of roots and its depth (as traverse
// returns it).
func (m *MultiSource) passes(roots []int32, after func(first, nroots int, depth uint64) error) (MultiSourceRun, error) {
	run := MultiSourceRun{Roots: len(roots), Passes: len(m.plan.Batches)}
	for _, b := range m.plan.Batches {
		pass := roots[b.FirstRoot : b.FirstRoot+b.Roots]
		t0 := time.Now()
		if err := m.start(pass); err != nil {
			return run, err
		}
		run.StartNs += uint64(time.Since(t0))
		depth, err := m.traverse(len(pass), &run)
		if err != nil {
			return run, err
		}
		t0 = time.Now()
		if err := after(int(b.FirstRoot), len(pass), depth); err != nil {
			return run, err
		}
		run.ReadNs += uint64(time.Since(t0))
	}
	return run, nil
}

// groups returns the plane groups per vertex that the planes of labels
// of up to b bits take.
func (m *MultiSource) groups(b uint64) uint64 { return planners.PlaneGroups(b, m.plan.Width) }

// start places a pass's roots: their upload, and the init kernel's two
// phases (clear, with the plane groups an earlier pass may have written,
// then the roots' bits and first list). Until the pass ends, every group
// counts as dirty.
func (m *MultiSource) start(pass []int32) error {
	s := m.s
	raw := make([]byte, 4*len(pass))
	for i, r := range pass {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(r))
	}
	if err := s.x.UploadAt(m.buf.roots, 0, raw); err != nil {
		return err
	}
	n := uint64(s.g.NumVertices())
	blocks := uint32(max(1, min((n+255)/256, uint64(s.x.Device().SMCount)*8)))
	// The dirty groups lie within the planes buffer, whose size the
	// planner computed with checked arithmetic: the word count cannot wrap.
	p := MSInitParams[executor.Buffer]{Offsets: s.buf.offsets, Roots: m.buf.roots, Seen: m.buf.seen, Cur: m.buf.cur, Next: m.buf.next,
		List: m.buf.list0, Hubs: m.buf.hubs, Planes: m.buf.planes, Ctl: s.buf.ctl, N: n, NRoots: uint64(len(pass)), Width: m.plan.Width,
		PlaneWords: m.dirty * n * msGroupBytes / 4}
	if _, err := s.x.Launch(s.k.msInit, executor.Linear(blocks, 256), kernelabi.MustArgs(p)...); err != nil {
		return err
	}
	m.dirty = m.groups(m.bits)
	p.Phase = 1
	_, err := s.x.Launch(s.k.msInit, executor.Linear(1, 64), kernelabi.MustArgs(p)...)
	return err
}

// msArgs are a pass's level and finish arguments for one depth parity
// (the frontier and next words and the lists swap every level).
type msArgs struct {
	level, finish []executor.Arg
}

// args returns the pass's arguments for levels of parity p.
func (m *MultiSource) args(p int, nroots int) msArgs {
	s := m.s
	cur, next, lin, lout := m.buf.cur, m.buf.next, m.buf.list0, m.buf.list1
	if p == 1 {
		cur, next, lin, lout = next, cur, lout, lin
	}
	n := uint64(s.g.NumVertices())
	return msArgs{
		level: kernelabi.MustArgs(MSLevelParams[executor.Buffer]{Offsets: s.buf.offsets, Targets: s.buf.targets, Seen: m.buf.seen,
			Cur: cur, Next: next, ListIn: lin, ListOut: lout, Hubs: m.buf.hubs, GraphHubs: m.buf.graphHubs, Planes: m.buf.planes, Ctl: s.buf.ctl,
			N: n, NRoots: uint64(nroots), Width: m.plan.Width, GraphHubc: m.graphHubc}),
		finish: kernelabi.MustArgs(MSFinishParams[executor.Buffer]{Offsets: s.buf.offsets, Seen: m.buf.seen, Cur: cur, Next: next,
			ListIn: lin, ListOut: lout, Hubs: m.buf.hubs, GraphHubs: m.buf.graphHubs, Planes: m.buf.planes, Ctl: s.buf.ctl,
			N: n, Width: m.plan.Width, GraphHubc: m.graphHubc}),
	}
}

// Positions of the multi-source kernels' depth and pull parameters.
var (
	msLevelDepthArg  = kernelabi.MustIndex(MSLevelParams[executor.Buffer]{}, "Depth")
	msLevelPullArg   = kernelabi.MustIndex(MSLevelParams[executor.Buffer]{}, "Pull")
	msFinishDepthArg = kernelabi.MustIndex(MSFinishParams[executor.Buffer]{}, "Depth")
	msFinishPullArg  = kernelabi.MustIndex(MSFinishParams[executor.Buffer]{}, "Pull")
)

// traverse runs a started pass of nroots roots as a host loop: per level,
// the level kernel (push, sized from the list and its edges, or over the
// level grid when it pulls or the frontier holds hubs), the finish kernel,
// and one 32-byte readback of the next list's length, frontier count and
// hub count, from which the host picks the next level's direction. It
// returns the pass's levels run, the deepest label it wrote, and marks the
// plane groups that label's bits reach as the ones to clear.
func (m *MultiSource) traverse(nroots int, run *MultiSourceRun) (uint64, error) {
	s := m.s
	sets := [2]msArgs{m.args(0, nroots), m.args(1, nroots)}
	entries := uint64(s.g.NumEdgeEntries())
	wpb := uint64(s.cfg.LevelThreads / 32)
	grid := s.plans.LevelGrid.GridBlocks
	maxLevels := uint64(s.plans.Convergence.MaxDeviceIterations)
	before := s.x.Telemetry()
	var reads, depth uint64
	t0 := time.Now()
	tm, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		var vals [2][2][]uint64
		for p := range sets {
			var err error
			if vals[p][0], err = l.Resolve(sets[p].level); err != nil {
				return err
			}
			if vals[p][1], err = l.Resolve(sets[p].finish); err != nil {
				return err
			}
		}
		read := func(d uint64) (count, mf, chunks uint32, err error) {
			reads++
			w := s.word[:32]
			err = l.Read(s.buf.ctl, 4*uint64(CtlCountWord(int(d%3))), w)
			return binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4*CtlCounts:]),
				binary.LittleEndian.Uint32(w[4*CtlHubs:]), err
		}
		count, mf, chunks, err := read(0)
		for d := uint64(0); err == nil && count > 0; d++ {
			depth = d + 1
			if d >= maxLevels {
				return fmt.Errorf("multi-source BFS ran %d levels without converging. Fix: the graph or the kernels are inconsistent; validate the graph", d)
			}
			pull := uint64(mf) > entries/msPullDivisor
			lv, fin := vals[d%2][0], vals[d%2][1]
			lv[msLevelDepthArg], lv[msLevelPullArg] = d, b2u(pull)
			fin[msFinishDepthArg], fin[msFinishPullArg] = d, b2u(pull)
			blocks := grid
			if !pull && chunks == 0 {
				blocks = msPushBlocks(count, mf, wpb, grid)
			}
			run.Levels++
			if pull {
				run.PullLevels++
			}
			cfg := executor.Linear(blocks, uint32(s.cfg.LevelThreads))
			if err = l.Launch(s.k.msLevel, cfg, lv); err == nil {
				if err = l.Launch(s.k.msFinish, executor.Linear(grid, uint32(s.cfg.LevelThreads)), fin); err == nil {
					count, mf, chunks, err = read(d + 1)
				}
			}
		}
		return err
	})
	wall := uint64(time.Since(t0))
	timed := s.x.Telemetry().Sub(before)
	run.WallNs += wall
	run.DeviceNs += tm.DeviceNs
	run.Launches += timed.KernelLaunches
	run.TimedUploads += timed.HostUploadOperations
	if timed.ResidentAllocationBytesRequested+timed.TransientAllocationBytesRequested > 0 {
		run.TimedAllocations++
	}
	run.TimedHostSyncs += timed.SyncPoints - min(timed.SyncPoints, reads+1)
	if err == nil {
		m.dirty = m.groups(uint64(bits.Len64(depth)))
	}
	return depth, err
}

// msPushBlocks is the grid of a pushing level without hubs: enough warps
// for every vertex of the list (count of them, up to 32 a warp) and for
// every edge of the frontier (mf of them, about msPushWarpEdges a warp), at
// most grid blocks of wpb warps.
func msPushBlocks(count, mf uint32, wpb uint64, grid uint32) uint32 {
	warps := max((uint64(count)+31)/32, (uint64(mf)+msPushWarpEdges-1)/msPushWarpEdges)
	return uint32(max(1, min(uint64(grid), (warps+wpb-1)/wpb)))
}

// msPushWarpEdges is about how many edges a warp of a pushing level
// takes: four rounds of one edge per lane.
const msPushWarpEdges = 4 * 32

// msPlaneWord is the index, in words, of vertex v's level plane b among n
// vertices' planes, as the kernels lay them out (ms_plane): every vertex's
// first group of planes, then every vertex's second, a group holding per
// consecutive planes (planners.PlanesPerGroup of the words' width).
func msPlaneWord(b, v, n, per uint64) uint64 {
	return (b/per*n+v)*per + b%per
}

// passLevels reads a pass's levels back and splits them per root: where
// the pass's seen bit i of a vertex is set, its level from root i is the
// number whose bit b is bit i of its plane b (the planes of labels up to
// depth); -1 where it is not.
func (m *MultiSource) passLevels(nroots int, depth uint64) ([][]int32, error) {
	s := m.s
	n := uint64(s.g.NumVertices())
	nb := bits.Len64(depth)
	planes, err := s.x.DownloadRange(m.buf.planes, 0, m.groups(uint64(nb))*n*msGroupBytes)
	if err != nil {
		return nil, err
	}
	seen, err := s.x.Download(m.buf.seen)
	if err != nil {
		return nil, err
	}
	wb, per := m.plan.Width/8, planners.PlanesPerGroup(m.plan.Width)
	word := func(raw []byte, i uint64) uint64 {
		if wb == 8 {
			return binary.LittleEndian.Uint64(raw[8*i:])
		}
		return uint64(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	out := make([][]int32, nroots)
	for i := range out {
		out[i] = make([]int32, n)
	}
	splitRun(int(n), func(lo, hi int) {
		var p [32]uint64
		for v := uint64(lo); v < uint64(hi); v++ {
			for b := range uint64(nb) {
				p[b] = word(planes, msPlaneWord(b, v, n, per))
			}
			sv := word(seen, v)
			for i := range out {
				out[i][v] = -1
				if sv>>i&1 == 0 {
					continue
				}
				var l int32
				for b := range nb {
					l |= int32(p[b]>>i&1) << b
				}
				out[i][v] = l
			}
		}
	})
	return out, nil
}

// splitRun runs f over [0, n) in pieces on every CPU.
func splitRun(n int, f func(lo, hi int)) {
	workers := max(1, min(n/(1<<16), runtime.GOMAXPROCS(0)))
	done := make(chan struct{}, workers)
	for w := range workers {
		go func() {
			f(n*w/workers, n*(w+1)/workers)
			done <- struct{}{}
		}()
	}
	for range workers {
		<-done
	}
}
