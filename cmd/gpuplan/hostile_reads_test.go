package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The release gate's repro: a second "claims": [] used to drop every claim.
func TestGateRefusesDuplicateClaimsKey(t *testing.T) {
	root := gateTree(t, gridClaimJSON, 12, 1.1e6)
	gates := filepath.Join(root, "evidence", "gates.json")
	require.NoError(t, os.WriteFile(gates, []byte(`{"claims":[`+gridClaimJSON+`],"claims":[]}`), 0o644))
	out, errs, code := runCLI(t, "", "gate", "--root", root)
	assert.Equal(t, exitFailure, code, out)
	assert.Contains(t, errs, `field "claims": key "claims" appears twice in one object`)
	assert.NotContains(t, out, "gate passed")

	require.NoError(t, os.WriteFile(gates, []byte(`{"Claims":[]}`), 0o644))
	_, errs, code = runCLI(t, "", "gate", "--root", root)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `matches field "claims" only when case is ignored`)
}

func TestInputsThatAreNotRegularFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"fuse /dev/zero", []string{"fuse", "/dev/zero"}, "is a character device, not a regular file"},
		{"fuse FIFO", []string{"fuse", fifo}, "is a named pipe (FIFO), not a regular file"},
		{"plan directory", []string{"plan", dir}, "is a directory, not a regular file"},
		{"device file /dev/zero", []string{"occupancy", "--device-file", "/dev/zero", "--regs", "32", "--block", "128"}, "not a regular file"},
		{"gate --gates FIFO", []string{"gate", "--gates", fifo}, "named pipe"},
		{"vyre FIFO", []string{"gate", "--vyre", fifo}, "named pipe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", tc.args...)
			assert.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, tc.want)
			assert.Contains(t, errs, "Fix:")
		})
	}
}

func TestGateRefusesALinkOutOfTheEvidenceFolder(t *testing.T) {
	root := gateTree(t, gridClaimJSON, 12, 1.1e6)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "evidence", "results", "zero.csv")))
	_, errs, code := runCLI(t, "", "gate", "--root", root)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "zero.csv: leads to /dev/zero, outside")
	_, errs, code = runCLI(t, "", "report", "--results", filepath.Join(root, "evidence", "results"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "outside")
}

func TestMaxInputBytes(t *testing.T) {
	in := "testdata/planners/fuse.json"
	st, err := os.Stat(in)
	require.NoError(t, err)
	size := st.Size()
	_, errs, code := runCLI(t, "", "fuse", "--max-input-bytes", "100", in)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "above the limit of 100 bytes")
	assert.Contains(t, errs, "--max-input-bytes")
	_, errs, code = runCLI(t, "", "fuse", "--max-input-bytes", strconv.FormatInt(size, 10), in)
	assert.Equal(t, exitOK, code, errs)
	// Standard input is bounded too.
	_, errs, code = runCLI(t, strings.Repeat(" ", 200), "fuse", "--max-input-bytes", "100", "-")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "<stdin>: input is more than 100 bytes")
	for _, bad := range []string{"0", "-1", "many"} {
		_, errs, code = runCLI(t, "", "fuse", "--max-input-bytes", bad, in)
		assert.Equal(t, exitUsage, code, bad)
		assert.Contains(t, errs, "Fix:", bad)
	}
	// The gate bounds its results files by the same flag.
	root := gateTree(t, gridClaimJSON, 12, 1.1e6)
	_, errs, code = runCLI(t, "", "gate", "--root", root, "--max-input-bytes", "1000")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "run.csv")
	assert.Contains(t, errs, "above the limit of 1000 bytes")
}
