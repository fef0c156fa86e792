package bfs

import (
	"github.com/gpuplan/gpuplan/internal/stats"
)

// ArmSummary condenses one arm's samples.
type ArmSummary struct {
	Arm string `json:"arm"`
	// MedianSampleNs is the median wall time of one sample (all roots).
	MedianSampleNs float64 `json:"median_sample_ns"`
	// MedianDeviceNs is the median device time of one sample.
	MedianDeviceNs float64 `json:"median_device_ns"`
	// MedianRootNs is the median over roots of each root's median time.
	MedianRootNs float64 `json:"median_root_ns"`
	// LevelNs is the median sample time over the levels of all roots.
	LevelNs float64 `json:"per_level_ns"`
	// GTEPS is the harmonic mean over roots of traversed edges / median
	// time, in 10^9 edges per second.
	GTEPS float64 `json:"gteps_hmean"`
	// SpeedupVsHostLoop is host-loop's median sample time over this arm's.
	SpeedupVsHostLoop float64 `json:"speedup_vs_host_loop,omitempty"`
	// ModeledGBps is the modeled bytes of one sample over its median time.
	ModeledGBps float64 `json:"modeled_gbps"`
	// CeilingFraction is ModeledGBps over the copy ceiling.
	CeilingFraction float64 `json:"ceiling_fraction,omitempty"`
}

// Summary is the result of one benchmark run.
type Summary struct {
	Workload    string     `json:"workload"`
	Nodes       int        `json:"nodes"`
	Edges       uint64     `json:"edges"`
	Roots       []RootStat `json:"roots"`
	TotalLevels uint64     `json:"total_levels"`
	Samples     int        `json:"samples"`
	Device      string     `json:"device"`
	CopyGBps    float64    `json:"copy_ceiling_gbps"`
	// BarrierFloorNs is the megakernel's per-level cost with no work: one
	// level barrier on its grid.
	BarrierFloorNs float64      `json:"barrier_floor_ns,omitempty"`
	Arms           []ArmSummary `json:"arms"`
	// FastestArm is the arm with the smallest median sample time, to hold
	// against the arm plan's choice (gpuplan's single-root arms only).
	FastestArm string `json:"fastest_arm"`
	// Megakernel is the megakernel's warm-up traversals: levels per grid
	// barrier, labels lowered per vertex, deepest run-ahead.
	Megakernel *MegakernelStats `json:"megakernel,omitempty"`
	// DirectionLevels and BottomUpLevels count every root's levels and
	// those that ran bottom-up (0 when every level is top-down).
	DirectionLevels int `json:"direction_levels,omitempty"`
	BottomUpLevels  int `json:"bottom_up_levels,omitempty"`
	// MultiSourceSpeedup is the fastest single-root arm's median sample
	// time over the multi-source arm's: the throughput of the roots in
	// passes against one traversal per root.
	MultiSourceSpeedup float64 `json:"multi_source_speedup,omitempty"`
	// GunrockSpeedup is Gunrock's median sample time over the fastest
	// single-root arm's, on the same file and roots.
	GunrockSpeedup float64 `json:"gunrock_speedup,omitempty"`
	// PeerSpeedups is every peer's median sample time over the fastest
	// single-root arm's, by peer.
	PeerSpeedups map[string]float64 `json:"peer_speedups,omitempty"`
	Notes        []string           `json:"notes,omitempty"`
}

// MegakernelStats are the megakernel's traversals from every root.
type MegakernelStats struct {
	Levels   int `json:"levels"`
	Barriers int `json:"barriers"`
	// LevelsPerBarrier is the levels over the grid barriers: 1 when
	// level-synchronous, more when blocks ran ahead.
	LevelsPerBarrier float64 `json:"levels_per_barrier"`
	// Relabels are the claims that lowered a label; RelabelsPerVertex is
	// them per root and per vertex of the graph.
	Relabels          uint64  `json:"relabels"`
	RelabelsPerVertex float64 `json:"relabels_per_vertex"`
	// MaxAhead is the deepest run-ahead of any step.
	MaxAhead int `json:"max_ahead"`
	Reruns   int `json:"reruns"`
}

