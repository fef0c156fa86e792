package bfsserve

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// job is one query waiting for its answer.
type job struct {
	ctx  context.Context
	q    bfsquery.Query
	foot bfsquery.Footprint
	enq  time.Time
	done chan outcome // buffered: the batcher never blocks on it
}

// outcome is a job's answer or error, and the batch that answered it.
type outcome struct {
	a     bfsquery.Answer
	err   error
	roots int // distinct roots of its batch
}

// batcher gathers one graph's queries into batches: the first queued
// query waits up to the window for others, up to MaxBatch distinct roots,
// and the multi-query plan splits what it gathered into groups the budget
// holds; each group runs as one bfsquery.Graph.Batch, its roots in
// multi-source passes.
type batcher struct {
	s    *Server
	info graphInfo
	// g0 is the graph as first opened: it checks queries and sizes their
	// footprints, which depend only on the graph's shape, the same in
	// every opening.
	g0   *bfsquery.Graph
	hash uint64 // the graph's layout hash in the multi-query plan
	// budget is a batch's bytes: Config.BudgetBytes, or a full batch.
	budget uint64
	queue  chan *job
	// reserved counts the jobs queued or being sent: a request reserves
	// all its slots first, so its sends never block and a batch request
	// is queued whole or refused whole.
	reserved atomic.Int64
	// lastEnd and lastRoots are when the previous batch ended and its
	// distinct roots: the loop's own state, which says whether queries
	// overlap.
	lastEnd   time.Time
	lastRoots int
	// at is the graph's series labels in the current residency: set at
	// each opening, under the server's resMu.
	at atomic.Pointer[series]
}

// traversalKey is the traversal every query of a graph shares: one BFS
// from its root, in a multi-source pass with the others.
const traversalKey = 1

func newBatcher(s *Server, g *bfsquery.Graph, info graphInfo) (*batcher, error) {
	h := fnv.New64a()
	h.Write([]byte(info.Name))
	b := &batcher{s: s, info: info, g0: g, hash: h.Sum64() | 1, budget: s.cfg.BudgetBytes, queue: make(chan *job, s.cfg.QueueDepth)}
	b.relabel(g)
	if b.budget == 0 {
		var err error
		if b.budget, err = defaultBudget(info.Resident, budgetQuery(g), s.cfg.MaxBatch); err != nil {
			return nil, err
		}
	}
	if err := b.holdsOneQuery(g); err != nil {
		return nil, err
	}
	return b, nil
}

// budgetQuery is the footprint the default budget holds for each query of
// a full batch: the larger of a query over every vertex with parents and
// one of BudgetTargets targets with parents. On a graph of few vertices
// the second is the larger: a query's answer holds a level for each
// target, repeats included.
func budgetQuery(g *bfsquery.Graph) bfsquery.Footprint {
	full := g.Footprint(bfsquery.Query{Parents: true})
	targets := make([]int32, BudgetTargets)
	for i := range targets {
		targets[i] = int32(i % g.Vertices())
	}
	few := g.Footprint(bfsquery.Query{Targets: targets, Parents: true})
	if few.Frontier+few.Output > full.Frontier+full.Output {
		return few
	}
	return full
}

// holdsOneQuery refuses a budget that does not hold the graph and one
// query of one target: every query of the graph would be refused.
func (b *batcher) holdsOneQuery(g *bfsquery.Graph) error {
	one := b.multiQuery(0, g.Footprint(bfsquery.Query{Targets: []int32{0}}))
	_, err := planners.PlanMultiQueryExecution([]planners.MultiQuery{one}, b.budget)
	var me *planners.MultiQueryError
	if !errors.As(err, &me) || me.Kind != planners.MultiQueryOverBudget {
		return err
	}
	need := me.RequiredBytes
	return &ConfigError{Field: "BudgetBytes",
		Msg: fmt.Sprintf("%d bytes do not hold graph %s and one query of one target (%d bytes), so every query would be refused", b.budget, b.info.Name, need),
		Fix: fmt.Sprintf("give at least %d bytes (gpuplan serve --budget-mib %d), or 0 for the default, a full batch", need, (need+1<<20-1)>>20)}
}

