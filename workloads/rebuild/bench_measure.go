package rebuild

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// measure takes the GPU arms' timed samples, interleaved across both
// sessions: each sample of an incremental arm is checked against the
// reference as every other arm's is.
func (b *bench) measure() error {
	return harness.Interleave(b.name, harness.Names(b.cfg.Arms), b.cfg.Samples, b.cfg.Progress, func(smp, a int) error {
		arm := b.cfg.Arms[a]
		r, err := b.runChecked(arm, false)
		if err != nil {
			return err
		}
		b.res.Samples = append(b.res.Samples, Sample{Arm: string(arm), Index: uint64(smp), WallNs: float64(r.WallNs),
			DeviceNs: float64(r.DeviceNs), Checksum: b.res.ReferenceChecksum, TimedUploads: r.TimedUploads,
			TimedAllocations: r.TimedAllocations, TimedHostSyncs: r.TimedHostSyncs})
		return nil
	})
}

// measureCPU times the Go reference, each rebuild's partition checked.
func (b *bench) measureCPU() error {
	for i := range b.cfg.CPUSamples {
		t0 := time.Now()
		res, err := egraph.Rebuild(b.g)
		ns := float64(time.Since(t0))
		if err != nil {
			return err
		}
		if firstDiff(res.Labels, b.worklist.Labels) >= 0 {
			return fmt.Errorf("the Go reference gave another partition on sample %d. Fix: this is a bug in egraph.Rebuild; report it", i)
		}
		b.res.Samples = append(b.res.Samples, Sample{Arm: ArmCPU, Index: uint64(i), WallNs: ns, Checksum: b.res.ReferenceChecksum})
	}
	if b.cfg.CPUSamples > 0 {
		b.cfg.Log("Go reference: %d samples, median %s", b.cfg.CPUSamples, stats.FormatNs(stats.Median(b.wall(ArmCPU))))
	}
	return nil
}

// roundFloor measures the persistent kernel's round floor (of the full
// rounds: ArmPersistent's grid and barriers), if it is measured.
func (b *bench) roundFloor() error {
	rounds := b.cfg.FloorRounds
	ns, median, err := harness.Floor(b.cfg.Arms, ArmPersistent, rounds, func(n int) ([]uint64, error) { return b.full.RoundFloor(n, floorLaunches) })
	if err != nil || ns == nil {
		return err
	}
	for i, v := range ns {
		b.res.FloorSamples = append(b.res.FloorSamples, Sample{Arm: string(ArmPersistent), Index: uint64(i), WallNs: float64(v), DeviceNs: float64(v), Checksum: "round-floor"})
	}
	b.res.Summary.RoundFloorNs, b.res.FloorRounds = median, rounds
	b.cfg.Log("persistent round floor: %s per round (%d grid barriers, median of %d launches of %d rounds, %d blocks)",
		stats.FormatNs(b.res.Summary.RoundFloorNs), b.res.Plans.Fusion.LaunchCount, len(ns), rounds, b.res.Plans.PersistentGrid.GridBlocks)
	return nil
}

// peer runs the egg peer, if configured: its partition must be the
// reference's, and each repetition's T2 is a sample of arm egg.
func (b *bench) peer() error {
	if b.cfg.Peer == nil {
		return nil
	}
	cfg := *b.cfg.Peer
	cfg.DumpSHA256 = b.cfg.InputSHA256
	ps, err := RunEggPeer(cfg, b.cfg.Log)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Checksum != b.partition || p.DistinctNodes >= 0 && p.DistinctNodes != b.worklist.DistinctNodes {
			return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("egg's partition (%s, %d distinct e-nodes) is not the reference's (%s, %d)", p.Checksum, p.DistinctNodes, b.partition, b.worklist.DistinctNodes),
				Fix: "compare the two with gpuplan egraph rebuild --check"}
		}
		b.res.Samples = append(b.res.Samples, Sample{Arm: ArmEgg, Index: uint64(p.Index), WallNs: p.T2Ns, Checksum: SampleChecksum(p.Checksum, p.DumpSHA256)})
	}
	b.res.Peer = ps
	return nil
}

// wall returns the wall times of an arm's samples.
func (b *bench) wall(arm string) []float64 {
	var out []float64
	for _, s := range b.res.Samples {
		if s.Arm == arm {
			out = append(out, s.WallNs)
		}
	}
	return out
}

// ArmSummary condenses one arm's samples.
type ArmSummary struct {
	Arm string `json:"arm"`
	// External marks a peer tool (egg).
	External bool `json:"external,omitempty"`
	// MedianNs and MedianDeviceNs are the medians of one rebuild.
	MedianNs       float64 `json:"median_ns"`
	MedianDeviceNs float64 `json:"median_device_ns,omitempty"`
	// RoundNs is the median over the rounds.
	RoundNs float64 `json:"per_round_ns"`
	// NodesPerSecond is the e-nodes over the median time.
	NodesPerSecond float64 `json:"nodes_per_second"`
	// Speedups of this arm over the host loop, the Go reference and egg's
	// T2 (medians).
	SpeedupVsHostLoop float64 `json:"speedup_vs_host_loop,omitempty"`
	SpeedupVsCPU      float64 `json:"speedup_vs_go_reference,omitempty"`
	SpeedupVsEgg      float64 `json:"speedup_vs_egg_t2,omitempty"`
}