// modeledBytes is the fewest device bytes a top-down BFS from these roots
// moves: each traversed adjacency entry read once (4 B) with one 4-byte
// level check, and per reached vertex its two offsets (8 B), its level
// write (4 B) and one 8-byte queue item written and read (16 B).
func modeledBytes(roots []RootStat) float64 {
	var b float64
	for _, r := range roots {
		b += 8*2*float64(r.Edges) + 28*float64(r.Reached)
	}
	return b
}

// RootRates returns, from every root's wall times (perRoot[i] holds root
// i's, roots[i] its statistics), the median over roots of each root's
// median time and the harmonic mean over roots of edges per ns (GTEPS: 0
// when a root has no edges or no positive median).
func RootRates(perRoot [][]float64, roots []RootStat) (median, gteps float64) {
	medians := make([]float64, len(perRoot))
	var inv float64
	ok := true
	for i, ts := range perRoot {
		medians[i] = stats.Median(ts)
		if medians[i] <= 0 || roots[i].Edges == 0 {
			ok = false
			continue
		}
		inv += medians[i] / float64(roots[i].Edges)
	}
	if ok && inv > 0 {
		gteps = float64(len(perRoot)) / inv // edges/ns = G edges/s
	}
	return stats.Median(medians), gteps
}

// summarize builds an arm's summary from its per-sample wall and device
// times and its per-root times (perRoot[i] holds root i's wall times; nil
// for an arm that traverses every root at once, whose GTEPS is then the
// roots' edges over its median sample time).
func summarize(arm Arm, sampleWall, sampleDevice []float64, perRoot [][]float64, roots []RootStat, totalLevels uint64) ArmSummary {
	s := ArmSummary{Arm: string(arm), MedianSampleNs: stats.Median(sampleWall), MedianDeviceNs: stats.Median(sampleDevice)}
	s.MedianRootNs, s.GTEPS = RootRates(perRoot, roots)
	if totalLevels > 0 {
		s.LevelNs = s.MedianSampleNs / float64(totalLevels)
	}
	if perRoot == nil && s.MedianSampleNs > 0 {
		var edges float64
		for _, r := range roots {
			edges += float64(r.Edges)
		}
		s.GTEPS = edges / s.MedianSampleNs
	}
	if s.MedianSampleNs > 0 {
		s.ModeledGBps = modeledBytes(roots) / s.MedianSampleNs
	}
	return s
}

// finish adds the speedups, the ceiling fractions and the fastest arm.
func (sum *Summary) finish() {
	var host, best, batch float64
	peers := map[string]float64{}
	for _, a := range sum.Arms {
		switch {
		case a.Arm == string(ArmHostLoop):
			host = a.MedianSampleNs
		case a.Arm == ArmMultiSource:
			batch = a.MedianSampleNs
			continue
		case isPeer(a.Arm):
			peers[a.Arm] = a.MedianSampleNs
			continue
		}
		if a.MedianSampleNs > 0 && (best == 0 || a.MedianSampleNs < best) {
			best, sum.FastestArm = a.MedianSampleNs, a.Arm
		}
	}
	if best > 0 && batch > 0 {
		sum.MultiSourceSpeedup = best / batch
	}
	for name, ns := range peers {
		if best > 0 && ns > 0 {
			if sum.PeerSpeedups == nil {
				sum.PeerSpeedups = map[string]float64{}
			}
			sum.PeerSpeedups[name] = ns / best
		}
	}
	sum.GunrockSpeedup = sum.PeerSpeedups[PeerArm]
	for i := range sum.Arms {
		a := &sum.Arms[i]
		if host > 0 && a.MedianSampleNs > 0 {
			a.SpeedupVsHostLoop = host / a.MedianSampleNs
		}
		if sum.CopyGBps > 0 {
			a.CeilingFraction = a.ModeledGBps / sum.CopyGBps
		}
	}
}

// isPeer reports whether arm is a peer's (PeerKinds).
func isPeer(arm string) bool {
	_, err := LookupPeer(arm)
	return err == nil
}
