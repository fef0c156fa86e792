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
	// against the arm plan's choice.
	FastestArm string   `json:"fastest_arm"`
	Notes      []string `json:"notes,omitempty"`
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

// summarize builds an arm's summary from its per-sample wall and device
// times and its per-root times (perRoot[i] holds root i's wall times).
func summarize(arm Arm, sampleWall, sampleDevice []float64, perRoot [][]float64, roots []RootStat, totalLevels uint64) ArmSummary {
	s := ArmSummary{Arm: string(arm), MedianSampleNs: stats.Median(sampleWall), MedianDeviceNs: stats.Median(sampleDevice)}
	rootMedians := make([]float64, len(perRoot))
	var invSum float64
	ok := true
	for i, ts := range perRoot {
		rootMedians[i] = stats.Median(ts)
		if rootMedians[i] <= 0 || roots[i].Edges == 0 {
			ok = false
			continue
		}
		invSum += rootMedians[i] / float64(roots[i].Edges)
	}
	s.MedianRootNs = stats.Median(rootMedians)
	if totalLevels > 0 {
		s.LevelNs = s.MedianSampleNs / float64(totalLevels)
	}
	if ok && invSum > 0 {
		s.GTEPS = float64(len(perRoot)) / invSum // edges/ns = G edges/s
	}
	if s.MedianSampleNs > 0 {
		s.ModeledGBps = modeledBytes(roots) / s.MedianSampleNs
	}
	return s
}

// finish adds the speedups, the ceiling fractions and the fastest arm.
func (sum *Summary) finish() {
	var host, best float64
	for _, a := range sum.Arms {
		if a.Arm == string(ArmHostLoop) {
			host = a.MedianSampleNs
		}
		if a.MedianSampleNs > 0 && (best == 0 || a.MedianSampleNs < best) {
			best, sum.FastestArm = a.MedianSampleNs, a.Arm
		}
	}
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
