package synthetic

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/internal/extest"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func files() wavedag.Files { return extest.Files(ModuleName, PTX()) }

// hash is the finaliser once more, written out here for the expected
// values.
func hash(h uint32) uint32 {
	h = (h ^ h>>16) * 0x85ebca6b
	h = (h ^ h>>13) * 0xc2b2ae35
	return h ^ h>>16
}

func TestChain(t *testing.T) {
	for _, tc := range []struct{ waves, tiles int }{{50, 3}, {1, 1}, {2, 4096}, {300, 1}} {
		t.Run(fmt.Sprintf("%dx%d", tc.waves, tc.tiles), func(t *testing.T) {
			data, err := Chain(tc.waves, tc.tiles)
			require.NoError(t, err)
			p, outs := extest.Run(t, "chain.json", data, files(), Funcs())
			require.Equal(t, tc.waves, p.Waves())
			require.Equal(t, tc.waves-1, len(p.Workload.Dependencies))
			want := make([]uint32, tc.waves)
			for i := range want {
				want[i] = uint32(i + 1)
			}
			require.NoError(t, wavedag.Compare(p.Workload.Outputs[0], outs[0], extest.U32Bytes(want)))
		})
	}
}

// wideExpected computes every state from the decoded dependencies, each
// wave once all its producers are done (Kahn's order, by the dependency
// list only), the producers in ascending order.
func wideExpected(t *testing.T, w *megakernel.Workload) []uint32 {
	n := len(w.Waves)
	prods := make([][]int, n)
	cons := make([][]int, n)
	indeg := make([]int, n)
	for _, d := range w.Dependencies {
		b, a := int(*d.Before), int(*d.After)
		prods[a] = append(prods[a], b)
		cons[b] = append(cons[b], a)
		indeg[a]++
	}
	state := make([]uint32, n)
	var ready []int
	for v := range n {
		if indeg[v] == 0 {
			ready = append(ready, v)
		}
	}
	done := 0
	for len(ready) > 0 {
		v := ready[0]
		ready = ready[1:]
		done++
		ps := append([]int(nil), prods[v]...)
		for i := 1; i < len(ps); i++ { // insertion sort: ascending ids
			for j := i; j > 0 && ps[j] < ps[j-1]; j-- {
				ps[j], ps[j-1] = ps[j-1], ps[j]
			}
		}
		h := hash(uint32(v) + 1)
		for i, p := range ps {
			h = hash(h ^ (state[p] + uint32(i)))
		}
		state[v] = h
		for _, c := range cons[v] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	require.Equal(t, n, done, "the DAG has a cycle")
	return state
}

func TestWide(t *testing.T) {
	for _, tc := range []struct {
		waves, deps int
		seed        uint64
	}{{200, 800, 1}, {200, 800, 2}, {1, 0, 0}, {2, 1, 5}, {50, 0, 3}, {400, WideCapacity(400), 7}, {3000, 12000, 9}} {
		t.Run(fmt.Sprintf("%d-%d-%d", tc.waves, tc.deps, tc.seed), func(t *testing.T) {
			data, err := Wide(tc.waves, tc.deps, tc.seed)
			require.NoError(t, err)
			p, outs := extest.Run(t, "wide.json", data, files(), Funcs())
			w := p.Workload
			require.Len(t, w.Waves, tc.waves)
			require.Len(t, w.Dependencies, tc.deps)
			seen := map[[2]int64]bool{}
			np := make([]int, tc.waves)
			for _, d := range w.Dependencies {
				e := [2]int64{*d.Before, *d.After}
				require.False(t, seen[e], "duplicate dependency %v", e)
				seen[e] = true
				require.Less(t, e[0], e[1])
				np[e[1]]++
			}
			for _, wv := range w.Waves {
				k := wv.Kernel
				require.Equal(t, uint64(1), *k.Tiles)
				require.Equal(t, uint64(Block), *k.Block)
				require.Len(t, k.Args, 3+np[*wv.ID])
				require.LessOrEqual(t, len(k.Args), megakernel.MaxWaveArgs)
			}
			require.NoError(t, wavedag.Compare(w.Outputs[0], outs[0], extest.U32Bytes(wideExpected(t, w))))
		})
	}
}

// TestWideSpread checks the layers and the even spread: every wave after
// the first layer has deps/m or deps/m + 1 producers when no wave's
// candidates run out, all from the three layers before its own.
func TestWideSpread(t *testing.T) {
	const waves, deps = 200, 800
	l := wideLayout(waves)
	require.Len(t, l.start, 8) // round(sqrt(200)/2) = 7 layers
	layer := make([]int, waves)
	for k := range len(l.start) - 1 {
		for v := l.start[k]; v < l.start[k+1]; v++ {
			layer[v] = k
		}
	}
	data, err := Wide(waves, deps, 1)
	require.NoError(t, err)
	w, err := megakernel.DecodeWorkload("wide.json", data)
	require.NoError(t, err)
	np := make([]int, waves)
	for _, d := range w.Dependencies {
		b, a := int(*d.Before), int(*d.After)
		require.Contains(t, []int{1, 2, 3}, layer[a]-layer[b], "dependency %d -> %d", b, a)
		np[a]++
	}
	m := waves - l.start[1]
	for v := l.start[1]; v < waves; v++ {
		require.Contains(t, []int{deps / m, deps/m + 1}, np[v], "wave %d", v)
	}
	for v := range l.start[1] {
		require.Zero(t, np[v])
	}
}

func TestDeterministic(t *testing.T) {
	for _, spec := range []string{"chain:50:3", "wide:200:800:1", "wide:3000:20000:42"} {
		a, err := Spec(spec)
		require.NoError(t, err)
		b, err := Spec(spec)
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), spec)
	}
	a, _ := Wide(200, 800, 1)
	b, _ := Wide(200, 800, 2)
	require.NotEqual(t, a, b, "the seed changes the DAG")
	c, _ := Spec("chain:50:3")
	d, _ := Chain(50, 3)
	require.Equal(t, c, d)
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  func() ([]byte, error)
		part string
	}{
		{"chain no waves", func() ([]byte, error) { return Chain(0, 1) }, "waves"},
		{"chain too many waves", func() ([]byte, error) { return Chain(MaxWaves+1, 1) }, "waves"},
		{"chain no tiles", func() ([]byte, error) { return Chain(10, 0) }, "tiles"},
		{"chain too many tiles", func() ([]byte, error) { return Chain(10, MaxTiles+1) }, "tiles"},
		{"chain over run tiles", func() ([]byte, error) { return Chain(MaxWaves, MaxTiles) }, "tiles"},
		{"wide no waves", func() ([]byte, error) { return Wide(0, 0, 1) }, "waves"},
		{"wide negative deps", func() ([]byte, error) { return Wide(10, -1, 1) }, "deps"},
		{"wide too many deps", func() ([]byte, error) { return Wide(200, WideCapacity(200)+1, 1) }, "deps"},
		{"wide deps for one wave", func() ([]byte, error) { return Wide(1, 1, 1) }, "deps"},
		{"spec empty", func() ([]byte, error) { return Spec("") }, "kind"},
		{"spec unknown kind", func() ([]byte, error) { return Spec("ring:10:2") }, "kind"},
		{"spec chain parts", func() ([]byte, error) { return Spec("chain:10") }, "WAVES:TILES"},
		{"spec wide parts", func() ([]byte, error) { return Spec("wide:10:2") }, "WAVES:DEPS:SEED"},
		{"spec waves not a number", func() ([]byte, error) { return Spec("chain:x:2") }, "WAVES"},
		{"spec tiles negative", func() ([]byte, error) { return Spec("chain:10:-2") }, "TILES"},
		{"spec deps huge", func() ([]byte, error) { return Spec("wide:10:99999999999:1") }, "DEPS"},
		{"spec seed not a number", func() ([]byte, error) { return Spec("wide:10:2:seed") }, "SEED"},
		{"spec waves range", func() ([]byte, error) { return Spec("wide:200000:2:1") }, "waves"},
		{"spec deps range", func() ([]byte, error) { return Spec("wide:200:100000:1") }, "deps"},
		{"spec tiles range", func() ([]byte, error) { return Spec("chain:10:5000") }, "tiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.gen()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.part)
			require.Contains(t, err.Error(), "Fix:")
			require.True(t, strings.HasPrefix(err.Error(), "synthetic: "), err.Error())
		})
	}
}

