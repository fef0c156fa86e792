package bfs

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/stats"
)

// The benchmark protocol's fixed sizes.
const (
	// DefaultSamples is the timed samples per arm.
	DefaultSamples = 30
	// DefaultCopyBytes is the size of each buffer of the copy ceiling.
	DefaultCopyBytes = 1 << 30
	// DefaultBarrierLevels is the barriers each launch of the barrier-floor
	// measurement crosses; barrierFloorLaunches is its launches.
	DefaultBarrierLevels = 4096
	barrierFloorLaunches = 10
	// minCopySamples is the fewest copy-ceiling samples, whatever Samples.
	minCopySamples = 10
)

// DefaultArms are the arms measured unless the configuration names others.
func DefaultArms() []Arm { return []Arm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel} }

// BenchConfig is one run of the benchmark protocol.
type BenchConfig struct {
	// Session configures the session every arm runs on.
	Session Config
	// Arms are the arms measured (nil: DefaultArms).
	Arms []Arm
	// Samples is the timed samples per arm (0: DefaultSamples); a sample is
	// one traversal from every root.
	Samples int
	// CopyBytes sizes each buffer of the copy-ceiling measurement (0 skips
	// it); it is capped at a third of the live budget.
	CopyBytes uint64
	// BarrierLevels is the barriers per launch of the megakernel's
	// barrier-floor measurement (0 skips it).
	BarrierLevels int
	// Progress, when set, is called after every timed sample.
	Progress func(done, total int, label string)
	// Log, when set, receives one line per step of the protocol.
	Log func(format string, args ...any)
}

// Sample is one timed sample of one arm: one traversal from every root.
type Sample struct {
	Arm      string
	Index    uint64
	WallNs   float64
	DeviceNs float64
	// Checksum combines the roots' level checksums (identical levels give
	// the reference's).
	Checksum string
	// Pollution of the timed region, summed over the roots.
	TimedUploads, TimedAllocations, TimedHostSyncs uint64
	// BytesMoved is set for the copy ceiling: bytes read plus written.
	BytesMoved uint64
}

// ArmSession is one arm's resident session check: a batch of every root,
// the plan's prediction against the telemetry.
type ArmSession struct {
	Arm   Arm          `json:"arm"`
	Check SessionCheck `json:"check"`
}

// BenchResult is everything one benchmark run measured and planned.
type BenchResult struct {
	Summary Summary `json:"summary"`
	// Samples are every arm's samples, then the copy ceiling's (arm
	// "copy-ceiling").
	Samples []Sample `json:"-"`
	// ReferenceChecksum is the CPU reference's sample checksum.
	ReferenceChecksum string       `json:"reference_checksum"`
	Plans             Plans        `json:"plans"`
	ArmPlan           ArmPlan      `json:"arm_plan"`
	Sessions          []ArmSession `json:"sessions"`
}

// bench is the state of one run.
type bench struct {
	cfg   BenchConfig
	s     *Session
	g     *frontier.CSR
	roots []int32
	stats []RootStat
	refs  [][]int32
	res   *BenchResult
}

// Bench runs the benchmark protocol on g from roots: the CPU reference of
// every root; a session; the arm plan from a measured profile; every arm
// from every root once, untimed, with its levels checked against the
// reference; Samples timed samples per arm, interleaved (the arms' order
// rotates every sample), each traversal's levels checked again outside the
// timed region; the copy ceiling and the megakernel's barrier floor; and a
// resident session batch per arm, its plan held against the telemetry.
func Bench(x *executor.Executor, g *frontier.CSR, roots []int32, cfg BenchConfig) (*BenchResult, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("benchmark of %s has no roots. Fix: pass at least one root", g.Name)
	}
	if cfg.Arms == nil {
		cfg.Arms = DefaultArms()
	}
	if cfg.Samples == 0 {
		cfg.Samples = DefaultSamples
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	b := &bench{cfg: cfg, g: g, roots: roots, res: &BenchResult{}}
	t0 := time.Now()
	var err error
	if b.stats, b.refs, err = Reference(g, roots); err != nil {
		return nil, err
	}
	b.res.ReferenceChecksum = b.referenceChecksum()
	cfg.Log("CPU reference BFS from %d roots: %d levels in all (%s)", len(roots), b.totalLevels(), time.Since(t0).Round(time.Millisecond))
	if b.s, err = NewSession(x, g, cfg.Session); err != nil {
		return nil, err
	}
	defer b.s.Close()
	b.res.Plans = b.s.Plans()
	for _, step := range []func() error{b.planArm, b.warmUp, b.measure, b.copyCeiling, b.barrierFloor, b.sessions} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.summarize(x)
	return b.res, nil
}

