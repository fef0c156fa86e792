package bfs

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLevelsInto downloads the levels of a run into buffers of every
// shape: one whose capacity holds the levels is reused (the same array,
// resliced to the vertices), a shorter one is left alone for a new array,
// and every one holds the levels Levels returns.
func TestLevelsInto(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(10, 16, 5))
	n := g.NumVertices()
	_, s := fakeSession(t, 1<<30, 21, g, Config{})
	roots, err := frontier.Roots(g, 2, 7)
	require.NoError(t, err)
	cases := []struct {
		name  string
		dst   []int32
		reuse bool
	}{
		{"nil", nil, false},
		{"empty", []int32{}, false},
		{"one level short", make([]int32, n-1), false},
		{"short, with capacity", make([]int32, 3, n), true},
		{"exact", make([]int32, n), true},
		{"longer", make([]int32, n+40), true},
		{"empty, with spare capacity", make([]int32, 0, 2*n), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, root := range roots {
				_, err := s.Run(ArmDeviceLoop, root)
				require.NoError(t, err)
				want, err := s.Levels()
				require.NoError(t, err)
				require.Equal(t, mustBFS(t, g, root), want, "Levels is the BFS's levels")
				before := slices.Clone(c.dst)
				got, err := s.LevelsInto(c.dst)
				require.NoError(t, err)
				assert.Equal(t, want, got, "root %d", root)
				assert.Len(t, got, n)
				if c.reuse {
					assert.Same(t, &c.dst[:1][0], &got[0], "the caller's array, reused")
					continue
				}
				assert.Equal(t, before, c.dst, "a short buffer is left as it was")
				if cap(c.dst) > 0 {
					assert.NotSame(t, &c.dst[:1][0], &got[0], "a new array")
				}
			}
		})
	}
}

// mustBFS is the CPU reference's levels from root.
func mustBFS(t *testing.T, g *frontier.CSR, root int32) []int32 {
	t.Helper()
	lv, err := frontier.BFS(g, root)
	require.NoError(t, err)
	return lv
}

// TestBenchSharedLevels checks that the bench downloads every checked
// traversal's levels into one buffer: the first download allocates it,
// later ones, from other roots and arms, reuse it and hold their own
// levels.
func TestBenchSharedLevels(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(10, 16, 6))
	roots, err := frontier.Roots(g, 3, 2)
	require.NoError(t, err)
	b := graph500Bench(t, g, roots)
	var first *int32
	for k, arm := range []Arm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel} {
		i := k % len(roots)
		_, err := b.s.Run(arm, roots[i])
		require.NoError(t, err)
		lv, err := b.sharedLevels(Run{})
		require.NoError(t, err)
		assert.Equal(t, mustBFS(t, g, roots[i]), lv, "%s from root %d", arm, roots[i])
		if first == nil {
			first = &lv[0]
		}
		assert.Same(t, first, &lv[0], "%s from root %d: the one buffer", arm, roots[i])
		assert.Same(t, first, &b.levels[0])
	}
}

// megakernels are the entry points of the megakernel arm, one of which a
// session runs.
var megakernels = []string{KernelMegakernel, KernelMegakernelNarrow, KernelMegakernelAsync}

// corruptingFake returns a fake backend whose megakernel, from its
// from-th launch on (the first is 1), leaves the root at level 1 after it
// ran, a kernel bug that only the check of the levels sees, and appends
// the root of each launch it corrupted to *roots.
func corruptingFake(from int, roots *[]int32) func(occupancy.Device, uint64) *executor.Fake {
	return func(dev occupancy.Device, seed uint64) *executor.Fake {
		launches := 0
		return kernelabi.NewEmulation(seed, func(s *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
			m := fakes(s)
			for _, name := range megakernels {
				k := m[name]
				run := k.Run
				k.Run = func(l *executor.FakeLaunch) error {
					if err := run(l); err != nil {
						return err
					}
					if launches++; launches < from {
						return nil
					}
					return misplaceRoot(l, roots)
				}
				m[name] = k
			}
			return m
		}).NewFake(dev)
	}
}

// misplaceRoot sets the level of the launch's root (its one vertex at
// level 0) to 1 and appends the root to *roots.
func misplaceRoot(l *executor.FakeLaunch, roots *[]int32) error {
	var p MegakernelParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	lv, err := kernelabi.View[int32](l, p.Level, p.N)
	if err != nil {
		return err
	}
	root := slices.Index(lv, 0)
	if root < 0 {
		return fmt.Errorf("the megakernel left no vertex at level 0")
	}
	lv[root] = 1
	*roots = append(*roots, int32(root))
	return nil
}