// relabel takes the series labels of g, the graph as now resident.
func (b *batcher) relabel(g *bfsquery.Graph) {
	at := seriesOf(g)
	b.at.Store(&at)
}

// labels returns the graph's series labels.
func (b *batcher) labels() series { return *b.at.Load() }

// admit checks that the query alone fits the budget, so that it is refused
// at once rather than after queueing; field names the query in the
// request ("query", or "queries[3]" in a batch).
func (b *batcher) admit(field string, foot bfsquery.Footprint) error {
	_, err := planners.PlanMultiQueryExecution([]planners.MultiQuery{b.multiQuery(0, foot)}, b.budget)
	var me *planners.MultiQueryError
	if errors.As(err, &me) && me.Kind == planners.MultiQueryOverBudget {
		return overBudget(field, me)
	}
	return err
}

// multiQuery is a query as the multi-query plan sees it.
func (b *batcher) multiQuery(id uint32, foot bfsquery.Footprint) planners.MultiQuery {
	return planners.MultiQuery{Query: id, GraphLayoutHash: b.hash, TraversalKey: traversalKey,
		GraphUploadBytes: max(1, b.info.Resident), FrontierBytes: foot.Frontier, OutputBytes: foot.Output}
}

// enqueue queues every job, or none of them with a 429 when the queue
// lacks room for all.
func (b *batcher) enqueue(jobs []*job) error {
	n := int64(len(jobs))
	if got := b.reserved.Add(n); got > int64(cap(b.queue)) {
		b.reserved.Add(-n)
		return queueFull(b.info.Name, int(got-n), len(jobs), cap(b.queue))
	}
	for _, j := range jobs {
		b.queue <- j
	}
	return nil
}

// take receives one queued job.
func (b *batcher) take(j *job) *job {
	b.reserved.Add(-1)
	return j
}

// loop runs batches until stop closes, then refuses what is still queued.
func (b *batcher) loop(stop <-chan struct{}) {
	for {
		select {
		case j := <-b.queue:
			var batch []*job
			batch, b.lastRoots = b.collect(b.take(j), stop)
			b.run(batch)
			b.lastEnd = time.Now()
		case <-stop:
			for {
				select {
				case j := <-b.queue:
					b.take(j).done <- outcome{err: shuttingDown}
				default:
					return
				}
			}
		}
	}
}

