// Package decode is a latency-bound LLM decode step at batch 1: L layers
// over a hidden state x of H floats, each
//
//	xn = x * rsqrt(mean(x^2) + eps) * g_l     decode_rmsnorm, 1 tile
//	h  = W_up_l · xn                          decode_gemv, I rows, RowsUp a tile
//	a  = silu(h)                              decode_silu, on the up tiles' rows
//	d  = W_down_l · a                         decode_gemv, H rows, RowsDown a tile
//	x += d                                    decode_resadd, on the down tiles' rows
//
// with f32 activations, bf16 weights (random, read-only) and per-layer f32
// gains in [0.5, 1.5). Each wave's block is Block threads. The GEMV waves
// have a prologue: they copy their tile's weight rows (64 KiB at the
// default sizes) into shared memory before gp_wait, so a layer's weight
// stream overlaps the waves before it; the step is bound by reading
// WeightBytes from memory. Dependencies: rmsnorm_l after all of resadd_{l-1},
// the up GEMV after all of rmsnorm_l, silu tile by tile after the up GEMV,
// the down GEMV after all of silu, resadd tile by tile after the down
// GEMV.
//
// The weights are uniform in ±sqrt(3/H) (W_up) and ±0.5·sqrt(3/I)
// (W_down), so that x stays O(1) over 32 layers. The output is x, within a
// relative L2 error of Tolerance of the Go reference, which accumulates in
// float64 (the device accumulates in fp32, in another order).
//
// decode.json is Workload(DefaultLayers, DefaultHidden,
// DefaultIntermediate); regenerate it with `go generate` here, which runs
// ./internal/gen.
package decode

//go:generate go run ./internal/gen -o decode.json
//go:generate go run ./internal/gen -layers 2 -hidden 256 -intermediate 512 -o decode-small.json

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/examples/internal/wjson"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

//go:embed kernels/decode.ptx
var ptx []byte

// ModulePath is the module's path in the generated workload.
const ModulePath = "kernels/decode.ptx"

// PTX returns a copy of the module's relocatable PTX.
func PTX() []byte { return append([]byte(nil), ptx...) }

// Sizes, tiles and constants of the step.
const (
	DefaultLayers       = 32
	DefaultHidden       = 2048
	DefaultIntermediate = 4096
	// RowsUp and RowsDown are the rows of a GEMV tile: RowsUp*H and
	// RowsDown*I bf16 weights, 64 KiB each at the default sizes.
	RowsUp   = 16
	RowsDown = 8
	// Block is every wave's block: the persistent kernel runs all waves
	// with its largest block anyway.
	Block = 256
	// Eps is the RMSNorm epsilon.
	Eps = float32(1e-5)
	// Tolerance is x's relative L2 error against the reference.
	Tolerance = 1e-3
	// MaxLayers bounds the layers, and MaxWeightBytes the weights.
	MaxLayers      = 1024
	MaxWeightBytes = 64 << 30
	// normShared is decode_rmsnorm's shared memory: one float per warp.
	normShared = 4 * 32
)

// Seeds of the random fills.
const (
	seedX, seedGain, seedUp, seedDown = 1, 2, 3, 4
)

// Wave ids of layer l: five waves a layer.
const (
	WaveNorm = iota
	WaveUp
	WaveSilu
	WaveDown
	WaveResAdd
	WavesPerLayer
)

// WeightBytes is the bytes a step reads from its read-only buffers: the
// bf16 up and down matrices of every layer (4·L·H·I) and the f32 gains
// (4·L·H). A benchmark divides it by the step's time for the bandwidth.
func WeightBytes(layers, hidden, intermediate int) uint64 {
	l, h, i := uint64(max(layers, 0)), uint64(max(hidden, 0)), uint64(max(intermediate, 0))
	return 4*l*h*i + 4*l*h
}

