package planners

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldError is a planner error type: *T is an error that names its field.
type fieldError[T any] interface {
	*T
	error
	Field() string
}

// requireKindError checks that err is a P of the given kind whose message
// names its field and ends in exactly one remediation sentence, and returns
// it. Each planner's requireXxxError wraps it with that error's kind.
func requireKindError[T any, P fieldError[T], K comparable](t *testing.T, err error, kind K, kindOf func(P) K) P {
	t.Helper()
	var target P
	require.ErrorAs(t, err, &target)
	require.Equal(t, kind, kindOf(target), "error: %v", err)
	assert.Contains(t, err.Error(), target.Field())
	assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
	return target
}
