//go:build cuda

package executor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// On a machine without a GPU the binary must start (the interposed cuInit
// keeps gorgonia.org/cu's init from exiting) and Open must fail with one
// clear sentence.
func TestCUDAOpenWithoutGPUIsAnError(t *testing.T) {
	if initStatus() == 0 {
		t.Skip("a GPU is present")
	}
	_, err := Open(0, Options{})
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrUnavailable), "%v", err)
	_, err = DeviceCount()
	require.ErrorIs(t, err, ErrUnavailable)
	t.Log(err)
}

// TestNVTXLabels: libnvToolsExt is loaded at run time; where it is
// installed, every range's label reaches C intact and a push and a pop
// work without a profiler attached; where it is not, the ranges are off
// and nothing else changes.
func TestNVTXLabels(t *testing.T) {
	l := loadNVTX()
	if l == nil {
		t.Skip("libnvToolsExt is not installed: NVTX ranges are off")
	}
	defer l.free()
	for _, r := range ProfilerRanges() {
		require.Equal(t, r.Name, l.label(r.Range))
		l.push(r.Range)
		l.pop()
	}
}
