package executor

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostLoop drives a loop that adds one to a counter until it reaches
// five, reading it back after every launch, and checks the counter, the
// telemetry (one readback and one sync per read, plus the loop's final
// wait) and that the buffer was in flight during the loop.
func TestHostLoop(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	defer x.Close()
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("add_one")
	require.NoError(t, err)
	b, err := x.Alloc(4)
	require.NoError(t, err)
	require.NoError(t, x.Upload(b, make([]byte, 4)))
	// The first loop takes its staging buffer from the driver; later ones
	// reuse it.
	_, err = x.RunHostLoop(func(*HostLoop) error { return nil })
	require.NoError(t, err)
	before := x.Telemetry()
	word := make([]byte, 4)
	var inFlight uint32
	steps := 0
	tm, err := x.RunHostLoop(func(l *HostLoop) error {
		vals, err := l.Resolve([]Arg{Ptr(b), U64(1)})
		if err != nil {
			return err
		}
		inFlight = x.buffers[b.ID].inFlight
		for v := uint32(0); v < 5; v = binary.LittleEndian.Uint32(word) {
			if err := l.Launch(k, Linear(1, 32), vals); err != nil {
				return err
			}
			if err := l.Read(b, 0, word); err != nil {
				return err
			}
			steps++
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 5, steps)
	assert.EqualValues(t, 1, inFlight, "the loop pins its buffers")
	assert.Zero(t, x.InFlight(b), "and releases them")
	assert.True(t, tm.HasDeviceTime)
	assert.EqualValues(t, 5000, tm.DeviceNs, "five launches of the fake's 1 us")
	d := x.Telemetry().Sub(before)
	assert.EqualValues(t, 5, d.KernelLaunches)
	assert.EqualValues(t, 5, d.DeviceReadbackOperations)
	assert.EqualValues(t, 20, d.DeviceToHostBytes)
	assert.EqualValues(t, 6, d.SyncPoints)
	assert.Zero(t, d.HostUploadOperations+d.TransientAllocationBytesRequested, "a warm loop uploads and allocates nothing")
	require.NoError(t, x.Free(b))
}

func TestHostLoopRefusals(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	defer x.Close()
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("add_one")
	require.NoError(t, err)
	b, err := x.Alloc(8)
	require.NoError(t, err)
	for name, body := range map[string]func(l *HostLoop) error{
		"params": func(l *HostLoop) error { _, err := l.Resolve([]Arg{Params([]byte{1})}); return err },
		"freed":  func(l *HostLoop) error { _, err := l.Resolve([]Arg{Ptr(Buffer{ID: 999, Len: 8})}); return err },
		"offset": func(l *HostLoop) error { _, err := l.Resolve([]Arg{PtrAt(b, 8)}); return err },
		"cooperative": func(l *HostLoop) error {
			c := Linear(1, 32)
			c.Cooperative = true
			return l.Launch(k, c, []uint64{0, 0})
		},
		"zero grid":  func(l *HostLoop) error { return l.Launch(k, Linear(0, 32), []uint64{0, 0}) },
		"nil kernel": func(l *HostLoop) error { return l.Launch(nil, Linear(1, 32), nil) },
		"empty read": func(l *HostLoop) error { return l.Read(b, 0, nil) },
		"long read":  func(l *HostLoop) error { return l.Read(b, 0, make([]byte, MaxLoopRead+1)) },
		"past end":   func(l *HostLoop) error { return l.Read(b, 4, make([]byte, 8)) },
	} {
		_, err := x.RunHostLoop(body)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "Fix", name)
	}
	// A driver failure inside the loop comes back and leaves nothing held.
	f.Fail("cuMemcpyDtoHAsync", 700)
	_, err = x.RunHostLoop(func(l *HostLoop) error { return l.Read(b, 0, make([]byte, 4)) })
	var de *DriverError
	require.True(t, errors.As(err, &de))
	f.Fail("cuMemcpyDtoHAsync", 0)
	assert.Zero(t, x.InFlight(b))
	require.NoError(t, x.Free(b))
	require.NoError(t, x.Close())
	_, err = x.RunHostLoop(func(*HostLoop) error { return nil })
	assert.ErrorIs(t, err, ErrClosed)
}
