// Package executor provides gpuplan's generic GPU runtime: devices and
// probes, contexts on the driver thread, resident buffers and IO, a module
// cache, launches (plain, cooperative, timed, host-driven loops), streams
// and events, telemetry, the Backend interface and its CPU fake. It is the
// only package with side effects on a device, and it knows no workload:
// GPU workloads (workloads/bfs, ...) sit above it and use only its exported
// API, so the same workload code runs on the CUDA backend and on the fake.
//
// # Layers
//
// Backend is the driver boundary (device, module, kernel, buffer, stream,
// event). With -tags cuda, Open implements it on the CUDA driver through
// gorgonia.org/cu v0.9.6 plus a small cgo shim (shim_cuda.c) for what cu
// lacks: cooperative launch, pinned host memory, function attributes and
// device attributes above enum 91. Every driver call runs on one goroutine
// locked to one OS thread where the context is current: the device's
// primary context, retained at Open and released at Close, which the CUDA
// runtime, NCCL and the other libraries of the process share. Close resets
// a primary context lost to a fault; when the driver still refuses a usable
// one to the process, Open falls back to a context of its own, so that a
// server recovers after a fault. NewFake implements
// Backend on the CPU, so everything above the boundary is tested without a
// GPU; without -tags cuda, Open returns an *UnavailableError.
//
// Executor sits above Backend:
//
//   - modules: LoadModule(ptx) caches by a SHA-256 content key (ModuleKeyFor);
//     Module.Kernel reads the kernel's registers and shared memory;
//   - resident buffers: Alloc/Free under vyre's budget rule
//     (LiveResidentBudget: 90% of total and of live free memory), with
//     in-flight reference counts (Free refuses a buffer a Pending dispatch
//     or a queued asynchronous upload uses);
//   - IO, as vyre's resident IO: Upload (the whole buffer, exact length),
//     UploadBuffers, UploadAt, UploadMany, Download, DownloadBuffers,
//     DownloadRange, DownloadRanges, DownloadRangeInto, DownloadMany,
//     DownloadManyInto. Every range is checked first (vyre's messages, with
//     the buffer, offset and length: *ResidentError, *UnknownBufferError);
//     uploads and readbacks are fused (FuseUploads, FuseReadbacks) and a
//     batch goes through a ring of pinned staging buffers on one pooled
//     non-blocking stream (never the null stream) with one host wait.
//     PinHostBuffer, UploadAsyncAt, SynchronizeUploads and UnpinHostBuffer
//     queue uploads from pinned caller memory without staging or waiting;
//   - launches: Launch / LaunchAsync / LaunchRead check the arguments (Ptr,
//     PtrAt, Out, U64, I64, F64: 8 bytes each; Params for a device
//     parameter buffer, uploaded on the launch's stream without a wait) and
//     the shape, zero the Out buffers, launch FixpointIterations times, and
//     time each dispatch with events (Timing: wall from before the
//     dispatch's uploads, enqueue, wait and device ns). LaunchRead waits
//     once for the launch and its readback; RunHostLoop drives a host loop
//     with bound driver calls; RunSequence runs vyre's repeated resident
//     sequence with read ranges and one wait;
//   - persistent kernels: CooperativeGrid sizes a co-resident grid from the
//     exact occupancy model (occupancy.Compute) cross-checked with
//     cuOccupancyMaxActiveBlocksPerMultiprocessor; a cooperative launch whose
//     grid cannot be co-resident is refused (*CoResidencyError), never
//     launched. DispatchWithGridSyncSplit runs phased kernels in one
//     cooperative launch, or splits them at the grid barriers into one
//     launch per phase where cooperative launch is missing;
//   - telemetry: Telemetry / TelemetrySnapshot expose vyre's counters under
//     the gpuplan_ prefix (MetricPrefix, Prometheus text through
//     WritePrometheus); TelemetrySnapshot.Sub measures what one piece of
//     work cost, which workloads hold against their plans' predictions;
//     MetricSnapshot gives the backend's counters by vyre's stable names,
//     and LaunchWidthMeasurements the device time recorded per block width;
//   - Options.ResidentBorrowedFallback runs resident dispatches through host
//     staging (vyre's borrowed fallback), counted;
//   - profiler ranges: in the CUDA build every executor call marks its
//     driver work as an NVTX range (ProfilerRanges), libnvToolsExt being
//     loaded at run time; without it the ranges are off.
//
// # Without a GPU or the driver
//
// gorgonia.org/cu calls cuInit in its package init and exits the process if
// it fails. The shim defines cuInit itself, so the executable's definition
// wins: it runs the JIT cache rules (ConfigureJITCacheDefault, vyre's rules)
// before the driver initialises, calls the real cuInit (found with
// dlsym(RTLD_NEXT)), records its result and reports success. A CUDA build
// therefore starts on a machine without a GPU, and Open and DeviceCount
// return one clear sentence (errors.Is(err, ErrUnavailable)).
//
// The CUDA build of gpuplan also starts without the NVIDIA driver library:
// on linux/amd64 it does not link libcuda.so.1 but loads it at run time.
// internal/cudalib defines every driver function the binary calls (except
// cuInit) as a trampoline into a table that a C constructor fills, before
// the Go runtime and so before gorgonia's init, by opening $GPUPLAN_LIBCUDA
// or libcuda.so.1 with dlopen (RTLD_GLOBAL, so that the shim's cuInit finds
// the real one); cmd/gpuplan links with --as-needed, so the linker drops
// the -lcuda that gorgonia and this package pass. Without the library
// every trampoline returns CUDA_ERROR_NOT_INITIALIZED, the shim finds no
// cuInit, and Open and DeviceCount return an *UnavailableError;
// cudalib.LoadError gives the dynamic loader's reason, which the command
// checks before it opens a GPU. The executor does not import cudalib: a
// program that links the executor without it (the executor's own test
// binaries, say), a build with the cudalib_direct tag and other platforms
// link libcuda.so.1 as a plain dependency, and need the driver library
// installed to start. Building always needs a libcuda.so to link against
// (the driver's, or the CUDA toolkit's stub).
//
// # Kernels
//
// Kernels are CUDA C under <pkg>/kernels/*.cu, declared extern "C" with
// 8-byte parameters, compiled to PTX by `make ptx`, committed and embedded
// with go:embed. A workload declares its kernels' parameter lists once in
// Go (internal/kernelabi), which generates the C header and checks the PTX.
// A phased kernel for DispatchWithGridSyncSplit takes (..., unsigned long
// long phase_begin, unsigned long long phase_end) last.
package executor
