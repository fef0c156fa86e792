package bfsquery

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// openFake keeps g on the BFS emulation's fake backend.
func openFake(t *testing.T, g *frontier.CSR, opts Options) *Graph {
	t.Helper()
	x, _ := gputest.OpenFake(t, "h200", 8<<30, 7, bfs.NewFake)
	r, err := Open(x, g, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return r
}

func kron(t *testing.T) *frontier.CSR {
	g, err := frontier.Kronecker(9, 8, 3)
	require.NoError(t, err)
	return g
}

// checkTree holds an answer over every vertex against the reference levels:
// the same levels, and parents that form a BFS tree of the graph's edges.
func checkTree(t *testing.T, in *frontier.CSR, want []int32, a Answer) {
	t.Helper()
	require.Equal(t, want, a.Levels)
	reached := 0
	for v, l := range want {
		if l != Unreached {
			reached++
		}
		p := a.Parents[v]
		switch {
		case l <= 0:
			require.Equal(t, Unreached, p, "vertex %d", v)
		default:
			require.Equal(t, l-1, want[p], "vertex %d's parent %d", v, p)
			require.Contains(t, in.Neighbors(int32(v)), p, "vertex %d's parent is an in-neighbour", v)
		}
	}
	require.Equal(t, reached, a.Reached)
}

func TestQueriesOnTheGPUAndTheCPU(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 70, 5)
	require.NoError(t, err)
	for _, name := range []string{"gpu", "cpu"} {
		t.Run(name, func(t *testing.T) {
			r, err := OpenCPU(g, Options{})
			require.NoError(t, err)
			if name == "gpu" {
				r = openFake(t, g, Options{})
			}
			qs := make([]Query, len(roots))
			for i, root := range roots {
				qs[i] = Query{Root: root, MaxDepth: NoDepthLimit, Parents: true}
			}
			as, err := r.Batch(context.Background(), qs)
			require.NoError(t, err)
			for i, root := range roots {
				want, err := frontier.BFS(g, root)
				require.NoError(t, err)
				checkTree(t, g, want, as[i])
			}
			one, err := r.Query(context.Background(), qs[3])
			require.NoError(t, err)
			require.Equal(t, as[3], one)
		})
	}
}

func TestTargetsAndDepth(t *testing.T) {
	g := kron(t)
	r := openFake(t, g, Options{})
	root := int32(1)
	want, err := frontier.BFS(g, root)
	require.NoError(t, err)
	targets := []int32{0, 5, 17, 200, int32(g.NumVertices() - 1), root}
	a, err := r.Query(context.Background(), Query{Root: root, Targets: targets, MaxDepth: 2, Parents: true})
	require.NoError(t, err)
	for i, tv := range targets {
		l := want[tv]
		if l > 2 {
			l = Unreached
		}
		require.Equal(t, l, a.Levels[i], "target %d", tv)
		if l > 0 {
			require.Equal(t, l-1, want[a.Parents[i]])
		} else {
			require.Equal(t, Unreached, a.Parents[i])
		}
	}
	require.LessOrEqual(t, a.Depth, int32(2))
}

func TestDirectedGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var b strings.Builder
	b.WriteString("# a random directed graph\n")
	for range 600 {
		b.WriteString(strconv.Itoa(r.IntN(200)) + " " + strconv.Itoa(r.IntN(200)) + "\n")
	}
	g, err := ReadDirected(strings.NewReader(b.String()), "d.txt", int64(b.Len()), frontier.Limits{})
	require.NoError(t, err)
	require.NoError(t, g.Check())
	in := Transpose(g)
	for _, open := range []func() *Graph{
		func() *Graph { x, _ := OpenCPU(g, Options{Directed: true}); return x },
		func() *Graph { return openFake(t, g, Options{Directed: true}) },
	} {
		q := open()
		for _, root := range []int32{0, 7, 150} {
			want, err := frontier.BFS(g, root)
			require.NoError(t, err)
			a, err := q.Query(context.Background(), Query{Root: root, MaxDepth: NoDepthLimit, Parents: true})
			require.NoError(t, err)
			checkTree(t, in, want, a)
		}
	}
	_, err = OpenCPU(g, Options{Directed: true, Arm: bfs.ArmHostLoopScan})
	require.ErrorContains(t, err, "Fix: use host-loop, device-loop or megakernel")
}

