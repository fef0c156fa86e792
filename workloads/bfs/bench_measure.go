package bfs

import (
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// armTimes are one arm's timed samples.
type armTimes struct {
	wall, device []float64
	perRoot      [][]float64
}

// measured lists the arms the samples measure: the configured ones, then
// multi-source passes when configured.
func (b *bench) measured() []string {
	var out []string
	for _, a := range b.cfg.Arms {
		out = append(out, string(a))
	}
	if b.ms != nil {
		out = append(out, ArmMultiSource)
	}
	return out
}

// measure takes the timed samples, the arms interleaved.
func (b *bench) measure() error {
	arms := b.measured()
	times := make([]armTimes, len(arms))
	for a := range times {
		times[a].perRoot = make([][]float64, len(b.roots))
	}
	err := harness.Interleave(b.g.Name, arms, b.cfg.Samples, b.cfg.Progress, func(smp, a int) error {
		var row Sample
		var err error
		if arms[a] == ArmMultiSource {
			times[a].perRoot = nil
			row, err = b.sampleBatch(&times[a])
		} else {
			row, err = b.sample(Arm(arms[a]), &times[a])
		}
		if err != nil {
			return err
		}
		row.Index = uint64(smp)
		b.res.Samples = append(b.res.Samples, row)
		return nil
	})
	if err != nil {
		return err
	}
	for a, arm := range arms {
		b.res.Summary.Arms = append(b.res.Summary.Arms, summarize(Arm(arm), times[a].wall, times[a].device, times[a].perRoot, b.stats, b.totalLevels()))
	}
	return nil
}

// sample is one traversal from every root with arm.
func (b *bench) sample(arm Arm, t *armTimes) (Sample, error) {
	row := Sample{Arm: string(arm)}
	sums := make([]uint64, len(b.roots))
	for i := range b.roots {
		r, err := b.runChecked(arm, i)
		if err != nil {
			return row, err
		}
		sums[i] = b.stats[i].Checksum
		row.WallNs += float64(r.WallNs)
		row.DeviceNs += float64(r.DeviceNs)
		row.TimedUploads += r.TimedUploads
		row.TimedAllocations += r.TimedAllocations
		row.TimedHostSyncs += r.TimedHostSyncs
		t.perRoot[i] = append(t.perRoot[i], float64(r.WallNs))
	}
	row.Checksum = CombinedChecksum(sums)
	t.wall = append(t.wall, row.WallNs)
	t.device = append(t.device, row.DeviceNs)
	return row, nil
}

// copyCeiling measures the copy bandwidth in the same run.
func (b *bench) copyCeiling() error {
	if b.cfg.CopyBytes == 0 {
		return nil
	}
	budget, err := b.s.x.Budget()
	if err != nil {
		return err
	}
	size := min(b.cfg.CopyBytes, (budget-min(budget, b.s.x.ResidentBytes()))/3)
	runs, err := b.s.CopyCeiling(size, max(b.cfg.Samples, minCopySamples))
	if err != nil {
		return err
	}
	var bw []float64
	for i, c := range runs {
		b.res.Samples = append(b.res.Samples, Sample{Arm: "copy-ceiling", Index: uint64(i), WallNs: float64(c.WallNs),
			DeviceNs: float64(c.DeviceNs), Checksum: "copy", BytesMoved: c.Bytes})
		if c.DeviceNs > 0 {
			bw = append(bw, float64(c.Bytes)/float64(c.DeviceNs))
		}
	}
	b.res.Summary.CopyGBps = stats.Median(bw)
	b.cfg.Log("copy ceiling: %d MiB buffers, %.1f GB/s (median of %d, read + write)", size>>20, b.res.Summary.CopyGBps, len(bw))
	return nil
}

// barrierFloor measures the megakernel's barrier alone, if it is measured.
func (b *bench) barrierFloor() error {
	levels := b.cfg.BarrierLevels
	ns, median, err := harness.Floor(b.cfg.Arms, ArmMegakernel, levels, func(n int) ([]uint64, error) { return b.s.BarrierFloor(n, barrierFloorLaunches) })
	if err != nil || ns == nil {
		return err
	}
	b.res.Summary.BarrierFloorNs = median
	b.cfg.Log("megakernel barrier floor: %s per level (median of %d launches of %d barriers, %d blocks)",
		stats.FormatNs(b.res.Summary.BarrierFloorNs), len(ns), levels, b.res.Plans.MegakernelGrid.GridBlocks)
	return nil
}

// sessions runs one resident session batch per arm over every root and
// holds the session plan against the telemetry; the batch's one output
// readback (the last root's levels) is checked against the reference.
func (b *bench) sessions() error {
	last := len(b.roots) - 1
	for _, arm := range b.cfg.Arms {
		res, err := b.s.Batch(arm, b.roots)
		if err != nil {
			return err
		}
		if frontier.FirstDifference(res.Levels, b.refs[last]) >= 0 {
			return fmt.Errorf("arm %s batch: the last root's levels differ from %s. Fix: this is a kernel bug", arm, b.referenceName())
		}
		b.res.Sessions = append(b.res.Sessions, ArmSession{Arm: arm, Check: res.Check})
		if m := res.Check.Mismatches(); len(m) > 0 {
			b.res.Summary.Notes = append(b.res.Summary.Notes, fmt.Sprintf("session plan of %s does not match the telemetry: %v", arm, m))
		}
	}
	return nil
}

// summarize fills the summary's totals and derived columns.
func (b *bench) summarize(x *executor.Executor) {
	sum := &b.res.Summary
	dev := x.Device()
	sum.Workload, sum.Nodes, sum.Edges = b.g.Name, b.g.NumVertices(), uint64(b.g.NumEdgeEntries()/2)
	sum.Roots, sum.TotalLevels, sum.Samples = b.stats, b.totalLevels(), b.cfg.Samples
	sum.Device = fmt.Sprintf("%s (cc %d.%d)", dev.Name, dev.Major, dev.Minor)
	sum.finish()
	if p := b.res.ArmPlan.Arm; sum.FastestArm != "" && slices.Contains(b.cfg.Arms, p) && string(p) != sum.FastestArm {
		sum.Notes = append(sum.Notes, fmt.Sprintf("the arm plan chose %s but %s measured fastest", p, sum.FastestArm))
	}
}
