package bfs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// The benchmark protocol's fixed sizes.
const (
	// DefaultSamples is the timed samples per arm.
	DefaultSamples = harness.DefaultSamples
	// DefaultCopyBytes is the size of each buffer of the copy ceiling.
	DefaultCopyBytes = harness.DefaultCopyBytes
	// DefaultBarrierLevels is the barriers each launch of the barrier-floor
	// measurement crosses; barrierFloorLaunches is its launches.
	DefaultBarrierLevels = 4096
	barrierFloorLaunches = 10
	// minCopySamples is the fewest copy-ceiling samples, whatever Samples.
	minCopySamples = harness.MinCopySamples
)

// DefaultArms are the arms measured unless the configuration names others.
func DefaultArms() []Arm { return []Arm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel} }

// ArmMultiSource is the evidence arm of multi-source BFS: one sample is
// every root in passes of 32 or 64 (BenchConfig.Batch).
const ArmMultiSource = "multi-source"

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
	// Batch, when positive, also measures multi-source BFS (arm
	// ArmMultiSource) from the same roots, of which there must be Batch,
	// in passes of BatchWidth roots (0: the planner picks 32 or 64), in the
	// same run as the single-root arms.
	Batch      int
	BatchWidth int
	// Peers are peer BFS codes run on the same graph and roots, one after
	// the other, each as the external arm its kind names (see PeerKinds).
	Peers []PeerConfig
	// Tune, when set and the megakernel is measured, tunes its setting
	// from the first root (Session.TuneMegakernel, DefaultTuneRuns
	// traversals per candidate) before anything is timed.
	Tune bool
	// Check is how each root's reference is established ("": CheckAuto):
	// the CPU reference BFS, or Graph500 validation of the root's first
	// GPU traversal.
	Check CheckMode
	// Reporting is the run's progress and log.
	harness.Reporting
}

// ArmSession is one arm's resident session check: a batch of every root,
// the plan's prediction against the telemetry.
type ArmSession struct {
	Arm   Arm          `json:"arm"`
	Check SessionCheck `json:"check"`
}

// Sample is one timed sample of one arm: one traversal from every root.
// Its Checksum combines the roots' level checksums (identical levels give
// the reference's), its pollution is summed over the roots, and BytesMoved
// is set for the copy ceiling.
type Sample = harness.Sample

// BenchResult is everything one benchmark run measured and planned.
type BenchResult struct {
	Summary Summary `json:"summary"`
	// Samples are every arm's samples, then the copy ceiling's (arm
	// "copy-ceiling").
	Samples []Sample `json:"-"`
	// ReferenceChecksum is the reference levels' sample checksum (the CPU
	// reference's, or the validated first traversals' with CheckGraph500).
	ReferenceChecksum string `json:"reference_checksum"`
	// Checks are the check every root's traversals were held to, in root
	// order.
	Checks   []RootCheck  `json:"checks"`
	Plans    Plans        `json:"plans"`
	ArmPlan  ArmPlan      `json:"arm_plan"`
	Sessions []ArmSession `json:"sessions"`
	// Directions are every root's per-level directions when the session
	// is direction-optimizing: the reference's decisions (the CPU
	// reference's, or the validated first traversal's), which every
	// direction-optimizing arm's matched on every traversal.
	Directions []RootDirections `json:"directions,omitempty"`
	// MultiSource is the multi-source plan and its last run (with Batch).
	MultiSource *MultiSourceBench `json:"multi_source,omitempty"`
	// Peers is each peer's run (with Peers).
	Peers []PeerResult `json:"peers,omitempty"`
	// Tuning is the megakernel's tuning (with Tune).
	Tuning *MegakernelTuning `json:"tuning,omitempty"`
	// Megakernel is the setting the megakernel was measured with.
	Megakernel MegakernelSetting `json:"megakernel_setting"`
}

// RootDirections are one root's per-level directions: its levels, how
// many ran bottom-up, and the decisions of the first level and of every
// level whose direction differs from the level before (the whole sequence
// of directions, with the counts each switch was decided from).
type RootDirections struct {
	Root     int32                           `json:"root"`
	Levels   int                             `json:"levels"`
	BottomUp int                             `json:"bottom_up"`
	Switches []planners.BFSDirectionDecision `json:"switches"`
}

// rootDirections condenses a root's decisions.
func rootDirections(root int32, ds []planners.BFSDirectionDecision) RootDirections {
	r := RootDirections{Root: root, Levels: len(ds)}
	for i, d := range ds {
		if d.Direction == planners.DirectionBottomUp {
			r.BottomUp++
		}
		if i == 0 || d.Direction != ds[i-1].Direction {
			r.Switches = append(r.Switches, d)
		}
	}
	return r
}

// bench is the state of one run: mode is the check that runs (cfg.Check
// resolved), stats, refs and decisions are every root's reference, and
// levels is the one buffer every checked traversal's levels are
// downloaded into (sharedLevels).
type bench struct {
	cfg       BenchConfig
	mode      CheckMode
	s         *Session
	g         *frontier.CSR
	roots     []int32
	stats     []RootStat
	refs      [][]int32
	decisions [][]planners.BFSDirectionDecision
	levels    []int32
	ms        *MultiSource
	res       *BenchResult
}

