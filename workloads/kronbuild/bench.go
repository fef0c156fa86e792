package kronbuild

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// The benchmark's arms: the device build read back to the host (wall time
// of Build; device time, its phases on the device), and frontier.Kronecker
// on every CPU.
const (
	ArmGPU = "gpu"
	ArmCPU = "cpu"
)

// DefaultBenchSamples is BenchConfig.Samples' default.
const DefaultBenchSamples = 10

// BenchConfig is one run of the build benchmark.
type BenchConfig struct {
	// Scale, EdgeFactor and Seed name the graph (frontier.Kronecker's).
	Scale, EdgeFactor int
	Seed              uint64
	// Build configures the device build.
	Build Config
	// Samples is the timed samples of the GPU arm (0: DefaultBenchSamples)
	// and CPUSamples those of the CPU arm (0: Samples; negative: none, the
	// GPU build then checked against one CPU build).
	Samples, CPUSamples int
	// Progress, when set, gets the samples done, their total and a label;
	// Log, when set, gets one line per phase of the run.
	Progress func(done, total int, label string)
	Log      func(format string, args ...any)
}

// BenchResult is a benchmark's samples (harness.Sample, one build each),
// the graph's size and the device build's median phases.
type BenchResult struct {
	Name            string           `json:"name"`
	Vertices        int              `json:"vertices"`
	EdgeEntries     int              `json:"edge_entries"`
	Checksum        string           `json:"checksum"`
	Plan            Plan             `json:"plan"`
	Samples         []harness.Sample `json:"samples"`
	GPUTimes        []Times          `json:"gpu_times"`
	ReferenceBuildS float64          `json:"reference_build_s"`
	// ref is the reference CSR every build is compared with.
	ref *frontier.CSR
}

// Bench builds the graph on the device (a warm-up, then cfg.Samples timed
// builds) and on the CPU (cfg.CPUSamples), interleaved, and checks that
// every build gives the reference's CSR: its offsets and targets compared
// with the reference's, which CSRChecksum names in the samples.
func Bench(x *executor.Executor, cfg BenchConfig) (*BenchResult, error) {
	cfg = cfg.withDefaults()
	if err := Check(cfg.Scale, cfg.EdgeFactor); err != nil {
		return nil, err
	}
	if cfg.Samples < 1 {
		return nil, harness.ConfigError("kronbuild bench", "samples", cfg.Samples, "Fix: take at least 1 sample, 10 for the gate")
	}
	log := harness.LogOr(cfg.Log)
	res, err := reference(cfg)
	if err != nil {
		return nil, err
	}
	log("reference %s: %d vertices, %d edge entries, built on the CPU in %.2f s", res.Name, res.Vertices, res.EdgeEntries, res.ReferenceBuildS)
	warm, err := Build(x, cfg.Scale, cfg.EdgeFactor, cfg.Seed, cfg.Build)
	if err != nil {
		return nil, err
	}
	if err := res.check(ArmGPU, warm.Graph); err != nil {
		return nil, err
	}
	res.Plan = warm.Plan
	log("warm-up build on the device: %d parts, total %s", len(warm.Plan.Parts), warm.Times.Total.Round(time.Millisecond))
	return res, res.sample(x, cfg)
}