// collect gathers a batch from its first job: until the window after the
// first job's arrival passes or MaxBatch distinct roots are in (a job
// whose root is in already costs no traversal). The window applies while
// queries overlap (the first job queued while the previous batch ran, or
// that batch held several roots); a lone query takes only what is queued.
// It returns the batch and its distinct roots.
func (b *batcher) collect(first *job, stop <-chan struct{}) ([]*job, int) {
	window := b.s.cfg.Window
	if !b.s.cfg.WaitAlone && !first.enq.Before(b.lastEnd) && b.lastRoots <= 1 {
		window = 0
	}
	batch := []*job{first}
	roots := map[int32]bool{first.q.Root: true}
	add := func(j *job) {
		batch = append(batch, b.take(j))
		roots[j.q.Root] = true
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for len(roots) < b.s.cfg.MaxBatch && len(batch) < bfsquery.MaxBatchRoots {
		select {
		case j := <-b.queue:
			add(j)
			continue
		default:
		}
		wait := time.Until(first.enq.Add(window))
		if wait <= 0 {
			break
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case j := <-b.queue:
			add(j)
		case <-timer.C:
			return batch, len(roots)
		case <-stop:
			return batch, len(roots)
		}
	}
	return batch, len(roots)
}

// run answers a batch: the jobs still wanted, in the groups the
// multi-query plan forms within the budget.
func (b *batcher) run(batch []*job) {
	live := batch[:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.done <- outcome{err: err}
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	mqs := make([]planners.MultiQuery, len(live))
	for i, j := range live {
		mqs[i] = b.multiQuery(uint32(i), j.foot)
	}
	plan, err := planners.PlanMultiQueryExecution(mqs, b.budget)
	if err != nil {
		// admit planned every query alone within the budget, so the plan
		// cannot refuse one: this is a bug, answered as one.
		b.fail(live, err)
		return
	}
	for _, g := range plan.Groups {
		group := make([]*job, len(g.Queries))
		for i, id := range g.Queries {
			group[i] = live[id]
		}
		b.runGroup(group)
	}
}

// runGroup runs one group as one Batch on the current residency. Its
// context ends when every job's does, so a batch whose clients all left
// stops between traversals.
func (b *batcher) runGroup(group []*job) {
	ctx, cancel := allDone(group)
	defer cancel()
	qs := make([]bfsquery.Query, len(group))
	for i, j := range group {
		qs[i] = j.q
	}
	roots := distinctJobs(group)
	start := time.Now()
	answers, on, err := b.s.batch(ctx, b, qs)
	elapsed := time.Since(start)
	m, at := b.s.metrics, on.at.values()
	m.batchRoots.WithLabelValues(at...).Observe(float64(roots))
	m.passTime.WithLabelValues(at...).Observe(elapsed.Seconds())
	if err == nil {
		for _, p := range []struct {
			name string
			d    time.Duration
		}{{phaseTraverse, on.phases.Traverse}, {phaseSetup, on.phases.Setup}, {phaseRead, on.phases.Read}, {phaseAnswer, on.phases.Answer}} {
			m.phaseTime.WithLabelValues(append(at, p.name)...).Observe(p.d.Seconds())
		}
		m.countRuns(at, on.phases)
	}
	var qe *bfsquery.QueryError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		for _, j := range group {
			j.done <- outcome{err: context.Cause(j.ctx)}
		}
		return
	case errors.As(err, &qe), errors.Is(err, errStopped):
		b.fail(group, err)
		return
	default:
		b.s.log.Error("batch failed on the GPU", slog.String("graph", b.info.Name), slog.Int("queries", len(group)), slog.Int("roots", roots), slog.Any("error", err))
		m.faults.WithLabelValues(at...).Inc()
		b.s.fault(on.gen, err)
		b.fail(group, deviceFault(b.info.Name, err))
		return
	}
	b.s.log.Debug("batch", slog.String("graph", b.info.Name), slog.Int("queries", len(group)), slog.Int("roots", roots), slog.Duration("elapsed", elapsed))
	wait := m.queueWait.WithLabelValues(at...)
	for i, j := range group {
		wait.Observe(start.Sub(j.enq).Seconds())
		j.done <- outcome{a: answers[i], roots: roots}
	}
}

// fail answers every job with err.
func (b *batcher) fail(jobs []*job, err error) {
	for _, j := range jobs {
		j.done <- outcome{err: err}
	}
}

// allDone returns a context that ends when every job's context has.
func allDone(jobs []*job) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(jobs)))
	stops := make([]func() bool, len(jobs))
	for i, j := range jobs {
		stops[i] = context.AfterFunc(j.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// distinctJobs counts the jobs' distinct roots.
func distinctJobs(jobs []*job) int {
	seen := make(map[int32]struct{}, len(jobs))
	for _, j := range jobs {
		seen[j.q.Root] = struct{}{}
	}
	return len(seen)
}

// defaultBudget is a full batch of maxBatch queries of perQuery's
// footprint (budgetQuery), and the graph.
func defaultBudget(graph uint64, perQuery bfsquery.Footprint, maxBatch int) (uint64, error) {
	q, err := checked.Add(perQuery.Frontier, perQuery.Output, "query bytes")
	if err != nil {
		return 0, err
	}
	all, err := checked.Mul(q, uint64(maxBatch), "batch bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(all, graph, "budget bytes")
}
