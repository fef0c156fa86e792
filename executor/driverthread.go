package executor

import (
	"runtime"
	"sync/atomic"
	"time"
)

// driverThread runs functions on one goroutine locked to one OS thread: the
// CUDA backend creates its context there, so every driver call sees it
// current. Callers must not overlap (the Executor serialises them).
type driverThread struct {
	slot   atomic.Pointer[driverReq]
	parked atomic.Bool
	stop   atomic.Bool
	kick   chan struct{}
	done   chan struct{}
	inRun  bool
	// poll is how long the thread polls for the next request before it
	// parks; callerPoll how long a caller polls for completion before it
	// blocks. Zero disables polling.
	poll, callerPoll time.Duration
}

// DefaultDriverPoll is the default Options.DriverPoll.
const DefaultDriverPoll = 200 * time.Microsecond

// startDriverThread starts the thread. poll is Options.DriverPoll: 0 means
// DefaultDriverPoll, negative disables polling.
func startDriverThread(poll time.Duration) *driverThread {
	switch {
	case poll == 0:
		poll = DefaultDriverPoll
	case poll < 0:
		poll = 0
	}
	t := &driverThread{kick: make(chan struct{}, 1), done: make(chan struct{}), poll: poll, callerPoll: min(poll, 50*time.Microsecond)}
	go t.loop()
	return t
}

// driverReq is one request to the driver thread.
type driverReq struct {
	f    func() error
	err  error
	done atomic.Bool
	wake chan struct{} // closed when done
}

// Hand-off: after a request the driver thread polls for the next one for
// poll before it parks; a caller polls for completion for callerPoll before
// it blocks. Waking a parked, locked OS thread costs microseconds per
// direction; polling keeps back-to-back calls (launch, wait, readback)
// cheap, at the price of one busy core for poll after each call.
// loop is the driver thread: one goroutine locked to one OS thread, on
// which the context was created and stays current.
func (b *driverThread) loop() {
	runtime.LockOSThread()
	defer close(b.done)
	last := time.Now()
	for i := 0; ; i++ {
		if r := b.slot.Swap(nil); r != nil {
			r.err = r.f()
			r.done.Store(true)
			close(r.wake)
			last = time.Now()
			i = 0
			continue
		}
		if b.stop.Load() {
			return
		}
		if i%64 != 63 || time.Since(last) < b.poll {
			continue
		}
		// Park. The re-check after announcing it closes the race with a
		// caller that stored a request before seeing parked.
		b.parked.Store(true)
		if b.slot.Load() == nil && !b.stop.Load() {
			<-b.kick
		}
		b.parked.Store(false)
		last = time.Now()
	}
}

// do runs f on the driver thread and waits for it. Calls are serialised by
// the Executor, so at most one request is outstanding. After shutdown it
// returns ErrClosed instead of waiting for a thread that is gone.
func (b *driverThread) do(f func() error) error {
	if b.inRun { // already on the driver thread (inside runOnDriver)
		return f()
	}
	if b.stop.Load() {
		return ErrClosed
	}
	r := &driverReq{f: f, wake: make(chan struct{})}
	b.slot.Store(r)
	if b.parked.Load() {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	start := time.Now()
	for i := 0; !r.done.Load(); i++ {
		if i%64 == 63 && time.Since(start) >= b.callerPoll {
			<-r.wake
			break
		}
	}
	return r.err
}

// runOnDriver runs a sequence of backend calls in one round trip to the
// driver thread. It nests: a sequence run inside another runs in place.
func (b *driverThread) runOnDriver(f func() error) error {
	return b.do(func() error {
		outer := b.inRun
		b.inRun = true
		defer func() { b.inRun = outer }()
		return f()
	})
}

// shutdown stops the driver thread and waits for it.
func (b *driverThread) shutdown() {
	b.stop.Store(true)
	select {
	case b.kick <- struct{}{}:
	default:
	}
	<-b.done
}
