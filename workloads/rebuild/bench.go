package rebuild

import (
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// The benchmark protocol's defaults.
const (
	// DefaultSamples is the timed samples per GPU arm.
	DefaultSamples = harness.DefaultSamples
	// DefaultCPUSamples is the timed samples of the Go reference.
	DefaultCPUSamples = 10
	// DefaultFloorRounds is the rounds each launch of the persistent
	// kernel's round floor crosses; floorLaunches is its launches.
	DefaultFloorRounds = 1000
	floorLaunches      = 10
	// MaxRoundsReference is the most e-nodes the benchmark runs
	// egraph.RebuildRounds on, to check the arms' rounds: it takes minutes
	// at 10^7 e-nodes. Beyond it the arms' rounds must agree with each
	// other.
	MaxRoundsReference = 1 << 21
)

// Arm names of the benchmark beyond the GPU arms.
const (
	// ArmCPU is the Go reference (egraph.Rebuild) timed on the host.
	ArmCPU = "go-reference"
	// ArmEgg is the egg peer's T2: egg 0.9.5's unions and rebuild().
	ArmEgg = "egg"
)

// DefaultArms are the GPU arms measured unless the configuration names
// others: every arm, the full rounds' and the incremental rounds', so that
// the arm plan chooses among them all.
func DefaultArms() []Arm { return Arms() }

// BenchConfig is one run of the benchmark protocol.
type BenchConfig struct {
	// Session configures the sessions the arms run on; its Incremental is
	// set by the bench: the full-round arms run on a session without it,
	// the incremental arms on one with it (see Bench).
	Session Config
	// Arms are the GPU arms measured (nil: DefaultArms), each once.
	Arms []Arm
	// Samples is the timed samples per GPU arm (0: DefaultSamples).
	Samples int
	// CPUSamples is the timed samples of the Go reference (0 skips it).
	CPUSamples int
	// FloorRounds is the rounds per launch of the persistent kernel's
	// round floor (0 skips it).
	FloorRounds int
	// Structural runs the structural-equivalence reference path on the
	// input's image and checks it against its CPU reference.
	Structural bool
	// InputSHA256 is the hex SHA-256 of the input (the dump file, or the
	// dump of a generated e-graph): part of every sample's checksum.
	InputSHA256 string
	// Peer, when set, runs the egg peer on the same dump.
	Peer *PeerConfig
	// Reporting is the run's progress and log.
	harness.Reporting
	// roundsLimit, in tests, replaces MaxRoundsReference.
	roundsLimit int
}

// Sample is one timed sample of one arm: one rebuild. Its Checksum
// identifies the partition up to renaming and the input (SampleChecksum):
// every arm's must be the reference's. BytesMoved stays 0.
type Sample = harness.Sample

// ArmLaunches holds an arm's launches (and the persistent kernel's
// barriers) per round, as planned and as executed.
type ArmLaunches struct {
	Arm              Arm     `json:"arm"`
	PlannedLaunches  float64 `json:"planned_launches_per_round"`
	ExecutedLaunches float64 `json:"executed_launches_per_round"`
	PlannedBarriers  float64 `json:"planned_barriers_per_round,omitempty"`
	ExecutedBarriers float64 `json:"executed_barriers_per_round,omitempty"`
}

// BenchResult is everything one benchmark run measured and planned.
type BenchResult struct {
	Summary Summary `json:"summary"`
	// Samples are every GPU arm's samples, then the Go reference's, then
	// the egg peer's (its T2).
	Samples []Sample `json:"-"`
	// FloorSamples are the round floor's launches (arm persistent), each
	// over FloorRounds rounds.
	FloorSamples []Sample `json:"-"`
	FloorRounds  int      `json:"floor_rounds,omitempty"`
	// ReferenceChecksum is the Go reference's sample checksum.
	ReferenceChecksum string                `json:"reference_checksum"`
	Reference         *egraph.RebuildResult `json:"reference"`
	// Plans are the plans of the full rounds' session, or of the
	// incremental rounds' when no full-round arm is measured;
	// IncrementalPlans are the incremental rounds' session's beside a
	// full rounds' one.
	Plans            Plans  `json:"plans"`
	IncrementalPlans *Plans `json:"incremental_plans,omitempty"`
	// ArmPlan is the arm plan the bench holds against the fastest arm:
	// ArmPlans has one per family of rounds measured (the full rounds'
	// first), and ArmPlanNote says how ArmPlan was chosen among them.
	ArmPlan     ArmPlan          `json:"arm_plan"`
	ArmPlans    []ArmPlan        `json:"arm_plans"`
	ArmPlanNote string           `json:"arm_plan_note"`
	Launches    []ArmLaunches    `json:"launches"`
	Structural  *StructuralCheck `json:"structural,omitempty"`
	Peer        []PeerSample     `json:"peer,omitempty"`
}

// SampleChecksum is a sample's checksum: the partition's (up to renaming)
// and the first 16 hex digits of the input's SHA-256.
func SampleChecksum(partition, inputSHA256 string) string {
	in := inputSHA256
	if len(in) > 16 {
		in = in[:16]
	}
	if in == "" {
		in = "unknown"
	}
	return partition + "-in-" + in
}

// bench is the state of one run.
type bench struct {
	cfg  BenchConfig
	g    *egraph.Graph
	name string
	// full and inc are the full and the incremental rounds' sessions (nil
	// when none of their arms is measured).
	full, inc *Session
	worklist  *egraph.RebuildResult
	rounds    *egraph.RebuildResult
	partition string
	// armRounds is the rounds the first checked run took, which every
	// other run must take when there is no data-parallel reference.
	armRounds int
	res       *BenchResult
}

// Bench runs the benchmark protocol on g (named name): the CPU references
// (egraph.Rebuild and RebuildRounds); the sessions (openSessions: one for
// the full rounds, one for the incremental rounds, side by side); the arm
// plan from a measured profile of each; every arm once, untimed, with its
// partition, counts, rounds and e-node table checked against the
// reference; the structural-equivalence reference path against its CPU
// reference; Samples timed samples per arm, interleaved (the arms' order
// rotates every sample, across both sessions), each one's partition read
// back and checked again outside the timed region; the Go reference's
// timed samples; the persistent kernel's round floor; and the egg peer on
// the same dump.
func Bench(x *executor.Executor, g *egraph.Graph, name string, cfg BenchConfig) (*BenchResult, error) {
	if cfg.Arms == nil {
		cfg.Arms = DefaultArms()
	}
	if err := checkBenchArms(name, cfg.Arms); err != nil {
		return nil, err
	}
	harness.Fill(&cfg.Samples, DefaultSamples)
	cfg.Log = harness.LogOr(cfg.Log)
	b := &bench{cfg: cfg, g: g, name: name, res: &BenchResult{}}
	if err := b.reference(); err != nil {
		return nil, err
	}
	defer b.closeSessions()
	if err := b.openSessions(x); err != nil {
		return nil, err
	}
	for _, step := range []func() error{b.planArm, b.warmUp, b.structural, b.measure, b.measureCPU, b.roundFloor, b.peer} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.summarize(x)
	return b.res, nil
}

// reference runs the CPU references once.
func (b *bench) reference() error {
	t0 := time.Now()
	var err error
	if b.worklist, err = egraph.Rebuild(b.g); err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	took := time.Since(t0)
	rounds := "not run (the arms' rounds must agree)"
	limit := MaxRoundsReference
	if b.cfg.roundsLimit != 0 {
		limit = b.cfg.roundsLimit
	}
	if b.g.NodeCount() <= limit {
		if b.rounds, err = egraph.RebuildRounds(b.g); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		rounds = fmt.Sprint(b.rounds.Rounds)
	}
	b.partition = PartitionChecksum(b.worklist.NodeClasses(b.g))
	b.res.ReferenceChecksum = SampleChecksum(b.partition, b.cfg.InputSHA256)
	b.res.Reference = b.worklist
	b.cfg.Log("CPU reference: %d e-nodes, %d classes -> %d, %d distinct e-nodes, data-parallel rounds %s (worklist rebuild in %s)",
		b.g.NodeCount(), b.worklist.ClassIDs, b.worklist.Classes, b.worklist.DistinctNodes, rounds, took.Round(time.Microsecond))
	return nil
}

// planArm profiles the e-graph on each session and plans its arm
// (ProfileArm: the topology picks how the family's rounds are driven),
// then chooses between the families (choosePlan).
func (b *bench) planArm() error {
	for _, s := range b.sessions() {
		p, err := s.ProfileArm()
		if err != nil {
			return err
		}
		b.res.ArmPlans = append(b.res.ArmPlans, p)
		b.cfg.Log("arm plan of the %s rounds: %s", roundsName(p.Arm), p.Describe("round", p.Profile.RoundNs))
	}
	b.res.ArmPlan, b.res.ArmPlanNote = choosePlan(b.res.ArmPlans)
	b.cfg.Log("arm plan: %s (topology %s; %s)", b.res.ArmPlan.Arm, b.res.ArmPlan.Decision.Topology, b.res.ArmPlanNote)
	return nil
}

// roundsName names the family of rounds an arm runs, "full" or
// "incremental".
func roundsName(a Arm) string {
	if a.IsIncremental() {
		return "incremental"
	}
	return "full"
}

// profiledNs is the profiled host-loop rebuild of a plan: its rounds at
// their measured cost.
func profiledNs(p ArmPlan) float64 { return p.Profile.RoundNs * float64(p.Profile.Rounds) }

// choosePlan chooses the arm plan among one plan per family of rounds
// measured: the family whose profiled host-loop rebuild is the cheaper,
// driven as its topology says. The note says why; with one family it says
// that the other was not measured, so the plan could not consider it.
func choosePlan(plans []ArmPlan) (ArmPlan, string) {
	switch len(plans) {
	case 0:
		return ArmPlan{}, "no arm measured"
	case 1:
		p := plans[0]
		other := map[bool]string{false: "incremental", true: "full"}[p.Arm.IsIncremental()]
		return p, fmt.Sprintf("the %s rounds' arms are not measured, so the plan chooses among the %s rounds' arms alone", other, roundsName(p.Arm))
	}
	best, other := plans[0], plans[1]
	if profiledNs(other) < profiledNs(best) {
		best, other = other, best
	}
	return best, fmt.Sprintf("the %s rounds' profiled host-loop rebuild took %s against the %s rounds' %s",
		roundsName(best.Arm), stats.FormatNs(profiledNs(best)), roundsName(other.Arm), stats.FormatNs(profiledNs(other)))
}

// runChecked runs one rebuild and checks its partition, counts and rounds
// against the reference (the readback and the check are outside the timed
// region, and take time linear in the classes); full reads the whole
// output and also checks union compaction's rules and the deduplicated
// e-node table.
func (b *bench) runChecked(arm Arm, full bool) (Run, error) {
	s := b.session(arm)
	r, err := s.Run(arm)
	if err != nil {
		return r, err
	}
	var res *egraph.RebuildResult
	var out *Output
	if full {
		if out, err = s.Output(r); err == nil {
			res = out.Result
		}
	} else {
		res, err = s.Partition(r)
	}
	if err != nil {
		return r, err
	}
	if b.armRounds == 0 {
		b.armRounds = r.Rounds
	}
	if err := CheckAgainst(res, b.worklist, b.rounds); err != nil {
		return r, fmt.Errorf("arm %s on %s: %w", arm, b.name, err)
	}
	if r.Rounds != b.armRounds {
		return r, fmt.Errorf("arm %s on %s took %d rounds, an earlier run %d. Fix: this is a kernel bug; run the arms one at a time to isolate it", arm, b.name, r.Rounds, b.armRounds)
	}
	if full {
		if err := CheckNodeTable(b.g, res.Labels, out.Nodes); err != nil {
			return r, fmt.Errorf("arm %s on %s: %w", arm, b.name, err)
		}
	}
	return r, nil
}

// warmUp runs every arm once, untimed, fully checked (above
// MaxRoundsReference e-nodes, where the e-node table's check takes seconds,
// the first arm fully and the others as samples are), and records its
// launches per round against the plan's.
func (b *bench) warmUp() error {
	t0 := time.Now()
	for i, arm := range b.cfg.Arms {
		r, err := b.runChecked(arm, i == 0 || b.g.NodeCount() <= MaxRoundsReference)
		if err != nil {
			return err
		}
		l := b.launches(r)
		b.res.Launches = append(b.res.Launches, l)
		b.cfg.Log("%s: %d rounds (%d launched), launches per round planned %.3g, executed %.3g%s", arm, r.Rounds, r.RoundsLaunched,
			l.PlannedLaunches, l.ExecutedLaunches, barrierText(l))
	}
	b.cfg.Log("correctness: %d arms give the CPU reference's partition, counts and rounds, and the e-node table checks (%s)", len(b.cfg.Arms), time.Since(t0).Round(time.Millisecond))
	return nil
}

func barrierText(l ArmLaunches) string {
	if l.Arm.Driver() != ArmPersistent {
		return ""
	}
	return fmt.Sprintf("; grid barriers per round planned %.3g, executed %.3g", l.PlannedBarriers, l.ExecutedBarriers)
}

// launches compares a run's launches per round with its plan: the host
// loop's are the waves of every stage's pass, the device loop's the fusion
// plan's groups, the persistent kernel's one launch for every round, with
// a barrier per group; the incremental arms' are incLaunches'.
func (b *bench) launches(r Run) ArmLaunches {
	if r.Arm.IsIncremental() {
		return incLaunches(r)
	}
	p := b.full.Plans()
	l := ArmLaunches{Arm: r.Arm, ExecutedLaunches: r.LaunchesPerRound()}
	switch r.Arm {
	case ArmHostLoop:
		for _, st := range RoundStages() {
			l.PlannedLaunches += float64(len(b.full.passLaunches(st, 1)))
		}
	case ArmDeviceLoop:
		l.PlannedLaunches = float64(p.Fusion.LaunchCount)
	case ArmPersistent:
		l.PlannedLaunches = 1 / float64(max(r.Rounds, 1))
		l.PlannedBarriers = float64(p.Fusion.LaunchCount)
		l.ExecutedBarriers = float64(r.Barriers) / float64(max(r.Rounds, 1))
	}
	return l
}

// incLaunches is launches for an incremental arm: the loops launch
// KernelIncrementalStep once per phase, IncPhases a round (the
// initialisation and the compaction outside the rounds); the persistent
// kernel is one launch with a grid barrier after the initialisation and
// after each of a round's IncPhases phases.
func incLaunches(r Run) ArmLaunches {
	rounds := float64(max(r.Rounds, 1))
	l := ArmLaunches{Arm: r.Arm, ExecutedLaunches: r.LaunchesPerRound(), PlannedLaunches: IncPhases}
	if r.Arm.Driver() == ArmPersistent {
		l.PlannedLaunches = 1 / rounds
		l.PlannedBarriers = float64(1+IncPhases*r.Rounds) / rounds
		l.ExecutedBarriers = float64(r.Barriers) / rounds
	}
	return l
}

// structural runs the structural-equivalence reference path, when asked,
// and fails if the GPU and the CPU disagree.
func (b *bench) structural() error {
	if !b.cfg.Structural {
		return nil
	}
	c, err := b.sessions()[0].StructuralEquivalences()
	if err != nil {
		return err
	}
	b.res.Structural = &c
	if !c.Same() {
		return fmt.Errorf("structural equivalence of %s: the GPU found %d exact, %d redundant and %d rejected pairs (%d equivalences), the CPU %d, %d and %d (%d). Fix: this is a kernel bug; report it",
			b.name, c.GPU.ExactPairCount, c.GPU.RedundantPairCount, c.GPU.RejectedCandidatePairCount, len(c.GPU.Equivalences),
			c.CPU.ExactPairCount, c.CPU.RedundantPairCount, c.CPU.RejectedCandidatePairCount, len(c.CPU.Equivalences))
	}
	b.cfg.Log("structural equivalence (reference path): %d buckets, %d candidate pairs in %d waves: %d exact, %d redundant, %d rejected, identical on the GPU and the CPU",
		c.Buckets, c.CandidatePairs, c.Waves, c.GPU.ExactPairCount, c.GPU.RedundantPairCount, c.GPU.RejectedCandidatePairCount)
	return nil
}
