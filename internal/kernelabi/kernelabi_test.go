package kernelabi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type scaleParams[P Ptr] struct {
	Data   P       `c:"float *data"`
	N      uint64  `c:"unsigned long long n"`
	Offset int64   `c:"long long offset"`
	Factor float64 `c:"double factor"`
}

type splitParams[P Ptr] struct {
	Data  P      `c:"int *data"`
	Begin uint64 `c:"unsigned long long phase_begin"`
	End   uint64 `c:"unsigned long long phase_end"`
}

var testModule = Module{Name: "scale", Doc: "A test module.",
	Kernels: []Kernel{{Name: "scale", Doc: "Scales data.", Params: scaleParams[executor.DevPtr]{}},
		{Name: "phased", Params: splitParams[executor.DevPtr]{}}},
	Consts: []Const{{Name: "LINE", Value: 32, Doc: "Words per line."}, {Name: "BIG", Value: 1 << 40},
		{Name: "TUNE", Value: 4, Tunable: true}}}

func TestHeader(t *testing.T) {
	h, err := testModule.Header()
	require.NoError(t, err)
	s := string(h)
	for _, want := range []string{
		"#ifndef GPUPLAN_SCALE_ABI_H", "// Words per line.\n#define LINE 32u\n", "#define BIG 1099511627776ull\n",
		"#ifndef TUNE\n#define TUNE 4u\n#endif\n",
		"// Scales data.\n#define SCALE_PARAMS \\\n    float *data, \\\n    unsigned long long n, \\\n    long long offset, \\\n    double factor\n",
		"#define PHASED_PARAMS \\\n",
	} {
		assert.Contains(t, s, want)
	}
}

func TestHeaderSharedParams(t *testing.T) {
	m := testModule
	m.Kernels = append(append([]Kernel{}, m.Kernels...), Kernel{Name: "scale_wide", Doc: "Scales data, wide.", Params: scaleParams[executor.DevPtr]{}})
	h, err := m.Header()
	require.NoError(t, err)
	s := string(h)
	assert.Contains(t, s, "// Scales data, wide.\n#define SCALE_WIDE_PARAMS SCALE_PARAMS\n")
	assert.Equal(t, 1, strings.Count(s, "double factor"), "the shared list is written once")
	assert.Contains(t, s, "#define PHASED_PARAMS \\\n    int *data, \\\n", "a different list is written out")
}

func TestValidate(t *testing.T) {
	type noTag struct{ N uint64 }
	type badKind struct {
		N uint32 `c:"unsigned n"`
	}
	type dupName[P Ptr] struct {
		A P      `c:"int *a"`
		B uint64 `c:"unsigned long long a"`
	}
	for name, tt := range map[string]struct {
		m    Module
		want string
	}{
		"bad name":     {Module{Name: "a-b"}, "module name"},
		"dup kernel":   {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: scaleParams[executor.DevPtr]{}}, {Name: "k", Params: scaleParams[executor.DevPtr]{}}}}, "kernels[1].name"},
		"not a struct": {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: 3}}}, "not a struct"},
		"no tag":       {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: noTag{}}}}, "has no `c` tag"},
		"bad kind":     {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: badKind{}}}}, "every parameter is 8 bytes"},
		"dup param":    {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: dupName[executor.DevPtr]{}}}}, "missing or repeated"},
		"dup const":    {Module{Name: "m", Consts: []Const{{Name: "A"}, {Name: "A"}}}, "consts[1].name"},
	} {
		err := tt.m.Validate()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tt.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
	require.NoError(t, testModule.Validate())
}

