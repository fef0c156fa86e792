package kronbuild

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// The benchmark takes each arm's samples, numbered from 0, every one
// checked against the reference's checksum (frontier.Kronecker's CSR,
// whichever build the reference was), with the device phases of every GPU
// build. Without the CPU arm no CPU build runs: the reference is the GPU
// warm-up build.
func TestBench(t *testing.T) {
	cases := []struct {
		name          string
		samples, cpus int
		wantGPU, want int
		wantRef       string
	}{
		{"both arms", 3, 0, 3, 6, ReferenceCPU},
		{"fewer CPU samples", 3, 1, 3, 4, ReferenceCPU},
		{"GPU only", 2, -1, 2, 2, ReferenceGPUWarmUp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, _ := newFakeExecutor(t, 1<<30, 7)
			var done, total int
			r, err := Bench(x, BenchConfig{Scale: 9, Seed: 3, Samples: c.samples, CPUSamples: c.cpus,
				Progress: func(d, n int, _ string) { done, total = d, n }})
			require.NoError(t, err)
			assert.Equal(t, total, done, "progress reaches its total")
			g, err := frontier.Kronecker(9, frontier.DefaultEdgeFactor, 3)
			require.NoError(t, err)
			assert.Equal(t, CSRChecksum(g), r.Checksum)
			assert.Equal(t, "kron-build-9", r.Name)
			assert.Equal(t, g.NumEdgeEntries(), r.EdgeEntries)
			require.Len(t, r.Samples, c.want)
			require.Len(t, r.GPUTimes, c.wantGPU)
			assert.Equal(t, c.wantRef, r.Reference)
			if c.wantRef == ReferenceCPU {
				assert.Positive(t, r.ReferenceBuildS, "the CPU reference's build time")
			} else {
				assert.Zero(t, r.ReferenceBuildS, "no CPU build ran")
			}
			next := map[string]uint64{}
			for _, s := range r.Samples {
				assert.Equal(t, next[s.Arm], s.Index, "%s samples numbered in order", s.Arm)
				next[s.Arm]++
				assert.Equal(t, r.Checksum, s.Checksum)
				assert.Positive(t, s.WallNs)
				if s.Arm == ArmGPU {
					assert.Positive(t, s.DeviceNs)
				} else {
					assert.Zero(t, s.DeviceNs)
				}
			}
			assert.Equal(t, uint64(c.wantGPU), next[ArmGPU])
		})
	}
}

// Bad benchmark settings are refused with the field and a Fix before
// anything is built.
func TestBenchRefuses(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 7)
	_, err := Bench(x, BenchConfig{Scale: 9, Samples: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "samples")
	assert.Contains(t, err.Error(), "Fix:")
	_, err = Bench(x, BenchConfig{Scale: 40})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scale")
}

// firstDifference finds the first differing index across piece
// boundaries, in arrays shorter than a piece, and none in equal arrays:
// random arrays with differences planted at random places.
func TestFirstDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 17, comparePiece - 1, comparePiece, 3*comparePiece + 5} {
		a := make([]int32, n)
		for i := range a {
			a[i] = rng.Int32()
		}
		b := slices.Clone(a)
		require.Equal(t, -1, firstDifference(a, b), "equal arrays of %d", n)
		if n == 0 {
			continue
		}
		want := n
		for range 3 {
			i := rng.IntN(n)
			b[i] ^= 1 << rng.IntN(31)
			want = min(want, i)
		}
		require.Equal(t, want, firstDifference(a, b), "arrays of %d", n)
	}
}

