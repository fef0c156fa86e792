package kronbuild

import (
	"errors"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// timeline records timing events on a stream and measures the device
// time between two of them once the stream is synchronised. Its events
// are reused after reset.
type timeline struct {
	x      *executor.Executor
	st     *executor.Stream
	events []*executor.Event
	used   int
}

// mark records the next event at the stream's end and returns it.
func (t *timeline) mark() (int, error) {
	if t.used == len(t.events) {
		e, err := t.x.NewEvent(true)
		if err != nil {
			return 0, err
		}
		t.events = append(t.events, e)
	}
	if err := t.st.Record(t.events[t.used]); err != nil {
		return 0, err
	}
	t.used++
	return t.used - 1, nil
}

// since returns the device time from mark a to mark b; both must have
// finished.
func (t *timeline) since(a, b int) (time.Duration, error) {
	ns, err := executor.ElapsedNs(t.events[a], t.events[b])
	return time.Duration(ns), err
}

// reset lets the next marks reuse the events.
func (t *timeline) reset() { t.used = 0 }

// close destroys the events.
func (t *timeline) close() error {
	var errs []error
	for _, e := range t.events {
		errs = append(errs, e.Close())
	}
	t.events, t.used = nil, 0
	return errors.Join(errs...)
}