// Bench runs the benchmark protocol on g from roots: a session; every
// root's reference by the check mode (cfg.Check: the CPU reference BFS
// from every root, direction-optimizing, on every CPU, with its
// decisions; or, with CheckGraph500, one untimed GPU traversal from every
// root validated the Graph500 way); the arm plan from a measured profile;
// every arm from every root once, untimed, with its levels (and its
// directions) checked against the reference; Samples timed samples per
// arm, interleaved (the arms' order rotates every sample), each
// traversal's levels checked again outside the timed region; the copy
// ceiling and the megakernel's barrier floor; a resident session batch
// per arm, its plan held against the telemetry; and, when configured,
// multi-source passes as one more arm and the peers' BFS as external ones.
func Bench(x *executor.Executor, g *frontier.CSR, roots []int32, cfg BenchConfig) (*BenchResult, error) {
	mode, err := cfg.prepare(g, roots)
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, mode: mode, g: g, roots: roots, res: &BenchResult{}}
	if b.s, err = NewSession(x, g, cfg.Session); err != nil {
		return nil, err
	}
	defer b.close()
	b.res.Plans = b.s.Plans()
	if err := b.fitArms(); err != nil {
		return nil, err
	}
	// The multi-source buffers are freed before the session batches, whose
	// plans hold the session's own resident bytes.
	for _, step := range []func() error{b.reference, b.planArm, b.tune, b.planBatch, b.warmUp, b.measure, b.copyCeiling, b.barrierFloor, b.closeBatch, b.sessions} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	// The peers run on the GPU alone, after the session let go of it.
	if err := b.close(); err != nil {
		return nil, err
	}
	if err := b.peers(); err != nil {
		return nil, err
	}
	b.summarize(x)
	return b.res, nil
}

// fitArms keeps the arms the session runs (Session.ArmFits: with 64-bit
// offsets, the host loop and the device loop) and logs the others; it
// fails when none is left.
func (b *bench) fitArms() error {
	var kept []Arm
	for _, arm := range b.cfg.Arms {
		if err := b.s.ArmFits(arm); err != nil {
			b.cfg.Log("arm %s left out: %v", arm, err)
			continue
		}
		kept = append(kept, arm)
	}
	if len(kept) == 0 {
		return fmt.Errorf("benchmark of %s: none of the arms %v runs with %s offsets. Fix: measure the %s or %s arm", b.g.Name, b.cfg.Arms, b.s.OffsetWidth(), ArmHostLoop, ArmDeviceLoop)
	}
	b.cfg.Arms = kept
	return nil
}

// prepare checks cfg for a run on g from roots, fills its defaults, and
// returns the check mode that runs.
func (cfg *BenchConfig) prepare(g *frontier.CSR, roots []int32) (CheckMode, error) {
	if len(roots) == 0 {
		return "", fmt.Errorf("benchmark of %s has no roots. Fix: pass at least one root", g.Name)
	}
	if cfg.Batch != 0 && cfg.Batch != len(roots) {
		return "", fmt.Errorf("benchmark of %s: a batch of %d roots but %d roots. Fix: measure the batch from as many roots as it has", g.Name, cfg.Batch, len(roots))
	}
	if err := checkPeers(cfg.Peers); err != nil {
		return "", err
	}
	mode, err := cfg.Check.Resolve(uint64(g.NumEdgeEntries()))
	if err != nil {
		return "", fmt.Errorf("benchmark of %s: BenchConfig.Check: %w", g.Name, err)
	}
	if cfg.Arms == nil {
		cfg.Arms = DefaultArms()
	}
	harness.Fill(&cfg.Samples, DefaultSamples)
	cfg.Log = harness.LogOr(cfg.Log)
	return mode, nil
}

// checkPeers checks every peer's configuration, and that no kind is given
// twice.
func checkPeers(peers []PeerConfig) error {
	seen := map[string]bool{}
	for i := range peers {
		if err := peers[i].check(); err != nil {
			return err
		}
		k, _ := peers[i].kind()
		if seen[k.Name] {
			return fmt.Errorf("peer %s is given twice. Fix: give each peer once", k.Name)
		}
		seen[k.Name] = true
	}
	return nil
}

// close frees the multi-source buffers and the session (again: no-op).
func (b *bench) close() error {
	err := b.closeBatch()
	if e := b.s.Close(); err == nil {
		err = e
	}
	return err
}

// closeBatch frees the multi-source buffers, if any (again: no-op).
func (b *bench) closeBatch() error {
	if b.ms == nil {
		return nil
	}
	err := b.ms.Close()
	b.ms = nil
	return err
}