func TestWideCapacity(t *testing.T) {
	require.Zero(t, WideCapacity(0))
	require.Zero(t, WideCapacity(1))
	require.Equal(t, 1, WideCapacity(2))
	require.Equal(t, MaxWideDeps, WideCapacity(MaxWaves))
	// Two layers of two waves: each wave of the second reads both.
	require.Equal(t, 4, WideCapacity(4))
}

// FuzzSpec: Spec never panics; an error names a part and ends with a Fix;
// a workload it returns decodes, plans and is what the generator gives.
// Large sizes are only parsed and checked, not generated.
func FuzzSpec(f *testing.F) {
	for _, s := range []string{"chain:50:3", "wide:200:800:1", "chain:1:1", "wide:1:0:0", "wide:2:1:18446744073709551615",
		"chain:100000:4096", "wide:100000:1048576:3", "chain::", "wide:-1:2:3", "chain:1:1:1", ":", "", "chain:0x10:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := parseSpec(text)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			_, err2 := Spec(text)
			require.EqualError(t, err2, err.Error())
			return
		}
		if s.n[0]*max(s.n[1], 1) > 20000 {
			return
		}
		data, err := Spec(text)
		require.NoError(t, err)
		w, err := megakernel.DecodeWorkload("spec.json", data)
		require.NoError(t, err)
		require.Len(t, w.Waves, s.n[0])
		if s.kind == "wide" {
			require.Len(t, w.Dependencies, s.n[1])
		}
		again, err := Spec(text)
		require.NoError(t, err)
		require.Equal(t, data, again)
	})
}
