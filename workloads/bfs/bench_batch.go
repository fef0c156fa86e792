package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
)

// MultiSourceBench is the multi-source arm's plan and its last run.
type MultiSourceBench struct {
	Plan planners.MultiSourceBFSPlan `json:"plan"`
	Run  MultiSourceRun              `json:"run"`
}

// planBatch plans and allocates the multi-source passes, when configured:
// a batch over the budget is refused with the plan's numbers.
func (b *bench) planBatch() error {
	if b.cfg.Batch == 0 {
		return nil
	}
	m, err := b.s.NewMultiSource(b.cfg.Batch, b.cfg.BatchWidth)
	if err != nil {
		return err
	}
	b.ms = m
	p := m.Plan()
	b.res.MultiSource = &MultiSourceBench{Plan: p}
	b.cfg.Log("multi-source plan: %d roots in %d passes of %d (%d single-root traversals avoided), %d resident bytes of %d (masks %d, levels %d)",
		b.cfg.Batch, len(p.Batches), p.Width, p.AvoidedPasses, p.ResidentBytes, b.s.Plans().Memory.BudgetBytes, p.MaskBytes, p.OutputBytes)
	return nil
}

// sampleBatch is one multi-source run from every root: every root's levels
// are read back after its pass (outside the timed region) and checked
// against the reference, on every CPU (frontier.FirstDifference). t, when
// not nil, takes the run's times.
func (b *bench) sampleBatch(t *armTimes) (Sample, error) {
	run, levels, err := b.ms.Run(b.roots, true)
	if err != nil {
		return Sample{}, err
	}
	for i := range b.roots {
		if frontier.FirstDifference(levels[i], b.refs[i]) >= 0 {
			return Sample{}, fmt.Errorf("multi-source BFS from root %d (roots[%d]): the GPU levels differ from %s. Fix: this is a kernel bug; compare with frontier.MultiSourceBFS", b.roots[i], i, b.referenceName())
		}
	}
	b.res.MultiSource.Run = run
	row := Sample{Arm: ArmMultiSource, WallNs: float64(run.WallNs), DeviceNs: float64(run.DeviceNs), Checksum: b.res.ReferenceChecksum,
		TimedUploads: run.TimedUploads, TimedAllocations: run.TimedAllocations, TimedHostSyncs: run.TimedHostSyncs}
	if t != nil {
		t.wall = append(t.wall, row.WallNs)
		t.device = append(t.device, row.DeviceNs)
	}
	return row, nil
}