// Validate checks the sizes Workload takes.
func Validate(layers, hidden, intermediate int) error {
	maxHidden := megakernel.MaxWaveSharedBytes / (2 * RowsUp)
	maxInter := megakernel.MaxWaveSharedBytes / (2 * RowsDown)
	maxHidden -= maxHidden % RowsDown
	maxInter -= maxInter % RowsUp
	switch {
	case layers < 1 || layers > MaxLayers:
		return fmt.Errorf("decode: layers %d is outside 1..%d. Fix: give 1 to %d layers (default %d)", layers, MaxLayers, MaxLayers, DefaultLayers)
	case hidden < RowsDown || hidden%RowsDown != 0:
		return fmt.Errorf("decode: hidden %d is not a positive multiple of %d (the down GEMV's rows per tile, and 8 bf16 weights a 16-byte load). Fix: give a multiple of %d, such as %d", hidden, RowsDown, RowsDown, DefaultHidden)
	case hidden > maxHidden:
		return fmt.Errorf("decode: hidden %d needs %d bytes of shared memory for an up-GEMV tile of %d rows, above %d. Fix: give a hidden size of at most %d", hidden, 2*RowsUp*hidden, RowsUp, megakernel.MaxWaveSharedBytes, maxHidden)
	case intermediate < RowsUp || intermediate%RowsUp != 0:
		return fmt.Errorf("decode: intermediate %d is not a positive multiple of %d (the up GEMV's rows per tile). Fix: give a multiple of %d, such as %d", intermediate, RowsUp, RowsUp, DefaultIntermediate)
	case intermediate > maxInter:
		return fmt.Errorf("decode: intermediate %d needs %d bytes of shared memory for a down-GEMV tile of %d rows, above %d. Fix: give an intermediate size of at most %d", intermediate, 2*RowsDown*intermediate, RowsDown, megakernel.MaxWaveSharedBytes, maxInter)
	case WeightBytes(layers, hidden, intermediate) > MaxWeightBytes:
		return fmt.Errorf("decode: layers %d, hidden %d and intermediate %d make %d bytes of weights, above %d. Fix: give fewer layers or smaller sizes", layers, hidden, intermediate, WeightBytes(layers, hidden, intermediate), uint64(MaxWeightBytes))
	}
	return nil
}

// Workload returns the step's workload JSON, or an error naming the size
// to change.
func Workload(layers, hidden, intermediate int) ([]byte, error) {
	if err := Validate(layers, hidden, intermediate); err != nil {
		return nil, err
	}
	L, H, I := uint64(layers), uint64(hidden), uint64(intermediate)
	w := &wjson.Workload{
		Name: fmt.Sprintf("decode-l%d-h%d-i%d", layers, hidden, intermediate),
		Description: fmt.Sprintf("One batch-1 LLM decode step: %d layers of RMSNorm, up GEMV (%d x %d bf16), SiLU, down GEMV (%d x %d bf16) and residual add; %d bytes of bf16 weights and f32 gains",
			layers, intermediate, hidden, hidden, intermediate, WeightBytes(layers, hidden, intermediate)),
		Device:     "h200",
		Module:     ModulePath,
		BytesMoved: WeightBytes(layers, hidden, intermediate),
		Buffers: []wjson.Buffer{
			{Name: "x", Bytes: 4 * H, Init: wjson.Random(seedX, "f32")},
			{Name: "gain", Bytes: 4 * L * H, Init: wjson.RandomRange(seedGain, "f32", 0.5, 1.5), ReadOnly: true},
			{Name: "w_up", Bytes: 2 * L * I * H, Init: wjson.RandomRange(seedUp, "bf16", -UpRange(hidden), UpRange(hidden)), ReadOnly: true},
			{Name: "w_down", Bytes: 2 * L * H * I, Init: wjson.RandomRange(seedDown, "bf16", -DownRange(intermediate), DownRange(intermediate)), ReadOnly: true},
			{Name: "xn", Bytes: 4 * H},
			{Name: "h", Bytes: 4 * I},
			{Name: "a", Bytes: 4 * I},
			{Name: "d", Bytes: 4 * H},
		},
		Outputs: []wjson.Output{{Buffer: "x", Type: "f32", Tolerance: wjson.Ptr(Tolerance)}},
	}
	for l := range uint64(layers) {
		id := func(k int) int { return int(l)*WavesPerLayer + k }
		kern := func(fn string, tiles, shared uint64, prologue bool, args ...wjson.Arg) wjson.Kernel {
			return wjson.Kernel{Function: fn, Tiles: tiles, Block: Block, SharedBytes: shared, Prologue: prologue, Args: args}
		}
		w.Waves = append(w.Waves,
			wjson.Wave{ID: id(WaveNorm), Name: fmt.Sprintf("rmsnorm-%d", l), Kernel: kern("decode_rmsnorm", 1, normShared, false,
				wjson.Buf("xn"), wjson.Buf("x"), wjson.BufAt("gain", 4*l*H, 4*H), wjson.U32(uint32(H)), wjson.F32(Eps))},
			wjson.Wave{ID: id(WaveUp), Name: fmt.Sprintf("up-%d", l), Kernel: kern("decode_gemv", I/RowsUp, 2*RowsUp*H, true,
				wjson.Buf("h"), wjson.Buf("xn"), wjson.BufAt("w_up", 2*l*I*H, 2*I*H), wjson.U32(uint32(H)), wjson.U32(RowsUp))},
			wjson.Wave{ID: id(WaveSilu), Name: fmt.Sprintf("silu-%d", l), Kernel: kern("decode_silu", I/RowsUp, 0, false,
				wjson.Buf("a"), wjson.Buf("h"), wjson.U32(RowsUp))},
			wjson.Wave{ID: id(WaveDown), Name: fmt.Sprintf("down-%d", l), Kernel: kern("decode_gemv", H/RowsDown, 2*RowsDown*I, true,
				wjson.Buf("d"), wjson.Buf("a"), wjson.BufAt("w_down", 2*l*H*I, 2*H*I), wjson.U32(uint32(I)), wjson.U32(RowsDown))},
			wjson.Wave{ID: id(WaveResAdd), Name: fmt.Sprintf("resadd-%d", l), Kernel: kern("decode_resadd", H/RowsDown, 0, false,
				wjson.Buf("x"), wjson.Buf("d"), wjson.U32(RowsDown))},
		)
		if l > 0 {
			w.Dependencies = append(w.Dependencies, wjson.Dep{Before: id(WaveResAdd - WavesPerLayer), After: id(WaveNorm)})
		}
		w.Dependencies = append(w.Dependencies,
			wjson.Dep{Before: id(WaveNorm), After: id(WaveUp)},
			wjson.Dep{Before: id(WaveUp), After: id(WaveSilu), Tiles: "same"},
			wjson.Dep{Before: id(WaveSilu), After: id(WaveDown)},
			wjson.Dep{Before: id(WaveDown), After: id(WaveResAdd), Tiles: "same"},
		)
	}
	return wjson.Marshal(w)
}

