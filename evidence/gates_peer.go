package evidence

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
)

// strongestPeer refuses a speedup claim against a peer tool (an external
// arm: IsExternalArm) when the same file holds another peer arm with a
// lower median time on the claim's workload (step 7): a ratio against a
// weaker peer overstates the lead. Peers are compared on the claim's
// metric, or on wall_ns when one of them lacks device_ns on a sample; a
// tie is not stronger.
func (k *claimCheck) strongestPeer() string {
	c := k.c
	if c.PerIteration() || !IsExternalArm(c.Baseline) || len(k.f.peers) == 0 {
		return ""
	}
	metric := c.Metric
	medians, ok := k.peerMedians(metric)
	if !ok {
		metric = MetricWallNS
		if medians, ok = k.peerMedians(metric); !ok {
			return "" // unreachable: every row has a wall time
		}
	}
	best := c.Baseline
	for _, arm := range slices.Sorted(maps.Keys(medians)) {
		if medians[arm] < medians[best] {
			best = arm
		}
	}
	if best == c.Baseline {
		return ""
	}
	return fmt.Sprintf("weaker peer: baseline %s takes a median %s (%s) on workload %s in %s, but peer %s measured in the same run takes %s; required a claim against a peer to name the strongest peer measured on that graph. Fix: claim against %s (\"baseline\": %q)",
		c.Baseline, stats.FormatNs(medians[c.Baseline]), metric, c.Workload, quote.Text(k.f.path), best, stats.FormatNs(medians[best]), best, best)
}

// peerMedians returns the median metric of the baseline and of every other
// peer arm; ok is false when a row of one of them lacks the metric.
func (k *claimCheck) peerMedians(metric string) (medians map[string]float64, ok bool) {
	medians = map[string]float64{}
	if medians[k.c.Baseline], ok = medianOf(metric, k.f.base); !ok {
		return nil, false
	}
	for arm, rows := range k.f.peers {
		if medians[arm], ok = medianOf(metric, rows); !ok {
			return nil, false
		}
	}
	return medians, true
}

// medianOf is the median of rows' metric; ok is false when a row lacks it.
func medianOf(metric string, rows []*Sample) (median float64, ok bool) {
	values, err := metricValues(metric, rows)
	if err != nil || len(values) == 0 {
		return 0, false
	}
	return MedianCI(values, Confidence).Center, true
}