func (b *bench) totalLevels() uint64 {
	var n uint64
	for _, s := range b.stats {
		n += uint64(s.Levels)
	}
	return n
}

func (b *bench) referenceChecksum() string {
	sums := make([]uint64, len(b.stats))
	for i, s := range b.stats {
		sums[i] = s.Checksum
	}
	return CombinedChecksum(sums)
}

// planArm profiles the graph from the first root and plans the arm.
func (b *bench) planArm() error {
	p, err := b.s.ProfileArm(b.roots[0], b.stats[0].Reached)
	if err != nil {
		return err
	}
	b.res.ArmPlan = p
	b.cfg.Log("arm plan: %s (topology %s, %s; level %s, launch overhead %s, frontier density %.2g, fusion pressure %.2f)",
		p.Arm, p.Decision.Topology, p.Decision.Reason(), stats.FormatNs(p.Profile.LevelNs), stats.FormatNs(p.LaunchOverheadNs),
		p.Sample.FrontierDensity, p.FusionPressure)
	return nil
}

// runChecked runs one traversal and checks its levels against the
// reference (the download and the check are outside the timed region).
func (b *bench) runChecked(arm Arm, i int) (Run, error) {
	r, err := b.s.Run(arm, b.roots[i])
	if err != nil {
		return r, err
	}
	lv, err := b.s.Levels()
	if err != nil {
		return r, err
	}
	if !slices.Equal(lv, b.refs[i]) {
		verr := frontier.Validate(b.g, b.roots[i], lv)
		return r, fmt.Errorf("arm %s from root %d: the GPU levels differ from the CPU reference (%v). Fix: this is a kernel bug; run the arms one at a time to isolate it", arm, b.roots[i], verr)
	}
	if r.Levels != b.stats[i].Levels {
		return r, fmt.Errorf("arm %s from root %d: the device counted %d levels, the reference %d. Fix: this is a kernel bug", arm, b.roots[i], r.Levels, b.stats[i].Levels)
	}
	return r, nil
}

// warmUp runs every arm from every root once, untimed, and logs the
// megakernel's barriers, relabels and reruns.
func (b *bench) warmUp() error {
	t0 := time.Now()
	for _, arm := range b.cfg.Arms {
		var levels, barriers, reruns int
		var relabels uint64
		for i := range b.roots {
			r, err := b.runChecked(arm, i)
			if err != nil {
				return err
			}
			levels, barriers, relabels, reruns = levels+r.Levels, barriers+r.Barriers, relabels+r.Relabels, reruns+r.Reruns
		}
		if arm == ArmMegakernel {
			b.cfg.Log("megakernel: %d levels in %d grid barriers (%.2f levels per barrier), %d labels lowered (%.3f per vertex per root), %d level-synchronous reruns",
				levels, barriers, float64(levels)/float64(max(barriers, 1)), relabels,
				float64(relabels)/float64(len(b.roots))/float64(max(1, b.g.NumVertices())), reruns)
		}
	}
	b.cfg.Log("correctness: %d arms x %d roots give levels identical to the CPU reference (%s)", len(b.cfg.Arms), len(b.roots), time.Since(t0).Round(time.Millisecond))
	return nil
}
