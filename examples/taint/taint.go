// Package taint is the 31-wave taint-dataflow DAG of `gpuplan plan`'s
// default example (cmd/gpuplan/plan_default.json) with real kernels: the
// same wave ids, names, dependencies, per-wave frontier, scratch and
// output bytes, analysis, graph, schedule sample, launch overhead and
// iteration bound, planned for an H200, every wave running taint_step
// (kernels/taint.cu).
//
// Wave w writes buffer "out-W", its output_bytes as n_w u32 elements, with
// out[i] a 32-bit hash of salt_w, i and in_p[i mod n_p] for each producer p
// in the default example's dependency order; the four load-shard waves,
// which have no producers, read a quarter of the random, read-only
// "program" buffer (64 MiB) each. The outputs are the report's buffer
// (out-30) and merge-summaries' (out-29), compared exactly.
//
// taint.json is Workload(); regenerate it with `go generate` here, which
// runs ./internal/gen.
package taint

//go:generate go run ./internal/gen -o taint.json

import (
	_ "embed"
	"fmt"
	"github.com/gpuplan/gpuplan/examples/internal/mix"

	"github.com/gpuplan/gpuplan/examples/internal/wjson"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

//go:embed kernels/taint.ptx
var ptx []byte

// ModulePath is the module's path in the generated workload.
const ModulePath = "kernels/taint.ptx"

// PTX returns a copy of the module's relocatable PTX.
func PTX() []byte { return append([]byte(nil), ptx...) }

// Funcs returns the Go reference of taint_step.
func Funcs() map[string]wavedag.HostFunc {
	return map[string]wavedag.HostFunc{"taint_step": step}
}

// Block is every wave's block, and PerThread the elements each thread
// handles: a tile is Block*PerThread elements.
const (
	Block     = 256
	PerThread = 16
)

// ProgramBytes is the size of the random input buffer at full scale.
const ProgramBytes = 64 << 20

// MaxShift is the largest scale shift Scaled takes.
const MaxShift = 10

// wave is one wave of the default example.
type wave struct {
	name                           string
	frontier, scratch, outputBytes uint64
}

// waves and deps are cmd/gpuplan/plan_default.json's, in its order.
var waves = []wave{
	{"load-shard-0", 8388608, 16777216, 4194304},
	{"load-shard-1", 8388608, 16777216, 4194304},
	{"load-shard-2", 8388608, 16777216, 4194304},
	{"load-shard-3", 8388608, 16777216, 4194304},
	{"build-cfg-0", 12582912, 25165824, 8388608},
	{"build-cfg-1", 12582912, 25165824, 8388608},
	{"build-cfg-2", 12582912, 25165824, 8388608},
	{"build-cfg-3", 12582912, 25165824, 8388608},
	{"ssa-0", 16777216, 33554432, 16777216},
	{"ssa-1", 16777216, 33554432, 16777216},
	{"ssa-2", 16777216, 33554432, 16777216},
	{"ssa-3", 16777216, 33554432, 16777216},
	{"call-graph", 50331648, 67108864, 25165824},
	{"reaching-defs-0", 33554432, 50331648, 16777216},
	{"reaching-defs-1", 33554432, 50331648, 16777216},
	{"reaching-defs-2", 33554432, 50331648, 16777216},
	{"reaching-defs-3", 33554432, 50331648, 16777216},
	{"liveness-0", 25165824, 33554432, 8388608},
	{"liveness-1", 25165824, 33554432, 8388608},
	{"liveness-2", 25165824, 33554432, 8388608},
	{"liveness-3", 25165824, 33554432, 8388608},
	{"points-to-0", 67108864, 100663296, 33554432},
	{"points-to-1", 67108864, 100663296, 33554432},
	{"points-to-2", 67108864, 100663296, 33554432},
	{"points-to-3", 67108864, 100663296, 33554432},
	{"taint-0", 16777216, 25165824, 4194304},
	{"taint-1", 16777216, 25165824, 4194304},
	{"taint-2", 16777216, 25165824, 4194304},
	{"taint-3", 16777216, 25165824, 4194304},
	{"merge-summaries", 8388608, 16777216, 2097152},
	{"report", 1048576, 1048576, 65536},
}

var deps = [][2]int{
	{0, 4}, {1, 5}, {2, 6}, {3, 7}, {4, 8}, {5, 9}, {6, 10}, {7, 11}, {8, 12}, {9, 12}, {10, 12}, {11, 12},
	{8, 17}, {9, 18}, {10, 19}, {11, 20}, {8, 13}, {12, 13}, {9, 14}, {12, 14}, {10, 15}, {12, 15}, {11, 16},
	{12, 16}, {12, 21}, {13, 21}, {12, 22}, {14, 22}, {12, 23}, {15, 23}, {12, 24}, {16, 24}, {21, 25},
	{13, 25}, {17, 25}, {22, 26}, {14, 26}, {18, 26}, {23, 27}, {15, 27}, {19, 27}, {24, 28}, {16, 28},
	{20, 28}, {25, 29}, {26, 29}, {27, 29}, {28, 29}, {29, 30}, {25, 30},
}

// The outputs: the report's and merge-summaries' waves.
const (
	reportWave = 30
	mergeWave  = 29
)

// programSeed seeds the program buffer's random fill.
const programSeed = 12

// Salt is wave w's salt argument.
func Salt(w int) uint32 { return 0x9e3779b9 * uint32(w+1) }

// OutputBuffer names wave w's output buffer.
func OutputBuffer(w int) string { return fmt.Sprintf("out-%d", w) }

// Workload returns the full-size workload, taint.json.
func Workload() []byte {
	b, err := generate(0)
	if err != nil {
		panic(err) // generate(0) has no input to refuse; a test checks it
	}
	return b
}

// Scaled returns the workload with every wave's frontier, scratch and
// output bytes and the program buffer divided by 2^shift (shift 0 is
// Workload()); the graph, sample and dependencies stay as they are. The
// tests run it at a fraction of the size.
func Scaled(shift int) ([]byte, error) {
	if shift < 0 || shift > MaxShift {
		return nil, fmt.Errorf("taint: shift %d is outside 0..%d (the report wave's 64 KiB must stay at least 64 bytes). Fix: give a shift from 0 to %d", shift, MaxShift, MaxShift)
	}
	return generate(shift)
}

func generate(shift int) ([]byte, error) {
	name := "taint-dataflow-12m"
	desc := "The taint-dataflow DAG of gpuplan's default plan example (cmd/gpuplan/plan_default.json) with real kernels, on one H200: every wave runs taint_step, an exact 32-bit hash of its producers' outputs"
	if shift > 0 {
		name = fmt.Sprintf("%s-div%d", name, 1<<shift)
		desc += fmt.Sprintf(", with the per-wave bytes and the program buffer divided by %d", 1<<shift)
	}
	w := &wjson.Workload{
		Name:                name,
		Description:         desc,
		Analysis:            wjson.Ptr("dataflow"),
		Device:              "h200",
		LaunchOverheadNS:    wjson.Ptr(4000.0),
		Graph:               &wjson.Graph{NodeCount: 12000000, EdgeCount: 48000000, BytesPerNode: 32, BytesPerEdge: 8},
		ScheduleSample:      &wjson.Sample{DispatchCostNS: 12000, FrontierDensity: 0.35, ReadbackBytes: 65536},
		MaxDeviceIterations: wjson.Ptr(uint32(512)),
		Module:              ModulePath,
	}
	program := uint64(ProgramBytes) >> shift
	w.Buffers = append(w.Buffers, wjson.Buffer{Name: "program", Bytes: program, Init: wjson.Random(programSeed, "u32"), ReadOnly: true})
	for i, wv := range waves {
		w.Buffers = append(w.Buffers, wjson.Buffer{Name: OutputBuffer(i), Bytes: wv.outputBytes >> shift})
	}
	w.Outputs = []wjson.Output{{Buffer: OutputBuffer(reportWave), Type: "u32"}, {Buffer: OutputBuffer(mergeWave), Type: "u32"}}
	producers := make([][]int, len(waves))
	for _, d := range deps {
		producers[d[1]] = append(producers[d[1]], d[0])
		w.Dependencies = append(w.Dependencies, wjson.Dep{Before: d[0], After: d[1]})
	}
	sources := 0
	for i, wv := range waves {
		n := (wv.outputBytes >> shift) / 4
		args := []wjson.Arg{wjson.Buf(OutputBuffer(i)), wjson.U32(uint32(n)), wjson.U32(Salt(i)), wjson.U32(uint32(max(1, len(producers[i]))))}
		if len(producers[i]) == 0 {
			// A slice of the program of its own: the first four waves are
			// the only ones without producers.
			slice := program / 4
			args = append(args, wjson.BufAt("program", uint64(sources)*slice, slice), wjson.U32(uint32(slice/4)))
			sources++
		}
		for _, p := range producers[i] {
			args = append(args, wjson.Buf(OutputBuffer(p)), wjson.U32(uint32((waves[p].outputBytes>>shift)/4)))
		}
		per := uint64(Block * PerThread)
		w.Waves = append(w.Waves, wjson.Wave{ID: i, Name: wv.name,
			FrontierBytes: wjson.Ptr(wv.frontier >> shift), ScratchBytes: wjson.Ptr(wv.scratch >> shift), OutputBytes: wjson.Ptr(wv.outputBytes >> shift),
			Kernel: wjson.Kernel{Function: "taint_step", Tiles: (n + per - 1) / per, Block: Block, Args: args}})
	}
	if sources != 4 {
		return nil, fmt.Errorf("taint: %d waves without producers, not 4. Fix: give each source wave a quarter of the program buffer", sources)
	}
	return wjson.Marshal(w)
}

// step is taint_step's reference: args out, n, salt, np, then per
// producer in, n_in.
func step(t *wavedag.Tile) error {
	n, salt, np := t.U32(1), t.U32(2), t.U32(3)
	if t.Err() != nil {
		return t.Err()
	}
	per := uint64(PerThread) * uint64(t.Threads)
	lo := min(uint64(t.Index)*per, uint64(n))
	hi := min(lo+per, uint64(n))
	out := t.Uint32s(0, lo, hi-lo)
	ins := make([][]uint32, np)
	for p := range ins {
		ins[p] = t.Uint32s(4+2*p, 0, uint64(t.U32(5+2*p)))
	}
	if t.Err() != nil {
		return t.Err()
	}
	for k := range out {
		i := uint32(lo) + uint32(k)
		h := mix.Fmix32(salt ^ (i * 0x9e3779b9))
		for p, in := range ins {
			h = mix.Fmix32((h^in[i%uint32(len(in))])*0x27d4eb2d + uint32(p))
		}
		out[k] = h
	}
	return nil
}
