// Device helpers the workloads' CUDA kernels share (bfs, partbfs, rebuild):
// the integer types, the full warp mask, and the accesses at GPU scope
// with an explicit memory order that the kernels synchronize through. Each
// access is one PTX instruction in inline assembly, so a kernel calling it
// compiles to the instruction it would otherwise write itself.
//
// A kernel source includes it as "gpuplan_device.h": scripts/ptx.sh
// compiles every kernel with -I internal/kernelabi/kernels. It lies in the
// kernels folder of package kernelabi, which every workload imports, so
// that a workload's fingerprint (evidence.Fingerprint) measures it.

#ifndef GPUPLAN_DEVICE_H
#define GPUPLAN_DEVICE_H

#define FULL_MASK 0xffffffffu

typedef unsigned int u32;
typedef unsigned long long u64;

// load_acquire64 is ld.acquire.gpu: a load that orders the loads after it
// (a barrier word's, or a flag's that publishes data).
__device__ __forceinline__ u64 load_acquire64(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// add_release64 is red.release.gpu: an add that publishes the writes before
// it (and, after a __syncthreads, the writes of the whole block).
__device__ __forceinline__ void add_release64(u64* p, u64 v) { asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

// load_relaxed64, load_relaxed32 and store_relaxed64 are relaxed accesses
// at GPU scope (ld/st.relaxed.gpu): read and written whole, through L2, for
// words other threads claim or publish, with no ordering around them.
__device__ __forceinline__ u64 load_relaxed64(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ u32 load_relaxed32(const u32* p) {
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_relaxed64(u64* p, u64 v) { asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

// spin_arrivals spins on a grid barrier word (load_acquire64) until the
// arrivals its low bits count (arrive_mask) reach gridDim.x, one per block,
// and returns the word: the wait of a counter barrier whose blocks each
// add their arrival with add_release64 after a __syncthreads.
__device__ __forceinline__ u64 spin_arrivals(const u64* word, u32 arrive_mask) {
    u64 v;
    do {
        v = load_acquire64(word);
    } while ((u32)(v & arrive_mask) < gridDim.x);
    return v;
}

#endif  // GPUPLAN_DEVICE_H
