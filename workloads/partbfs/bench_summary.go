package partbfs

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// summarize fills the summary from the samples and the steps.
func (b *bench) summarize() {
	sum := &b.res.Summary
	sum.Workload, sum.Nodes, sum.Edges = b.g.Name, b.g.NumVertices(), uint64(b.g.NumEdgeEntries()/2)
	sum.Roots, sum.Samples, sum.Devices = b.stats, b.cfg.Samples, len(b.res.Plan.Parts)
	sum.Device, sum.Arm = b.device, b.trav
	sums := make([]uint64, len(b.stats))
	for i, s := range b.stats {
		sum.TotalLevels += uint64(s.Levels)
		sums[i] = s.Checksum
	}
	b.res.ReferenceChecksum = bfs.CombinedChecksum(sums)
	var wall, xwall []float64
	for _, s := range b.res.Samples {
		if s.Arm == sum.Arm {
			wall = append(wall, s.WallNs)
		} else {
			xwall = append(xwall, s.WallNs)
			sum.ExchangeBytes = s.BytesMoved
		}
	}
	sum.MedianSampleNs, sum.MedianExchangeNs = stats.Median(wall), stats.Median(xwall)
	if sum.MedianSampleNs > 0 {
		sum.ExchangeShare = sum.MedianExchangeNs / sum.MedianSampleNs
	}
	if sum.TotalLevels > 0 {
		sum.LevelNs = sum.MedianSampleNs / float64(sum.TotalLevels)
	}
	sum.MedianRootNs, sum.GTEPS = bfs.RootRates(b.rootWall, b.stats)
	b.summarizeSteps()
}

// summarizeSteps adds every step's median times, the predicted bytes of a
// sample and the largest deviation from the prediction.
func (b *bench) summarizeSteps() {
	sum := &b.res.Summary
	j := 0
	for i := range b.roots {
		for k := range b.exchangeNs[i] {
			st := &b.res.Steps[j]
			st.MedianExchangeNs, st.MedianStepNs = stats.Median(b.exchangeNs[i][k]), stats.Median(b.stepNs[i][k])
			sum.PredictedBytes += st.PredictedBytes
			if dev := deviation(st.MeasuredBytes, st.PredictedBytes); dev > sum.MaxStepDeviation {
				sum.MaxStepDeviation = dev
			}
			j++
		}
	}
	if sum.MaxStepDeviation > 0.2 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("a step's measured exchange deviates %.1f%% from the partition planner's prediction (the target is within 20%%)", 100*sum.MaxStepDeviation))
	}
}

// deviation is |measured - predicted| / predicted, over 1 byte when the
// prediction is 0.
func deviation(measured, predicted uint64) float64 {
	return math.Abs(float64(measured)-float64(predicted)) / float64(max(predicted, 1))
}
