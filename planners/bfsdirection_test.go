package planners

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var kronProfile = BFSGraphProfile{Vertices: 1 << 22, EdgeEntries: 128_000_000}

func TestPlanBFSDirectionRules(t *testing.T) {
	p := DefaultDirectionParams()
	tests := []struct {
		name   string
		graph  BFSGraphProfile
		state  BFSLevelState
		dir    BFSDirection
		reason BFSDirectionReason
	}{
		{"first level, small frontier", kronProfile,
			BFSLevelState{Level: 1, FrontierVertices: 1, FrontierEdges: 30, UnexploredEdges: 128_000_000 - 30},
			DirectionTopDown, ReasonFrontierEdgesWithinThreshold},
		{"exactly at the threshold stays top-down", kronProfile,
			BFSLevelState{Level: 2, Previous: DirectionTopDown, FrontierVertices: 10, PreviousFrontierVertices: 1, FrontierEdges: 1_000_000, UnexploredEdges: 14_000_000},
			DirectionTopDown, ReasonFrontierEdgesWithinThreshold},
		{"one edge past the threshold goes bottom-up", kronProfile,
			BFSLevelState{Level: 2, Previous: DirectionTopDown, FrontierVertices: 10, PreviousFrontierVertices: 1, FrontierEdges: 1_000_001, UnexploredEdges: 14_000_000},
			DirectionBottomUp, ReasonFrontierEdgesAboveThreshold},
		{"bottom-up stays while the frontier grows", kronProfile,
			BFSLevelState{Level: 3, Previous: DirectionBottomUp, FrontierVertices: 5000, PreviousFrontierVertices: 5000, FrontierEdges: 1, UnexploredEdges: 1},
			DirectionBottomUp, ReasonFrontierGrowing},
		{"bottom-up stays while the frontier is large", kronProfile,
			BFSLevelState{Level: 4, Previous: DirectionBottomUp, FrontierVertices: (1<<22)/24 + 1, PreviousFrontierVertices: 1 << 21, FrontierEdges: 1, UnexploredEdges: 1},
			DirectionBottomUp, ReasonFrontierAboveThreshold},
		{"bottom-up ends once the frontier shrinks below n/beta", kronProfile,
			BFSLevelState{Level: 5, Previous: DirectionBottomUp, FrontierVertices: (1 << 22) / 24, PreviousFrontierVertices: 1 << 21, FrontierEdges: 1, UnexploredEdges: 1},
			DirectionTopDown, ReasonFrontierBelowThreshold},
		{"the degree gate keeps a grid top-down", BFSGraphProfile{Vertices: 1 << 22, EdgeEntries: 4 * (1 << 22)},
			BFSLevelState{Level: 9, Previous: DirectionTopDown, FrontierVertices: 1000, FrontierEdges: 4000, UnexploredEdges: 4000},
			DirectionTopDown, ReasonLowAverageDegree},
		{"products beyond 64 bits compare exactly", BFSGraphProfile{Vertices: 1 << 40, EdgeEntries: math.MaxUint64},
			BFSLevelState{Level: 2, FrontierVertices: 1, FrontierEdges: math.MaxUint64 / 2, UnexploredEdges: math.MaxUint64},
			DirectionBottomUp, ReasonFrontierEdgesAboveThreshold},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := PlanBFSDirection(tc.graph, tc.state, p)
			require.NoError(t, err)
			assert.Equal(t, tc.dir, d.Direction)
			assert.Equal(t, tc.reason, d.Reason)
			assert.Equal(t, tc.state.Level, d.Level)
			assert.Equal(t, tc.state.FrontierEdges, d.FrontierEdges)
		})
	}
}

// TestPlanBFSDirectionProperties checks, over random states, the rules
// against their real-number form and the gate's precedence.
func TestPlanBFSDirectionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 20000; i++ {
		g := BFSGraphProfile{Vertices: 1 + r.Uint64N(1<<30)}
		g.EdgeEntries = r.Uint64N(64 * g.Vertices)
		s := BFSLevelState{Level: 1 + r.Uint64N(100), Previous: BFSDirection(r.IntN(3)),
			FrontierVertices: 1 + r.Uint64N(g.Vertices), PreviousFrontierVertices: r.Uint64N(g.Vertices + 1)}
		if g.EdgeEntries > 0 {
			s.FrontierEdges, s.UnexploredEdges = r.Uint64N(g.EdgeEntries+1), r.Uint64N(g.EdgeEntries+1)
		}
		p := DirectionParams{Alpha: 1 + r.Uint64N(40), Beta: 1 + r.Uint64N(40), MinAverageDegree: r.Uint64N(10)}
		d, err := PlanBFSDirection(g, s, p)
		require.NoError(t, err)
		lowDegree := p.MinAverageDegree > 0 && float64(g.EdgeEntries) < float64(p.MinAverageDegree)*float64(g.Vertices)
		switch {
		case lowDegree:
			require.Equal(t, ReasonLowAverageDegree, d.Reason)
			require.Equal(t, DirectionTopDown, d.Direction)
		case s.Previous != DirectionBottomUp:
			want := float64(s.FrontierEdges) > float64(s.UnexploredEdges)/float64(p.Alpha)
			require.Equal(t, want, d.Direction == DirectionBottomUp, "%+v %+v %+v", g, s, p)
		default:
			stay := s.FrontierVertices >= s.PreviousFrontierVertices || float64(s.FrontierVertices) > float64(g.Vertices)/float64(p.Beta)
			require.Equal(t, stay, d.Direction == DirectionBottomUp, "%+v %+v %+v", g, s, p)
		}
	}
}