// A build that is not the reference's is refused with the array and index
// of its first difference, and a Fix.
func TestBenchCheckNamesTheDifference(t *testing.T) {
	ref := &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	r := &BenchResult{Name: "kron-build-1", Checksum: CSRChecksum(ref), Reference: ReferenceCPU, ref: ref}
	cases := []struct {
		name string
		g    *frontier.CSR
		want string
	}{
		{"equal", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}, ""},
		{"reference named", &frontier.CSR{Offsets: []uint64{0, 2, 2}, Targets: []int32{1, 0}}, "the cpu reference (checksum " + ChecksumPrefix},
		{"offsets index", &frontier.CSR{Offsets: []uint64{0, 2, 2}, Targets: []int32{1, 0}}, "offsets[1]: 2, the reference's 1"},
		{"targets", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 1}}, "targets[1]: 1, the reference's 0"},
		{"sizes", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1}}, "1 targets, the cpu reference 3 and 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := r.check(ArmGPU, c.g)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

// corruptingFake returns a fake backend whose compaction kernel, on its
// launch-th launch (from 1; one a build of one part), flips the low bit
// of the part's first target once it has run: that build's CSR differs
// from frontier.Kronecker's in targets[0].
func corruptingFake(launch int64) func(occupancy.Device, uint64) *executor.Fake {
	return func(dev occupancy.Device, seed uint64) *executor.Fake {
		var launches atomic.Int64
		return kernelabi.NewEmulation(seed, func(seeds *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
			m := fakes(seeds)
			f := m[KernelCompact]
			run := f.Run
			f.Run = func(l *executor.FakeLaunch) error {
				if err := run(l); err != nil || launches.Add(1) != launch {
					return err
				}
				var p CompactParams[executor.DevPtr]
				if err := kernelabi.Decode(l.Args, &p); err != nil {
					return err
				}
				targets, err := kernelabi.View[uint32](l, p.Targets, 1)
				if err != nil {
					return err
				}
				targets[0] ^= 1
				return nil
			}
			m[KernelCompact] = f
			return m
		}).NewFake(dev)
	}
}

// A corrupt device build is caught whichever the reference: with the CPU
// arm by the comparison with frontier.Kronecker, without it the warm-up
// build by its own check (it is not a Kronecker graph's CSR) and a timed
// build by the comparison with the warm-up build.
func TestBenchCatchesACorruptBuild(t *testing.T) {
	cases := []struct {
		name   string
		cpus   int
		launch int64
		want   []string
	}{
		{"warm-up against the CPU", 1, 1, []string{"the gpu arm's kron-build-9 differs from the cpu reference", "at targets[0]"}},
		{"timed build against the CPU", 1, 2, []string{"the gpu arm's kron-build-9 differs from the cpu reference", "at targets[0]"}},
		{"warm-up on its own", -1, 1, []string{"the warm-up build of kron-build-9 on the device, the reference without a CPU build, is not a Kronecker graph's CSR", `graph "kron-9"`}},
		{"timed build against the warm-up", -1, 3, []string{"the gpu arm's kron-build-9 differs from the gpu-warm-up reference", "at targets[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, _ := gputest.OpenFake(t, "h100", 1<<30, 7, corruptingFake(c.launch))
			_, err := Bench(x, BenchConfig{Scale: 9, Seed: 3, Samples: 3, CPUSamples: c.cpus})
			require.Error(t, err)
			for _, want := range c.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

// A benchmark over the device budget is refused before anything is built
// or allocated: on the device, and (by the order of Bench) the CPU
// reference.
func TestBenchRefusesOverBudget(t *testing.T) {
	for _, cpus := range []int{0, -1} {
		x, fake := newFakeExecutor(t, 1<<30, 7)
		allocs := fake.Calls()["cuMemAlloc"]
		_, err := Bench(x, BenchConfig{Scale: 20, CPUSamples: cpus, Build: Config{MaxDeviceBytes: 1 << 20}})
		var e *BudgetError
		require.ErrorAs(t, err, &e, "cpu samples %d", cpus)
		assert.Equal(t, uint64(1<<20), e.BudgetBytes)
		assert.Greater(t, e.NeededBytes, e.BudgetBytes)
		assert.Contains(t, err.Error(), "Fix:")
		assert.Equal(t, allocs, fake.Calls()["cuMemAlloc"], "nothing is allocated")
	}
	_, err := Bench(nil, BenchConfig{Scale: 9})
	assert.ErrorContains(t, err, "Fix:")
}
