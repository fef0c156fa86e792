package partbfs

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
)

// Step is one level step of a run: the exchange the plan gives for the
// direction and the counts the devices measured, the bytes the transport
// moved between devices, and its time.
type Step struct {
	// Exchange is partition.Plan.LevelExchange of the step's
	// decision and measured counts.
	Exchange partition.LevelExchange `json:"exchange"`
	// MeasuredBytes is what the transport moved between distinct devices
	// (for a RankSession, what this rank received from the others).
	MeasuredBytes uint64 `json:"measured_bytes"`
	// ExchangeNs is the transport's wall time; StepNs the step's.
	ExchangeNs uint64 `json:"exchange_ns"`
	StepNs     uint64 `json:"step_ns"`
	// Found is the vertices the step discovered.
	Found uint64 `json:"found"`
}

// Run is one traversal.
type Run struct {
	Root int32 `json:"root"`
	// Levels is the number of levels (the deepest level + 1).
	Levels int    `json:"levels"`
	WallNs uint64 `json:"wall_ns"`
	// ExchangeBytes and ExchangeNs sum the steps'.
	ExchangeBytes uint64 `json:"exchange_bytes"`
	ExchangeNs    uint64 `json:"exchange_ns"`
	Steps         []Step `json:"steps"`
}

// Run traverses the graph from root: the parts reset, then level steps,
// each in the direction planners.PlanBFSDirection gives for the global
// frontier, until a step finds nothing. Read the levels with Levels.
func (s *Session) Run(root int32) (Run, error) { return s.run(root) }

// checkRoot refuses a root that is not a vertex of the graph.
func (t *traversal) checkRoot(root int32) error {
	n := uint64(t.g.NumVertices())
	if root < 0 || uint64(root) >= n {
		return fmt.Errorf("partitioned BFS root %d is not a vertex of %s (%d vertices). Fix: pass a root from 0 to %d", root, t.g.Name, n, n-1)
	}
	return nil
}

// run is the level protocol from root on the parts held here, the same
// for a Session and a RankSession: the parts reset, then level steps until
// a step finds nothing, each step's direction from the global frontier
// (every part's counts, through the exchange).
func (t *traversal) run(root int32) (Run, error) {
	if err := t.checkRoot(root); err != nil {
		return Run{}, err
	}
	n := uint64(t.g.NumVertices())
	r := Run{Root: root}
	t0 := time.Now()
	if err := t.reset(uint64(root)); err != nil {
		return r, err
	}
	state := planners.BFSLevelState{FrontierVertices: 1, FrontierEdges: uint64(t.g.Degree(root))}
	state.UnexploredEdges = t.profile.EdgeEntries - state.FrontierEdges
	for depth := 0; state.FrontierVertices > 0; depth++ {
		if uint64(depth) > n {
			return r, fmt.Errorf("partitioned BFS from %d: still finding vertices after %d levels. Fix: this is a kernel bug; report it with the graph", root, depth)
		}
		state.Level = uint64(depth + 1)
		d, err := planners.PlanBFSDirection(t.profile, state, t.cfg.Direction)
		if err != nil {
			return r, err
		}
		st, found, edges, err := t.step(depth, d)
		if err != nil {
			return r, err
		}
		r.Steps = append(r.Steps, st)
		r.ExchangeBytes += st.MeasuredBytes
		r.ExchangeNs += st.ExchangeNs
		state.Previous, state.PreviousFrontierVertices = d.Direction, state.FrontierVertices
		state.FrontierVertices, state.FrontierEdges = found, edges
		if edges > state.UnexploredEdges {
			return r, fmt.Errorf("partitioned BFS from %d: level %d found %d edges, more than the %d unexplored. Fix: this is a kernel bug; report it", root, depth+1, edges, state.UnexploredEdges)
		}
		state.UnexploredEdges -= edges
	}
	r.Levels = len(r.Steps)
	r.WallNs = uint64(time.Since(t0))
	return r, nil
}

