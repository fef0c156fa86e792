// Package synthetic generates wave DAGs whose waves do almost nothing, to
// measure what ordering waves costs in each execution arm:
//
//   - Chain(waves, tiles): a chain of waves, each of tiles tiles of 32
//     threads, wave w after all of wave w-1, running syn_chain: tile 0's
//     thread 0 sets marks[w] = marks[w-1] + 1 (1 for w = 0). The output
//     marks (u32) is 1, 2, ..., waves.
//   - Wide(waves, deps, seed): a wide random DAG of one-tile, 32-thread
//     waves with exactly deps distinct dependencies, seeded, running
//     syn_mix: thread 0 hashes its producers' states (ascending ids) into
//     state[w]. The output state (u32) has one word per wave.
//
// Spec parses "chain:WAVES:TILES" and "wide:WAVES:DEPS:SEED", as a command
// line might take them.
//
// The generated workloads name their module ModuleName, "synthetic.ptx":
// the Files a caller passes to wavedag.Parse must return PTX() for that
// path, for example
//
//	files := func(path string) ([]byte, error) {
//		if path != synthetic.ModuleName {
//			return nil, fmt.Errorf("no file %s", path)
//		}
//		return synthetic.PTX(), nil
//	}
//
// or write PTX() to synthetic.ptx beside the workload file.
package synthetic