// TestBenchReportsCorruptedLevels runs the benchmark on a fake whose
// megakernel misplaces the root from a given launch on, in both check
// modes: the warm-up or a timed sample, after traversals that passed
// through the same level buffer, fails with the arm, the root of the
// first corrupted traversal, what it differs from, the Graph500
// validation's finding and a fix. Under check graph500 this also holds
// the references apart from the reused buffer: a reference that was the
// buffer itself would equal every later download.
func TestBenchReportsCorruptedLevels(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(10, 16, 8))
	roots, err := frontier.Roots(g, 3, 4)
	require.NoError(t, err)
	// The warm-up launches the megakernel once from each root; the
	// launches after it are the timed samples'.
	cases := []struct {
		name  string
		mode  CheckMode
		from  int
		ref   string
		timed bool
	}{
		{"reference, first warm-up traversal", CheckReference, 1, "the CPU reference", false},
		{"reference, last warm-up traversal", CheckReference, 3, "the CPU reference", false},
		{"reference, a timed sample", CheckReference, 5, "the CPU reference", true},
		{"graph500, a timed sample", CheckGraph500, 6, "the validated first traversal (check graph500)", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bad []int32
			x, _ := gputest.OpenFake(t, "h100", 8<<30, uint64(60+i), corruptingFake(c.from, &bad))
			cfg := BenchConfig{Samples: 3, Arms: []Arm{ArmHostLoop, ArmMegakernel}, Check: c.mode}
			warmedUp := false
			cfg.Log = func(format string, _ ...any) { warmedUp = warmedUp || strings.HasPrefix(format, "correctness: ") }
			_, err := Bench(x, g, roots, cfg)
			require.Error(t, err)
			assert.Equal(t, c.timed, warmedUp, "the warm-up passed before the corrupted traversal")
			require.NotEmpty(t, bad, "a traversal was corrupted")
			assert.Contains(t, err.Error(), fmt.Sprintf("arm megakernel from root %d: the GPU levels differ from %s (", bad[0], c.ref))
			assert.Contains(t, err.Error(), "the root has level 1, want 0", "the validation's finding")
			assert.Contains(t, err.Error(), "Fix: this is a kernel bug; run the arms one at a time to isolate it")
			assert.Len(t, bad, 1, "the first corrupted traversal stops the run")
		})
	}
}

// BenchmarkLevelsCheck times the bench's check of one traversal's levels
// on the fake, outside any run, on a grid of 2^22 vertices (16 MiB of
// levels): as it was (Levels as it was, decodedLevels, and the serial
// slices.Equal), with a new slice for each download (Levels), and as it is
// (one buffer for every download, LevelsInto, and FirstDifference on every
// CPU).
func BenchmarkLevelsCheck(b *testing.B) {
	g, err := frontier.Grid(1 << 11)
	if err != nil {
		b.Fatal(err)
	}
	x, _ := newFakeExecutor(b, 8<<30, 1)
	s, err := NewSession(x, g, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Run(ArmDeviceLoop, 0); err != nil {
		b.Fatal(err)
	}
	ref, err := s.Levels()
	if err != nil {
		b.Fatal(err)
	}
	var buf []int32
	for _, c := range []struct {
		name  string
		check func() ([]int32, bool)
	}{
		{"Download+slices.Equal", func() ([]int32, bool) {
			lv, err := decodedLevels(s)
			return lv, err == nil && slices.Equal(lv, ref)
		}},
		{"Levels+FirstDifference", func() ([]int32, bool) {
			lv, err := s.Levels()
			return lv, err == nil && frontier.FirstDifference(lv, ref) < 0
		}},
		{"LevelsInto+FirstDifference", func() ([]int32, bool) {
			lv, err := s.LevelsInto(buf)
			buf = lv
			return lv, err == nil && frontier.FirstDifference(lv, ref) < 0
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(ref)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := c.check(); !ok {
					b.Fatal("the levels differ from the run's own")
				}
			}
		})
	}
}

// decodedLevels is Levels as it was before LevelsInto: the download into a
// byte slice of its own, decoded into a new level slice.
func decodedLevels(s *Session) ([]int32, error) {
	raw, err := s.x.Download(s.buf.level)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(raw)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}
