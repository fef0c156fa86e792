package bfs

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
)

// Positions of the per-level kernel's depth and phase parameters, which
// the host loop rewrites between launches.
var (
	levelDepthArg = kernelabi.MustIndex(QueueLevelParams[executor.Buffer]{}, "DepthBase")
	levelBeginArg = kernelabi.MustIndex(QueueLevelParams[executor.Buffer]{}, "PhaseBegin")
	levelEndArg   = kernelabi.MustIndex(QueueLevelParams[executor.Buffer]{}, "PhaseEnd")
	doDepthArg    = kernelabi.MustIndex(DoLevelParams[executor.Buffer]{}, "DepthBase")
	doDirArg      = kernelabi.MustIndex(DoLevelParams[executor.Buffer]{}, "Direction")
	doBeginArg    = kernelabi.MustIndex(DoLevelParams[executor.Buffer]{}, "PhaseBegin")
	doEndArg      = kernelabi.MustIndex(DoLevelParams[executor.Buffer]{}, "PhaseEnd")
)

// runHostLoop is the host-driven wave loop as a user writes it by hand:
// per level, a launch sized from the count just read (one item per warp, up
// to the queue plan's drain chunk), a 4-byte readback of the next count, a
// sync, and a test of the count on the host. The whole loop runs on the
// driver thread in one hand-off (executor.RunHostLoop).
func (s *Session) runHostLoop(r *Run) (control, error) {
	if s.optimizing {
		return s.runHostLoopDO(r)
	}
	args := kernelabi.MustArgs(s.levelArgs(s.levelParams(0)))
	wpb := uint64(s.cfg.LevelThreads / 32)
	maxLevels := uint64(s.plans.Convergence.MaxDeviceIterations)
	var reads uint64
	t, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(args)
		if err != nil {
			return err
		}
		read := func(depth uint64) (uint32, error) {
			reads++
			err := l.Read(s.buf.ctl, 4*uint64(CtlCountWord(int(depth%3))), s.word[:4])
			return binary.LittleEndian.Uint32(s.word), err
		}
		count, err := read(0)
		for d := uint64(0); err == nil && count > 0; d++ {
			if d >= maxLevels {
				return notConverged(r.Arm, r.Root, d)
			}
			vals[levelDepthArg], vals[levelBeginArg], vals[levelEndArg] = d, 0, 1
			cfg := executor.Linear(levelBlocks(uint64(count), wpb, s.plans.Queue), uint32(s.cfg.LevelThreads))
			if err = l.Launch(s.k.level, cfg, vals); err == nil {
				count, err = read(d + 1)
			}
		}
		return err
	})
	r.DeviceNs = t.DeviceNs
	// RunHostLoop counts each read and its final wait as syncs.
	return control{syncs: reads + 1}, err
}

// runHostLoopDO is the host loop of a direction-optimizing traversal: per
// level, the planner decides the direction from the frontier's counts read
// back after the level before (one readback of the count line's first
// words, countBytes: the queue's items and the frontier's vertices and
// edges), and the host launches the
// direction-optimizing level kernel in that direction, sized from the
// queue's items when top-down and over the whole level grid when
// bottom-up. The kernel checks the decision against its own rule.
func (s *Session) runHostLoopDO(r *Run) (control, error) {
	args := kernelabi.MustArgs(s.doLevelArgs(s.doLevelParams(0, 0)))
	wpb := uint64(s.cfg.LevelThreads / 32)
	maxLevels := uint64(s.plans.Convergence.MaxDeviceIterations)
	t := newDirTracker(s.g)
	r.Decisions = make([]planners.BFSDirectionDecision, 0, 64)
	var reads uint64
	tm, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(args)
		if err != nil {
			return err
		}
		read := func(depth uint64) (count, nf uint32, mf uint64, err error) {
			reads++
			w := s.word[:s.countBytes()]
			err = l.Read(s.buf.ctl, 4*uint64(CtlCountWord(int(depth%3))), w)
			count, nf, mf = s.decodeCounts(w)
			return count, nf, mf, err
		}
		count, nf, mf, err := read(0)
		for d := uint64(0); err == nil && nf > 0; d++ {
			if d >= maxLevels {
				return notConverged(r.Arm, r.Root, d)
			}
			var dec planners.BFSDirectionDecision
			if dec, err = t.decide(d+1, uint64(nf), mf); err != nil {
				return err
			}
			r.Decisions = append(r.Decisions, dec)
			vals[doDepthArg], vals[doDirArg] = d, uint64(dec.Direction)
			blocks := s.plans.LevelGrid.GridBlocks
			if dec.Direction == planners.DirectionTopDown {
				blocks = levelBlocks(uint64(count), wpb, s.plans.Queue)
			}
			if err = l.Launch(s.k.doLevel, executor.Linear(blocks, uint32(s.cfg.LevelThreads)), vals); err == nil {
				count, nf, mf, err = read(d + 1)
			}
		}
		return err
	})
	r.DeviceNs = tm.DeviceNs
	return control{syncs: reads + 1}, err
}