// UpRange and DownRange bound the up and down weights: uniform in ±r has
// variance r²/3, 1/H for W_up (so h has about xn's scale) and 1/(4I) for
// W_down (so each layer adds a fraction of x's scale).
func UpRange(hidden int) float64         { return math.Sqrt(3 / float64(hidden)) }
func DownRange(intermediate int) float64 { return 0.5 * math.Sqrt(3/float64(intermediate)) }

// Funcs returns the Go references of the wave functions, by name.
func Funcs() map[string]wavedag.HostFunc {
	return map[string]wavedag.HostFunc{
		"decode_rmsnorm": rmsnorm,
		"decode_gemv":    gemv,
		"decode_silu":    silu,
		"decode_resadd":  resadd,
	}
}

// rmsnorm: args xn, x, g, n, eps.
func rmsnorm(t *wavedag.Tile) error {
	n := uint64(t.U32(3))
	xn, x, g, eps := t.Float32s(0, 0, n), t.Float32s(1, 0, n), t.Float32s(2, 0, n), t.F32(4)
	if t.Err() != nil {
		return t.Err()
	}
	var sum float64
	for _, v := range x {
		sum += float64(v) * float64(v)
	}
	r := 1 / math.Sqrt(sum/float64(n)+float64(eps))
	for i := range xn {
		xn[i] = float32(float64(x[i]) * r * float64(g[i]))
	}
	return nil
}

// gemv: args out, in, W, K, R. As on the device it copies the tile's
// weights into shared memory before it waits, then reads the input.
func gemv(t *wavedag.Tile) error {
	k, rows := uint64(t.U32(3)), uint64(t.U32(4))
	if t.Err() != nil {
		return t.Err()
	}
	w := t.Uint16s(2, uint64(t.Index)*rows*k, rows*k)
	s := t.Shared()
	if t.Err() != nil {
		return t.Err()
	}
	if uint64(len(s)) < 2*rows*k {
		return fmt.Errorf("decode_gemv has %d bytes of shared memory for %d rows of %d bf16 weights. Fix: give the wave shared_bytes %d", len(s), rows, k, 2*rows*k)
	}
	for i, v := range w {
		binary.LittleEndian.PutUint16(s[2*i:], v)
	}
	t.Wait()
	out, in := t.Float32s(0, uint64(t.Index)*rows, rows), t.Float32s(1, 0, k)
	if t.Err() != nil {
		return t.Err()
	}
	for r := range rows {
		var acc float64
		row := s[2*r*k:]
		for c := range k {
			acc += float64(wavedag.BF16Float(binary.LittleEndian.Uint16(row[2*c:]))) * float64(in[c])
		}
		out[r] = float32(acc)
	}
	return nil
}

// silu: args a, h, R.
func silu(t *wavedag.Tile) error {
	rows := uint64(t.U32(2))
	a, h := t.Float32s(0, uint64(t.Index)*rows, rows), t.Float32s(1, uint64(t.Index)*rows, rows)
	if t.Err() != nil {
		return t.Err()
	}
	for i, v := range h {
		a[i] = float32(float64(v) / (1 + math.Exp(-float64(v))))
	}
	return nil
}

// resadd: args x, d, R.
func resadd(t *wavedag.Tile) error {
	rows := uint64(t.U32(2))
	x, d := t.Float32s(0, uint64(t.Index)*rows, rows), t.Float32s(1, uint64(t.Index)*rows, rows)
	if t.Err() != nil {
		return t.Err()
	}
	for i := range x {
		x[i] += d[i]
	}
	return nil
}