// reset launches the init kernel on every part held here.
func (t *traversal) reset(root uint64) error {
	return t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		local := NoRoot
		if root >= p.plan.First && root < p.plan.End {
			local = root - p.plan.First
		}
		return p.k.init, kernelabi.MustArgs(InitParams[executor.Buffer]{Level: p.buf.level, Front0: p.buf.front0, Front1: p.buf.front1,
			Next: p.buf.next, Counts: p.buf.counts, Ctl: p.buf.ctl, N: p.plan.Vertices, S: t.plan.SliceWords,
			Parts: t.numParts(), Root: local}), true
	})
}

// shape is the partition's shape as part p's kernels see it.
func (t *traversal) shape(p *part) ShapeParams {
	return ShapeParams{S: t.plan.SliceWords, Parts: t.numParts(), Self: uint64(p.index)}
}

// launchAll launches one kernel per part held here (skipping those for
// which args returns false), every launch in flight together, and waits
// for all.
func (t *traversal) launchAll(args func(p *part) (*executor.Kernel, []executor.Arg, bool)) error {
	pending := make([]*executor.Pending, 0, len(t.parts))
	var first error
	for _, p := range t.parts {
		k, a, ok := args(p)
		if !ok {
			continue
		}
		pd, err := p.x.LaunchAsync(k, p.k.cfg[k], a...)
		if err != nil {
			first = fmt.Errorf("partitioned BFS: device %d: %w", p.index, err)
			break
		}
		pending = append(pending, pd)
	}
	for _, pd := range pending {
		if _, err := pd.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// step runs one level step from depth and returns its record and what it
// found.
func (t *traversal) step(depth int, d planners.BFSDirectionDecision) (Step, uint64, uint64, error) {
	t0 := time.Now()
	var st Step
	var err error
	if d.Direction == planners.DirectionBottomUp {
		st, err = t.bottomUp(depth, d)
	} else {
		st, err = t.topDown(depth, d)
	}
	if err != nil {
		return st, 0, 0, err
	}
	found, edges, err := t.ex.totals(depth)
	st.Found, st.StepNs = found, uint64(time.Since(t0))
	return st, found, edges, err
}

// found sums the found vertices and edges of the step from depth over the
// parts held here.
func (t *traversal) found(depth int) (found, edges uint64, err error) {
	for _, p := range t.parts {
		raw, err := p.x.DownloadRange(p.buf.ctl, 8*CtlFound, 32)
		if err != nil {
			return 0, 0, err
		}
		found += binary.LittleEndian.Uint64(raw[8*(CtlFound+depth%2):])
		edges += binary.LittleEndian.Uint64(raw[8*(CtlEdges+depth%2):])
	}
	return found, edges, nil
}

// bottomUp gathers every part's frontier slice on every part, then runs
// the bottom-up kernel.
func (t *traversal) bottomUp(depth int, d planners.BFSDirectionDecision) (Step, error) {
	st := Step{}
	var err error
	if st.Exchange, err = t.plan.LevelExchange(d, nil); err != nil {
		return st, err
	}
	slice := 8 * t.plan.SliceWords
	x, err := t.ex.allGather(func(p *part) (send, recv nccl.Region) {
		cur, _ := p.buf.front(depth)
		return nccl.Region{X: p.x, Buf: cur, Len: slice}, nccl.Region{X: p.x, Buf: p.buf.xbuf, Len: slice * t.numParts()}
	})
	if err != nil {
		return st, err
	}
	st.MeasuredBytes, st.ExchangeNs = x.Bytes, x.WallNs
	err = t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		cur, next := p.buf.front(depth)
		return p.k.bottomUp, kernelabi.MustArgs(BottomUpParams[executor.Buffer]{Offsets: p.buf.offsets, Targets: p.buf.targets,
			Level: p.buf.level, Front: cur, FrontNext: next, Xbuf: p.buf.xbuf, Bounds: p.buf.bounds, Ctl: p.buf.ctl,
			N: p.plan.Vertices, ShapeParams: t.shape(p), Depth: uint64(depth)}), true
	})
	return st, err
}
