package wavedag

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/benchstats"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// The benchmark protocol's defaults.
const (
	// DefaultSamples is the timed samples per arm.
	DefaultSamples = 10
	// DefaultCopyBytes sizes each buffer of the copy ceiling.
	DefaultCopyBytes = harness.DefaultCopyBytes
	// ArmCopyCeiling names the copy-bandwidth ceiling's samples.
	ArmCopyCeiling = harness.ArmCopyCeiling
	// MinCopySamples is the fewest copy-ceiling samples, whatever Samples:
	// a gate judges no arm on fewer than 10.
	MinCopySamples = harness.MinCopySamples
)

// BenchConfig is one run of the benchmark protocol.
type BenchConfig struct {
	// Session configures the session the arms share.
	Session Options
	// Arms are the arms measured (nil: every arm the device supports).
	Arms []Arm
	// Samples is the timed samples per arm (0: DefaultSamples).
	Samples int
	// Reference holds the Go references of the wave functions: every
	// sample's outputs must equal the CPU reference's within each output's
	// tolerance. Without it, every sample must equal the first run of the
	// first arm.
	Reference map[string]HostFunc
	// RegisterCaps are the register caps tried for the persistent arms
	// before the samples, the fastest kept, then the waits arm's grid
	// (see Tuning); with fewer than two, Session.MaxRegisters and the
	// grid are used as given.
	RegisterCaps []int
	// CopyBytes sizes the copy ceiling's buffers (0: none is measured).
	CopyBytes uint64
	// Reporting is the run's progress and log.
	harness.Reporting
}

// Sample is one timed run of one arm. BytesMoved is the copy ceiling's
// bytes (0 for the arms); the pollution counters are always 0 here (a
// sample that uploaded or allocated inside its timed region fails the
// run), and so is Checksum (BenchResult.Checksum identifies every sample's
// outputs).
type Sample = harness.Sample

// ArmSummary condenses one arm's samples.
type ArmSummary struct {
	Arm string `json:"arm"`
	// Wall and Device are the medians of one run with their 95% intervals.
	Wall   benchstats.Interval `json:"wall_ns"`
	Device benchstats.Interval `json:"device_ns"`
	// PerWaveNs is the median wall time per wave; PerDependencyNs the
	// median wall time beyond the busiest wave's device work, per
	// dependency.
	PerWaveNs       float64 `json:"per_wave_ns"`
	PerDependencyNs float64 `json:"per_dependency_ns"`
	// OverStreams and OverGraph are the speedups over those arms (wall).
	OverStreams *benchstats.Interval `json:"speedup_over_streams,omitempty"`
	OverGraph   *benchstats.Interval `json:"speedup_over_graph,omitempty"`
	// BytesPerSecond is the workload's bytes_moved over the median wall.
	BytesPerSecond float64 `json:"bytes_per_second,omitempty"`
	// Planned and Executed are what the plans say the arm runs and what it
	// ran (every sample's executed counts equal the first's).
	Planned  Planned `json:"planned"`
	Executed Run     `json:"executed"`
}

// Pick is the arm the megakernel topology selection picks for the
// measured profile.
type Pick struct {
	Decision megakernel.TopologyDecision `json:"decision"`
	Sample   megakernel.ScheduleSample   `json:"sample"`
	// LaunchOverheadNs is the measured launch overhead per wave: the
	// streams arm's wall time per wave beyond the graph arm's device time
	// per wave.
	LaunchOverheadNs float64 `json:"launch_overhead_ns"`
	FusionPressure   float64 `json:"fusion_pressure"`
	Arm              Arm     `json:"arm"`
	// Fastest is the arm with the smallest median wall time; PickFastest
	// says whether it is the pick.
	Fastest     Arm  `json:"fastest"`
	PickFastest bool `json:"pick_was_fastest"`
}

