package executor_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
)

// A module with one entry point, as `make ptx` would produce it.
const examplePTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry double_u32(.param .u64 p0, .param .u64 p1) { ret; }
`

// exampleBackend is the CPU fake with a Go stand-in for the kernel.
func exampleBackend() *executor.Fake {
	dev, _ := occupancy.Lookup("h100-sxm")
	return executor.NewFake(executor.FakeConfig{Device: dev, Kernels: map[string]executor.FakeKernel{
		"double_u32": {Attrs: executor.FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}, Run: func(l *executor.FakeLaunch) error {
			b, err := l.Bytes(executor.DevPtr(l.Args[0]), 4*l.Args[1])
			if err != nil {
				return err
			}
			for i := uint64(0); i < l.Args[1]; i++ {
				binary.LittleEndian.PutUint32(b[4*i:], 2*binary.LittleEndian.Uint32(b[4*i:]))
			}
			return nil
		}},
	}})
}

// The executor over the CPU fake: upload, launch, read back. With -tags
// cuda, executor.Open(0, executor.Options{}) gives the same API on a GPU.
func ExampleNew() {
	x, err := executor.New(exampleBackend(), executor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	mod, _ := x.LoadModule([]byte(examplePTX))
	k, _ := mod.Kernel("double_u32")
	buf, _ := x.Alloc(16)
	in := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(in[4*i:], uint32(i+1))
	}
	_ = x.Upload(buf, in)
	t, err := x.Launch(k, executor.Linear(1, 4), executor.Ptr(buf), executor.U64(4))
	fmt.Println(err, t.HasDeviceTime)
	out, _ := x.DownloadRange(buf, 4, 8)
	fmt.Println(binary.LittleEndian.Uint32(out), binary.LittleEndian.Uint32(out[4:]))
	// Output:
	// <nil> true
	// 4 6
}

// A cooperative grid is sized from the occupancy model; one block more is
// refused before anything is launched.
func ExampleExecutor_CooperativeGrid() {
	x, _ := executor.New(exampleBackend(), executor.Options{})
	defer x.Close()
	mod, _ := x.LoadModule([]byte(examplePTX))
	k, _ := mod.Kernel("double_u32")
	g, _ := x.CooperativeGrid(k, 256, 0)
	fmt.Println(g.BlocksPerSM, g.GridBlocks, g.Agrees())
	cfg := g.Config()
	cfg.Grid[0]++
	_, err := x.Launch(k, cfg, executor.U64(0), executor.U64(0))
	var ce *executor.CoResidencyError
	fmt.Println(errors.As(err, &ce))
	// Output:
	// 8 1056 true
	// true
}

// vyre's budget vectors.
func ExampleLiveResidentBudget() {
	fmt.Println(executor.LiveResidentBudget(10_000, 1_000, 0))
	fmt.Println(executor.LiveResidentBudget(10_000, 8_000, 2_000))
	fmt.Println(executor.LiveResidentBudget(10_000, 0, 2_000))
	fmt.Println(executor.TotalResidentBudget(10_000))
	// Output:
	// 900
	// 9000
	// 2000
	// 9000
}

func ExampleFuseReadbacks() {
	b := executor.Buffer{ID: 1, Len: 100}
	copies, views, _ := executor.FuseReadbacks([]executor.ReadRequest{{Buffer: b, Offset: 10, Len: 10}, {Buffer: b, Offset: 0, Len: 12}, {Buffer: b, Offset: 50, Len: 0}})
	fmt.Println(copies)
	fmt.Println(views)
	// Output:
	// [{{1 100} 0 20}]
	// [{0 10 10} {0 0 12} {-1 0 0}]
}

func ExampleFuseUploads() {
	b := executor.Buffer{ID: 1, Len: 8}
	fused, _ := executor.FuseUploads([]executor.Upload{{Buffer: b, Offset: 0, Data: []byte{1, 1, 1}}, {Buffer: b, Offset: 2, Data: []byte{2, 2}}})
	fmt.Println(len(fused), fused[0].Offset, fused[0].Data)
	// Output:
	// 1 0 [1 1 2 2]
}

func ExampleConfigureJITCache() {
	env := &executor.MapEnvironment{Vars: map[string]string{"XDG_CACHE_HOME": "/tmp/my-xdg-cache", "CUDA_CACHE_DISABLE": "1"}}
	cfg, err := executor.ConfigureJITCacheDefault(env)
	fmt.Println(cfg.Path, cfg.MaxBytes, err)
	fmt.Println(env.Vars["CUDA_CACHE_DISABLE"], env.Vars["CUDA_CACHE_PATH"], env.Vars["CUDA_CACHE_MAXSIZE"])
	// Output:
	// /tmp/my-xdg-cache/vyre/cuda-jit 1073741824 <nil>
	// 0 /tmp/my-xdg-cache/vyre/cuda-jit 1073741824
}

func ExampleTelemetrySnapshot_PrometheusText() {
	var t executor.Telemetry
	t.RecordLaunch(executor.Linear(2, 128), 200)
	lines := t.Snapshot().PrometheusText()
	for _, l := range []string{"gpuplan_kernel_launches_total 1", "gpuplan_logical_thread_utilization_ratio 0.7812"} {
		fmt.Println(containsLine(lines, l), l)
	}
	// Output:
	// true gpuplan_kernel_launches_total 1
	// true gpuplan_logical_thread_utilization_ratio 0.7812
}

func containsLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

func ExamplePTXTargetCandidates() {
	fmt.Println(executor.PTXTargetCandidates(90))
	v, _ := occupancy.PTXVersionForTarget(90)
	fmt.Println(v)
	// Output:
	// [90 89 86 80 75 70]
	// 8.0
}

// A resident sequence: a prefix step once, a repeated step three times,
// then two read ranges, on one stream with one host wait.
func ExampleExecutor_RunSequence() {
	x, _ := executor.New(exampleBackend(), executor.Options{})
	defer x.Close()
	mod, _ := x.LoadModule([]byte(examplePTX))
	k, _ := mod.Kernel("double_u32")
	buf, _ := x.Alloc(8)
	_ = x.Upload(buf, []byte{1, 0, 0, 0, 3, 0, 0, 0})
	double := executor.Step{Kernel: k, Config: executor.Linear(1, 2), Args: []executor.Arg{executor.Ptr(buf), executor.U64(2)}}
	outs := [][]byte{make([]byte, 4), make([]byte, 4)}
	before := x.Telemetry()
	_, err := x.RunSequence(executor.Sequence{
		Prefix:   []executor.Step{double},
		Repeated: []executor.Step{double},
		Repeat:   3,
		Reads:    []executor.ReadRequest{{Buffer: buf, Offset: 0, Len: 4}, {Buffer: buf, Offset: 4, Len: 4}},
	}, outs)
	d := x.Telemetry().Sub(before)
	fmt.Println(err, binary.LittleEndian.Uint32(outs[0]), binary.LittleEndian.Uint32(outs[1]))
	fmt.Println("launches", d.KernelLaunches, "host waits", d.SyncPoints, "readbacks", d.DeviceReadbackOperations)
	// Output:
	// <nil> 16 48
	// launches 4 host waits 1 readbacks 1
}

// Uploads from pinned caller memory queue without waiting; one
// SynchronizeUploads waits for all of them.
func ExampleExecutor_UploadAsyncAt() {
	x, _ := executor.New(exampleBackend(), executor.Options{})
	defer x.Close()
	a, _ := x.Alloc(4)
	b, _ := x.Alloc(4)
	host := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	_ = x.PinHostBuffer(host)
	_ = x.UploadAsyncAt(a, 0, host[:4])
	_ = x.UploadAsyncAt(b, 0, host[4:])
	fmt.Println("waits before sync:", x.Telemetry().SyncPoints)
	fmt.Println(x.UnpinHostBuffer(host) != nil, "(uploads still queued)")
	_ = x.SynchronizeUploads()
	fmt.Println("waits after sync:", x.Telemetry().SyncPoints)
	_ = x.UnpinHostBuffer(host)
	got, _ := x.DownloadBuffers([]executor.Buffer{a, b})
	fmt.Println(got)
	// Output:
	// waits before sync: 0
	// true (uploads still queued)
	// waits after sync: 1
	// [[1 2 3 4] [5 6 7 8]]
}

// A whole-buffer upload must be the buffer's length: vyre's message, with
// the buffer, and nothing copied.
func ExampleExecutor_Upload() {
	x, _ := executor.New(exampleBackend(), executor.Options{})
	defer x.Close()
	buf, _ := x.Alloc(64)
	fmt.Println(x.Upload(buf, make([]byte, 32)))
	fmt.Println(x.UploadBuffers([]executor.Buffer{buf}, [][]byte{make([]byte, 64)}))
	// Output:
	// CUDA resident upload for handle 1 expected 64 bytes but received 32. Fix: upload exactly the buffer's 64 bytes, or write a part of it with UploadAt.
	// <nil>
}

// The backend's counters by vyre's stable names.
func ExampleExecutor_MetricSnapshot() {
	x, _ := executor.New(exampleBackend(), executor.Options{})
	defer x.Close()
	mod, _ := x.LoadModule([]byte(examplePTX))
	_, _ = x.LoadModule([]byte(examplePTX))
	k, _ := mod.Kernel("double_u32")
	buf, _ := x.Alloc(16)
	_, _ = x.Launch(k, executor.Linear(1, 4), executor.Out(buf), executor.U64(4))
	for _, m := range x.MetricSnapshot()[:4] {
		fmt.Println(m.Name, m.Value)
	}
	// Output:
	// cuda_module_cache_entries 1
	// cuda_module_cache_hits 1
	// cuda_module_cache_misses 1
	// cuda_timed_dispatches 1
}