func TestPlanBFSDirectionErrors(t *testing.T) {
	g := BFSGraphProfile{Vertices: 100, EdgeEntries: 1000}
	ok := BFSLevelState{Level: 1, FrontierVertices: 1, FrontierEdges: 10, UnexploredEdges: 990}
	p := DefaultDirectionParams()
	tests := []struct {
		kind  BFSDirectionErrorKind
		graph BFSGraphProfile
		state func(*BFSLevelState)
		par   func(*DirectionParams)
	}{
		{DirectionZeroVertices, BFSGraphProfile{}, nil, nil},
		{DirectionZeroAlpha, g, nil, func(p *DirectionParams) { p.Alpha = 0 }},
		{DirectionZeroBeta, g, nil, func(p *DirectionParams) { p.Beta = 0 }},
		{DirectionBadPrevious, g, func(s *BFSLevelState) { s.Previous = 3 }, nil},
		{DirectionEmptyFrontier, g, func(s *BFSLevelState) { s.FrontierVertices = 0 }, nil},
		{DirectionFrontierAboveVertices, g, func(s *BFSLevelState) { s.FrontierVertices = 101 }, nil},
		{DirectionPreviousFrontierAboveVertices, g, func(s *BFSLevelState) { s.PreviousFrontierVertices = 101 }, nil},
		{DirectionFrontierEdgesAboveGraph, g, func(s *BFSLevelState) { s.FrontierEdges = 1001 }, nil},
		{DirectionUnexploredEdgesAboveGraph, g, func(s *BFSLevelState) { s.UnexploredEdges = 1001 }, nil},
	}
	for _, tc := range tests {
		s, par := ok, p
		if tc.state != nil {
			tc.state(&s)
		}
		if tc.par != nil {
			tc.par(&par)
		}
		_, err := PlanBFSDirection(tc.graph, s, par)
		e := requireKindError(t, err, tc.kind, func(e *BFSDirectionError) BFSDirectionErrorKind { return e.Kind })
		assert.NotEmpty(t, e.Field())
	}
}

func TestBFSDirectionDecisionRecord(t *testing.T) {
	d, err := PlanBFSDirection(kronProfile, BFSLevelState{Level: 2, Previous: DirectionTopDown, FrontierVertices: 1500,
		PreviousFrontierVertices: 1, FrontierEdges: 9_000_000, UnexploredEdges: 100_000_000}, DefaultDirectionParams())
	require.NoError(t, err)
	assert.Equal(t, "bfs-direction-v1|level=2|direction=bottom-up|reason=frontier_edges_above_unexplored_over_alpha|frontier_vertices=1500|frontier_edges=9000000|unexplored_edges=100000000", d.String())
	data, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{"level":2,"direction":"bottom-up","reason":"frontier_edges_above_unexplored_over_alpha","frontier_vertices":1500,"frontier_edges":9000000,"unexplored_edges":100000000}`, string(data))
	_, err = json.Marshal(BFSDirectionDecision{Direction: 7})
	require.ErrorContains(t, err, "Fix:")
	assert.Equal(t, "BFSDirection(0)", BFSDirection(0).String())
	assert.Equal(t, "BFSDirectionReason(9)", BFSDirectionReason(9).String())
}

func BenchmarkPlanBFSDirection(b *testing.B) {
	s := BFSLevelState{Level: 3, Previous: DirectionBottomUp, FrontierVertices: 100000, PreviousFrontierVertices: 200000, FrontierEdges: 1, UnexploredEdges: 1}
	p := DefaultDirectionParams()
	for b.Loop() {
		if _, err := PlanBFSDirection(kronProfile, s, p); err != nil {
			b.Fatal(err)
		}
	}
}
