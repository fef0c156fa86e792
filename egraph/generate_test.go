package egraph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// generateWithTruth is Generate that also returns the planted groups: the
// smallest class id of the group the generator planted each class in.
func generateWithTruth(t *testing.T, cfg GenConfig) (*Graph, []int32) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	b := newGenBuilder(cfg)
	switch cfg.Shape {
	case ShapeRandom, ShapeUnionChain:
		b.random(cfg.Shape == ShapeUnionChain)
	case ShapeGiantClass:
		b.giant()
	case ShapeDeepCycle:
		b.cycles(cfg.CycleLength)
	case ShapeAllDistinct:
		b.distinct()
	}
	g, err := Generate(cfg)
	require.NoError(t, err)
	require.Equal(t, g, b.g, "generateWithTruth builds what Generate builds")
	truth := make([]int32, g.ClassCount)
	for c := range truth {
		truth[c] = b.find(int32(c))
	}
	return g, truth
}

// hasCycle reports whether some class reaches itself through children.
func hasCycle(g *Graph) bool {
	kids := make([][]int32, g.ClassCount)
	for i := range g.NodeCount() {
		kids[g.NodeClass[i]] = append(kids[g.NodeClass[i]], g.NodeChildren(i)...)
	}
	state := make([]uint8, g.ClassCount) // 0 new, 1 on the stack, 2 done
	type frame struct{ c, k int32 }
	for start := range g.ClassCount {
		if state[start] != 0 {
			continue
		}
		stack := []frame{{start, 0}}
		state[start] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if int(f.k) == len(kids[f.c]) {
				state[f.c] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			next := kids[f.c][f.k]
			f.k++
			switch state[next] {
			case 1:
				return true
			case 0:
				state[next] = 1
				stack = append(stack, frame{next, 0})
			}
		}
	}
	return false
}

func TestGenerateShapes(t *testing.T) {
	for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		for _, n := range []int{1, 2, 3, 5, 9, 17, 40, 100, 1000, 5000} {
			for seed := range uint64(3) {
				t.Run(fmt.Sprintf("%s/%d/%d", shape, n, seed), func(t *testing.T) {
					cfg := GenConfig{Nodes: n, Seed: seed, Shape: shape, CycleLength: 16}
					g, truth := generateWithTruth(t, cfg)
					require.NoError(t, g.Validate())
					require.Equal(t, n, g.NodeCount())
					w, _ := checkAllAgree(t, g)
					for c, root := range truth {
						require.Equal(t, w.Labels[root], w.Labels[c], "class %d was planted equal to class %d", c, root)
					}
					checkShape(t, cfg, g, w)
				})
			}
		}
	}
}

// checkShape checks what each shape promises about its closure.
func checkShape(t *testing.T, cfg GenConfig, g *Graph, w *RebuildResult) {
	t.Helper()
	n := cfg.Nodes
	switch cfg.Shape {
	case ShapeGiantClass:
		assert.Equal(t, 1, w.Classes, "one giant class")
	case ShapeAllDistinct:
		assert.Equal(t, n, w.Classes)
		assert.Equal(t, n, w.DistinctNodes)
		assert.Equal(t, 1, w.Rounds)
		assert.Empty(t, g.Unions)
	case ShapeDeepCycle:
		if n >= 2*cfg.CycleLength+1 {
			pairs := (n - 1) / (2 * cfg.CycleLength)
			assert.Equal(t, g.UnionCount(), pairs)
			assert.Equal(t, n-pairs*cfg.CycleLength, w.Classes, "each a_i joins b_i")
			r, err := RebuildRounds(g)
			require.NoError(t, err)
			assert.Equal(t, cfg.CycleLength, r.Rounds, "one step around the cycle per round")
			assert.True(t, hasCycle(g))
		}
	case ShapeUnionChain:
		if n >= 64 {
			m := max(2, n/16/2)
			require.GreaterOrEqual(t, g.UnionCount(), m-1)
			for k := range m - 1 {
				assert.Equal(t, []int32{int32(m - 2 - k), int32(m - 1 - k)}, g.Unions[2*k:2*k+2], "the chain runs from the highest pair down")
			}
		}
	}
}

func TestGenerateRandomHasCongruencesAndCycles(t *testing.T) {
	g, err := Generate(GenConfig{Nodes: 20000, Seed: 3})
	require.NoError(t, err)
	w, r := checkAllAgree(t, g)
	assert.True(t, hasCycle(g), "e-nodes that join existing classes close cycles")
	assert.Greater(t, w.CongruenceMerges, g.NodeCount()/20, "planted congruences are found by the rebuild")
	assert.Greater(t, r.Rounds, 3, "leaf unions cascade up through several levels of parents")
	t.Logf("20000 e-nodes: %d classes -> %d after unions -> %d; %d congruence merges; rounds %d (worklist %d)",
		w.ClassIDs, w.ClassesAfterUnions, w.Classes, w.CongruenceMerges, r.Rounds, w.Rounds)
}

