package partbfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
)

// BenchRank runs rank r's share of the benchmark protocol (Bench) with one
// process per device: every rank computes the CPU reference and the
// predicted exchange of every root, opens its RankSession on x and runs
// the same warm-up and samples, every traversal together with the other
// ranks. After every traversal each rank holds its part's levels against
// the reference's (outside the timed region) and the ranks all-gather
// whether they matched and what each received, so every rank fails when
// one rank's levels differ, and every rank's result carries the exchange
// bytes of every rank (each step's as well). The times in the result are
// this rank's; with the traversals synchronized by the exchanges, rank
// 0's stand for the run. The arms are ProcessArmNames'.
func BenchRank(x *executor.Executor, g *frontier.CSR, roots []int32, r Rank, cfg BenchConfig) (*BenchResult, error) {
	if g == nil {
		return nil, fmt.Errorf("partitioned benchmark rank %d has no graph. Fix: build or load the graph every rank runs", r.Rank)
	}
	b, err := newBench(g, roots, cfg)
	if err != nil {
		return nil, err
	}
	s, err := NewRankSession(x, g, r, b.cfg.Session)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dev := x.Device()
	b.trav, b.exch = ProcessArmNames(r.Ranks)
	b.device = fmt.Sprintf("%dx %s (cc %d.%d), one process each", r.Ranks, dev.Name, dev.Major, dev.Minor)
	b.res.Summary.Processes = true
	return b.protocol(s)
}

// checkedRun runs from root with every other rank, holds this rank's
// levels against its slice of ref and all-gathers every rank's verdict
// and received bytes (each step's too when steps is set): the run returned
// carries the bytes every rank received, and an error on every rank when
// any rank's levels differ.
func (s *RankSession) checkedRun(root int32, ref []int32, steps bool) (Run, error) {
	r, err := s.Run(root)
	if err != nil {
		return r, err
	}
	own := s.checkLevels(root, ref)
	words := []uint64{1, r.ExchangeBytes}
	if own != nil {
		words[0] = 0
	}
	if steps {
		for _, st := range r.Steps {
			words = append(words, st.MeasuredBytes)
		}
	}
	all, err := s.gather(words)
	if own != nil {
		return r, own
	}
	if err != nil {
		return r, s.wrap(err)
	}
	r.ExchangeBytes = 0
	if steps {
		for k := range r.Steps {
			r.Steps[k].MeasuredBytes = 0
		}
	}
	for rank, w := range all {
		if w[0] != 1 {
			return r, fmt.Errorf("partitioned BFS rank %d from root %d: rank %d's levels differ from the CPU reference. Fix: this is a kernel or exchange bug; read rank %d's error for the vertex, and rerun with the one-device simulation to isolate it", s.rank.Rank, root, rank, rank)
		}
		r.ExchangeBytes += w[1]
		for k, b := range w[2:] {
			r.Steps[k].MeasuredBytes += b
		}
	}
	return r, nil
}

// checkLevels holds the part's levels of the last run against its slice
// of the reference ref.
func (s *RankSession) checkLevels(root int32, ref []int32) error {
	lv, err := s.Levels()
	if err != nil {
		return s.wrap(err)
	}
	part := s.Part()
	want := ref[part.First:part.End]
	for i := range want {
		if i >= len(lv) || lv[i] != want[i] {
			got := "missing"
			if i < len(lv) {
				got = fmt.Sprint(lv[i])
			}
			return fmt.Errorf("partitioned BFS rank %d from root %d: vertex %d's level is %s, the CPU reference's %d. Fix: this is a kernel or exchange bug; rerun with the one-device simulation to isolate it", s.rank.Rank, root, part.First+uint64(i), got, want[i])
		}
	}
	return nil
}
