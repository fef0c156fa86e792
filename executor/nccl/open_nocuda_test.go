//go:build !cuda

package nccl

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOpenWithoutCUDA(t *testing.T) {
	xs := fakeExecutors(t, 1)
	c, err := Open(xs, Options{})
	assert.Nil(t, c)
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.ErrorContains(t, err, "Fix: rebuild with `make build-cuda`")
	assert.False(t, Available)
}

func TestRankWithoutCUDA(t *testing.T) {
	_, err := NewUniqueID(Options{})
	assert.True(t, errors.Is(err, ErrUnavailable))
	xs := fakeExecutors(t, 1)
	c, err := OpenRank(xs[0], UniqueID{}, 0, 1, Options{})
	assert.Nil(t, c)
	assert.True(t, errors.Is(err, ErrUnavailable))
	_, err = OpenRank(xs[0], UniqueID{}, 1, 1, Options{})
	assert.ErrorContains(t, err, "rank is 1, outside 0..0", "the arguments are checked first")
	var rc *RankComm
	_, err = rc.AllGather(Region{}, Region{})
	assert.True(t, errors.Is(err, ErrUnavailable))
	_, err = rc.SendRecv(nil, nil)
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.NoError(t, rc.Close())
	assert.Equal(t, "", rc.Version())
}
