//go:build cuda

package nccl

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuplan/gpuplan/executor"
)

// TestOpenWithoutTheLibraryNamesIt loads a library that is not there: the
// error names it and says how to install NCCL, before any device is used.
func TestOpenWithoutTheLibraryNamesIt(t *testing.T) {
	xs := fakeExecutors(t, 1)
	env := &executor.MapEnvironment{Vars: map[string]string{}}
	_, err := Open(xs, Options{Library: "/nonexistent/libnccl.so.2", Env: env})
	var m *MissingError
	assert.ErrorAs(t, err, &m)
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.ErrorContains(t, err, "/nonexistent/libnccl.so.2 could not be loaded")
	assert.Equal(t, "0", env.Vars[NVLSEnv], "NVLink multicast is turned off before NCCL loads")
}

// TestRankWithoutTheLibraryNamesIt: NewUniqueID and OpenRank name a
// library that is not there, before any device is used.
func TestRankWithoutTheLibraryNamesIt(t *testing.T) {
	opts := Options{Library: "/nonexistent/libnccl.so.2", Env: &executor.MapEnvironment{Vars: map[string]string{}}}
	_, err := NewUniqueID(opts)
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.ErrorContains(t, err, "/nonexistent/libnccl.so.2 could not be loaded")
	xs := fakeExecutors(t, 1)
	_, err = OpenRank(xs[0], UniqueID{}, 0, 1, opts)
	var m *MissingError
	assert.ErrorAs(t, err, &m)
	_, err = OpenRank(nil, UniqueID{}, 0, 1, opts)
	assert.ErrorContains(t, err, "executor is nil")
}
