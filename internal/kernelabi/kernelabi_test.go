package kernelabi

import (
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ptr interface {
	executor.Buffer | executor.DevPtr
}

type scaleParams[P ptr] struct {
	Data   P       `c:"float *data"`
	N      uint64  `c:"unsigned long long n"`
	Offset int64   `c:"long long offset"`
	Factor float64 `c:"double factor"`
}

type splitParams[P ptr] struct {
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
	type dupName[P ptr] struct {
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