// runDeviceLoop enqueues a batch of levels back to back on one stream (one
// launch per level, no host sync between), then reads the count after the
// batch on the same stream, with one host wait for the launches and the
// read together (an executor.Sequence). A batch is as many levels as the
// session's deepest traversal so far, up to CheckEvery (checkBatch). Levels past the end of the BFS see
// an empty queue (an empty frontier) and return at once. A direction-
// optimizing traversal runs the direction-optimizing level kernel, each
// level deciding its direction on the device from the counts of the level
// before.
func (s *Session) runDeviceLoop(r *Run) (control, error) {
	k := s.checkBatch()
	var c control
	for base := uint64(0); ; base += k {
		if base >= uint64(s.plans.Convergence.MaxDeviceIterations) {
			return c, notConverged(r.Arm, r.Root, base)
		}
		seq, err := s.levelSequence(base, k)
		if err != nil {
			return c, err
		}
		t, err := s.x.RunSequence(seq, [][]byte{s.word[:4]})
		c.syncs++
		if err != nil {
			return c, err
		}
		r.DeviceNs += t.DeviceNs
		if binary.LittleEndian.Uint32(s.word) == 0 {
			return c, nil
		}
	}
}

// checkBatch is the device loop's levels per host check: the levels of
// the session's deepest traversal so far (the levels its last launch
// finds empty), up to Config.CheckEvery, which it is before the first.
func (s *Session) checkBatch() uint64 {
	if s.deepest == 0 {
		return uint64(s.cfg.CheckEvery)
	}
	return uint64(min(s.deepest, s.cfg.CheckEvery))
}

// levelSequence is the device loop's dispatch of the k levels from depth
// base: the level kernel (the direction-optimizing one where the session
// is) launched once per level, phase p of the k in launch p, then the read
// of the frontier count the last of them leaves.
func (s *Session) levelSequence(base, k uint64) (executor.Sequence, error) {
	kernel, params, word := s.k.level, s.levelArgs(s.levelParams(base)), CtlCountWord(int(base+k))
	begin, end := levelBeginArg, levelEndArg
	if s.optimizing {
		kernel, params, word = s.k.doLevel, s.doLevelArgs(s.doLevelParams(base, 0)), CtlCountsWord(int(base+k))+1
		begin, end = doBeginArg, doEndArg
	}
	args, err := kernelabi.Args(params)
	if err != nil {
		return executor.Sequence{}, err
	}
	cfg := s.plans.LevelGrid.Config()
	cfg.Cooperative = false
	seq := executor.Sequence{Prefix: make([]executor.Step, k),
		Reads: []executor.ReadRequest{{Buffer: s.buf.ctl, Offset: 4 * uint64(word), Len: 4}}}
	for p := range k {
		step := slices.Clone(args)
		step[begin], step[end] = executor.U64(p), executor.U64(p+1)
		seq.Prefix[p] = executor.Step{Kernel: kernel, Config: cfg, Args: step}
	}
	return seq, nil
}

// runMegakernel runs every level in one cooperative launch over the
// co-resident grid; the host reads the final changed flag once
// (FinalFlagOnly), with the overflow flag next to it. Run-ahead can push a
// vertex more than once in one step (each time its label is lowered), so
// the queues' capacity, which bounds a level-synchronous level, could in
// principle overflow: the traversal then runs again with one barrier per
// level (r.Reruns).
func (s *Session) runMegakernel(r *Run) (control, error) {
	c, overflow, err := s.launchMegakernel(r, uint64(s.cfg.MegakernelAhead), !s.cfg.MegakernelFixedAhead, s.async())
	if err != nil || overflow == 0 || s.cfg.MegakernelAhead == 1 {
		return c, err
	}
	if err := s.reset(r.Root); err != nil {
		return c, err
	}
	r.Reruns = 1
	more, _, err := s.launchMegakernel(r, 1, false, false)
	// The reset is one more dispatch with its own sync.
	return control{syncs: c.syncs + more.syncs + 1}, err
}

