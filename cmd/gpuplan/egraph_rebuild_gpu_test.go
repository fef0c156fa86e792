package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/workloads/rebuild"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEgraphRebuildGPU runs "gpuplan egraph rebuild --gpu" over the
// emulated kernels on egg's 1e4 dump, in the planned arm and in each arm,
// and checks the partition against egg's own.
func TestEgraphRebuildGPU(t *testing.T) {
	dir := t.TempDir()
	pre := unpackSample(t, dir, "math-1e4.pre.txt")
	post := unpackSample(t, dir, "math-1e4.post.txt")
	mine := filepath.Join(dir, "mine.post.txt")
	for _, arm := range []string{"planned", "host-loop", "device-loop", "persistent", "host-loop-incremental", "device-loop-incremental", "persistent-incremental"} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb}
		o, err := parseRebuildArgs(e, []string{pre, "--gpu", "--arm", arm, "--check", post, "-o", mine})
		require.NoError(t, err)
		o.open = openFake(t, rebuild.NewFake)
		require.NoError(t, egraphRebuild(e, o), arm)
		text := strings.Join(strings.Fields(out.String()), " ")
		assert.Contains(t, text, "same partition as "+post+" up to renaming (3575 classes)", arm)
		assert.Contains(t, text, "rounds 4 (data-parallel rounds on the GPU", arm)
		assert.Contains(t, text, "ms rebuild on the GPU (", arm)
		assert.Contains(t, text, "e-nodes 8728 in, 7835 distinct after the rebuild", arm)
		written, err := os.ReadFile(mine)
		require.NoError(t, err)
		assert.Contains(t, string(written), "--gpu --arm ", arm)
	}
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &bytes.Buffer{}}
	o, err := parseRebuildArgs(e, []string{"gen:2000:3:cycle", "--gpu", "--json"})
	require.NoError(t, err)
	o.open = openFake(t, rebuild.NewFake)
	require.NoError(t, egraphRebuild(e, o))
	var got rebuildOutput
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.NotNil(t, got.GPU)
	assert.True(t, got.GPU.Planned)
	assert.Equal(t, methodGPU, got.Method)
	assert.NotEmpty(t, got.GPU.Topology)
}

// TestEgraphRebuildGPUFlags checks the flag combinations --gpu refuses,
// and that the pure-Go build says it cannot run on a GPU.
func TestEgraphRebuildGPUFlags(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "arm without gpu", args: []string{"egraph", "rebuild", "--arm", "persistent", "gen:10"}, code: exitUsage, stderr: []string{"Fix: add --gpu"}},
		{name: "method with gpu", args: []string{"egraph", "rebuild", "--gpu", "--method", "rounds", "gen:10"}, code: exitUsage, stderr: []string{"pass one of them"}},
		{name: "bad arm", args: []string{"egraph", "rebuild", "--gpu", "--arm", "warp", "gen:10"}, code: exitUsage, stderr: []string{`--arm "warp" is unknown`}},
		{name: "bad device", args: []string{"egraph", "rebuild", "--gpu", "--device", "-1", "gen:10"}, code: exitUsage, stderr: []string{"negative"}},
	})
	_, errs, code := runCLI(t, "", "egraph", "rebuild", "--gpu", "gen:100")
	if code == exitFailure {
		assertNoGPUSentence(t, errs)
	}
}