// BenchResult is everything one benchmark run measured.
type BenchResult struct {
	Workload     string       `json:"workload"`
	Waves        int          `json:"waves"`
	Dependencies int          `json:"dependencies"`
	Device       string       `json:"device"`
	Samples      []Sample     `json:"-"`
	Arms         []ArmSummary `json:"arms"`
	Pick         Pick         `json:"pick"`
	// CopyBytesPerSecond is the copy ceiling's median bandwidth (reads
	// plus writes), when measured.
	CopyBytesPerSecond float64 `json:"copy_bytes_per_second,omitempty"`
	// Checksum identifies the checked outputs: every sample's matched the
	// reference (the CPU's, or the first run's).
	Checksum string `json:"checksum"`
	// Outputs are the outputs of the last checked run.
	Outputs [][]byte `json:"-"`
	// Grid is the persistent arms' grid plan.
	Grid executor.GridPlan `json:"grid"`
	// Tuning is the launch shapes tried for the persistent arms and the
	// ones kept; nil when none was tuned.
	Tuning *Tuning `json:"tuning,omitempty"`
}

// bench is the state of one run of the protocol.
type bench struct {
	cfg  BenchConfig
	p    *Program
	s    *Session
	x    *executor.Executor
	want [][]byte
	runs map[Arm]Run
	res  *BenchResult
}

// Bench runs the benchmark protocol: the CPU reference (when the Go
// references are given), a session, the persistent arms' register cap and
// waits grid (the fastest measured, every run checked), every arm once untimed with its
// outputs and its counts held against the plans, the arm the topology
// selection picks from that profile, Samples timed samples per arm
// interleaved (the order rotates every sample; each run starts from the
// initial buffers, restored outside the timed region, and its outputs are
// read back and checked outside it too), and the copy ceiling.
func Bench(x *executor.Executor, p *Program, cfg BenchConfig) (*BenchResult, error) {
	if cfg.Samples <= 0 {
		cfg.Samples = DefaultSamples
	}
	cfg.Log = harness.LogOr(cfg.Log)
	if cfg.Arms == nil {
		cfg.Arms = DeviceArms(x)
	}
	b := &bench{cfg: cfg, p: p, x: x, runs: map[Arm]Run{}, res: &BenchResult{Workload: p.Name(), Waves: p.Waves(),
		Dependencies: len(p.Workload.Dependencies), Device: x.Device().Name}}
	if cfg.Reference != nil {
		var err error
		if b.want, err = Reference(p, cfg.Reference); err != nil {
			return nil, err
		}
		cfg.Log("CPU reference: %d waves of %d functions, %d outputs", p.Waves(), len(p.Funcs), len(b.want))
	}
	var err error
	if b.s, err = Open(x, p, cfg.Session); err != nil {
		return nil, err
	}
	defer b.s.Close()
	b.res.Grid = b.s.Grid()
	for _, step := range []func() error{b.tune, b.warmUp, b.pick, b.measure, b.copyCeiling} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.summarize()
	return b.res, nil
}

// DeviceArms returns every arm x's device runs: graph-pdl needs Hopper.
func DeviceArms(x *executor.Executor) []Arm {
	arms := Arms()
	if x.Device().Major < 9 {
		arms = slices.DeleteFunc(arms, func(a Arm) bool { return a == ArmGraphPDL })
	}
	return arms
}

// runChecked runs arm from the initial buffers and checks its outputs and
// counts; the restore and the check are outside the timed region.
func (b *bench) runChecked(arm Arm) (Run, error) {
	if err := b.s.Reset(); err != nil {
		return Run{}, err
	}
	before := b.x.Telemetry()
	r, err := b.s.Run(arm)
	if err != nil {
		return r, err
	}
	delta := b.x.Telemetry().Sub(before)
	if delta.HostUploadOperations != 0 || delta.TransientAllocationBytesRequested != 0 || delta.ResidentAllocationBytesRequested != 0 {
		return r, fmt.Errorf("arm %s uploaded or allocated inside its timed region (%d uploads, %d bytes allocated). Fix: this is a bug in gpuplan's arms; report it",
			arm, delta.HostUploadOperations, delta.TransientAllocationBytesRequested+delta.ResidentAllocationBytesRequested)
	}
	if err := b.s.CheckPlan(r); err != nil {
		return r, err
	}
	got, err := b.s.Outputs()
	if err != nil {
		return r, err
	}
	if b.want == nil {
		b.want = got
	}
	for i, o := range b.p.Workload.Outputs {
		if err := Compare(o, got[i], b.want[i]); err != nil {
			return r, fmt.Errorf("arm %s on %s: %w", arm, b.p.Name(), err)
		}
	}
	b.res.Outputs = got
	return r, nil
}