func TestArgsAndDecode(t *testing.T) {
	b := executor.Buffer{ID: 3, Len: 16}
	args, err := Args(scaleParams[executor.Buffer]{Data: b, N: 5, Offset: -2, Factor: 0.5})
	require.NoError(t, err)
	require.Len(t, args, 4)
	_, err = Args(scaleParams[executor.DevPtr]{})
	assert.ErrorContains(t, err, "holds a device address")
	var got scaleParams[executor.DevPtr]
	require.NoError(t, Decode([]uint64{0x1000, 5, ^uint64(1), 0x3fe0000000000000}, &got))
	assert.Equal(t, scaleParams[executor.DevPtr]{Data: 0x1000, N: 5, Offset: -2, Factor: 0.5}, got)
	assert.ErrorContains(t, Decode([]uint64{1}, &got), "passed 1 arguments, the ABI declares 4")
	var host scaleParams[executor.Buffer]
	assert.ErrorContains(t, Decode([]uint64{1, 2, 3, 4}, &host), "Buffer handle")
	assert.ErrorContains(t, Decode(nil, got), "pointer")
	split, err := SplitArgs(splitParams[executor.Buffer]{Data: b})
	require.NoError(t, err)
	assert.Len(t, split, 1)
	_, err = SplitArgs(scaleParams[executor.Buffer]{Data: b})
	assert.ErrorContains(t, err, "phase_begin and phase_end")
	i, err := Index(scaleParams[executor.Buffer]{}, "Factor")
	require.NoError(t, err)
	assert.Equal(t, 3, i)
	_, err = Index(scaleParams[executor.Buffer]{}, "Nope")
	assert.ErrorContains(t, err, "no field Nope")
	assert.Equal(t, 3, MustIndex(scaleParams[executor.Buffer]{}, "Factor"))
	assert.Panics(t, func() { MustIndex(scaleParams[executor.Buffer]{}, "Nope") })
}

func TestCheckPTX(t *testing.T) {
	entry := func(name string, params ...string) string {
		var ps []string
		for i, p := range params {
			ps = append(ps, ".param ."+p+" "+name+"_param_"+string(rune('0'+i)))
		}
		return ".visible .entry " + name + "(\n\t" + strings.Join(ps, ",\n\t") + "\n)\n{\n}\n"
	}
	good := entry("scale", "u64", "u64", "u64", "u64") + entry("phased", "u64", "u64", "u64")
	require.NoError(t, testModule.CheckPTX([]byte(good)))
	for name, tt := range map[string]struct{ ptx, want string }{
		"missing":   {entry("scale", "u64", "u64", "u64", "u64"), "phased is declared in Go but is not an entry"},
		"count":     {entry("scale", "u64", "u64") + entry("phased", "u64", "u64", "u64"), "takes 2 parameters in the PTX, 4 in the Go ABI"},
		"width":     {entry("scale", "u64", "u32", "u64", "u64") + entry("phased", "u64", "u64", "u64"), "parameter 1 is .u32"},
		"undeclard": {good + entry("extra", "u64"), "PTX entry extra is not declared"},
	} {
		err := testModule.CheckPTX([]byte(tt.ptx))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tt.want, name)
	}
}

type stateParams[P Ptr] struct {
	Data P      `c:"float *data"`
	N    uint64 `c:"unsigned long long n"`
}

type stepParams[P Ptr] struct {
	stateParams[P] `c:"STATE_PARAMS"`
	Depth          uint64 `c:"unsigned long long depth"`
}

type runParams[P Ptr] struct {
	Out            P `c:"int *out"`
	stateParams[P] `c:"STATE_PARAMS"`
	Rounds         uint64 `c:"unsigned long long rounds"`
}

var groupModule = Module{Name: "grp", Kernels: []Kernel{
	{Name: "grp_step", Doc: "One step.", Params: stepParams[executor.DevPtr]{}},
	{Name: "grp_run", Doc: "Every step.", Params: runParams[executor.DevPtr]{}},
	{Name: "grp_step2", Params: stepParams[executor.DevPtr]{}},
}}

func TestHeaderGroups(t *testing.T) {
	h, err := groupModule.Header()
	require.NoError(t, err)
	s := string(h)
	group := "// Parameters shared by grp_step, grp_run and grp_step2.\n#define STATE_PARAMS \\\n    float *data, \\\n    unsigned long long n\n"
	assert.Contains(t, s, group)
	assert.Less(t, strings.Index(s, group), strings.Index(s, "#define GRP_STEP_PARAMS"), "a group is defined before its first kernel")
	assert.Contains(t, s, "// One step.\n#define GRP_STEP_PARAMS \\\n    STATE_PARAMS, \\\n    unsigned long long depth\n")
	assert.Contains(t, s, "#define GRP_RUN_PARAMS \\\n    int *out, \\\n    STATE_PARAMS, \\\n    unsigned long long rounds\n", "a group stands where it is embedded")
	assert.Contains(t, s, "#define GRP_STEP2_PARAMS GRP_STEP_PARAMS\n")
	assert.Equal(t, 1, strings.Count(s, "float *data"), "the group's list is written once")
}