func TestGenerateDeterministic(t *testing.T) {
	for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		a, err := Generate(GenConfig{Nodes: 3000, Seed: 9, Shape: shape})
		require.NoError(t, err)
		b, err := Generate(GenConfig{Nodes: 3000, Seed: 9, Shape: shape})
		require.NoError(t, err)
		assert.Equal(t, a, b, "%s: the same seed gives the same graph", shape)
		c, err := Generate(GenConfig{Nodes: 3000, Seed: 10, Shape: shape})
		require.NoError(t, err)
		if shape != ShapeDeepCycle {
			assert.NotEqual(t, a, c, "%s: another seed gives another graph", shape)
		}
	}
	// The first e-nodes of gen:1000:1 are pinned, so that a change of the
	// generator (which would change every recorded benchmark input) is seen.
	g, err := Generate(GenConfig{Nodes: 1000, Seed: 1})
	require.NoError(t, err)
	var sb strings.Builder
	for i := 62; i < 66; i++ {
		fmt.Fprintf(&sb, "%d %s %v; ", g.NodeClass[i], g.Ops[g.NodeOp[i]].Name, g.NodeChildren(i))
	}
	assert.Equal(t, pinnedGen1000, sb.String())
}

// pinnedGen1000 is e-nodes 62..65 of gen:1000:1, written as
// "class op children".
const pinnedGen1000 = "62 u2 [35]; 63 t0 [34 36 31]; 64 b0 [27 3]; 65 t0 [19 36 31]; "

func TestParseGenSpec(t *testing.T) {
	tests := []struct {
		spec string
		want GenConfig
		err  string
	}{
		{"gen:1000", GenConfig{Nodes: 1000, Seed: 1}, ""},
		{"gen:1e6", GenConfig{Nodes: 1000000, Seed: 1}, ""},
		{"gen:10_000_000:42", GenConfig{Nodes: 10000000, Seed: 42}, ""},
		{"gen:5000:7:cycle", GenConfig{Nodes: 5000, Seed: 7, Shape: ShapeDeepCycle}, ""},
		{"gen:5000:7:distinct", GenConfig{Nodes: 5000, Seed: 7, Shape: ShapeAllDistinct}, ""},
		{"gen:1E3:0:giant", GenConfig{Nodes: 1000, Shape: ShapeGiantClass}, ""},
		{"gen:100:1:chain", GenConfig{Nodes: 100, Seed: 1, Shape: ShapeUnionChain}, ""},
		{"gen:0", GenConfig{}, "generator nodes: 0 e-nodes is outside"},
		{"gen:1e9", GenConfig{}, "generator nodes: 1000000000 e-nodes is outside"},
		{"gen:99999999999999999999", GenConfig{}, "generator N"},
		{"gen:1e99", GenConfig{}, "generator N"},
		{"gen:x", GenConfig{}, "generator N: \"x\" is not a count"},
		{"gen:", GenConfig{}, "generator N"},
		{"gen:10:-1", GenConfig{}, "generator SEED"},
		{"gen:10:1:blob", GenConfig{}, "unknown shape \"blob\""},
		{"gen:10:1:random:4", GenConfig{}, "generator spec"},
		{"file:x", GenConfig{}, "generator spec"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseGenSpec(tc.spec)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestGenConfigValidate(t *testing.T) {
	for _, c := range []GenConfig{{Nodes: 0}, {Nodes: MaxGenNodes + 1}, {Nodes: 5, Shape: -1}, {Nodes: 5, Shape: shapeCount}, {Nodes: 5, CycleLength: 1}, {Nodes: 5, CycleLength: -3}} {
		_, err := Generate(c)
		var ge *GenError
		require.ErrorAs(t, err, &ge, "%+v", c)
	}
	assert.Equal(t, "shape(9)", GenShape(9).String())
	assert.Equal(t, []string{"random", "chain", "giant", "cycle", "distinct"}, GenShapeNames())
}

func FuzzParseGenSpec(f *testing.F) {
	for _, s := range []string{"gen:1000", "gen:1e3:5:cycle", "gen:12:0:giant", "gen::", "gen:1e", "gen:5:18446744073709551615:distinct"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(spec), func() {
			cfg, err := ParseGenSpec(spec)
			if err != nil {
				var ge *GenError
				require.ErrorAs(t, err, &ge)
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, cfg.Validate())
			if cfg.Nodes <= 2000 {
				g, err := Generate(cfg)
				require.NoError(t, err)
				require.Equal(t, cfg.Nodes, g.NodeCount())
				require.NoError(t, g.Validate())
			}
		})
	})
}
