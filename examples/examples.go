// Package examples gathers gpuplan's example wave DAGs, each a workload
// with real CUDA kernels (kernels/*.cu, compiled to the committed
// relocatable PTX beside it) and the Go references of its wave functions:
//
//   - quickstart: the README's four f32 waves over 4096 elements
//     (square, axpy and scale side by side, add), quickstart.json.
//   - taint: the 31-wave taint-dataflow DAG of `gpuplan plan`'s default
//     example, every wave an exact 32-bit hash of its producers' outputs,
//     taint.json.
//   - decode: a batch-1 LLM decode step (RMSNorm, up GEMV, SiLU, down
//     GEMV, residual add per layer) with bf16 weights streamed into shared
//     memory in the GEMVs' prologues, decode.json (32 layers, H = 2048,
//     I = 4096) and decode.Workload for other sizes.
//   - synthetic: generated chains and wide random DAGs of almost empty
//     waves (synthetic.Chain, Wide and Spec), to measure the cost of
//     ordering waves; no committed JSON.
//
// Funcs merges every example's references, for running any of them with
// wavedag.Reference or the emulated arms. Wave function names carry the
// example's prefix (qs_, taint_, decode_, syn_), so they never collide.
//
// Each kernels/NAME.cu starts with "// gpuplan: relocatable device code"
// and includes gpuplan_wave.h; its PTX is compiled from the repository
// root with
//
//	nvcc -ptx -arch=compute_80 -O3 -std=c++14 -lineinfo -rdc=true \
//	    -I workloads/wavedag/kernels -o examples/X/kernels/X.ptx examples/X/kernels/X.cu
package examples

import (
	"github.com/gpuplan/gpuplan/examples/decode"
	"github.com/gpuplan/gpuplan/examples/quickstart"
	"github.com/gpuplan/gpuplan/examples/synthetic"
	"github.com/gpuplan/gpuplan/examples/taint"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// sources are the examples' reference sets, in the order Funcs merges
// them.
var sources = []func() map[string]wavedag.HostFunc{quickstart.Funcs, taint.Funcs, decode.Funcs, synthetic.Funcs}

// Funcs returns the Go references of every example's wave functions, by
// name. The names are distinct across the examples (a test checks it);
// were two the same, the later example's would win.
func Funcs() map[string]wavedag.HostFunc {
	out := map[string]wavedag.HostFunc{}
	for _, f := range sources {
		for name, fn := range f() {
			out[name] = fn
		}
	}
	return out
}

// Recorded is one example run whose evidence the repository records:
// Name is the evidence file's name (without .csv) and the workload's, and
// either Path (a workload file, relative to the repository root) or Spec (a
// generated DAG, as gpuplan run takes it) says what runs.
type Recorded struct {
	Name string
	Path string
	Spec string
	// Args are gpuplan run's flags for the recording.
	Args []string
}

// Records lists the example runs scripts/record-run.sh records and the
// gate fingerprints: the targets, measured on an H200.
func Records() []Recorded {
	return []Recorded{
		{Name: "chain-1000-1", Spec: "gen:chain:1000:1", Args: []string{"--samples", "20"}},
		{Name: "chain-1000-132", Spec: "gen:chain:1000:132", Args: []string{"--samples", "20"}},
		{Name: "wide-2000-8000-1", Spec: "gen:wide:2000:8000:1", Args: []string{"--samples", "20"}},
		{Name: "decode-l32-h2048-i4096", Path: "examples/decode/decode.json", Args: []string{"--samples", "20", "--copy-mib", "1024"}},
		{Name: "taint-dataflow-12m", Path: "examples/taint/taint.json", Args: []string{"--samples", "20"}},
	}
}