// warmUp runs every arm once, untimed and checked.
func (b *bench) warmUp() error {
	for _, arm := range b.cfg.Arms {
		r, err := b.runChecked(arm)
		if err != nil {
			return err
		}
		b.runs[arm] = r
		p := b.s.Planned(arm)
		b.cfg.Log("%s: %s wall, %s device; launches %d (planned %d), graph launches %d (%d), grid barriers %d (%d), counter waits %d (%d), tasks %d (%d)",
			arm, stats.FormatNs(float64(r.WallNs)), stats.FormatNs(float64(r.DeviceNs)), r.Launches, p.Launches, r.GraphLaunches, p.GraphLaunches,
			r.Barriers, p.Barriers, r.CounterWaits, p.CounterWaits, r.Tasks, p.Tasks)
	}
	h := sha256.New()
	for _, o := range b.want {
		h.Write(o)
	}
	b.res.Checksum = "outputs-" + hex.EncodeToString(h.Sum(nil))[:16]
	b.cfg.Log("correctness: %d arms give the reference's outputs (%s)", len(b.cfg.Arms), b.res.Checksum)
	return nil
}

// ArmForTopology maps an execution topology to the arm that runs it: a
// fused wave topology to the persistent waits arm, the dense topologies
// (whole-grid waves) to the barriers arm, the sparse and hybrid ones to a
// graph of launches sized to each wave.
func ArmForTopology(t megakernel.Topology) Arm {
	switch t {
	case megakernel.FusedWave:
		return ArmWaits
	case megakernel.DenseFrontier, megakernel.BlockDenseFrontier:
		return ArmBarriers
	}
	return ArmGraph
}

// pick feeds the warm-up's profile to the topology selection: the
// dispatch cost is the graph arm's device time per wave, the density the
// waves' mean share of the persistent grid, the readback the outputs'
// bytes, the launch overhead the streams arm's wall time per wave beyond
// that device time, and the fusion pressure from the homotopy scheduler.
func (b *bench) pick() error {
	n := float64(b.p.Waves())
	g, okG := b.runs[ArmGraph]
	st, okS := b.runs[ArmStreams]
	if !okG || !okS {
		b.cfg.Log("arm pick: needs the streams and graph arms' profile; skipped")
		return nil
	}
	grid := float64(max(b.s.Grid().GridBlocks, 1))
	var density float64
	for _, wv := range b.p.Workload.Waves {
		density += min(1, float64(*wv.Kernel.Tiles)/grid)
	}
	var readback uint64
	for _, o := range b.want {
		readback += uint64(len(o))
	}
	perWave := max(float64(g.DeviceNs)/n, 1)
	sample := megakernel.ScheduleSample{DispatchCostNS: perWave, FrontierDensity: density / n, ReadbackBytes: readback}
	overhead := max(float64(st.WallNs)/n-perWave, 0)
	mem, err := b.p.Memory(b.s.Image())
	if err != nil {
		return err
	}
	d, fusion, err := harness.SelectTopology(sample, overhead, megakernel.GraphShape{NodeCount: uint64(b.p.Waves()), EdgeCount: uint64(len(b.p.Workload.Dependencies))},
		megakernel.MemoryBudget{RequiredBytes: mem.TotalBytes, BudgetBytes: mem.BudgetBytes})
	if err != nil {
		return err
	}
	b.res.Pick = Pick{Decision: d, Sample: sample, LaunchOverheadNs: overhead, FusionPressure: fusion, Arm: ArmForTopology(d.Topology)}
	if !slices.Contains(b.cfg.Arms, b.res.Pick.Arm) {
		b.res.Pick.Arm = ""
	}
	b.cfg.Log("arm pick: %s (topology %s, %s; dispatch %s per wave, launch overhead %s, density %.3g, fusion pressure %.3f)",
		b.res.Pick.Arm, d.Topology, d.Reason(), stats.FormatNs(perWave), stats.FormatNs(overhead), sample.FrontierDensity, fusion)
	return nil
}

