package bfs

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
)

// reference establishes every root's reference by the run's check mode,
// then records and logs it: the reference checksum, the check of every
// root, how long it took, and the directions.
func (b *bench) reference() error {
	t0 := time.Now()
	establish, what := b.cpuReference, "the CPU reference BFS (direction-optimizing, on every CPU) from every root, validated the Graph500 way"
	if b.mode == CheckGraph500 {
		establish = b.graph500
		what = fmt.Sprintf("no CPU BFS; the first traversal from every root (arm %s, untimed) validated the Graph500 way (frontier.Validate, on every CPU) and kept as the root's reference", b.referenceArm())
	}
	if err := establish(); err != nil {
		return err
	}
	b.res.ReferenceChecksum = b.referenceChecksum()
	b.recordChecks()
	b.cfg.Log("check %s (%s): %s; %d roots, %d levels in all (%s)", b.mode, b.modeReason(), what, len(b.roots), b.totalLevels(), time.Since(t0).Round(time.Millisecond))
	b.recordDirections()
	return nil
}

// modeReason says why the check mode runs: as configured, or CheckAuto's
// choice by the graph's adjacency entries.
func (b *bench) modeReason() string {
	if b.cfg.Check == b.mode {
		return "as configured"
	}
	than := "at most"
	if b.mode == CheckGraph500 {
		than = "more than"
	}
	return fmt.Sprintf("auto: %d adjacency entries, %s ReferenceMaxEntries (%d)", b.g.NumEdgeEntries(), than, uint64(ReferenceMaxEntries))
}

// recordChecks records the check every root's traversals are held to.
func (b *bench) recordChecks() {
	var arm Arm
	if b.mode == CheckGraph500 {
		arm = b.referenceArm()
	}
	b.res.Checks = make([]RootCheck, len(b.roots))
	for i, r := range b.roots {
		b.res.Checks[i] = RootCheck{Root: r, Check: b.mode, Arm: arm}
	}
}

// referenceName names the reference in messages.
func (b *bench) referenceName() string {
	if b.mode == CheckGraph500 {
		return "the validated first traversal (check graph500)"
	}
	return "the CPU reference"
}

// cpuReference runs the CPU reference BFS from every root (Directions).
func (b *bench) cpuReference() error {
	var err error
	b.stats, b.refs, b.decisions, err = Directions(b.g, b.roots)
	return err
}

// graph500 runs the reference arm once from every root, untimed, and
// adopts each traversal as the root's reference once it is validated: its
// levels are downloaded into a slice of their own, which adopt keeps.
func (b *bench) graph500() error {
	n := len(b.roots)
	b.stats, b.refs, b.decisions = make([]RootStat, n), make([][]int32, n), make([][]planners.BFSDirectionDecision, n)
	arm := b.referenceArm()
	for i := range b.roots {
		if _, err := b.runWith(arm, i, b.freshLevels, b.adopt); err != nil {
			return err
		}
	}
	return nil
}

// referenceArm is the arm whose first traversal from each root is the
// reference under CheckGraph500: the first measured arm whose direction
// decisions are checked (decides), or in a direction-optimizing session
// where none is the host loop (whose decisions are the planner's), or else
// the first measured arm.
func (b *bench) referenceArm() Arm {
	for _, a := range b.cfg.Arms {
		if b.decides(a) {
			return a
		}
	}
	if b.s.Optimizing() {
		return ArmHostLoop
	}
	return b.cfg.Arms[0]
}

// decides reports whether an arm's direction decisions are held to the
// reference's: a direction-optimizing arm's, except the scan wave's.
func (b *bench) decides(arm Arm) bool {
	return b.s.ArmOptimizing(arm) && arm != ArmHostLoopScan
}

// adopt validates the first traversal r from roots[i], whose levels are
// lv, the Graph500 way (frontier.Validate: together its rules make every
// level the exact BFS distance) and makes it the root's reference: its
// levels, their statistics and checksum, and, for an arm that decides
// directions, its decisions. The device's level count must be the levels'.
func (b *bench) adopt(i int, r Run, lv []int32) error {
	root := b.roots[i]
	if err := frontier.Validate(b.g, root, lv); err != nil {
		return fmt.Errorf("arm %s from root %d, the traversal check graph500 validates: %w", r.Arm, root, err)
	}
	st := rootStat(b.g, root, lv)
	if r.Levels != st.Levels {
		return fmt.Errorf("arm %s from root %d: the device counted %d levels, its validated levels have %d. Fix: this is a kernel bug", r.Arm, root, r.Levels, st.Levels)
	}
	b.stats[i], b.refs[i] = st, lv
	if b.decides(r.Arm) {
		b.decisions[i] = r.Decisions
	}
	return nil
}

// check holds a traversal from roots[i] against the reference: its levels
// (compared on every CPU, frontier.FirstDifference), its level count and
// its direction decisions. It keeps nothing of lv.
func (b *bench) check(i int, r Run, lv []int32) error {
	arm, ref := r.Arm, b.referenceName()
	if frontier.FirstDifference(lv, b.refs[i]) >= 0 {
		verr := frontier.Validate(b.g, b.roots[i], lv)
		return fmt.Errorf("arm %s from root %d: the GPU levels differ from %s (%v). Fix: this is a kernel bug; run the arms one at a time to isolate it", arm, b.roots[i], ref, verr)
	}
	if r.Levels != b.stats[i].Levels {
		return fmt.Errorf("arm %s from root %d: the device counted %d levels, %s %d. Fix: this is a kernel bug", arm, b.roots[i], r.Levels, ref, b.stats[i].Levels)
	}
	if b.decides(arm) && !slices.Equal(r.Decisions, b.decisions[i]) {
		return fmt.Errorf("arm %s from root %d: its %d direction decisions differ from the %d of %s. Fix: this is a bug in the kernels' frontier counts or direction rule", arm, b.roots[i], len(r.Decisions), len(b.decisions[i]), ref)
	}
	return nil
}
