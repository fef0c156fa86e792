package megakernel

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MaxWaves is the largest wave count the planners accept. Wave ids are
// stored as int32 in the compact CSR arrays the planners work on.
const MaxWaves = math.MaxInt32 - 1

// MaxDependencies is the largest dependency count the planners accept.
const MaxDependencies = math.MaxInt32 - 1

// Dependency says that wave After may start only once wave Before has
// finished (vyre's MegakernelWaveDependency{before, after}). Wave ids are
// indices in [0, wave count).
type Dependency struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// BarrierPlan is the layered barrier plan of a wave DAG (vyre's
// MegakernelBarrierPlan). Waves of one group are independent and run in the
// same cooperative phase; a grid-wide barrier separates consecutive groups.
//
// The groups are stored compactly: Order lists every wave id group by group,
// and group i is Order[GroupStart[i]:GroupStart[i+1]]. Within a group, waves
// appear in vyre's Kahn discovery order, not sorted order.
type BarrierPlan struct {
	// Order holds every scheduled wave id, group after group.
	Order []int32 `json:"order"`
	// GroupStart has one entry per group plus a final len(Order); it is
	// empty for an empty plan.
	GroupStart []int32 `json:"group_start"`
	// GlobalBarriers is the number of grid-wide barriers: groups - 1, or 0
	// when there are no groups.
	GlobalBarriers int `json:"global_barriers"`
}

// GroupCount returns the number of barrier groups.
func (p *BarrierPlan) GroupCount() int {
	if len(p.GroupStart) == 0 {
		return 0
	}
	return len(p.GroupStart) - 1
}

// Group returns the wave ids of group i, in plan order. The slice aliases
// the plan; do not modify it.
func (p *BarrierPlan) Group(i int) []int32 {
	return p.Order[p.GroupStart[i]:p.GroupStart[i+1]]
}

// Groups returns a copy of every group as []int, for display and tests.
func (p *BarrierPlan) Groups() [][]int {
	out := make([][]int, p.GroupCount())
	for i := range out {
		g := p.Group(i)
		out[i] = make([]int, len(g))
		for j, w := range g {
			out[i][j] = int(w)
		}
	}
	return out
}

// MaxGroupWidth returns the size of the largest group.
func (p *BarrierPlan) MaxGroupWidth() int {
	widest := 0
	for i := 0; i < p.GroupCount(); i++ {
		widest = max(widest, int(p.GroupStart[i+1]-p.GroupStart[i]))
	}
	return widest
}

// InvalidWaveError reports a dependency endpoint outside [0, WaveCount), or
// any dependency when WaveCount is 0 (vyre's InvalidWave).
type InvalidWaveError struct {
	WaveCount int
	Before    int
	After     int
	// Index is the position of the offending dependency in the input.
	Index int
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidWaveError) Error() string {
	return fmt.Sprintf("megakernel dependency %d (before %d, after %d) names a wave outside [0, %d). Fix: give every dependency endpoint a wave id below the wave count",
		e.Index, e.Before, e.After, e.WaveCount)
}

// SelfDependencyError reports a dependency from a wave to itself (vyre's
// SelfDependency).
type SelfDependencyError struct {
	Wave int
	// Index is the position of the offending dependency in the input.
	Index int
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *SelfDependencyError) Error() string {
	return fmt.Sprintf("megakernel dependency %d makes wave %d depend on itself. Fix: remove the self dependency; a wave is always ordered after itself",
		e.Index, e.Wave)
}

// CycleError reports that the dependencies contain a cycle (vyre's
// Cycle{unscheduled_waves}). Witness names one cycle: Witness[0] ->
// Witness[1] -> ... -> Witness[len-1] -> Witness[0], rotated so that it starts
// at its smallest wave id.
type CycleError struct {
	UnscheduledWaves int
	Witness          []int
}

// MaxWitnessShown is the number of a cycle's waves its error message
// lists; a longer cycle ends with "... N more" (the whole witness stays in
// CycleError.Witness).
const MaxWitnessShown = 20

// Error describes the failure and ends with a "Fix:" sentence. It names at
// most MaxWitnessShown waves of the cycle, so a cycle through a million
// waves still gives a short message.
func (e *CycleError) Error() string {
	var b strings.Builder
	for i, w := range e.Witness {
		if i == MaxWitnessShown {
			fmt.Fprintf(&b, "... %d more -> ", len(e.Witness)-i)
			break
		}
		fmt.Fprintf(&b, "%d -> ", w)
	}
	if len(e.Witness) > 0 {
		fmt.Fprintf(&b, "%d", e.Witness[0])
	}
	return fmt.Sprintf("megakernel dependencies contain a cycle (%s); %d waves cannot be scheduled. Fix: remove one dependency of the cycle so the waves form a DAG",
		b.String(), e.UnscheduledWaves)
}

// waveGraph is the validated dependency DAG as int32 CSR arrays.
type waveGraph struct {
	n   int
	off []int32 // n+1 offsets into tgt
	tgt []int32 // targets, per source in dependency input order
}