// async reports whether the megakernel runs without grid barriers: when
// configured to, on a frontier queue large enough for its counters.
func (s *Session) async() bool {
	return s.cfg.MegakernelAsync && s.canAsync()
}

// canAsync reports whether the session's megakernel can run without grid
// barriers: its block size, chunk and frontier queue allow it.
func (s *Session) canAsync() bool {
	return s.asyncFits && s.cfg.Chunk <= AsyncItemEdges && s.qcap() >= asyncMinQueueItems
}

// launchMegakernel launches the megakernel with run-ahead depth ahead
// (the deepest, when adapt; the window + 1, when async) and returns the
// overflow flag. The result words are read back on the launch's stream,
// with one host wait for both (Executor.LaunchRead).
func (s *Session) launchMegakernel(r *Run, ahead uint64, adapt, async bool) (control, uint32, error) {
	dir := uint64(MegaTopDown)
	switch {
	case async:
		dir = MegaAsync
	case s.cfg.Direction == DirectionAuto && !s.cfg.MegakernelTopDown:
		dir = MegaAuto
	}
	k := s.k.mega
	if async {
		k = s.k.megaAsync
	}
	w := s.word[:8]
	t, err := s.x.LaunchRead(k, s.plans.MegakernelGrid.Config(), s.buf.ctl, 4*(CtlResult+ResultChanged), w, kernelabi.MustArgs(MegakernelParams[executor.Buffer]{
		TraversalParams: s.doLevelParams(0, 0).TraversalParams, MaxSteps: uint64(s.plans.Convergence.MaxDeviceIterations),
		Ahead: ahead, Adapt: b2u(adapt), Direction: dir, LogCap: s.logEntries(), Keep: uint64(s.cfg.MegakernelKeep)})...)
	if err != nil {
		return control{syncs: 1}, 0, err
	}
	r.DeviceNs += t.DeviceNs
	changed, overflow := binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4:])
	if changed != 0 {
		return control{syncs: 1}, overflow, fmt.Errorf("BFS megakernel from root %d did not converge within %d steps. Fix: raise the convergence plan's iteration budget", r.Root, s.plans.Convergence.MaxDeviceIterations)
	}
	return control{syncs: 1}, overflow, nil
}

// runScanLoop is the plain scan wave: one launch per level over every
// vertex, with a 4-byte readback of the level's changed flag
// (Executor.LaunchRead).
func (s *Session) runScanLoop(r *Run) (control, error) {
	n := uint64(s.g.NumVertices())
	blocks := uint32(max(1, min((n+255)/256, uint64(s.plans.LevelGrid.GridBlocks))))
	var c control
	for d := uint64(0); ; d++ {
		if d >= uint64(s.plans.Convergence.MaxDeviceIterations) {
			return c, notConverged(r.Arm, r.Root, d)
		}
		args := kernelabi.MustArgs(ScanParams[executor.Buffer]{Offsets: s.buf.offsets, Targets: s.buf.targets,
			Level: s.buf.level, Ctl: s.buf.ctl, N: n, Depth: d})
		t, err := s.x.LaunchRead(s.k.scan, executor.Linear(blocks, 256), s.buf.ctl, 4*uint64(CtlScanChangedWord(int(d))), s.word[:4], args...)
		if err != nil {
			return c, err
		}
		r.DeviceNs += t.DeviceNs
		c.syncs++ // LaunchRead waits once for the launch and its readback
		if binary.LittleEndian.Uint32(s.word) == 0 {
			r.Levels = int(d + 1)
			return c, nil
		}
	}
}

// countBytes is how much of a count line the direction-optimizing host
// loop reads: the item count and the frontier count, and with 64-bit
// offsets the frontier's edges word too.
func (s *Session) countBytes() int {
	if s.width.Wide() {
		return 4 * (CtlEdgesW64 + 2)
	}
	return 4 * (CtlCounts + 2)
}

// decodeCounts decodes the first countBytes of a count line: its queue
// items, the frontier's vertices (the high half of the CtlCounts word)
// and edges (its low half, or the CtlEdgesW64 word with 64-bit offsets).
func (s *Session) decodeCounts(w []byte) (count, nf uint32, mf uint64) {
	count, nf = binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4*CtlCounts+4:])
	mf = uint64(binary.LittleEndian.Uint32(w[4*CtlCounts:]))
	if s.width.Wide() {
		mf = binary.LittleEndian.Uint64(w[4*CtlEdgesW64:])
	}
	return count, nf, mf
}
