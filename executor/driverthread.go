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
	// parks; callerSpin how long a caller spins for completion before it
	// blocks. Zero disables either.
	poll, callerSpin time.Duration
}

// DefaultDriverPoll is the default Options.DriverPoll.
const DefaultDriverPoll = 200 * time.Microsecond

// DefaultCallerSpin is the default Options.CallerSpin: longer than a
// typical kernel wait, so that waiting for a traversal costs no wake-up.
const DefaultCallerSpin = 20 * time.Millisecond

// startDriverThread starts the thread. poll is Options.DriverPoll and spin
// Options.CallerSpin: 0 means the default, negative disables it.
func startDriverThread(poll, spin time.Duration) *driverThread {
	t := &driverThread{kick: make(chan struct{}, 1), done: make(chan struct{}),
		poll: orDefault(poll, DefaultDriverPoll), callerSpin: orDefault(spin, DefaultCallerSpin)}
	go t.loop()
	return t
}

// orDefault returns d for 0, 0 for a negative v, else v.
func orDefault(v, d time.Duration) time.Duration {
	switch {
	case v == 0:
		return d
	case v < 0:
		return 0
	}
	return v
}

// driverReq is one request to the driver thread.
type driverReq struct {
	f       func() error
	err     error
	done    atomic.Bool
	blocked atomic.Bool   // the caller stopped spinning and waits on wake
	wake    chan struct{} // closed when done
}

// Hand-off: after a request the driver thread polls for the next one for
// poll before it parks; a caller spins (yielding its processor) for
// completion for callerSpin before it blocks. Waking a parked, locked OS
// thread costs microseconds per direction; polling keeps back-to-back calls
// (launch, wait, readback) cheap, at the price of one busy core for poll
// after each call. A blocked caller is made runnable by the driver thread,
// on the driver thread's processor, where it would wait out the whole poll:
// after such a call the thread parks at once, handing the processor over.

// loop is the driver thread: one goroutine locked to one OS thread, on
// which the context was created and stays current.
func (b *driverThread) loop() {
	runtime.LockOSThread()
	defer close(b.done)
	last := time.Now()
	for i := 0; ; i++ {
		parkNow := false
		if r := b.slot.Swap(nil); r != nil {
			r.err = r.f()
			r.done.Store(true)
			close(r.wake)
			last = time.Now()
			i = 0
			if parkNow = r.blocked.Load(); !parkNow {
				continue
			}
		}
		if b.stop.Load() {
			return
		}
		if !parkNow && (i%64 != 63 || time.Since(last) < b.poll) {
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
		if i%64 != 63 {
			continue
		}
		if time.Since(start) >= b.callerSpin {
			r.blocked.Store(true)
			<-r.wake
			break
		}
		runtime.Gosched()
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
