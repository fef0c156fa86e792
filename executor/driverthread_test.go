package executor

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDriverThreadAfterShutdown(t *testing.T) {
	d := startDriverThread(0)
	require.NoError(t, d.do(func() error { return nil }))
	d.shutdown()
	ran := false
	done := make(chan error, 1)
	go func() { done <- d.do(func() error { ran = true; return nil }) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrClosed)
		assert.False(t, ran)
	case <-time.After(5 * time.Second):
		t.Fatal("a call after shutdown waited for a thread that is gone")
	}
}

func TestDriverThreadRunsOnOneThreadInOrder(t *testing.T) {
	d := startDriverThread(0)
	defer d.shutdown()
	var n atomic.Int64
	for i := 0; i < 2000; i++ {
		require.NoError(t, d.do(func() error { n.Add(1); return nil }))
		if i%500 == 0 {
			time.Sleep(2 * DefaultDriverPoll) // let the thread park, then wake it
		}
	}
	assert.Equal(t, int64(2000), n.Load())
	boom := errors.New("boom")
	assert.Same(t, boom, d.do(func() error { return boom }))
	// runOnDriver: nested calls run inline on the driver thread.
	err := d.runOnDriver(func() error {
		for i := 0; i < 10; i++ {
			if err := d.do(func() error { n.Add(1); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(2010), n.Load())
	// A slow call: the caller stops polling and blocks.
	require.NoError(t, d.do(func() error { time.Sleep(3 * d.callerPoll); return nil }))
}

func TestDriverThreadWithoutPolling(t *testing.T) {
	d := startDriverThread(-1)
	defer d.shutdown()
	assert.Zero(t, d.poll)
	var n int
	for i := 0; i < 100; i++ {
		require.NoError(t, d.do(func() error { n++; return nil }))
	}
	assert.Equal(t, 100, n)
}

func BenchmarkDriverThreadRoundTrip(b *testing.B) {
	for _, poll := range []time.Duration{-1, 0} {
		b.Run(map[time.Duration]string{-1: "park", 0: "poll"}[poll], func(b *testing.B) {
			d := startDriverThread(poll)
			defer d.shutdown()
			b.ReportAllocs()
			for b.Loop() {
				_ = d.do(func() error { return nil })
			}
		})
	}
}

// TestDriverThreadNestedRun: a sequence run inside another (the executor's
// batches inside a borrowed dispatch) runs in place, and the outer one
// stays on the driver thread after it returns; before runOnDriver nested,
// the call after the inner run handed off to the thread it was running on
// and never returned.
func TestDriverThreadNestedRun(t *testing.T) {
	d := startDriverThread(0)
	defer d.shutdown()
	done := make(chan error, 1)
	calls := 0
	go func() {
		done <- d.runOnDriver(func() error {
			if err := d.runOnDriver(func() error { calls++; return nil }); err != nil {
				return err
			}
			return d.do(func() error { calls++; return nil })
		})
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
		assert.Equal(t, 2, calls)
		assert.False(t, d.inRun, "the outer run restores the state it found")
	case <-time.After(5 * time.Second):
		t.Fatal("a call after a nested run deadlocked")
	}
}