// reference builds the graph on the CPU once: the CSR every build must
// equal, its checksum and its size.
func reference(cfg BenchConfig) (*BenchResult, error) {
	t0 := time.Now()
	ref, err := frontier.Kronecker(cfg.Scale, cfg.EdgeFactor, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return &BenchResult{Name: fmt.Sprintf("kron-build-%d", cfg.Scale), Vertices: ref.NumVertices(), EdgeEntries: ref.NumEdgeEntries(),
		Checksum: CSRChecksum(ref), ReferenceBuildS: time.Since(t0).Seconds(), ref: ref}, nil
}

// withDefaults fills the zero fields.
func (c BenchConfig) withDefaults() BenchConfig {
	harness.Fill(&c.EdgeFactor, frontier.DefaultEdgeFactor)
	harness.Fill(&c.Samples, DefaultBenchSamples)
	harness.Fill(&c.CPUSamples, c.Samples)
	return c
}

// sample takes the timed samples, the arms interleaved.
func (r *BenchResult) sample(x *executor.Executor, cfg BenchConfig) error {
	arms := []string{ArmGPU}
	if cfg.CPUSamples > 0 {
		arms = append(arms, ArmCPU)
	}
	count := map[string]int{}
	return harness.Interleave(r.Name, arms, max(cfg.Samples, cfg.CPUSamples), cfg.Progress, func(_, a int) error {
		arm := arms[a]
		want := map[string]int{ArmGPU: cfg.Samples, ArmCPU: cfg.CPUSamples}[arm]
		if count[arm] >= want {
			return nil
		}
		s, err := r.run(x, cfg, arm)
		if err != nil {
			return err
		}
		s.Index = uint64(count[arm])
		count[arm]++
		r.Samples = append(r.Samples, s)
		return nil
	})
}

// run takes one build of arm and checks it.
func (r *BenchResult) run(x *executor.Executor, cfg BenchConfig, arm string) (harness.Sample, error) {
	s := harness.Sample{Arm: arm, Checksum: r.Checksum}
	if arm == ArmCPU {
		t0 := time.Now()
		g, err := frontier.Kronecker(cfg.Scale, cfg.EdgeFactor, cfg.Seed)
		s.WallNs = float64(time.Since(t0))
		if err != nil {
			return s, err
		}
		return s, r.check(arm, g)
	}
	b, err := Build(x, cfg.Scale, cfg.EdgeFactor, cfg.Seed, cfg.Build)
	if err != nil {
		return s, err
	}
	t := b.Times
	s.WallNs = float64(t.Total)
	s.DeviceNs = float64(t.Permutation + t.Count + t.Generate + t.Sort + t.CSR)
	if cfg.Build.HostPermutation {
		s.DeviceNs -= float64(t.Permutation)
	}
	r.GPUTimes = append(r.GPUTimes, t)
	return s, r.check(arm, b.Graph)
}

// check refuses a build whose CSR is not the reference's, naming the first
// entry that differs. The arrays are compared in parallel: at scale 26
// they are 8.4 GB, which one core would take seconds to hash.
func (r *BenchResult) check(arm string, g *frontier.CSR) error {
	fail := func(what string, i, got, want int64) error {
		return fmt.Errorf("kronbuild bench: the %s arm's %s differs from the reference (checksum %s) at %s[%d]: %d, the reference's %d. Fix: this is a defect in the build; report the scale and seed",
			arm, r.Name, r.Checksum, what, i, got, want)
	}
	if len(g.Offsets) != len(r.ref.Offsets) || len(g.Targets) != len(r.ref.Targets) {
		return fmt.Errorf("kronbuild bench: the %s arm's %s has %d offsets and %d targets, the reference %d and %d. Fix: this is a defect in the build; report the scale and seed",
			arm, r.Name, len(g.Offsets), len(g.Targets), len(r.ref.Offsets), len(r.ref.Targets))
	}
	if i := firstDifference(g.Offsets, r.ref.Offsets); i >= 0 {
		return fail("offsets", int64(i), int64(g.Offsets[i]), int64(r.ref.Offsets[i]))
	}
	if i := firstDifference(g.Targets, r.ref.Targets); i >= 0 {
		return fail("targets", int64(i), int64(g.Targets[i]), int64(r.ref.Targets[i]))
	}
	return nil
}

// comparePiece is the most entries one goroutine of firstDifference
// compares.
const comparePiece = 1 << 22

// firstDifference returns the first index at which a and b (of equal
// length) differ, or -1 when they are equal, comparing pieces of them on
// up to GOMAXPROCS goroutines.
func firstDifference[T comparable](a, b []T) int {
	pieces := (len(a) + comparePiece - 1) / comparePiece
	first := make([]int, pieces)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(pieces, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1) - 1); p < pieces; p = int(next.Add(1) - 1) {
				lo, hi := p*comparePiece, min((p+1)*comparePiece, len(a))
				first[p] = -1
				if !slices.Equal(a[lo:hi], b[lo:hi]) {
					first[p] = lo + mismatch(a[lo:hi], b[lo:hi])
				}
			}
		}()
	}
	wg.Wait()
	for _, i := range first {
		if i >= 0 {
			return i
		}
	}
	return -1
}

// mismatch returns the first index at which a and b differ (they do).
func mismatch[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// CSRChecksum is an FNV-1a 64-bit hash of a CSR's offsets then targets
// ("fnv64-" and 16 hex digits): two builds of one graph agree on it exactly
// when their arrays are equal (up to hash collisions). Offsets are hashed
// as 4-byte little-endian words, as a GPU holds them, when the graph fits
// 32-bit offsets (frontier.CSR.CheckOffsets32), and as 8-byte words when
// it does not; targets as 4-byte words.
func CSRChecksum(g *frontier.CSR) string {
	h := fnv.New64a()
	var buf [4096]byte
	put := func(n, size int, word func(int) uint64) {
		for i := 0; i < n; {
			k := 0
			for ; k+size <= len(buf) && i < n; k, i = k+size, i+1 {
				if size == 8 {
					binary.LittleEndian.PutUint64(buf[k:], word(i))
				} else {
					binary.LittleEndian.PutUint32(buf[k:], uint32(word(i)))
				}
			}
			h.Write(buf[:k])
		}
	}
	offsetSize := 4
	if g.CheckOffsets32() != nil {
		offsetSize = 8
	}
	put(len(g.Offsets), offsetSize, func(i int) uint64 { return g.Offsets[i] })
	put(len(g.Targets), 4, func(i int) uint64 { return uint64(uint32(g.Targets[i])) })
	return fmt.Sprintf("fnv64-%016x", h.Sum64())
}