func TestGroupArgsDecodeIndex(t *testing.T) {
	b := executor.Buffer{ID: 1, Len: 8}
	args, err := Args(runParams[executor.Buffer]{Out: b, stateParams: stateParams[executor.Buffer]{Data: b, N: 5}, Rounds: 3})
	require.NoError(t, err)
	assert.Equal(t, []executor.Arg{executor.Ptr(b), executor.Ptr(b), executor.U64(5), executor.U64(3)}, args)
	var got runParams[executor.DevPtr]
	require.NoError(t, Decode([]uint64{0x10, 0x20, 5, 3}, &got))
	assert.Equal(t, runParams[executor.DevPtr]{Out: 0x10, stateParams: stateParams[executor.DevPtr]{Data: 0x20, N: 5}, Rounds: 3}, got)
	for field, want := range map[string]int{"Out": 0, "Data": 1, "N": 2, "Rounds": 3} {
		i, err := Index(runParams[executor.Buffer]{}, field)
		require.NoError(t, err, field)
		assert.Equal(t, want, i, field)
	}
	_, err = Index(runParams[executor.Buffer]{}, "stateParams")
	assert.ErrorContains(t, err, "no field stateParams", "a group is not a parameter")
	assert.Equal(t, "STATE_PARAMS", list(mustParams(t, stepParams[executor.DevPtr]{}), 0)[0])
}

func mustParams(t *testing.T, v any) []param {
	t.Helper()
	ps, err := params(v)
	require.NoError(t, err)
	return ps
}

func TestGroupValidate(t *testing.T) {
	type untagged[P Ptr] struct {
		stateParams[P]
		Depth uint64 `c:"unsigned long long depth"`
	}
	type otherState[P Ptr] struct {
		Data P `c:"float *data"`
	}
	type clash[P Ptr] struct {
		otherState[P] `c:"STATE_PARAMS"`
		Depth         uint64 `c:"unsigned long long depth"`
	}
	type twice[P Ptr] struct {
		stateParams[P] `c:"STATE_PARAMS"`
		More           uint64 `c:"unsigned long long n"`
	}
	for name, tt := range map[string]struct {
		m    Module
		want string
	}{
		"untagged":  {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: untagged[executor.DevPtr]{}}}}, "not a macro name"},
		"two lists": {Module{Name: "m", Kernels: []Kernel{{Name: "a", Params: stepParams[executor.DevPtr]{}}, {Name: "b", Params: clash[executor.DevPtr]{}}}}, "has two parameter lists"},
		"dup name":  {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: twice[executor.DevPtr]{}}}}, "missing or repeated"},
		"const":     {Module{Name: "m", Kernels: []Kernel{{Name: "k", Params: stepParams[executor.DevPtr]{}}}, Consts: []Const{{Name: "STATE_PARAMS"}}}, "has the name of a constant"},
		"kernel":    {Module{Name: "m", Kernels: []Kernel{{Name: "state", Params: stepParams[executor.DevPtr]{}}}}, "kernel's parameter macro"},
	} {
		err := tt.m.Validate()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tt.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
	require.NoError(t, groupModule.Validate())
}

func TestGenerate(t *testing.T) {
	var stderr strings.Builder
	assert.Equal(t, 2, generate(groupModule, nil, &stderr))
	assert.Contains(t, stderr.String(), "usage: genheader OUT.h")
	out := t.TempDir() + "/grp_abi.h"
	stderr.Reset()
	require.Equal(t, 0, generate(groupModule, []string{out}, &stderr), stderr.String())
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	want, err := groupModule.Header()
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, 1, generate(Module{Name: "a-b"}, []string{out}, &stderr))
	assert.Contains(t, stderr.String(), "genheader: module name")
	assert.Equal(t, 1, generate(groupModule, []string{t.TempDir() + "/missing/x.h"}, &stderr), "an unwritable path")
}

func TestNamesAndCheckHeaderFile(t *testing.T) {
	require.Equal(t, len(testModule.Kernels), len(testModule.Names()))
	for i, k := range testModule.Kernels {
		require.Equal(t, k.Name, testModule.Names()[i])
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.h"), filepath.Join(dir, "bad.h")
	h, err := testModule.Header()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(good, h, 0o644))
	require.NoError(t, os.WriteFile(bad, append(h, '\n'), 0o644))
	require.NoError(t, testModule.CheckHeaderFile(good, "./x"))
	require.ErrorContains(t, testModule.CheckHeaderFile(bad, "./x"), "is stale")
	require.ErrorContains(t, testModule.CheckHeaderFile(bad, "./x"), "Fix: run go generate ./x, then make ptx")
	require.ErrorContains(t, testModule.CheckHeaderFile(filepath.Join(dir, "none.h"), "./x"), "Fix: run go generate ./x")
}