func TestQueryErrors(t *testing.T) {
	r, err := OpenCPU(kron(t), Options{})
	require.NoError(t, err)
	n := int32(r.Vertices())
	cases := []struct {
		q     Query
		field string
	}{
		{Query{Root: -1, MaxDepth: NoDepthLimit}, "root"},
		{Query{Root: n, MaxDepth: NoDepthLimit}, "root"},
		{Query{Root: 0, MaxDepth: -2}, "max_depth"},
		{Query{Root: 0, MaxDepth: NoDepthLimit, Targets: []int32{0, n}}, "targets[1]"},
	}
	for _, c := range cases {
		_, err := r.Query(context.Background(), c.q)
		var qe *QueryError
		require.ErrorAs(t, err, &qe)
		require.Equal(t, c.field, qe.Field)
		require.Contains(t, err.Error(), "Fix:")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Query(ctx, Query{Root: 0, MaxDepth: NoDepthLimit})
	require.True(t, errors.Is(err, context.Canceled))
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err = r.Query(context.Background(), Query{Root: 0, MaxDepth: NoDepthLimit})
	require.ErrorContains(t, err, "closed")
}

func TestReadDirectedErrors(t *testing.T) {
	cases := []struct {
		text string
		lim  frontier.Limits
		want string
	}{
		{"0 1\n1 x\n", frontier.Limits{}, `d.txt:2`},
		{"0 1 2\n", frontier.Limits{}, "3 fields, want SRC DST"},
		{"# nothing\n", frontier.Limits{}, "the file has no edge"},
		{"0 1\n1 2\n2 3\n", frontier.Limits{MaxEdges: 2}, "edges"},
		{"0 99999999\n", frontier.Limits{}, "vertices per input byte"},
		{"0 -1\n", frontier.Limits{}, `"-1" is not a vertex id`},
	}
	for _, c := range cases {
		_, err := ReadDirected(strings.NewReader(c.text), "d.txt", int64(len(c.text)), c.lim)
		require.ErrorContains(t, err, c.want, c.text)
		require.Contains(t, err.Error(), "Fix:")
	}
	g, err := ReadDirected(strings.NewReader("2 1\n2 1\n1 1\n0 2\n"), "d.txt", 16, frontier.Limits{})
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 1, 2}, g.Offsets, "duplicates and self loops dropped")
	require.Equal(t, []int32{2, 1}, g.Targets)
}

func TestAnswerFormatsRoundTrip(t *testing.T) {
	r, err := OpenCPU(kron(t), Options{})
	require.NoError(t, err)
	for _, targets := range [][]int32{nil, {3, 1, 4}} {
		for _, parents := range []bool{false, true} {
			as, err := r.Batch(context.Background(), []Query{{Root: 0, Targets: targets, MaxDepth: NoDepthLimit, Parents: parents},
				{Root: 9, Targets: targets, MaxDepth: 3, Parents: parents}})
			require.NoError(t, err)
			set := &Answers{Vertices: r.Vertices(), Targets: targets, Parents: parents, Answers: as}
			var bin bytes.Buffer
			require.NoError(t, set.WriteBinary(&bin))
			back, err := ReadBinary(bytes.NewReader(bin.Bytes()), int64(bin.Len()))
			require.NoError(t, err)
			require.Equal(t, set, back)
			var csv bytes.Buffer
			require.NoError(t, set.WriteCSV(&csv))
			lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
			require.Len(t, lines, 1+2*set.columns())
		}
	}
	_, err = ReadBinary(bytes.NewReader([]byte("GPBFS\x00v1")), 8)
	require.ErrorContains(t, err, "the header is short")
}

func FuzzReadBinary(f *testing.F) {
	r, err := OpenCPU(func() *frontier.CSR { g, _ := frontier.Grid(6); return g }(), Options{})
	require.NoError(f, err)
	as, err := r.Batch(context.Background(), []Query{{Root: 0, MaxDepth: NoDepthLimit, Parents: true}})
	require.NoError(f, err)
	var bin bytes.Buffer
	require.NoError(f, (&Answers{Vertices: r.Vertices(), Parents: true, Answers: as}).WriteBinary(&bin))
	f.Add(bin.Bytes())
	f.Add([]byte(BinaryMagic + strings.Repeat("\xff", 24)))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadBinary(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		var out bytes.Buffer
		require.NoError(t, a.WriteBinary(&out))
		require.Equal(t, data, out.Bytes(), "a file that reads writes back the same")
	})
}

