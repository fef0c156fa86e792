package executor

import "fmt"

// Stream is a non-blocking stream whose order the caller builds by hand:
// work enqueued on one stream runs in order, and Wait orders a stream
// after an event recorded on another, so a DAG of launches can run on a
// few streams with its dependencies as events. Nothing is waited for until
// Synchronize (or an Event's). The resident buffers of enqueued launches
// count as in flight (Free refuses them) until the stream is synchronised,
// and the executor refuses to close while a stream has unsynchronised
// work. A Stream is not safe for concurrent use.
type Stream struct {
	x      *Executor
	ref    StreamRef
	used   []uint64
	busy   bool
	closed bool
}

// Event marks a point in a stream's work (Stream.Record), for another
// stream to wait on or for timing (ElapsedNs).
type Event struct {
	x        *Executor
	ref      EventRef
	timing   bool
	recorded bool
	closed   bool
}

// NewStream creates a stream owned by the caller; Close releases it.
func (x *Executor) NewStream() (*Stream, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	ref, err := x.b.StreamCreate()
	if err != nil {
		return nil, err
	}
	return &Stream{x: x, ref: ref}, nil
}

// NewEvent creates an event; timing events can be read by ElapsedNs, the
// others are cheaper to record and wait on.
func (x *Executor) NewEvent(timing bool) (*Event, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	ref, err := x.b.EventCreate(timing)
	if err != nil {
		return nil, err
	}
	return &Event{x: x, ref: ref, timing: timing}, nil
}

// usableLocked refuses a closed stream or executor.
func (s *Stream) usableLocked() error {
	switch {
	case s == nil:
		return invalidArg("stream", "Fix: create it with NewStream.", "is nil")
	case s.x.closed:
		return ErrClosed
	case s.closed:
		return invalidArg("stream", "Fix: create a new stream with NewStream.", "is closed")
	}
	return nil
}

func (e *Event) usableLocked(x *Executor) error {
	switch {
	case e == nil:
		return invalidArg("event", "Fix: create it with NewEvent.", "is nil")
	case e.x != x:
		return invalidArg("event", "Fix: use events of the stream's own executor.", "belongs to another executor")
	case e.closed:
		return invalidArg("event", "Fix: create a new event with NewEvent.", "is closed")
	}
	return nil
}

// markBusyLocked counts the stream's first unsynchronised work as pending
// and keeps the buffers it uses in flight.
func (s *Stream) markBusyLocked(used []uint64) {
	if !s.busy {
		s.busy = true
		s.x.pending++
	}
	for _, id := range used {
		s.x.buffers[id].inFlight++
	}
	s.used = append(s.used, used...)
}

// Launch checks and enqueues k on the stream without waiting, with the
// checks of Executor.LaunchAsync (its Out buffers are zeroed on the stream
// first). Params arguments are refused: their staging would outlive the
// call; pass a resident buffer instead.
func (s *Stream) Launch(k *Kernel, cfg LaunchConfig, args ...Arg) error {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	la, err := x.checkDirectLaunchLocked(k, cfg, args)
	if err != nil {
		return err
	}
	err = x.onDriver(func() error {
		if err := x.clearLocked(la.clears, s.ref); err != nil {
			return err
		}
		return x.launchTailsLocked(k, cfg, la.vals, noTails, s.ref)
	})
	s.markBusyLocked(la.used)
	return err
}

// checkDirectLaunchLocked checks a launch enqueued outside a timed
// dispatch (a stream's or a graph node's): a loaded kernel, the shape,
// one launch, and arguments without Params.
func (x *Executor) checkDirectLaunchLocked(k *Kernel, cfg LaunchConfig, args []Arg) (launchArgs, error) {
	if k == nil {
		return launchArgs{}, errNilKernel()
	}
	if k.m.unloaded {
		return launchArgs{}, invalidArg("kernel "+k.name, "Fix: load its module again.", "its module was evicted or unloaded")
	}
	if cfg.FixpointIterations > 1 {
		return launchArgs{}, invalidArg("fixpoint iterations", "Fix: enqueue the launch once per iteration.", "%d iterations of a stream or graph launch", cfg.FixpointIterations)
	}
	if err := x.checkShapeLocked(k, cfg); err != nil {
		return launchArgs{}, err
	}
	la, err := x.resolveArgsLocked(args, 0)
	if err != nil {
		return launchArgs{}, err
	}
	if len(la.params) > 0 {
		return launchArgs{}, invalidArg(argField(la.params[0]), "Fix: upload the parameters to a resident buffer and pass Ptr of it.", "a Params argument cannot outlive a stream or graph launch")
	}
	return la, nil
}

