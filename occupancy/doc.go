// Package occupancy provides GPU device profiles (built in and loaded from
// JSON), the exact CUDA occupancy rules, vyre's simplified occupancy
// helpers, and launch diagnostics with vyre's stable message format.
//
// # Device profiles
//
// Device holds what gpuplan's planners need to know about a GPU: compute
// capability, SM count, the per-SM and per-block limits of the occupancy
// calculation, the memory system (L2, memory size, bus width and clock) and
// launch features. It is a superset of vyre's 20-field CudaDeviceCaps.
//
// Profiles lists the built-in profiles (V100, T4, A10, A100 40/80 GB, L4,
// L40S, RTX 4090, H100 SXM and PCIe, H200, B200 and two RTX 5090 profiles)
// with NVIDIA's published numbers and per-architecture limits. Lookup finds one by short name or alias, case-insensitively
// ("h100", "H100-SXM5-80GB", "h200", "a100-80gb", ...); an unknown name is an
// *UnknownDeviceError listing the known names. "rtx5090" is vyre's synthetic
// blackwell_sm120_caps profile (Blackwell5090), kept exactly so vyre's test
// vectors port; "rtx5090-sm120" carries the CUDA sm_120 limits instead.
//
// LoadDeviceJSON decodes a custom profile strictly: unknown fields, type
// mismatches, trailing data, a missing one of the 14 required fields and
// impossible values (Device.Validate) are errors naming the field and the
// fix. Every other field has a documented default, and
// LoadDeviceJSONDefaults also returns the fields that got one. Closest and Diff
// compare a live or custom device with the built-in profiles, and
// Device.BandwidthBytesPerSec estimates the peak bandwidth as 2 x memory
// clock x bus width (within 1% of the datasheet for every built-in profile).
//
// # Which occupancy model to use
//
// Compute is the exact occupancy calculation of NVIDIA's cuda_occupancy.h
// (warps, the architecture's block cap, registers allocated per warp in
// 256-register units over 4 sub-partitions, shared memory with the reserved
// bytes, allocation granularity, opt-in limit and carveout). Its answers
// match cuOccupancyMaxActiveBlocksPerMultiprocessor: for example 21 blocks of
// 96 threads at 10 registers on an H200, 11 with 20,000 B of dynamic shared
// memory, and 2 blocks of 128 threads at 238 registers. It agrees with the
// driver on all 12,420 configurations recorded on a live H200
// (testdata/driver_h200.json.gz, recorded by testdata/driver_check.py:
// kernels of 8 to 255 registers, block sizes 1 to 1024, dynamic shared
// memory, carveout preferences, opt-in).
// MaxPotentialBlockSize follows the driver's block-size search and
// CoResidentGrid gives the largest grid whose blocks are all resident at once
// (blocks per SM x SMs). Use these for anything that runs on a real device:
// choosing block sizes, and above all sizing persistent or cooperative grids,
// where an over-estimate deadlocks.
//
// EstimateOccupancy, PickWorkgroupSizeForOccupancy,
// CooperativeThreadResidencyBlockLimit and CanLaunchConcurrently port vyre's
// simplified model byte for byte: it divides the SM's threads, registers and
// shared memory by the block's, ignoring the block cap, register allocation
// granularity, reserved shared memory and carveouts, and reports occupancy in
// basis points. Use them for parity with vyre's planners and test vectors.
// The two models disagree where those details bind (see
// TestEstimateAndExactDisagree): at 100 registers and 128 threads on an
// H100 vyre's estimate gives 5 blocks per SM, the exact model 4 (registers
// are allocated per warp in 256-register units within each of the 4
// sub-partitions); 32-thread blocks on vyre's RTX 5090 profile give 64
// blocks and 100% in vyre's estimate but 24 blocks (the block cap) in the
// exact model; and vyre's cooperative limit at 256 threads is 1,360 blocks
// on that profile whatever the kernel uses, where a 255-register kernel
// only fits 170.
//
// # Errors versus "cannot run"
//
// The exact model returns an error (an *InputError or *InvalidDeviceError
// naming the field, with a "Fix:" sentence) only for malformed input: an
// invalid device, a block size below 1, negative kernel values, a carveout
// outside -1..100. A well-formed configuration that cannot run is a Result
// with ActiveBlocksPerSM 0 and the Limit that prevents it, where the CUDA
// calculator reports 0 blocks: a block above the device's (or the kernel's)
// maximum threads, registers above the per-thread or per-block maximum,
// shared memory above the per-block limit. vyre's helpers never fail: they
// return the zero estimate, false or a Serialize reason.
//
// # Launch diagnostics
//
// DiagnoseKernelLaunch checks a kernel's requirements (sm version, threads
// per block, shared memory, cooperative launch, tensor cores) against a
// CudaKernelDeviceEnvelope (EnvelopeFromDevice builds one) and formats vyre's
// stable message, for example
//
//	cuda-kernel-capability-v1|kernel=frontier|status=blocked|fix=threads_per_block(requested=1024,max=512)
//
// DiagnoseKernelLaunchShape does the same for a concrete grid and block and,
// given a co-resident block limit (from CoResidentGrid), also checks that a
// cooperative grid fits.
//
// Every function is pure: no clock, no environment, no global state.
// Profiles returns fresh values on every call.
package occupancy
