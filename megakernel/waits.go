package megakernel

// ProducerWaitPlan is the per-producer wait form of a wave DAG, the form
// persistent kernels use: each wave owns a completion counter, and before it
// starts, wave v waits only on the counters of Waits(v), never on a
// grid-wide barrier.
//
// The wait lists are the direct producers of each wave with two kinds of
// waits dropped, both of which the remaining waits already imply:
//
//   - duplicates: a repeated dependency is waited on once;
//   - triangle-redundant waits: the wait of v on p is dropped when another
//     direct producer q of v itself depends directly on p (p -> q -> v), since
//     q cannot complete before p has.
//
// The triangle rule is a partial transitive reduction: a wait implied only by
// a longer path (p -> x -> q -> v with x not a producer of v) is kept. The
// reduction inspects, for every kept dependency q -> v, the producers of q,
// so it costs O(sum of indegree(q) over dependencies q -> v); to stay
// O(waves + dependencies) on adversarial inputs it stops once that work
// exceeds ReductionWorkPerItem x (waves + dependencies), and the remaining
// waves keep their deduplicated waits (ReductionComplete reports whether that
// happened). Every kept wait set preserves the DAG's reachability, so the
// plan is always safe.
type ProducerWaitPlan struct {
	// WaitStart has WaveCount+1 offsets into Producers.
	WaitStart []int32 `json:"wait_start"`
	// Producers holds each wave's producer waits, in dependency input order.
	Producers []int32 `json:"producers"`
	// Stats summarises the reduction.
	Stats WaitStats `json:"stats"`
}

// WaitStats counts the waits of a ProducerWaitPlan.
type WaitStats struct {
	// Dependencies is the number of input dependencies.
	Dependencies int `json:"dependencies"`
	// DuplicatesDropped counts repeated dependencies.
	DuplicatesDropped int `json:"duplicates_dropped"`
	// RedundantDropped counts waits dropped by the triangle rule.
	RedundantDropped int `json:"redundant_dropped"`
	// Waits is the number of counter waits that remain.
	Waits int `json:"waits"`
	// WaitingWaves is the number of waves with at least one wait.
	WaitingWaves int `json:"waiting_waves"`
	// MaxWaitsPerWave is the longest wait list.
	MaxWaitsPerWave int `json:"max_waits_per_wave"`
	// ReductionComplete is false when the work cap stopped the triangle rule
	// early (some redundant waits may remain).
	ReductionComplete bool `json:"reduction_complete"`
}

// ReductionWorkPerItem bounds the triangle reduction's work at this many
// steps per wave plus dependency.
const ReductionWorkPerItem = 32

// Waits returns the producer waves that wave v waits on. The slice aliases
// the plan; do not modify it.
func (p *ProducerWaitPlan) Waits(v int) []int32 {
	return p.Producers[p.WaitStart[v]:p.WaitStart[v+1]]
}

// WaveCount returns the number of waves in the plan.
func (p *ProducerWaitPlan) WaveCount() int {
	if len(p.WaitStart) == 0 {
		return 0
	}
	return len(p.WaitStart) - 1
}

// PlanProducerWaits validates the dependencies exactly like PlanBarriers
// (same errors in the same order, including *CycleError with a witness) and
// returns the per-producer wait form. It runs in O(waves + dependencies).
func PlanProducerWaits(waveCount int, deps []Dependency) (ProducerWaitPlan, error) {
	g, indeg, err := buildWaveGraph(waveCount, deps)
	if err != nil {
		return ProducerWaitPlan{}, err
	}
	if g.n == 0 {
		return ProducerWaitPlan{Stats: WaitStats{ReductionComplete: true}}, nil
	}
	if _, err := g.layers(indeg); err != nil {
		return ProducerWaitPlan{}, err
	}
	inOff, src := buildCSR(g.n, deps, true)
	return producerWaits(g.n, len(deps), inOff, src), nil
}

// producerWaits reduces the incoming lists inOff/src (every dependency,
// duplicates included, in input order) in place and compacts the result.
func producerWaits(n, depCount int, inOff, src []int32) ProducerWaitPlan {
	mark := make([]int32, n)
	// Pass 1: deduplicate in place, keeping first occurrences. cur[v] becomes
	// the end of v's unique producer list.
	for i := range mark {
		mark[i] = -1
	}
	uniqEnd := make([]int32, n)
	stats := WaitStats{Dependencies: depCount, ReductionComplete: true}
	for v := 0; v < n; v++ {
		w := inOff[v]
		for _, p := range src[inOff[v]:inOff[v+1]] {
			if mark[p] == int32(v) {
				stats.DuplicatesDropped++
				continue
			}
			mark[p] = int32(v)
			src[w] = p
			w++
		}
		uniqEnd[v] = w
	}
	// Pass 2: triangle rule. mark[p] == v means p is a direct producer of v;
	// it is set to -2-v when p is found redundant.
	for i := range mark {
		mark[i] = -1
	}
	budget := ReductionWorkPerItem * (int64(n) + int64(depCount))
	waitStart := make([]int32, n+1)
	producers := make([]int32, 0, depCount-stats.DuplicatesDropped)
	for v := 0; v < n; v++ {
		list := src[inOff[v]:uniqEnd[v]]
		if len(list) > 1 && stats.ReductionComplete {
			for _, p := range list {
				mark[p] = int32(v)
			}
			for _, q := range list {
				qs := src[inOff[q]:uniqEnd[q]]
				budget -= int64(len(qs)) + 1
				for _, p := range qs {
					if mark[p] == int32(v) {
						mark[p] = -2 - int32(v)
					}
				}
			}
			if budget < 0 {
				// Out of budget: keep this wave's waits whole for determinism
				// of the cut point, and stop reducing.
				stats.ReductionComplete = false
				for _, p := range list {
					mark[p] = -1
				}
			}
		}
		for _, p := range list {
			if mark[p] == -2-int32(v) {
				stats.RedundantDropped++
				continue
			}
			producers = append(producers, p)
		}
		waitStart[v+1] = int32(len(producers))
		k := len(producers) - int(waitStart[v])
		if k > 0 {
			stats.WaitingWaves++
			stats.MaxWaitsPerWave = max(stats.MaxWaitsPerWave, k)
		}
	}
	stats.Waits = len(producers)
	return ProducerWaitPlan{WaitStart: waitStart, Producers: producers, Stats: stats}
}
