// Package extest holds what the examples' tests share: files that serve
// an embedded module, and parsing and running a workload with the Go
// references.
package extest

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// Files serves ptx for the module path module and refuses every other
// path.
func Files(module string, ptx []byte) wavedag.Files {
	return func(path string) ([]byte, error) {
		if path != module {
			return nil, fmt.Errorf("%s is not %s, the only file here. Fix: name the module %s", path, module, module)
		}
		return ptx, nil
	}
}

// Run parses the workload data with files and runs it with funcs on the
// CPU, returning the program and its outputs.
func Run(t testing.TB, source string, data []byte, files wavedag.Files, funcs map[string]wavedag.HostFunc) (*wavedag.Program, [][]byte) {
	t.Helper()
	p, err := wavedag.Parse(source, data, files, wavedag.LoadOptions{})
	require.NoError(t, err)
	out, err := wavedag.Reference(p, funcs)
	require.NoError(t, err)
	require.Len(t, out, len(p.Workload.Outputs))
	return p, out
}

// Initial returns the initial contents of the named buffer of p.
func Initial(t testing.TB, p *wavedag.Program, name string) []byte {
	t.Helper()
	i := p.Workload.BufferIndexOf(name)
	require.GreaterOrEqual(t, i, 0, "buffer %s", name)
	return p.InitialContents(i)
}

// U32s decodes little-endian uint32s.
func U32s(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// F32s decodes little-endian float32s.
func F32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// U16s decodes little-endian uint16s (bfloat16 words).
func U16s(b []byte) []uint16 {
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// U32Bytes encodes uint32s little-endian.
func U32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// F32Bytes encodes float32s little-endian.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
