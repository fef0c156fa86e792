// Package quickstart is the README's wave DAG: four f32 waves over the
// 4096 elements of x, in 16 tiles of 256 threads each,
//
//	wave 0  qs_square  out0 = x * x
//	wave 1  qs_axpy    out1 = a * out0 + x   (after wave 0, tile by tile)
//	wave 2  qs_scale   out2 = b * out0       (after all of wave 0)
//	wave 3  qs_add     y    = out1 + out2    (after waves 1 and 2, tile by tile)
//
// with a = 3 and b = 0.5. quickstart.json is the workload; its module,
// kernels/quickstart.ptx, is compiled from kernels/quickstart.cu (see the
// examples package for the command). Funcs are the Go references of the
// four wave functions, which wavedag.Reference and the emulated arms run.
package quickstart

import (
	_ "embed"

	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

//go:embed kernels/quickstart.ptx
var ptx []byte

//go:embed quickstart.json
var workload []byte

// ModulePath is the module's path in quickstart.json.
const ModulePath = "kernels/quickstart.ptx"

// PTX returns a copy of the module's relocatable PTX.
func PTX() []byte { return append([]byte(nil), ptx...) }

// Workload returns a copy of quickstart.json.
func Workload() []byte { return append([]byte(nil), workload...) }

// Funcs returns the Go references of the wave functions, by name.
func Funcs() map[string]wavedag.HostFunc {
	return map[string]wavedag.HostFunc{
		"qs_square": square,
		"qs_axpy":   axpy,
		"qs_scale":  scale,
		"qs_add":    add,
	}
}

// span returns the tile's elements [lo, hi) of n.
func span(t *wavedag.Tile, n uint32) (lo, hi uint64) {
	lo = min(uint64(t.Index)*uint64(t.Threads), uint64(n))
	return lo, min(lo+uint64(t.Threads), uint64(n))
}

// square: args out0, x, n.
func square(t *wavedag.Tile) error {
	lo, hi := span(t, t.U32(2))
	out0, x := t.Float32s(0, lo, hi-lo), t.Float32s(1, lo, hi-lo)
	if t.Err() != nil {
		return t.Err()
	}
	for i := range out0 {
		out0[i] = x[i] * x[i]
	}
	return nil
}

// axpy: args out1, out0, x, a, n.
func axpy(t *wavedag.Tile) error {
	lo, hi := span(t, t.U32(4))
	out1, out0, x, a := t.Float32s(0, lo, hi-lo), t.Float32s(1, lo, hi-lo), t.Float32s(2, lo, hi-lo), t.F32(3)
	if t.Err() != nil {
		return t.Err()
	}
	for i := range out1 {
		out1[i] = a*out0[i] + x[i]
	}
	return nil
}

// scale: args out2, out0, b, n.
func scale(t *wavedag.Tile) error {
	lo, hi := span(t, t.U32(3))
	out2, out0, b := t.Float32s(0, lo, hi-lo), t.Float32s(1, lo, hi-lo), t.F32(2)
	if t.Err() != nil {
		return t.Err()
	}
	for i := range out2 {
		out2[i] = b * out0[i]
	}
	return nil
}

// add: args y, out1, out2, n.
func add(t *wavedag.Tile) error {
	lo, hi := span(t, t.U32(3))
	y, out1, out2 := t.Float32s(0, lo, hi-lo), t.Float32s(1, lo, hi-lo), t.Float32s(2, lo, hi-lo)
	if t.Err() != nil {
		return t.Err()
	}
	for i := range y {
		y[i] = out1[i] + out2[i]
	}
	return nil
}
