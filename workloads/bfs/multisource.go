package bfs

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
)

// msPullDivisor: a multi-source level pulls when its frontier's edges pass
// the graph's adjacency entries / msPullDivisor and pushes otherwise, the
// rule of frontier.MultiSourceBFS.
const msPullDivisor = 16

// MultiSource is a multi-source BFS over a session's resident graph:
// passes of up to 32 or 64 roots, one bit per root in each vertex's seen,
// frontier and next words, planned by planners.PlanMultiSourceBFS within
// the session's memory budget, with the pass's buffers allocated once and
// reused by every pass.
type MultiSource struct {
	s    *Session
	plan planners.MultiSourceBFSPlan
	// roots is the roots a run takes; stride the levels per vertex (the
	// largest pass's roots).
	roots  int
	stride uint64
	buf    msBuffers
	// graphHubc counts the graph's hub list: hubs above bit 32, chunks
	// below.
	graphHubc uint64
}

// msBuffers are a pass's device buffers: hubs is a level's hub list,
// graphHubs the graph's.
type msBuffers struct {
	seen, cur, next, list0, list1, levels, roots, hubs, graphHubs executor.Buffer
}

func (b *msBuffers) all() []*executor.Buffer {
	return []*executor.Buffer{&b.seen, &b.cur, &b.next, &b.list0, &b.list1, &b.levels, &b.roots, &b.hubs, &b.graphHubs}
}

// msHubs is the number of the graph's hubs: the vertices of degree
// msHubEdges or more, whose edges a multi-source level spreads over the
// whole grid. A level's hub list holds at most all of them.
func msHubs(g *frontier.CSR) uint64 {
	var n uint64
	for v := range g.NumVertices() {
		if g.Degree(int32(v)) >= msHubEdges {
			n++
		}
	}
	return n
}

// msGraphHubs returns the graph's hub list as the kernels read it (each
// hub's vertex and first chunk, 8 bytes a hub) and its count word: hubs
// above bit 32, their msHubChunk-edge chunks below.
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
// so that the plan's resident bytes are everything a pass holds.
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
	return planners.MultiSourceBFSRequest{Roots: uint64(max(roots, 0)), Vertices: n, GraphBytes: graph, LevelBytes: 4,
		Width: uint64(max(width, 0)), BudgetBytes: s.plans.Memory.BudgetBytes}, nil
}

