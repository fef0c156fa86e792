// gpuplan_wave.h: the ABI of a wave function that `gpuplan run` executes.
//
// A wave of a workload names one device function of the user's module, a
// tile count, a block size and an argument block. gpuplan runs the function
// once per tile, by one block of the wave's threads, in every execution arm:
// a launch per wave on streams, a CUDA graph, one cooperative persistent
// launch with grid barriers, and one persistent launch that starts each tile
// as soon as the producer tiles it reads are done. The same source serves
// every arm; write each wave once:
//
//     #include "gpuplan_wave.h"
//
//     // out[i] = a * x[i] + y[i] over n floats, 256 elements per tile.
//     GP_WAVE saxpy(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
//         float *out = gp_arg_ptr<float>(args, 0);
//         const float *x = gp_arg_ptr<const float>(args, 1);
//         const float *y = gp_arg_ptr<const float>(args, 2);
//         float a = gp_arg_f32(args, 3);
//         unsigned int n = gp_arg_u32(args, 4);
//         unsigned int i = tile * gp_threads() + threadIdx.x;
//         if (i < n) out[i] = a * x[i] + y[i];
//     }
//
// Compile the module to relocatable PTX (no nvcc is needed at run time:
// gpuplan links this PTX with the code it generates through the driver's JIT
// linker):
//
//     nvcc -rdc=true -ptx -arch=compute_80 -I DIR waves.cu -o waves.ptx
//
// where DIR holds this header (`gpuplan run --header > gpuplan_wave.h`
// writes it).
//
// Rules a wave function keeps, because in the persistent arms one block runs
// many tiles of many waves, and may be larger than the wave's block:
//
//   - The block is one-dimensional. threadIdx.x in [0, gp_threads()) is the
//     thread's index; never read blockDim, blockIdx or gridDim.
//   - Synchronise the wave's threads with gp_sync(), never __syncthreads().
//   - Tiles of one wave may run at the same time and in any order: a tile
//     must not wait for another tile of its own wave.
//   - Writes are visible to the consumer waves once the function returns;
//     no fence is needed.
//   - Dynamic shared memory comes from gp_shared(): the wave's
//     "shared_bytes", at least 16-byte aligned. Static __shared__ variables
//     work, but the persistent kernel holds those of every wave function at
//     once.
//   - A wave declared with "prologue": true starts before its producers
//     finish. It may read anything its producers do not write (weights, say)
//     and must then call gp_wait() once, from every thread of the wave,
//     before it reads what they write. A wave without a prologue starts
//     after its producers, and gp_wait() returns at once.
#ifndef GPUPLAN_WAVE_H
#define GPUPLAN_WAVE_H

// GP_WAVE declares a wave function:
//   GP_WAVE name(unsigned int tile, unsigned int tiles, const unsigned long long *args)
// tile is in [0, tiles); args is the wave's argument block, one 8-byte slot
// per argument of the workload's "args" list, in order.
#define GP_WAVE extern "C" __device__ void

// GP_MAX_ARGS is the most arguments one wave takes.
#define GP_MAX_ARGS 256

// gp_wait waits until every producer tile this tile reads is done and its
// writes are visible. Call it once, from every thread of the wave, in a wave
// with a prologue; elsewhere it returns at once.
extern "C" __device__ void gp_wait(void);

// gp_sync is a barrier over the wave's threads.
extern "C" __device__ void gp_sync(void);

// gp_shared returns the wave's dynamic shared memory ("shared_bytes").
extern "C" __device__ void *gp_shared(void);

// gp_threads returns the wave's block size ("block").
extern "C" __device__ unsigned int gp_threads(void);

// Argument accessors. A buffer argument holds the buffer's device address
// plus its offset; a scalar holds its value: u32 and u64 zero-extended, i32
// and i64 sign-extended, f32 as its bits in the low 32 bits, f64 as its
// bits.
template <typename T>
static __device__ __forceinline__ T *gp_arg_ptr(const unsigned long long *args, int i) {
    return reinterpret_cast<T *>(args[i]);
}
static __device__ __forceinline__ unsigned int gp_arg_u32(const unsigned long long *args, int i) {
    return (unsigned int)args[i];
}
static __device__ __forceinline__ int gp_arg_i32(const unsigned long long *args, int i) { return (int)args[i]; }
static __device__ __forceinline__ unsigned long long gp_arg_u64(const unsigned long long *args, int i) {
    return args[i];
}
static __device__ __forceinline__ long long gp_arg_i64(const unsigned long long *args, int i) {
    return (long long)args[i];
}
static __device__ __forceinline__ float gp_arg_f32(const unsigned long long *args, int i) {
    return __uint_as_float((unsigned int)args[i]);
}
static __device__ __forceinline__ double gp_arg_f64(const unsigned long long *args, int i) {
    return __longlong_as_double((long long)args[i]);
}

#endif  // GPUPLAN_WAVE_H
