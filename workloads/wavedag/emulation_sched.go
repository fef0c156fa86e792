package wavedag

import (
	"iter"

	"github.com/gpuplan/gpuplan/executor"
)

// Block states of the emulated waits scheduler.
const (
	blockIdle     = iota // claims the next task
	blockStart           // starts the current wave of its task
	blockWaitPre         // waits for the producers before the call
	blockParked          // a prologue stopped at gp_wait
	blockPostWait        // a prologue returned without gp_wait
	blockDone
)

// vblock is one virtual block of the emulated waits scheduler.
type vblock struct {
	state      int
	first, cnt uint32
	j, tile    uint32
	wave       uint32
	waited     bool
	next       func() (struct{}, bool)
	stop       func()
	err        error
	tasksDone  uint64
	// shared is the block's dynamic shared memory: a parked prologue
	// keeps what it loaded there.
	shared []byte
}

// queue emulates gp_sched_waits: the grid's blocks claim tasks in order
// and run them as their waits allow, in a random interleaving. When no
// block can move and some wait, it writes a watchdog record per waiting
// block and raises the abort flag, as the device's watchdog does.
func (s *schedState) queue() error {
	blocks := make([]*vblock, max(s.l.Config.Grid[0], 1))
	for i := range blocks {
		blocks[i] = &vblock{shared: make([]byte, len(s.shared))}
	}
	defer func() {
		for _, b := range blocks {
			if b.stop != nil {
				b.stop()
			}
		}
	}()
	for {
		b, stuck, err := s.pick(blocks)
		if err != nil {
			return err
		}
		if b == nil {
			if stuck {
				return s.stall(blocks)
			}
			break
		}
		if err := s.step(b); err != nil {
			return err
		}
	}
	var tasks uint64
	for _, b := range blocks {
		tasks += b.tasksDone
	}
	s.ctl[ctlTasks] += tasks
	s.ctl[ctlHead], s.ctl[ctlDone] = 0, 0
	return nil
}

// pick returns a block that can move, starting from a random one; nil and
// stuck when blocks wait but none can move.
func (s *schedState) pick(blocks []*vblock) (*vblock, bool, error) {
	start := s.rng.IntN(len(blocks))
	stuck := false
	for k := range blocks {
		b := blocks[(start+k)%len(blocks)]
		switch b.state {
		case blockDone:
			continue
		case blockIdle, blockStart:
			return b, false, nil
		}
		pw, err := s.check(b.wave, b.tile)
		if err != nil {
			return nil, false, err
		}
		if pw.ok {
			return b, false, nil
		}
		stuck = true
	}
	return nil, stuck, nil
}

// step moves block b by one state.
func (s *schedState) step(b *vblock) error {
	switch b.state {
	case blockIdle:
		return s.claim(b)
	case blockStart:
		return s.start(b)
	}
	pw, err := s.check(b.wave, b.tile)
	if err != nil {
		return err
	}
	s.waits += pw.satisfied
	switch b.state {
	case blockWaitPre:
		b.waited = true
		if err := s.call(b.wave, b.tile, b.shared, nil); err != nil {
			return err
		}
	case blockParked:
		b.waited = true
		b.next() // runs to the function's end
		b.stop()
		b.next, b.stop = nil, nil
		if b.err != nil {
			return b.err
		}
	}
	return s.finishWave(b)
}

// claim takes the next task of the queue.
func (s *schedState) claim(b *vblock) error {
	idx := s.ctl[ctlHead]
	if idx >= s.p.NTasks || s.ctl[ctlAbort] != 0 {
		b.state = blockDone
		return nil
	}
	s.ctl[ctlHead]++
	task, err := words(s.l, s.p.Tasks+executor.DevPtr(4*idx*taskWords), taskWords)
	if err != nil {
		return err
	}
	u, err := words(s.l, s.p.Units+executor.DevPtr(4*uint64(task[0])*unitWords), unitWords)
	if err != nil {
		return err
	}
	b.first, b.cnt, b.tile, b.j = u[unitFirst], u[unitCount], task[1], 0
	b.state = blockStart
	return nil
}

// start begins wave j of the block's unit.
func (s *schedState) start(b *vblock) error {
	o, err := words(s.l, s.p.Order+executor.DevPtr(4*uint64(b.first+b.j)), 1)
	if err != nil {
		return err
	}
	b.wave, b.waited = o[0], b.j > 0
	switch {
	case b.j > 0:
		if err := s.call(b.wave, b.tile, b.shared, nil); err != nil {
			return err
		}
		return s.finishWave(b)
	case s.wave(b.wave)[waveFlagBits]&wavePrologue == 0:
		b.state = blockWaitPre
		return nil
	}
	// A prologue runs until its gp_wait, as a coroutine.
	b.next, b.stop = iter.Pull(func(yield func(struct{}) bool) {
		b.err = s.call(b.wave, b.tile, b.shared, func() {
			if !b.waited {
				b.waited = true
				yield(struct{}{})
			}
		})
	})
	if _, parked := b.next(); parked {
		b.state = blockParked
		return nil
	}
	b.stop()
	b.next, b.stop = nil, nil
	if b.err != nil {
		return b.err
	}
	s.ctl[ctlUnwaited]++
	b.state = blockPostWait
	return nil
}

// finishWave publishes the block's tile of its wave and moves to the next
// wave of its unit, or to the next task.
func (s *schedState) finishWave(b *vblock) error {
	if err := s.publish(b.wave, b.tile); err != nil {
		return err
	}
	b.j++
	if b.j == b.cnt {
		b.tasksDone++
		b.state = blockIdle
		return nil
	}
	b.state = blockStart
	return nil
}

// stall writes the watchdog records of every waiting block.
func (s *schedState) stall(blocks []*vblock) error {
	for _, b := range blocks {
		if b.state != blockWaitPre && b.state != blockParked && b.state != blockPostWait {
			continue
		}
		pw, err := s.check(b.wave, b.tile)
		if err != nil {
			return err
		}
		s.waits += pw.satisfied + 1
		if err := s.record(b.wave, b.tile, pw); err != nil {
			return err
		}
	}
	s.ctl[ctlHead], s.ctl[ctlDone] = 0, 0
	return nil
}

// barriers emulates gp_sched_barriers: each group's tasks in a random
// order, then a grid barrier.
func (s *schedState) barriers() error {
	groups, err := words(s.l, s.p.Groups, s.p.NGroups+1)
	if err != nil {
		return err
	}
	var tasks uint64
	for g := range s.p.NGroups {
		lo, hi := uint64(groups[g]), uint64(groups[g+1])
		ts, err := words(s.l, s.p.Tasks+executor.DevPtr(4*lo*taskWords), (hi-lo)*taskWords)
		if err != nil {
			return err
		}
		order := make([]int, hi-lo)
		for i := range order {
			order[i] = i
		}
		s.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			v, tile := ts[i*taskWords], ts[i*taskWords+1]
			if err := s.call(v, tile, s.shared, nil); err != nil {
				return err
			}
			if err := s.publish(v, tile); err != nil {
				return err
			}
			tasks++
		}
		if g+1 < s.p.NGroups {
			s.ctl[ctlBarGen]++
			s.ctl[ctlBarriers]++
		}
	}
	s.ctl[ctlTasks] += tasks
	return nil
}