func FuzzReadDirected(f *testing.F) {
	f.Add("0 1\n1 2\n# c\n\n2 0\n")
	f.Add("5 5\n")
	f.Add("1\t2\n% x\n3 4 5\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ReadDirected(strings.NewReader(text), "f.txt", int64(len(text)), frontier.Limits{MaxVertices: 1 << 12, MaxEdges: 1 << 12})
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		require.NoError(t, g.Check())
		for v := range g.NumVertices() {
			ns := g.Neighbors(int32(v))
			for i, u := range ns {
				require.NotEqual(t, int32(v), u, "no self loop")
				if i > 0 {
					require.Less(t, ns[i-1], u, "sorted, no duplicate")
				}
			}
		}
	})
}

// TestBatchPhasesSplitTheTime checks where BatchPhases puts a batch's time:
// on the GPU the traversals, their setup and the reads of their levels
// apart, on the CPU all of it in the traversals; the answers always after
// them.
func TestBatchPhasesSplitTheTime(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 70, 9)
	require.NoError(t, err)
	cpu, err := OpenCPU(g, Options{})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		g     *Graph
		roots []int32
		read  bool
	}{
		{"gpu multi-source", openFake(t, g, Options{}), roots, true},
		{"gpu one root", openFake(t, g, Options{}), roots[:1], true},
		{"cpu multi-source", cpu, roots, false},
		{"cpu one root", cpu, roots[:1], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			qs := make([]Query, len(c.roots))
			for i, r := range c.roots {
				qs[i] = Query{Root: r, MaxDepth: NoDepthLimit}
			}
			t0 := time.Now()
			as, ph, err := c.g.BatchPhases(context.Background(), qs)
			wall := time.Since(t0)
			require.NoError(t, err)
			require.Len(t, as, len(qs))
			assert.Positive(t, ph.Traverse)
			assert.Positive(t, ph.Answer)
			assert.Equal(t, c.read, ph.Read > 0, "%+v", ph)
			assert.Equal(t, c.read, ph.Setup > 0, "%+v", ph)
			assert.LessOrEqual(t, ph.Traverse+ph.Setup+ph.Read+ph.Answer, wall)
		})
	}
	_, ph, err := cpu.BatchPhases(context.Background(), nil)
	require.NoError(t, err)
	assert.Zero(t, ph)
}

// TestOpenWideGraph checks a graph on the 64-bit kernels (forced with
// Config.WideOffsets, as a graph past 2^32-1 entries gets them): its
// queries and batches are answered one root at a time on the arms those
// kernels have, equal to the reference, and a configured arm they lack is
// refused with a fix before the graph is kept.
func TestOpenWideGraph(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 6, 2)
	require.NoError(t, err)
	for _, directed := range []bool{false, true} {
		r := openFake(t, g, Options{Directed: directed, Session: bfs.Config{WideOffsets: true}})
		var qs []Query
		for _, root := range roots {
			qs = append(qs, Query{Root: root, MaxDepth: NoDepthLimit, Targets: []int32{7, 300}})
		}
		for round := range 3 {
			as, ph, err := r.BatchPhases(context.Background(), qs)
			require.NoError(t, err)
			for i, a := range as {
				want, err := frontier.BFS(g, roots[i])
				require.NoError(t, err)
				require.Equal(t, []int32{want[7], want[300]}, a.Levels, "round %d root %d", round, roots[i])
			}
			for arm := range ph.Arms {
				assert.Contains(t, []bfs.Arm{bfs.ArmHostLoop, bfs.ArmDeviceLoop}, arm)
			}
		}
		assert.Contains(t, []bfs.Arm{bfs.ArmHostLoop, bfs.ArmDeviceLoop}, r.Arm())
	}
	x, _ := gputest.OpenFake(t, "h100", 1<<30, 1, bfs.NewFake)
	_, err = Open(x, g, Options{Arm: bfs.ArmMegakernel, Session: bfs.Config{WideOffsets: true}})
	require.ErrorContains(t, err, "Fix: use the host-loop or device-loop arm")
	assert.Zero(t, x.ResidentBytes(), "the refused session freed what it held")
}