// buildWaveGraph validates deps against waveCount (vyre's order: per
// dependency in input order, range before self) and builds the outgoing CSR.
// indeg receives the incoming counts (duplicates counted twice).
func buildWaveGraph(waveCount int, deps []Dependency) (waveGraph, []int32, error) {
	if waveCount < 0 {
		return waveGraph{}, nil, &InvalidWaveError{WaveCount: waveCount}
	}
	if waveCount == 0 {
		if len(deps) > 0 {
			return waveGraph{}, nil, &InvalidWaveError{WaveCount: 0, Before: deps[0].Before, After: deps[0].After}
		}
		return waveGraph{}, nil, nil
	}
	if waveCount > MaxWaves {
		return waveGraph{}, nil, &checked.OverflowError{Field: "barrier scratch wave offsets", Bits: 32, Inputs: fmt.Sprintf("the number of waves, %d", waveCount)}
	}
	if len(deps) > MaxDependencies {
		return waveGraph{}, nil, &checked.OverflowError{Field: "outgoing dependency offsets", Bits: 32, Inputs: fmt.Sprintf("the number of dependencies, %d", len(deps))}
	}
	for i, d := range deps {
		if d.Before < 0 || d.After < 0 || d.Before >= waveCount || d.After >= waveCount {
			return waveGraph{}, nil, &InvalidWaveError{WaveCount: waveCount, Before: d.Before, After: d.After, Index: i}
		}
		if d.Before == d.After {
			return waveGraph{}, nil, &SelfDependencyError{Wave: d.Before, Index: i}
		}
	}
	off, tgt := buildCSR(waveCount, deps, false)
	// Incoming counts from the CSR: targets of nearby sources are often
	// nearby, which keeps these increments in cache.
	indeg := make([]int32, waveCount)
	for _, t := range tgt {
		indeg[t]++
	}
	return waveGraph{n: waveCount, off: off, tgt: tgt}, indeg, nil
}

// layers runs Kahn's algorithm layer by layer, as vyre does. indeg
// is consumed. On a cycle it returns a *CycleError with a witness.
func (g waveGraph) layers(indeg []int32) (BarrierPlan, error) {
	n := g.n
	order := make([]int32, 0, n)
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			order = append(order, int32(v))
		}
	}
	groupStart := make([]int32, 0, 64)
	if len(order) > 0 {
		groupStart = append(groupStart, 0, int32(len(order)))
	}
	head := 0
	for head < len(order) {
		end := len(order)
		for _, v := range order[head:end] {
			for _, t := range g.tgt[g.off[v]:g.off[v+1]] {
				indeg[t]--
				if indeg[t] == 0 {
					order = append(order, t)
				}
			}
		}
		head = end
		if len(order) > end {
			groupStart = append(groupStart, int32(len(order)))
		}
	}
	if len(order) < n {
		return BarrierPlan{}, &CycleError{UnscheduledWaves: n - len(order), Witness: g.cycleWitness(indeg)}
	}
	plan := BarrierPlan{Order: order, GroupStart: groupStart}
	if len(groupStart) > 1 {
		plan.GlobalBarriers = len(groupStart) - 2
	}
	return plan, nil
}

// cycleWitness finds one cycle among the waves Kahn could not schedule
// (those with indeg > 0). Every such wave has an unscheduled predecessor, so
// walking predecessors from any of them must repeat a wave.
func (g waveGraph) cycleWitness(indeg []int32) []int {
	n := g.n
	// Incoming CSR restricted to unscheduled sources.
	inOff := make([]int32, n+1)
	for u := 0; u < n; u++ {
		if indeg[u] == 0 {
			continue
		}
		for _, t := range g.tgt[g.off[u]:g.off[u+1]] {
			if indeg[t] > 0 {
				inOff[t+1]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		inOff[i] += inOff[i-1]
	}
	src := make([]int32, inOff[n])
	cur := make([]int32, n)
	copy(cur, inOff[:n])
	for u := 0; u < n; u++ {
		if indeg[u] == 0 {
			continue
		}
		for _, t := range g.tgt[g.off[u]:g.off[u+1]] {
			if indeg[t] > 0 {
				src[cur[t]] = int32(u)
				cur[t]++
			}
		}
	}
	start := -1
	for v := 0; v < n; v++ {
		if indeg[v] > 0 {
			start = v
			break
		}
	}
	if start < 0 {
		return nil
	}
	pos := make(map[int32]int)
	var walk []int32
	v := int32(start)
	for {
		if p, seen := pos[v]; seen {
			cycle := walk[p:]
			// The walk follows predecessors; reverse it to follow dependencies.
			out := make([]int, len(cycle))
			for i, w := range cycle {
				out[len(cycle)-1-i] = int(w)
			}
			return rotateToMin(out)
		}
		pos[v] = len(walk)
		walk = append(walk, v)
		if inOff[v] == inOff[v+1] {
			return nil // unreachable for a real cycle remainder
		}
		v = src[inOff[v]]
	}
}

func rotateToMin(c []int) []int {
	if len(c) == 0 {
		return c
	}
	m := 0
	for i, w := range c {
		if w < c[m] {
			m = i
		}
	}
	return append(append([]int(nil), c[m:]...), c[:m]...)
}

// PlanBarriers groups waves into Kahn layers and places a grid-wide barrier
// between consecutive layers (vyre's plan_cuda_megakernel_barriers). It runs
// in O(waves + dependencies) on int32 CSR arrays.
//
// Errors, in vyre's order: *InvalidWaveError (an endpoint out of range, or
// any dependency with zero waves), *SelfDependencyError, *CycleError, and
// *checked.OverflowError (vyre's ByteCountOverflow) when the counts do not
// fit the int32 arrays. Duplicate dependencies are allowed.
func PlanBarriers(waveCount int, deps []Dependency) (BarrierPlan, error) {
	g, indeg, err := buildWaveGraph(waveCount, deps)
	if err != nil {
		return BarrierPlan{}, err
	}
	if g.n == 0 {
		return BarrierPlan{}, nil
	}
	return g.layers(indeg)
}