// Record records e at the stream's current end.
func (s *Stream) Record(e *Event) error {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if err := e.usableLocked(x); err != nil {
		return err
	}
	if err := x.b.EventRecord(e.ref, s.ref); err != nil {
		return err
	}
	e.recorded = true
	return nil
}

// Wait makes work enqueued on the stream from now on wait for the work
// before e's most recent record, on whichever stream it was recorded.
func (s *Stream) Wait(e *Event) error {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if err := e.usableLocked(x); err != nil {
		return err
	}
	if !e.recorded {
		return invalidArg("event", "Fix: record the event on a stream (Stream.Record) before waiting on it.", "was never recorded")
	}
	return x.b.StreamWaitEvent(s.ref, e.ref)
}

// Synchronize waits for everything enqueued on the stream and releases
// the buffers its launches used.
func (s *Stream) Synchronize() error {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	err := x.onDriver(func() error { return x.b.StreamSync(s.ref) })
	if err != nil {
		return err
	}
	x.tel.add(cSyncPoints, 1)
	s.releaseLocked()
	return nil
}

// releaseLocked clears the stream's in-flight marks and pending count.
func (s *Stream) releaseLocked() {
	for _, id := range s.used {
		if r, ok := s.x.buffers[id]; ok && r.inFlight > 0 {
			r.inFlight--
		}
	}
	s.used = s.used[:0]
	if s.busy {
		s.busy = false
		s.x.pending--
	}
}

// Close synchronises the stream and destroys it; closing twice is a
// no-op.
func (s *Stream) Close() error {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if s.closed || x.closed {
		s.closed = true
		return nil
	}
	err := x.b.StreamSync(s.ref)
	s.releaseLocked()
	s.closed = true
	if e := x.b.StreamDestroy(s.ref); err == nil {
		err = e
	}
	return err
}

// Synchronize waits until the work before the event's most recent record
// has finished.
func (e *Event) Synchronize() error {
	x := e.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if err := e.usableLocked(x); err != nil {
		return err
	}
	return x.onDriver(func() error { return x.b.EventSync(e.ref) })
}

// Query reports, without blocking, whether the work before the event's
// most recent record has finished.
func (e *Event) Query() (bool, error) {
	x := e.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false, ErrClosed
	}
	if err := e.usableLocked(x); err != nil {
		return false, err
	}
	return x.b.EventQuery(e.ref)
}

// Close destroys the event; closing twice is a no-op.
func (e *Event) Close() error {
	x := e.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if e.closed || x.closed {
		e.closed = true
		return nil
	}
	e.closed = true
	return x.b.EventDestroy(e.ref)
}

// ElapsedNs returns the device time between two recorded timing events,
// both finished, in nanoseconds.
func ElapsedNs(start, stop *Event) (uint64, error) {
	if start == nil || stop == nil {
		return 0, invalidArg("event", "Fix: pass two events from NewEvent(true).", "is nil")
	}
	x := start.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	for _, e := range []*Event{start, stop} {
		if err := e.usableLocked(x); err != nil {
			return 0, err
		}
		if !e.timing || !e.recorded {
			return 0, invalidArg("event", "Fix: create timing events with NewEvent(true) and record both.", "is not a recorded timing event")
		}
	}
	ms, err := x.b.EventElapsedMs(start.ref, stop.ref)
	if err != nil {
		return 0, err
	}
	ns, err := msToNs(ms)
	if err != nil {
		return 0, fmt.Errorf("elapsed time: %w", err)
	}
	return ns, nil
}