// NewMultiSource plans a multi-source BFS of roots roots over the session
// (width 32 or 64 roots per pass, or 0 to let the planner pick) and
// allocates its buffers. A pass that does not fit the session's budget
// is refused before anything is allocated, with the plan's numbers.
func (s *Session) NewMultiSource(roots, width int) (*MultiSource, error) {
	hubs := msHubs(s.g)
	req, err := s.multiSourceRequest(roots, width, hubs)
	if err != nil {
		return nil, err
	}
	plan, err := planners.PlanMultiSourceBFS(req)
	if err != nil {
		return nil, fmt.Errorf("multi-source BFS over %s: %w", s.g.Name, err)
	}
	m := &MultiSource{s: s, plan: plan, roots: roots, stride: min(uint64(roots), plan.Width)}
	n := uint64(s.g.NumVertices())
	words := plan.MaskBytes / 3
	sizes := []uint64{words, words, words, 4 * n, 4 * n, plan.OutputBytes, 4 * frontier.MaxMultiSourceRoots, 8 * hubs, 8 * hubs}
	for i, b := range m.buf.all() {
		if *b, err = s.x.Alloc(max(sizes[i], 4)); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	var raw []byte
	if raw, m.graphHubc = msGraphHubs(s.g); len(raw) > 0 {
		if err := s.x.UploadAt(m.buf.graphHubs, 0, raw); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	return m, nil
}

// Plan returns the multi-source plan.
func (m *MultiSource) Plan() planners.MultiSourceBFSPlan { return m.plan }

// Close frees the pass's buffers.
func (m *MultiSource) Close() error {
	var first error
	for _, b := range m.buf.all() {
		if b.ID == 0 {
			continue
		}
		if err := m.s.x.Free(*b); err != nil && first == nil {
			first = err
		}
		*b = executor.Buffer{}
	}
	return first
}

// Run traverses from every root, in the plan's passes, and returns the
// measurement and, when keep, every root's levels (read back after each
// pass, outside its timed region): the same as frontier.BFS from that root.
func (m *MultiSource) Run(roots []int32, keep bool) (MultiSourceRun, [][]int32, error) {
	if len(roots) != m.roots {
		return MultiSourceRun{}, nil, fmt.Errorf("multi-source run of %d roots on a plan for %d. Fix: plan the run with NewMultiSource(%d, ...)", len(roots), m.roots, len(roots))
	}
	for i, r := range roots {
		if err := frontier.CheckRoot(m.s.g, int64(r)); err != nil {
			return MultiSourceRun{}, nil, fmt.Errorf("roots[%d]: %w", i, err)
		}
	}
	run := MultiSourceRun{Roots: len(roots), Passes: len(m.plan.Batches)}
	var levels [][]int32
	for _, b := range m.plan.Batches {
		pass := roots[b.FirstRoot : b.FirstRoot+b.Roots]
		if err := m.start(pass); err != nil {
			return run, nil, err
		}
		if err := m.traverse(len(pass), &run); err != nil {
			return run, nil, err
		}
		if keep {
			lv, err := m.passLevels(len(pass))
			if err != nil {
				return run, nil, err
			}
			levels = append(levels, lv...)
		}
	}
	return run, levels, nil
}

// start places a pass's roots: their upload, and the init kernel's two
// phases (clear, then the roots' bits, levels and first list).
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
	p := MSInitParams[executor.Buffer]{Offsets: s.buf.offsets, Roots: m.buf.roots, Seen: m.buf.seen, Cur: m.buf.cur, Next: m.buf.next,
		List: m.buf.list0, Hubs: m.buf.hubs, Levels: m.buf.levels, Ctl: s.buf.ctl, N: n, NRoots: uint64(len(pass)), Width: m.plan.Width, Stride: m.stride}
	if _, err := s.x.Launch(s.k.msInit, executor.Linear(blocks, 256), kernelabi.MustArgs(p)...); err != nil {
		return err
	}
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
			Cur: cur, Next: next, ListIn: lin, ListOut: lout, Hubs: m.buf.hubs, GraphHubs: m.buf.graphHubs, Levels: m.buf.levels, Ctl: s.buf.ctl,
			N: n, NRoots: uint64(nroots), Width: m.plan.Width, Stride: m.stride, GraphHubc: m.graphHubc}),
		finish: kernelabi.MustArgs(MSFinishParams[executor.Buffer]{Offsets: s.buf.offsets, Seen: m.buf.seen, Cur: cur, Next: next,
			ListIn: lin, ListOut: lout, Hubs: m.buf.hubs, GraphHubs: m.buf.graphHubs, Levels: m.buf.levels, Ctl: s.buf.ctl,
			Width: m.plan.Width, Stride: m.stride, GraphHubc: m.graphHubc}),
	}
}

// Positions of the multi-source kernels' depth and pull parameters.
var (
	msLevelDepthArg  = mustIndex(MSLevelParams[executor.Buffer]{}, "Depth")
	msLevelPullArg   = mustIndex(MSLevelParams[executor.Buffer]{}, "Pull")
	msFinishDepthArg = mustIndex(MSFinishParams[executor.Buffer]{}, "Depth")
	msFinishPullArg  = mustIndex(MSFinishParams[executor.Buffer]{}, "Pull")
)

// traverse runs a started pass of nroots roots as a host loop: per level,
// the level kernel (push, sized from the list and its edges, or over the
// level grid when it pulls or the frontier holds hubs), the finish kernel,
// and one 32-byte readback of the next list's length, frontier count and
// hub count, from which the host picks the next level's direction.
func (m *MultiSource) traverse(nroots int, run *MultiSourceRun) error {
	s := m.s
	sets := [2]msArgs{m.args(0, nroots), m.args(1, nroots)}
	entries := uint64(s.g.NumEdgeEntries())
	wpb := uint64(s.cfg.LevelThreads / 32)
	grid := s.plans.LevelGrid.GridBlocks
	maxLevels := uint64(s.plans.Convergence.MaxDeviceIterations)
	before := s.x.Telemetry()
	var reads uint64
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
	return err
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

// passLevels reads a pass's levels back and splits them per root: a
// vertex's level from root i where the pass's seen bit i is set, -1 where
// it is not.
func (m *MultiSource) passLevels(nroots int) ([][]int32, error) {
	s := m.s
	raw, err := s.x.Download(m.buf.levels)
	if err != nil {
		return nil, err
	}
	seen, err := s.x.Download(m.buf.seen)
	if err != nil {
		return nil, err
	}
	n := s.g.NumVertices()
	wb := int(m.plan.Width / 8)
	out := make([][]int32, nroots)
	for i := range out {
		out[i] = make([]int32, n)
	}
	splitRun(n, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			var word uint64
			for k := range wb {
				word |= uint64(seen[v*wb+k]) << (8 * k)
			}
			for i := range out {
				out[i][v] = -1
				if word>>i&1 != 0 {
					out[i][v] = int32(binary.LittleEndian.Uint32(raw[4*(v*int(m.stride)+i):]))
				}
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
