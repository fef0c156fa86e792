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
