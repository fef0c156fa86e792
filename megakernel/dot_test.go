package megakernel_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// parsedDOT is what a DOT parser reads back from WriteDOT: the members of
// each cluster, the wave labels, and the edges with their styles.
type parsedDOT struct {
	strict, directed bool
	clusters         map[string][]string
	labels           map[string]string
	edges            map[[2]string]string // style, "" for solid
}

func parseDOT(t *testing.T, src []byte) parsedDOT {
	f, err := dot.ParseBytes(src)
	require.NoError(t, err, "gonum's DOT parser rejects the output:\n%s", src)
	require.Len(t, f.Graphs, 1)
	g := f.Graphs[0]
	p := parsedDOT{strict: g.Strict, directed: g.Directed, clusters: map[string][]string{},
		labels: map[string]string{}, edges: map[[2]string]string{}}
	p.walk(t, "", g.Stmts)
	return p
}

func (p *parsedDOT) walk(t *testing.T, cluster string, stmts []ast.Stmt) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *ast.Subgraph:
			p.walk(t, s.ID, s.Stmts)
		case *ast.NodeStmt:
			for _, a := range s.Attrs {
				if a.Key == "label" {
					v, err := strconv.Unquote(a.Val)
					require.NoError(t, err)
					p.labels[s.Node.ID] = v
				}
			}
			if cluster != "" {
				p.clusters[cluster] = append(p.clusters[cluster], s.Node.ID)
			}
		case *ast.EdgeStmt:
			style := ""
			for _, a := range s.Attrs {
				if a.Key == "style" {
					style = a.Val
				}
			}
			from := s.From.(*ast.Node).ID
			to := s.To.Vertex.(*ast.Node).ID
			_, dup := p.edges[[2]string{from, to}]
			assert.False(t, dup, "edge %s -> %s drawn twice", from, to)
			p.edges[[2]string{from, to}] = style
		}
	}
}

// randomWorkload is a DAG of n waves with random forward dependencies
// (some repeated) and names that need quoting in DOT.
func randomWorkload(r *rand.Rand, n int) []byte {
	var waves, deps []map[string]any
	for i := range n {
		waves = append(waves, map[string]any{"id": i, "name": fmt.Sprintf("w\"%d\\ %s", i, []string{"a", "node", "é b", "x\ny"}[i%4]),
			"frontier_bytes": 1 + r.IntN(1<<20), "scratch_bytes": r.IntN(1 << 20), "output_bytes": r.IntN(1 << 16)})
	}
	for range r.IntN(3 * n) {
		a, b := r.IntN(n), r.IntN(n)
		if a == b {
			continue
		}
		deps = append(deps, map[string]any{"before": min(a, b), "after": max(a, b)})
	}
	m := map[string]any{"analysis": "dataflow", "device": "h100-sxm", "launch_overhead_ns": 4000,
		"graph":           map[string]any{"node_count": 1000, "edge_count": 4000, "bytes_per_node": 16, "bytes_per_edge": 8},
		"schedule_sample": map[string]any{"dispatch_cost_ns": 12000, "frontier_density": 0.35, "readback_bytes": 65536},
		"waves":           waves, "dependencies": deps}
	b, _ := json.Marshal(m)
	return b
}

// Property: for random DAGs, a DOT parser reads back one strict digraph
// whose clusters are exactly the barrier groups, whose labels are the wave
// names however they must be quoted, and whose edges are the distinct
// dependencies, dashed exactly where the wait form drops them.
func TestWriteDOTParsesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	for trial := range 60 {
		n := 1 + r.IntN(40)
		w, err := megakernel.DecodeWorkload("w.json", randomWorkload(r, n))
		require.NoError(t, err)
		p, err := megakernel.PlanWorkload("w.json", w, h100(t), "h100-sxm", nil)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, p.WriteDOT(&b))
		got := parseDOT(t, b.Bytes())
		assert.True(t, got.strict && got.directed, "trial %d", trial)
		require.Len(t, got.clusters, len(p.Groups))
		for gi, members := range p.Groups {
			ids := got.clusters[fmt.Sprintf("cluster_%d", gi)]
			require.Len(t, ids, len(members), "trial %d group %d", trial, gi)
			for _, id := range members {
				assert.Contains(t, ids, fmt.Sprintf("w%d", id))
				label := got.labels[fmt.Sprintf("w%d", id)]
				// A name that is not plain text is drawn quoted, escapes and all.
				assert.True(t, strings.HasPrefix(label, fmt.Sprintf("%d %s\nfrontier ", id, quote.Text(p.WaveNames[id]))), "trial %d: %q", trial, label)
			}
		}
		want := map[[2]string]string{}
		for v, producers := range p.Waits {
			for _, q := range producers {
				want[[2]string{fmt.Sprintf("w%d", q), fmt.Sprintf("w%d", v)}] = ""
			}
		}
		for k, style := range got.edges {
			if style == "" {
				continue
			}
			assert.Equal(t, "dashed", style)
			_, isWait := want[k]
			assert.False(t, isWait, "a wait drawn dashed: %v", k)
			want[k] = "dashed"
		}
		assert.Equal(t, want, got.edges, "trial %d", trial)
	}
}
