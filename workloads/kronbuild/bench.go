package kronbuild

import (
	"fmt"
	"runtime"
	"slices"
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

// The references a benchmark compares its builds with
// (BenchResult.Reference).
const (
	// ReferenceCPU is frontier.Kronecker's CSR, built once on the CPU
	// before the device's warm-up build.
	ReferenceCPU = "cpu"
	// ReferenceGPUWarmUp is the device's warm-up build, checked on its
	// own to be the CSR of a Kronecker graph of the scale (sizes, sorted
	// rows without duplicates or self loops, symmetry), when the CPU arm
	// is off and no CPU build runs: frontier.Kronecker takes about 62 and
	// 124 GB of host memory at scales 27 and 28.
	ReferenceGPUWarmUp = "gpu-warm-up"
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
	// and CPUSamples those of the CPU arm (0: Samples; negative: none, and
	// no CPU build at all: the GPU warm-up build is then the reference,
	// ReferenceGPUWarmUp).
	Samples, CPUSamples int
	// Progress, when set, gets the samples done, their total and a label;
	// Log, when set, gets one line per phase of the run.
	Progress func(done, total int, label string)
	Log      func(format string, args ...any)
}

// BenchResult is a benchmark's samples (harness.Sample, one build each),
// the graph's size, the reference every build was compared with and the
// device build's phases.
type BenchResult struct {
	Name        string           `json:"name"`
	Vertices    int              `json:"vertices"`
	EdgeEntries int              `json:"edge_entries"`
	Checksum    string           `json:"checksum"`
	Plan        Plan             `json:"plan"`
	Samples     []harness.Sample `json:"samples"`
	GPUTimes    []Times          `json:"gpu_times"`
	// Reference is the reference's source, ReferenceCPU or
	// ReferenceGPUWarmUp, and ReferenceBuildS the CPU reference's build
	// time in seconds (0 when no CPU build ran).
	Reference       string  `json:"reference"`
	ReferenceBuildS float64 `json:"reference_build_s,omitempty"`
	// ref is the reference CSR every build is compared with.
	ref *frontier.CSR
}

// Bench builds the graph on the device (a warm-up, then cfg.Samples timed
// builds) and on the CPU (cfg.CPUSamples), interleaved, and checks that
// every build gives the reference's CSR: its offsets and targets compared
// with the reference's, which CSRChecksum names in the samples. The
// reference is one CPU build, or without the CPU arm the warm-up build,
// checked on its own (ReferenceGPUWarmUp). A build over the device budget
// is refused before anything is built (CheckBudget). Only the reference
// and the build being checked are held at once: each is collected before
// the next build.
func Bench(x *executor.Executor, cfg BenchConfig) (*BenchResult, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(x); err != nil {
		return nil, err
	}
	log := harness.LogOr(cfg.Log)
	res := &BenchResult{Name: fmt.Sprintf("kron-build-%d", cfg.Scale), Reference: ReferenceGPUWarmUp}
	if cfg.CPUSamples > 0 {
		if err := res.cpuReference(cfg); err != nil {
			return nil, err
		}
		log("reference %s: %d vertices, %d edge entries, built on the CPU in %.2f s", res.Name, res.Vertices, res.EdgeEntries, res.ReferenceBuildS)
	}
	err := res.warmUp(x, cfg, log)
	release()
	if err != nil {
		return nil, err
	}
	return res, res.sample(x, cfg)
}

// check refuses settings Bench cannot run, before anything is built: the
// parameters Check refuses, no sample, no executor, and the fixed buffers
// over the device budget (CheckBudget).
func (c BenchConfig) check(x *executor.Executor) error {
	if err := Check(c.Scale, c.EdgeFactor); err != nil {
		return err
	}
	if c.Samples < 1 {
		return harness.ConfigError("kronbuild bench", "samples", c.Samples, "Fix: take at least 1 sample, 10 for the gate")
	}
	if x == nil {
		return errNoExecutor()
	}
	budget, err := harness.Budget(x, c.Build.MaxDeviceBytes)
	if err != nil {
		return err
	}
	return CheckBudget(c.Scale, c.EdgeFactor, budget, c.Build.HostPermutation)
}

// cpuReference builds the graph on the CPU once: the reference.
func (r *BenchResult) cpuReference(cfg BenchConfig) error {
	t0 := time.Now()
	ref, err := frontier.Kronecker(cfg.Scale, cfg.EdgeFactor, cfg.Seed)
	if err != nil {
		return err
	}
	r.ReferenceBuildS = time.Since(t0).Seconds()
	r.Reference = ReferenceCPU
	r.adopt(ref)
	return nil
}

// adopt makes g the reference: the CSR every build must equal, its
// checksum and its size.
func (r *BenchResult) adopt(g *frontier.CSR) {
	r.ref, r.Vertices, r.EdgeEntries, r.Checksum = g, g.NumVertices(), g.NumEdgeEntries(), CSRChecksum(g)
}

// warmUp builds the graph on the device once, untimed, and checks it:
// against the CPU reference when there is one, else on its own
// (checkGraph), and it then becomes the reference.
func (r *BenchResult) warmUp(x *executor.Executor, cfg BenchConfig, log func(format string, args ...any)) error {
	warm, err := Build(x, cfg.Scale, cfg.EdgeFactor, cfg.Seed, cfg.Build)
	if err != nil {
		return err
	}
	r.Plan = warm.Plan
	log("warm-up build on the device: %d parts, total %s", len(warm.Plan.Parts), warm.Times.Total.Round(time.Millisecond))
	if r.ref != nil {
		return r.check(ArmGPU, warm.Graph)
	}
	t0 := time.Now()
	if err := checkGraph(warm.Graph, cfg.Scale, cfg.EdgeFactor); err != nil {
		return fmt.Errorf("kronbuild bench: the warm-up build of %s on the device, the reference without a CPU build, is not a Kronecker graph's CSR: %w", r.Name, err)
	}
	r.adopt(warm.Graph)
	log("reference %s: the warm-up build on the device (no CPU build), %d vertices, %d edge entries, checked in %.2f s", r.Name, r.Vertices, r.EdgeEntries, time.Since(t0).Seconds())
	return nil
}

// release collects the build just checked, which nothing refers to any
// longer, before the next one allocates its arrays. Left to its default
// pacing the collector would let the heap grow to about twice what was
// live at its last cycle, the reference and a build, before collecting:
// a third copy of the graph, 36 GB at scale 28.
func release() { runtime.GC() }

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
		release()
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
// entry that differs. The arrays are compared in parallel: at scale 28
// they are 36 GB, which one core would take tens of seconds to hash.
func (r *BenchResult) check(arm string, g *frontier.CSR) error {
	fail := func(what string, i, got, want int64) error {
		return fmt.Errorf("kronbuild bench: the %s arm's %s differs from the %s reference (checksum %s) at %s[%d]: %d, the reference's %d. Fix: this is a defect in the build; report the scale and seed",
			arm, r.Name, r.Reference, r.Checksum, what, i, got, want)
	}
	if len(g.Offsets) != len(r.ref.Offsets) || len(g.Targets) != len(r.ref.Targets) {
		return fmt.Errorf("kronbuild bench: the %s arm's %s has %d offsets and %d targets, the %s reference %d and %d. Fix: this is a defect in the build; report the scale and seed",
			arm, r.Name, len(g.Offsets), len(g.Targets), r.Reference, len(r.ref.Offsets), len(r.ref.Targets))
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
	frontier.EachPiece(pieces, func(p int) {
		lo, hi := p*comparePiece, min((p+1)*comparePiece, len(a))
		first[p] = -1
		if !slices.Equal(a[lo:hi], b[lo:hi]) {
			first[p] = lo + mismatch(a[lo:hi], b[lo:hi])
		}
	})
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
