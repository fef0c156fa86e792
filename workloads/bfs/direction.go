package bfs

import (
	"encoding/binary"
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
)

// dirTracker follows a direction-optimizing traversal level by level as
// frontier.BFSDirectionOptimizing does, and asks the planner for each
// level's direction: the state is the previous direction and frontier
// size, and the unexplored edges (the graph's adjacency entries less the
// degrees of every vertex reached so far).
type dirTracker struct {
	profile planners.BFSGraphProfile
	params  planners.DirectionParams
	state   planners.BFSLevelState
	// mu is the unexplored edges before the coming frontier is counted.
	mu uint64
}

// newDirTracker starts a traversal of g.
func newDirTracker(g *frontier.CSR) *dirTracker {
	p := directionProfile(g)
	return &dirTracker{profile: p, params: planners.DefaultDirectionParams(), mu: p.EdgeEntries}
}

// decide returns the planner's decision for the step that discovers level
// from a frontier of nf vertices with mf edges, and advances the state.
func (t *dirTracker) decide(level, nf, mf uint64) (planners.BFSDirectionDecision, error) {
	if mf > t.mu {
		return planners.BFSDirectionDecision{}, fmt.Errorf("BFS level %d: the frontier's %d edges exceed the %d unexplored. Fix: the kernels' frontier count is wrong; this is a bug, report it", level, mf, t.mu)
	}
	t.state.Level = level
	t.state.FrontierVertices, t.state.FrontierEdges, t.state.UnexploredEdges = nf, mf, t.mu-mf
	d, err := planners.PlanBFSDirection(t.profile, t.state, t.params)
	if err != nil {
		return d, fmt.Errorf("BFS level %d: %w", level, err)
	}
	t.mu = t.state.UnexploredEdges
	t.state.Previous, t.state.PreviousFrontierVertices = d.Direction, nf
	return d, nil
}

// logEntry is one decoded entry of the kernels' decision log.
type logEntry struct {
	dir    planners.BFSDirection
	reason planners.BFSDirectionReason
	parity uint32
	depth  uint32
	nf     uint32
	mf, mu uint64
}

// decision is the entry as the planner's decision record for level.
func (e logEntry) decision(level uint64) planners.BFSDirectionDecision {
	return planners.BFSDirectionDecision{Level: level, Direction: e.dir, Reason: e.reason, FrontierVertices: uint64(e.nf),
		FrontierEdges: e.mf, UnexploredEdges: e.mu}
}

// decodeLog decodes raw log entries of width w (w.LogEntryBytes each): the
// first word, then the frontier's vertices, its edges and the unexplored
// edges, 32 bits each, or with 64-bit offsets the vertices in the first
// word's high half and the edges 64 bits each.
func decodeLog(raw []byte, w OffsetWidth) []logEntry {
	size := int(w.LogEntryBytes())
	out := make([]logEntry, len(raw)/size)
	le := binary.LittleEndian
	for i := range out {
		b := raw[size*i:]
		x := le.Uint32(b)
		e := logEntry{dir: planners.BFSDirection(x & logDirMask), reason: planners.BFSDirectionReason(x >> logReasonShift & logReasonMask),
			parity: x >> logParityBit & 1, depth: x >> logDepthShift, nf: le.Uint32(b[4:])}
		if w.Wide() {
			e.mf, e.mu = le.Uint64(b[8:]), le.Uint64(b[16:])
		} else {
			e.mf, e.mu = uint64(le.Uint32(b[8:])), uint64(le.Uint32(b[12:]))
		}
		out[i] = e
	}
	return out
}

// readLogFrom downloads the log entries of a traversal of steps steps, in
// step order: all of them, or the last LogEntries when there were more (the
// log is a ring). It returns the entries and the step of the first. pre
// holds the log's first entries as read already (nil: none): when they
// cover the steps, nothing is downloaded.
func (s *Session) readLogFrom(steps int, pre []byte) ([]logEntry, int, error) {
	cap := int(s.logEntries())
	n := min(steps, cap)
	if n == 0 {
		return nil, 0, nil
	}
	size := int(s.width.LogEntryBytes())
	if steps <= cap && steps*size <= len(pre) {
		return decodeLog(pre[:steps*size], s.width), 0, nil
	}
	// A log that did not wrap is read up to its last entry.
	raw, err := s.x.DownloadRange(s.buf.log, 0, uint64(size*n))
	if err != nil {
		return nil, 0, err
	}
	all := decodeLog(raw, s.width)
	first := steps - n
	out := make([]logEntry, n)
	for i := range out {
		out[i] = all[(first+i)%cap]
	}
	return out, first, nil
}

// deviceDecisions turns the log of a direction-optimizing traversal (its
// entries from step first on) into decisions, and checks each against the
// planner's for the same counts and against the counts before it: the
// unexplored edges fall by each frontier's edges, the visited bitmap turns
// after each bottom-up level.
func (s *Session) deviceDecisions(entries []logEntry, first int) ([]planners.BFSDirectionDecision, error) {
	t := newDirTracker(s.g)
	out := make([]planners.BFSDirectionDecision, 0, len(entries))
	for i, e := range entries {
		level := uint64(first + i + 1)
		got := e.decision(level)
		if i == 0 && first > 0 {
			// The log lost the earlier levels: the first entry kept
			// gives the state.
			t.mu, t.state.Previous, t.state.PreviousFrontierVertices = e.mu, e.dir, uint64(e.nf)
		} else if want, err := t.decide(level, uint64(e.nf), e.mf); err != nil {
			return out, err
		} else if got != want {
			return out, fmt.Errorf("BFS level %d: the device decided %s, the planner %s for the same counts. Fix: the kernels' direction rule differs from planners.PlanBFSDirection; this is a bug, report it", level, got, want)
		}
		if i > 0 {
			prev := entries[i-1]
			turned := prev.parity
			if prev.dir == planners.DirectionBottomUp {
				turned ^= 1
			}
			if e.parity != turned {
				return out, fmt.Errorf("BFS level %d: the log's visited bitmap %d does not follow the level before. Fix: this is a kernel bug, report it", level, e.parity)
			}
		}
		out = append(out, got)
	}
	return out, nil
}

// deviceRule is the kernels' direction_rule in Go, the one the emulation
// runs: the planner's rule on counts below 2^32, with exact products.
func deviceRule(prev planners.BFSDirection, nf, prevNF, mf, mu, n, entries uint64) (planners.BFSDirection, planners.BFSDirectionReason) {
	switch {
	case planners.DefaultBottomUpMinDegree > 0 && planners.DefaultBottomUpMinDegree*n > entries:
		return planners.DirectionTopDown, planners.ReasonLowAverageDegree
	case prev != planners.DirectionBottomUp && mf*planners.DefaultDirectionAlpha > mu:
		return planners.DirectionBottomUp, planners.ReasonFrontierEdgesAboveThreshold
	case prev != planners.DirectionBottomUp:
		return planners.DirectionTopDown, planners.ReasonFrontierEdgesWithinThreshold
	case nf >= prevNF:
		return planners.DirectionBottomUp, planners.ReasonFrontierGrowing
	case nf*planners.DefaultDirectionBeta > n:
		return planners.DirectionBottomUp, planners.ReasonFrontierAboveThreshold
	}
	return planners.DirectionTopDown, planners.ReasonFrontierBelowThreshold
}
