package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionFlag(t *testing.T) {
	cmd, errs, code := runCLI(t, "", "version")
	require.Equal(t, exitOK, code, errs)
	for _, flag := range []string{"--version", "-version"} {
		out, errs, code := runCLI(t, "", flag)
		require.Equal(t, exitOK, code, errs)
		assert.Equal(t, cmd, out, flag)
	}
	if buildHasCUDA {
		assert.Contains(t, cmd, "built with CUDA")
	} else {
		assert.Contains(t, cmd, "built without CUDA")
	}

	out, errs, code := runCLI(t, "", "--version", "--json")
	require.Equal(t, exitOK, code, errs)
	var info versionInfo
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	assert.Equal(t, buildHasCUDA, info.CUDA)
	assert.NotEmpty(t, info.Version)
	assert.NotEmpty(t, info.Go)

	_, errs, code = runCLI(t, "", "--version", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "unexpected argument")
}