import (
	_ "embed"
	"fmt"
	"github.com/gpuplan/gpuplan/examples/internal/mix"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/examples/internal/wjson"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

//go:embed kernels/synthetic.ptx
var ptx []byte

// ModuleName is the module path the generated workloads give.
const ModuleName = "synthetic.ptx"

// PTX returns a copy of the module's relocatable PTX.
func PTX() []byte { return append([]byte(nil), ptx...) }

// Limits of the generators.
const (
	MaxWaves = 100000
	MaxTiles = 4096
	// MaxProducers is the most producers of a wide wave: syn_mix takes 3
	// arguments and one per producer, at most megakernel.MaxWaveArgs.
	MaxProducers = megakernel.MaxWaveArgs - 3
	// MaxWideDeps bounds a wide DAG's dependencies, so that its JSON
	// stays well below the 256 MiB a workload file may have.
	MaxWideDeps = 1 << 20
	// Block is every generated wave's block.
	Block = 32
)

// wideStream is the PCG stream of Wide's random draws.
const wideStream = 0x73796e2d77696465 // "syn-wide"

// Funcs returns the Go references of syn_chain and syn_mix.
func Funcs() map[string]wavedag.HostFunc {
	return map[string]wavedag.HostFunc{"syn_chain": chain, "syn_mix": mixStep}
}

// checkChain checks Chain's sizes.
func checkChain(waves, tiles int) error {
	switch {
	case waves < 1 || waves > MaxWaves:
		return fmt.Errorf("waves %d is outside 1..%d. Fix: give 1 to %d waves", waves, MaxWaves, MaxWaves)
	case tiles < 1 || tiles > MaxTiles:
		return fmt.Errorf("tiles %d is outside 1..%d. Fix: give each wave 1 to %d tiles", tiles, MaxTiles, MaxTiles)
	case uint64(waves)*uint64(tiles) > megakernel.MaxRunTiles:
		return fmt.Errorf("waves %d of tiles %d make %d tiles, above the %d a run holds. Fix: give fewer waves or tiles", waves, tiles, uint64(waves)*uint64(tiles), megakernel.MaxRunTiles)
	}
	return nil
}

// Chain returns a chain of waves waves of tiles tiles each.
func Chain(waves, tiles int) ([]byte, error) {
	if err := checkChain(waves, tiles); err != nil {
		return nil, fmt.Errorf("synthetic: chain: %w", err)
	}
	w := &wjson.Workload{
		Name:        fmt.Sprintf("chain-%d-%d", waves, tiles),
		Description: fmt.Sprintf("A chain of %d waves of %d tiles of %d threads, each after all of the one before; tile 0 of wave w sets marks[w] = marks[w-1] + 1", waves, tiles, Block),
		Device:      "h200",
		Module:      ModuleName,
		Buffers:     []wjson.Buffer{{Name: "marks", Bytes: 4 * uint64(waves)}},
		Outputs:     []wjson.Output{{Buffer: "marks", Type: "u32"}},
		Waves:       make([]wjson.Wave, waves),
	}
	for i := range waves {
		w.Waves[i] = wjson.Wave{ID: i, Kernel: wjson.Kernel{Function: "syn_chain", Tiles: uint64(tiles), Block: Block,
			Args: []wjson.Arg{wjson.Buf("marks"), wjson.U32(uint32(i))}}}
		if i > 0 {
			w.Dependencies = append(w.Dependencies, wjson.Dep{Before: i - 1, After: i})
		}
	}
	return wjson.Marshal(w)
}

// layout is a wide DAG's layers: layer k holds waves [start[k],
// start[k+1]); a wave of layer k draws its producers from layers k-3 ..
// k-1, the waves [start[max(0, k-3)], start[k]).
type layout struct {
	start []int
}

// wideLayout splits waves into about sqrt(waves)/2 layers of equal size
// (at least two where there are two waves, so there is a dependency to
// draw).
func wideLayout(waves int) layout {
	n := int(math.Round(math.Sqrt(float64(waves)) / 2))
	n = max(n, min(2, waves))
	l := layout{start: make([]int, n+1)}
	for k := range l.start {
		l.start[k] = k * waves / n
	}
	return l
}

// candidates returns the producer range [lo, hi) of layer k's waves.
func (l layout) candidates(k int) (lo, hi int) { return l.start[max(0, k-3)], l.start[k] }

// capacity is the most producers each wave may have.
func (l layout) capacity() (caps []int, total int) {
	caps = make([]int, l.start[len(l.start)-1])
	for k := 1; k+1 < len(l.start); k++ {
		lo, hi := l.candidates(k)
		for v := l.start[k]; v < l.start[k+1]; v++ {
			caps[v] = min(hi-lo, MaxProducers)
			total += caps[v]
		}
	}
	return caps, total
}

// WideCapacity returns the most dependencies Wide takes for waves waves:
// what the layers and the argument limit allow, at most MaxWideDeps.
func WideCapacity(waves int) int {
	if waves < 1 || waves > MaxWaves {
		return 0
	}
	_, total := wideLayout(waves).capacity()
	return min(total, MaxWideDeps)
}

// checkWide checks Wide's sizes.
func checkWide(waves, deps int) error {
	switch {
	case waves < 1 || waves > MaxWaves:
		return fmt.Errorf("waves %d is outside 1..%d. Fix: give 1 to %d waves", waves, MaxWaves, MaxWaves)
	case deps < 0 || deps > WideCapacity(waves):
		return fmt.Errorf("deps %d is outside 0..%d, what %d waves in %d layers hold (each wave's producers come from the three layers before it, at most %d a wave, and at most %d in all). Fix: give at most %d dependencies, or more waves",
			deps, WideCapacity(waves), waves, len(wideLayout(waves).start)-1, MaxProducers, MaxWideDeps, WideCapacity(waves))
	}
	return nil
}

// Wide returns a wide random DAG of waves one-tile waves and exactly deps
// distinct dependencies, drawn from seed: the waves are split into about
// sqrt(waves)/2 layers, and each wave after the first layer draws its
// producers from the three layers before it, the dependencies spread
// evenly (the waves' producer counts differ by at most one, except where
// a wave has fewer candidates).
func Wide(waves, deps int, seed uint64) ([]byte, error) {
	if err := checkWide(waves, deps); err != nil {
		return nil, fmt.Errorf("synthetic: wide: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, wideStream))
	l := wideLayout(waves)
	caps, _ := l.capacity()
	counts := spread(caps, deps, r)
	w := &wjson.Workload{
		Name: fmt.Sprintf("wide-%d-%d-%d", waves, deps, seed),
		Description: fmt.Sprintf("A wide random DAG of %d one-tile waves in %d layers with %d dependencies (seed %d), each wave's producers from the three layers before it; wave w hashes its producers' states into state[w]",
			waves, len(l.start)-1, deps, seed),
		Device:  "h200",
		Module:  ModuleName,
		Buffers: []wjson.Buffer{{Name: "state", Bytes: 4 * uint64(waves)}},
		Outputs: []wjson.Output{{Buffer: "state", Type: "u32"}},
		Waves:   make([]wjson.Wave, waves),
	}
	w.Dependencies = make([]wjson.Dep, 0, deps)
	for k := range len(l.start) - 1 {
		lo, hi := l.candidates(k)
		for v := l.start[k]; v < l.start[k+1]; v++ {
			prods := sample(r, lo, hi, counts[v])
			args := make([]wjson.Arg, 0, 3+len(prods))
			args = append(args, wjson.Buf("state"), wjson.U32(uint32(v)), wjson.U32(uint32(len(prods))))
			for _, p := range prods {
				args = append(args, wjson.U32(uint32(p)))
				w.Dependencies = append(w.Dependencies, wjson.Dep{Before: p, After: v})
			}
			w.Waves[v] = wjson.Wave{ID: v, Kernel: wjson.Kernel{Function: "syn_mix", Tiles: 1, Block: Block, Args: args}}
		}
	}
	return wjson.Marshal(w)
}

// spread gives each wave min(cap, q) or min(cap, q+1) of deps, the waves
// with the extra one drawn at random.
func spread(caps []int, deps int, r *rand.Rand) []int {
	counts := make([]int, len(caps))
	// The largest level q with sum(min(cap, q)) <= deps.
	sum := func(q int) int {
		s := 0
		for _, c := range caps {
			s += min(c, q)
		}
		return s
	}
	lo, hi := 0, MaxProducers+1
	for lo+1 < hi {
		if mid := (lo + hi) / 2; sum(mid) <= deps {
			lo = mid
		} else {
			hi = mid
		}
	}
	var room []int
	for v, c := range caps {
		counts[v] = min(c, lo)
		if c > lo {
			room = append(room, v)
		}
	}
	r.Shuffle(len(room), func(i, j int) { room[i], room[j] = room[j], room[i] })
	for _, v := range room[:deps-sum(lo)] {
		counts[v]++
	}
	return counts
}

// sample draws n distinct ids of [lo, hi) (Floyd's algorithm), ascending.
func sample(r *rand.Rand, lo, hi, n int) []int {
	if n == 0 {
		return nil
	}
	seen := make(map[int]bool, n)
	out := make([]int, 0, n)
	for j := hi - lo - n; j < hi-lo; j++ {
		t := r.IntN(j + 1)
		if seen[t] {
			t = j
		}
		seen[t] = true
		out = append(out, lo+t)
	}
	slices.Sort(out)
	return out
}

// Spec generates the DAG a spec names: "chain:WAVES:TILES" or
// "wide:WAVES:DEPS:SEED".
func Spec(spec string) ([]byte, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	if s.kind == "chain" {
		return Chain(s.n[0], s.n[1])
	}
	return Wide(s.n[0], s.n[1], s.seed)
}

// spec is a parsed Spec string.
type spec struct {
	kind string
	n    [2]int
	seed uint64
}

// parseSpec parses a spec and checks its sizes; its errors name the bad
// part.
func parseSpec(text string) (spec, error) {
	fail := func(format string, a ...any) (spec, error) {
		return spec{}, fmt.Errorf("synthetic: spec %q: %s", clip(text), fmt.Sprintf(format, a...))
	}
	const fix = "Fix: write chain:WAVES:TILES (for example chain:1000:4) or wide:WAVES:DEPS:SEED (for example wide:1000:4000:1)"
	parts := strings.Split(text, ":")
	var names []string
	switch parts[0] {
	case "chain":
		names = []string{"WAVES", "TILES"}
	case "wide":
		names = []string{"WAVES", "DEPS", "SEED"}
	default:
		return fail("the kind %q is not chain or wide. %s", clip(parts[0]), fix)
	}
	if len(parts) != len(names)+1 {
		return fail("%s takes %s:%s, not %d parts. %s", parts[0], parts[0], strings.Join(names, ":"), len(parts), fix)
	}
	s := spec{kind: parts[0]}
	for i, name := range names {
		v, err := strconv.ParseUint(parts[i+1], 10, 64)
		if err != nil {
			return fail("%s %q is not an unsigned decimal integer. %s", name, clip(parts[i+1]), fix)
		}
		switch {
		case name == "SEED":
			s.seed = v
		case v > math.MaxInt32:
			return fail("%s %d is too large. %s", name, v, fix)
		default:
			s.n[i] = int(v)
		}
	}
	var err error
	if s.kind == "chain" {
		err = checkChain(s.n[0], s.n[1])
	} else {
		err = checkWide(s.n[0], s.n[1])
	}
	if err != nil {
		return fail("%v", err)
	}
	return s, nil
}

// clip shortens an echoed spec to 64 bytes.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:61] + "..."
}

// chain is syn_chain's reference: args marks, w.
func chain(t *wavedag.Tile) error {
	w := uint64(t.U32(1))
	if t.Err() != nil || t.Index != 0 {
		return t.Err()
	}
	marks := t.Uint32s(0, 0, w+1)
	if t.Err() != nil {
		return t.Err()
	}
	if w == 0 {
		marks[0] = 1
	} else {
		marks[w] = marks[w-1] + 1
	}
	return nil
}

// mixStep is syn_mix's reference: args state, w, np, p_0, ...
func mixStep(t *wavedag.Tile) error {
	w, np := t.U32(1), t.U32(2)
	if t.Err() != nil {
		return t.Err()
	}
	h := mix.Fmix32(w + 1)
	for i := range np {
		p := t.U32(3 + int(i))
		s := t.Uint32s(0, uint64(p), 1)
		if t.Err() != nil {
			return t.Err()
		}
		h = mix.Fmix32(h ^ (s[0] + i))
	}
	out := t.Uint32s(0, uint64(w), 1)
	if t.Err() != nil {
		return t.Err()
	}
	out[0] = h
	return nil
}