// Summary is the result of one benchmark run.
type Summary struct {
	Workload      string `json:"workload"`
	Nodes         int    `json:"nodes"`
	ChildSlots    int    `json:"child_slots"`
	ClassIDs      int    `json:"class_ids"`
	UnionPairs    int    `json:"union_pairs"`
	Classes       int    `json:"classes"`
	DistinctNodes int    `json:"distinct_nodes"`
	Rounds        int    `json:"rounds"`
	Samples       int    `json:"samples"`
	Device        string `json:"device"`
	// RoundFloorNs is the persistent kernel's per-round cost with no work:
	// a round's grid barriers on its grid.
	RoundFloorNs float64 `json:"round_floor_ns,omitempty"`
	// EggT1Ns is the median of egg's rebuild() alone (T2 is arm egg).
	EggT1Ns float64      `json:"egg_t1_ns,omitempty"`
	Arms    []ArmSummary `json:"arms"`
	// FastestArm is the GPU arm with the smallest median, to hold against
	// the arm plan's choice.
	FastestArm string   `json:"fastest_arm"`
	Notes      []string `json:"notes,omitempty"`
}

// summarize fills the summary from the samples.
func (b *bench) summarize(x *executor.Executor) {
	sum := &b.res.Summary
	dev := x.Device()
	w := b.worklist
	sum.Workload, sum.Nodes, sum.ChildSlots, sum.ClassIDs, sum.UnionPairs = b.name, w.Nodes, len(b.g.Children), w.ClassIDs, w.UnionPairs
	sum.Classes, sum.DistinctNodes, sum.Rounds, sum.Samples = w.Classes, w.DistinctNodes, b.armRounds, b.cfg.Samples
	sum.Device = fmt.Sprintf("%s (cc %d.%d)", dev.Name, dev.Major, dev.Minor)
	names := make([]string, 0, len(b.cfg.Arms)+2)
	for _, a := range b.cfg.Arms {
		names = append(names, string(a))
	}
	names = append(names, ArmCPU, ArmEgg)
	for _, n := range names {
		ws := b.wall(n)
		if len(ws) == 0 {
			continue
		}
		a := ArmSummary{Arm: n, External: n == ArmEgg, MedianNs: stats.Median(ws), MedianDeviceNs: stats.Median(b.device(n))}
		a.RoundNs = a.MedianNs / float64(max(sum.Rounds, 1))
		a.NodesPerSecond = float64(sum.Nodes) / (a.MedianNs / 1e9)
		sum.Arms = append(sum.Arms, a)
	}
	if len(b.res.Peer) > 0 {
		var t1 []float64
		for _, p := range b.res.Peer {
			t1 = append(t1, p.T1Ns)
		}
		sum.EggT1Ns = stats.Median(t1)
	}
	sum.finish()
	if p := b.res.ArmPlan.Arm; sum.FastestArm != "" && slices.Contains(b.cfg.Arms, p) && string(p) != sum.FastestArm {
		sum.Notes = append(sum.Notes, fmt.Sprintf("the arm plan chose %s but %s measured fastest", p, sum.FastestArm))
	}
	for _, l := range b.res.Launches {
		if d := l.Arm.Driver(); d == ArmDeviceLoop && l.ExecutedLaunches != l.PlannedLaunches || d == ArmPersistent && l.ExecutedBarriers != l.PlannedBarriers {
			sum.Notes = append(sum.Notes, fmt.Sprintf("%s executed %.3g launches (%.3g barriers) per round against the plan's %.3g (%.3g)", l.Arm, l.ExecutedLaunches, l.ExecutedBarriers, l.PlannedLaunches, l.PlannedBarriers))
		}
	}
}

// device returns the device times of an arm's samples (none for arms
// without device time).
func (b *bench) device(arm string) []float64 {
	var out []float64
	for _, s := range b.res.Samples {
		if s.Arm == arm && s.DeviceNs > 0 {
			out = append(out, s.DeviceNs)
		}
	}
	return out
}

// finish adds the speedups and the fastest GPU arm.
func (sum *Summary) finish() {
	base := map[string]float64{}
	var best float64
	for _, a := range sum.Arms {
		base[a.Arm] = a.MedianNs
		if _, err := ParseArm(a.Arm); err == nil && a.MedianNs > 0 && (best == 0 || a.MedianNs < best) {
			best, sum.FastestArm = a.MedianNs, a.Arm
		}
	}
	ratio := func(num, den float64) float64 {
		if num > 0 && den > 0 {
			return num / den
		}
		return 0
	}
	for i := range sum.Arms {
		a := &sum.Arms[i]
		if _, err := ParseArm(a.Arm); err != nil {
			continue
		}
		a.SpeedupVsHostLoop = ratio(base[string(ArmHostLoop)], a.MedianNs)
		a.SpeedupVsCPU = ratio(base[ArmCPU], a.MedianNs)
		a.SpeedupVsEgg = ratio(base[ArmEgg], a.MedianNs)
	}
}