// recordDirections keeps every root's directions when the session is
// direction-optimizing, and logs them.
func (b *bench) recordDirections() {
	if !b.s.Optimizing() {
		b.cfg.Log("directions: every level top-down (%s)", b.topDownReason())
		return
	}
	levels, bottomUp := 0, 0
	for i, ds := range b.decisions {
		rd := rootDirections(b.roots[i], ds)
		b.res.Directions = append(b.res.Directions, rd)
		levels, bottomUp = levels+rd.Levels, bottomUp+rd.BottomUp
	}
	b.res.Summary.DirectionLevels, b.res.Summary.BottomUpLevels = levels, bottomUp
	b.cfg.Log("directions: %d of %d levels bottom-up by %s (planners.PlanBFSDirection, alpha %d, beta %d); every direction-optimizing arm must decide the same",
		bottomUp, levels, b.referenceName(), planners.DefaultDirectionAlpha, planners.DefaultDirectionBeta)
}

// topDownReason says why every level is top-down.
func (b *bench) topDownReason() string {
	if b.s.Config().Direction == DirectionTopDown {
		return "--direction top-down"
	}
	return fmt.Sprintf("average degree %.2f under the planner's gate of %d", float64(b.g.NumEdgeEntries())/float64(max(1, b.g.NumVertices())), planners.DefaultBottomUpMinDegree)
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
	b.cfg.Log("arm plan: %s", p.Describe("level", p.Profile.LevelNs))
	return nil
}

// tune tunes the megakernel's setting from the first root (with
// cfg.Tune), and records the setting it is measured with.
func (b *bench) tune() error {
	if b.cfg.Tune && slices.Contains(b.cfg.Arms, ArmMegakernel) {
		t, err := b.s.TuneMegakernel(b.roots[0], b.stats[0].Reached, DefaultTuneRuns)
		if err != nil {
			return err
		}
		b.res.Tuning = &t
		b.cfg.Log("megakernel tuning from root %d (median of %d traversals each; * chosen):\n%s", t.Root, DefaultTuneRuns, strings.TrimRight(t.Table(), "\n"))
	}
	b.res.Megakernel = b.s.MegakernelSetting()
	return nil
}

// runChecked runs one traversal and checks its levels against the
// reference (the download and the check are outside the timed region). The
// levels are downloaded into the bench's one level buffer (sharedLevels),
// which check keeps nothing of.
func (b *bench) runChecked(arm Arm, i int) (Run, error) {
	return b.runWith(arm, i, b.sharedLevels, b.check)
}

// runWith runs one traversal from roots[i] with arm and hands it, with its
// levels (downloaded by levels outside the timed region), to check.
func (b *bench) runWith(arm Arm, i int, levels func(Run) ([]int32, error), check func(i int, r Run, lv []int32) error) (Run, error) {
	run := func() (Run, error) { return b.s.Run(arm, b.roots[i]) }
	return harness.Checked(run, levels, func(r Run, lv []int32) error { return check(i, r, lv) })
}

// sharedLevels downloads the last run's levels into the bench's level
// buffer (Session.LevelsInto), allocated by the first download and reused
// by every later one: the levels it returns are overwritten by the next
// download, so a check must not keep them.
func (b *bench) sharedLevels(Run) ([]int32, error) {
	lv, err := b.s.LevelsInto(b.levels)
	if err != nil {
		return nil, err
	}
	b.levels = lv
	return lv, nil
}

// freshLevels downloads the last run's levels into a new slice, for a
// check that keeps them (adopt).
func (b *bench) freshLevels(Run) ([]int32, error) { return b.s.Levels() }

// warmUp runs every arm from every root once, untimed, and records and
// logs the megakernel's barriers, lowered labels, run-ahead depth and
// reruns; then the multi-source passes once.
func (b *bench) warmUp() error {
	t0 := time.Now()
	for _, arm := range b.cfg.Arms {
		var m MegakernelStats
		for i := range b.roots {
			r, err := b.runChecked(arm, i)
			if err != nil {
				return err
			}
			m.Levels, m.Barriers, m.Relabels, m.Reruns = m.Levels+r.Levels, m.Barriers+r.Barriers, m.Relabels+r.Relabels, m.Reruns+r.Reruns
			m.MaxAhead = max(m.MaxAhead, r.MaxAhead)
		}
		if arm == ArmMegakernel {
			m.LevelsPerBarrier = float64(m.Levels) / float64(max(m.Barriers, 1))
			m.RelabelsPerVertex = float64(m.Relabels) / float64(len(b.roots)) / float64(max(1, b.g.NumVertices()))
			b.res.Summary.Megakernel = &m
			b.cfg.Log("megakernel: %d levels in %d grid barriers (%.2f levels per barrier), %d labels lowered (%.3f per vertex per root), deepest run-ahead %d, %d level-synchronous reruns",
				m.Levels, m.Barriers, m.LevelsPerBarrier, m.Relabels, m.RelabelsPerVertex, m.MaxAhead, m.Reruns)
		}
	}
	if b.ms != nil {
		if _, err := b.sampleBatch(nil); err != nil {
			return err
		}
	}
	b.cfg.Log("correctness: %d arms x %d roots give levels identical to %s (%s)", len(b.measured()), len(b.roots), b.referenceName(), time.Since(t0).Round(time.Millisecond))
	return nil
}
