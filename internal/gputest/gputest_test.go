package gputest

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnavailable runs itself in a child process, where a missing GPU must
// skip without RequireEnv and fail with it.
func TestUnavailable(t *testing.T) {
	if os.Getenv("GPUTEST_CHILD") != "" {
		Unavailable(t, errors.New("no GPU in this test"))
		return
	}
	for _, tc := range []struct {
		require string
		fails   bool
		want    string
	}{{"", false, "SKIP: TestUnavailable"}, {"1", true, "GPUPLAN_REQUIRE_GPU is set but no GPU is usable: no GPU in this test"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestUnavailable$", "-test.v")
		cmd.Env = append(os.Environ(), "GPUTEST_CHILD=1", RequireEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		if tc.fails {
			require.Error(t, err, string(out))
		} else {
			require.NoError(t, err, string(out))
		}
		assert.Contains(t, string(out), tc.want)
	}
}