// measure takes the timed samples, interleaved.
func (b *bench) measure() error {
	return harness.Interleave(b.p.Name(), harness.Names(b.cfg.Arms), b.cfg.Samples, b.cfg.Progress, func(smp, a int) error {
		arm := b.cfg.Arms[a]
		r, err := b.runChecked(arm)
		if err != nil {
			return err
		}
		if w := b.runs[arm]; r.Launches != w.Launches || r.Barriers != w.Barriers || r.CounterWaits != w.CounterWaits || r.Tasks != w.Tasks {
			return fmt.Errorf("arm %s sample %d executed other counts than its first run. Fix: this is a bug in gpuplan's runtime; report it", arm, smp)
		}
		b.res.Samples = append(b.res.Samples, Sample{Arm: string(arm), Index: uint64(smp), WallNs: float64(r.WallNs), DeviceNs: float64(r.DeviceNs)})
		return nil
	})
}

// copyCeiling measures the device's copy bandwidth.
func (b *bench) copyCeiling() error {
	if b.cfg.CopyBytes == 0 {
		return nil
	}
	runs, err := b.s.CopyCeiling(b.cfg.CopyBytes, max(b.cfg.Samples, MinCopySamples))
	if err != nil {
		return err
	}
	var bw []float64
	for i, r := range runs {
		b.res.Samples = append(b.res.Samples, Sample{Arm: ArmCopyCeiling, Index: uint64(i), WallNs: float64(r.WallNs), DeviceNs: float64(r.DeviceNs), BytesMoved: r.Bytes})
		bw = append(bw, float64(r.Bytes)/float64(max(r.DeviceNs, 1))*1e9)
	}
	b.res.CopyBytesPerSecond = stats.Median(bw)
	b.cfg.Log("copy ceiling: %.1f GB/s (reads plus writes, %d copies of %d bytes)", b.res.CopyBytesPerSecond/1e9, len(runs), b.cfg.CopyBytes)
	return nil
}

// times returns an arm's wall or device times.
func (b *bench) times(arm Arm, device bool) []float64 {
	var out []float64
	for _, s := range b.res.Samples {
		if s.Arm == string(arm) {
			if device {
				out = append(out, s.DeviceNs)
			} else {
				out = append(out, s.WallNs)
			}
		}
	}
	return out
}

// summarize condenses every arm's samples.
func (b *bench) summarize() {
	deps := max(float64(len(b.p.Workload.Dependencies)), 1)
	var busiest float64 // the smallest device time of any arm: the work itself
	for i, arm := range b.cfg.Arms {
		if d := benchstats.MedianCI(b.times(arm, true), benchstats.Confidence).Center; i == 0 || d < busiest {
			busiest = d
		}
	}
	best := 0.0
	for _, arm := range b.cfg.Arms {
		wall := b.times(arm, false)
		s := ArmSummary{Arm: string(arm), Wall: benchstats.MedianCI(wall, benchstats.Confidence), Device: benchstats.MedianCI(b.times(arm, true), benchstats.Confidence),
			Planned: b.s.Planned(arm), Executed: b.runs[arm]}
		s.PerWaveNs = s.Wall.Center / float64(b.p.Waves())
		s.PerDependencyNs = max(s.Wall.Center-busiest, 0) / deps
		for _, base := range []struct {
			arm Arm
			dst **benchstats.Interval
		}{{ArmStreams, &s.OverStreams}, {ArmGraph, &s.OverGraph}} {
			if base.arm != arm && slices.Contains(b.cfg.Arms, base.arm) {
				ci := benchstats.SpeedupCI(b.times(base.arm, false), wall)
				*base.dst = &ci
			}
		}
		if n := b.p.Workload.BytesMoved; n > 0 {
			s.BytesPerSecond = float64(n) / s.Wall.Center * 1e9
		}
		if best == 0 || s.Wall.Center < best {
			best, b.res.Pick.Fastest = s.Wall.Center, arm
		}
		b.res.Arms = append(b.res.Arms, s)
	}
	b.res.Pick.PickFastest = b.res.Pick.Arm == b.res.Pick.Fastest
}
