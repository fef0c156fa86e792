package executor

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// fakeOp is one piece of a stream's work in the fake: run performs it; a
// wait on an event is runnable once the event's record of generation gen
// has run.
type fakeOp struct {
	run     func() error
	wait    EventRef
	waitGen uint64
}

// fakeAsync is the fake's deferred-stream state: per-stream queues, event
// generations (recorded at enqueue, done when the record runs) and the
// first failure since the last host wait.
type fakeAsync struct {
	queues map[StreamRef][]fakeOp
	gen    map[EventRef]uint64
	done   map[EventRef]uint64
	err    error
	rng    *rand.Rand
}

func newFakeAsync(seed uint64) fakeAsync {
	return fakeAsync{queues: map[StreamRef][]fakeOp{}, gen: map[EventRef]uint64{}, done: map[EventRef]uint64{},
		rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// record starts a new generation of e and returns it.
func (a *fakeAsync) record(e EventRef) uint64 {
	a.gen[e]++
	return a.gen[e]
}

// run performs op now, or queues it on s when streams are deferred. A
// failure of work run now is returned; a deferred one at the next host
// wait.
func (f *Fake) run(s StreamRef, op fakeOp) error {
	if f.cfg.DeferStreams {
		f.async.queues[s] = append(f.async.queues[s], op)
		return nil
	}
	if op.run == nil {
		return nil
	}
	return op.run()
}

// runnable reports whether op may run now.
func (a *fakeAsync) runnable(op fakeOp) bool {
	return op.wait == 0 || a.done[op.wait] >= op.waitGen
}

// drain runs every queued op, choosing at each step a random stream whose
// next op is runnable, and returns the first failure since the last host
// wait (call names the wait in the error of a stuck queue).
func (f *Fake) drain(call string) error {
	a := &f.async
	for {
		var ready []StreamRef
		pending := false
		for s, q := range a.queues {
			if len(q) == 0 {
				continue
			}
			pending = true
			if a.runnable(q[0]) {
				ready = append(ready, s)
			}
		}
		if !pending {
			break
		}
		if len(ready) == 0 {
			a.queues = map[StreamRef][]fakeOp{}
			return newDriverError(call, cuErrLaunchTimeout, "every stream waits on an event that is never reached")
		}
		slices.Sort(ready) // map order is random; the seed decides
		s := ready[a.rng.IntN(len(ready))]
		op := a.queues[s][0]
		a.queues[s] = a.queues[s][1:]
		if op.run != nil {
			if err := op.run(); err != nil && a.err == nil {
				a.err = err
			}
		}
	}
	err := a.err
	a.err = nil
	return err
}

// StreamWaitEvent orders s's later work after e's most recent record.
func (f *Fake) StreamWaitEvent(s StreamRef, e EventRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuStreamWaitEvent", s); err != nil {
		return err
	}
	if _, ok := f.events[e]; !ok {
		return newDriverError("cuStreamWaitEvent", 400, "unknown event")
	}
	return f.run(s, fakeOp{wait: e, waitGen: f.async.gen[e]})
}

// fakeGraph is a graph of the fake: kernel nodes and their dependencies.
type fakeGraph struct {
	nodes []fakeNode
}

type fakeNode struct {
	fn   *fakeFunc
	cfg  LaunchConfig
	args []uint64
	deps []int
}

// GraphCreate creates an empty fake graph.
func (f *Fake) GraphCreate() (GraphRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuGraphCreate"); err != nil {
		return 0, err
	}
	g := GraphRef(f.handle())
	f.graphs[g] = &fakeGraph{}
	return g, nil
}

// GraphAddKernel adds a kernel node; node handles are 1 + the node's
// position.
func (f *Fake) GraphAddKernel(g GraphRef, fn FuncRef, cfg LaunchConfig, args []uint64, deps []GraphEdge) (GraphNodeRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuGraphAddKernelNode"); err != nil {
		return 0, err
	}
	fg, ok := f.graphs[g]
	if !ok {
		return 0, newDriverError("cuGraphAddKernelNode", 400, "unknown graph")
	}
	ff, ok := f.funcs[fn]
	if !ok {
		return 0, newDriverError("cuGraphAddKernelNode", 400, "unknown function")
	}
	if int(cfg.DynamicSharedBytes) > ff.optIn {
		return 0, newDriverError("cuGraphAddKernelNode", cuErrInvalidValue, "dynamic shared memory above the kernel's limit")
	}
	n := fakeNode{fn: ff, cfg: cfg, args: slices.Clone(args)}
	for _, d := range deps {
		i := int(d.From) - 1
		if i < 0 || i >= len(fg.nodes) {
			return 0, newDriverError("cuGraphAddDependencies", cuErrInvalidValue, "unknown node")
		}
		n.deps = append(n.deps, i)
	}
	fg.nodes = append(fg.nodes, n)
	return GraphNodeRef(len(fg.nodes)), nil
}

// GraphInstantiate snapshots the graph.
func (f *Fake) GraphInstantiate(g GraphRef) (GraphExecRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuGraphInstantiate"); err != nil {
		return 0, err
	}
	fg, ok := f.graphs[g]
	if !ok {
		return 0, newDriverError("cuGraphInstantiate", 400, "unknown graph")
	}
	e := GraphExecRef(f.handle())
	f.execs[e] = &fakeGraph{nodes: slices.Clone(fg.nodes)}
	return e, nil
}

// GraphLaunch runs the graph's nodes on s, in a random topological order
// (Seed): any order the edges allow.
func (f *Fake) GraphLaunch(e GraphExecRef, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuGraphLaunch", s); err != nil {
		return err
	}
	fg, ok := f.execs[e]
	if !ok {
		return newDriverError("cuGraphLaunch", 400, "unknown graph exec")
	}
	return f.run(s, fakeOp{run: func() error {
		for _, i := range f.topoOrder(fg) {
			n := fg.nodes[i]
			f.launches = append(f.launches, n.cfg)
			if err := f.execute("cuGraphLaunch", n.fn, n.cfg, n.args); err != nil {
				return fmt.Errorf("graph node %d: %w", i, err)
			}
		}
		return nil
	}})
}

// topoOrder returns a random order of the graph's nodes that respects
// every edge.
func (f *Fake) topoOrder(g *fakeGraph) []int {
	indeg := make([]int, len(g.nodes))
	out := make([][]int, len(g.nodes))
	for i, n := range g.nodes {
		for _, d := range n.deps {
			indeg[i]++
			out[d] = append(out[d], i)
		}
	}
	var ready, order []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		k := f.async.rng.IntN(len(ready))
		v := ready[k]
		ready[k] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		order = append(order, v)
		for _, c := range out[v] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	return order
}

// GraphExecDestroy forgets an instantiated graph.
func (f *Fake) GraphExecDestroy(e GraphExecRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuGraphExecDestroy"); err != nil {
		return err
	}
	if _, ok := f.execs[e]; !ok {
		return newDriverError("cuGraphExecDestroy", 400, "unknown graph exec")
	}
	delete(f.execs, e)
	return nil
}

// GraphDestroy forgets a graph.
func (f *Fake) GraphDestroy(g GraphRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuGraphDestroy"); err != nil {
		return err
	}
	if _, ok := f.graphs[g]; !ok {
		return newDriverError("cuGraphDestroy", 400, "unknown graph")
	}
	delete(f.graphs, g)
	return nil
}
