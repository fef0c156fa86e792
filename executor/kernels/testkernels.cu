// Kernels for the executor's GPU tests (executor/*_cuda_test.go). Every
// scalar parameter is 64 bits wide: the executor passes each argument as
// 8 bytes.

// ---- occupancy: kernels with different register and shared memory use ----

// OCC_BODY(K): each thread keeps K live values in registers (the loops are
// unrolled over compile-time indices), so the register count grows with K.
// It is a macro, not an inline template function: CUDA 11.8's ptxas for
// sm_90 crashes on the inlined version when -lineinfo is on.
#define OCC_BODY(K)                                                                           \
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;         \
    if (i >= n) return;                                                                       \
    float v[K];                                                                               \
    _Pragma("unroll") for (int j = 0; j < K; j++) v[j] = in[(i + j * 131) % n];               \
    _Pragma("unroll") for (int r = 0; r < 4; r++) {                                           \
        _Pragma("unroll") for (int j = 0; j < K; j++) v[j] = v[j] * v[(j + 1) % K] + v[(j + 7) % K]; \
    }                                                                                         \
    float s = 0.f;                                                                            \
    _Pragma("unroll") for (int j = 0; j < K; j++) s += v[j] * (float)(j + 1);                \
    out[i] = s;

extern "C" __global__ void occ_regs_tiny(const float *in, float *out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
extern "C" __global__ void occ_regs_16(const float *in, float *out, unsigned long long n) { OCC_BODY(16) }
extern "C" __global__ void occ_regs_40(const float *in, float *out, unsigned long long n) { OCC_BODY(40) }
extern "C" __global__ void occ_regs_72(const float *in, float *out, unsigned long long n) { OCC_BODY(72) }
extern "C" __global__ void occ_regs_120(const float *in, float *out, unsigned long long n) { OCC_BODY(120) }
extern "C" __global__ void occ_regs_200(const float *in, float *out, unsigned long long n) { OCC_BODY(200) }

// __launch_bounds__ caps the kernel at 256 threads per block.
extern "C" __global__ void __launch_bounds__(256) occ_bounded_256(const float *in, float *out, unsigned long long n) {
    OCC_BODY(48)
}

// 12 KiB of static shared memory.
extern "C" __global__ void occ_static_smem(const float *in, float *out, unsigned long long n) {
    __shared__ float tile[3072];
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (unsigned int j = threadIdx.x; j < 3072; j += blockDim.x) tile[j] = in[(i + j) % n];
    __syncthreads();
    if (i < n) out[i] = tile[(threadIdx.x * 7) % 3072];
}

// ---- IO: a kernel that proves the device holds the uploaded bytes ----

// xor_bytes: p[i] ^= key for i < n.
extern "C" __global__ void xor_bytes(unsigned char *p, unsigned long long n, unsigned long long key) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] ^= (unsigned char)key;
    }
}

// empty: for launch overhead.
extern "C" __global__ void empty_kernel(unsigned long long unused) {}

// ---- parity checks: the same kernels run on the CPU fake ----

// add_one: buf[i] += 1 for i < n (32-bit words).
extern "C" __global__ void add_one(unsigned int *buf, unsigned long long n) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        buf[i] += 1u;
    }
}

// add_one_params: add_one with its arguments in a parameter buffer,
// p[0] = the buffer's address, p[1] = n.
extern "C" __global__ void add_one_params(const unsigned long long *p) {
    unsigned int *buf = (unsigned int *)p[0];
    unsigned long long n = p[1];
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        buf[i] += 1u;
    }
}

// ---- persistent: phases separated by a counter barrier ----

// grid_barrier: one release add per block, acquire spin on a monotonic
// target (round x blocks), so the counter never needs resetting inside a
// launch. The counter sits on its own 128-byte line.
__device__ __forceinline__ void grid_barrier(unsigned int *bar, unsigned int target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(bar), "r"(1u) : "memory");
        unsigned int v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(bar) : "memory");
        } while (v < target);
    }
    __syncthreads();
}

__device__ __forceinline__ unsigned int stencil(unsigned int l, unsigned int c, unsigned int r, unsigned int step) {
    return (l * 3u) ^ (c + 0x9e3779b9u + step) ^ (r >> 1);
}

// stencil_phases runs phases [phase_begin, phase_end) of a ping-pong
// stencil over n words: phase p reads a (p even) or b (p odd) and writes the
// other, out[i] = stencil(in[i-1], in[i], in[i+1], p) with wrap-around.
// Inside one launch a grid barrier separates the phases, so the grid must be
// co-resident (cooperative launch); launched once per phase it needs no
// barrier (the executor's grid-sync split). bar must be zero at launch.
extern "C" __global__ void stencil_phases(unsigned int *a, unsigned int *b, unsigned long long n,
                                          unsigned int *bar, unsigned long long phase_begin,
                                          unsigned long long phase_end) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned int round = 0;
    for (unsigned long long p = phase_begin; p < phase_end; p++) {
        const unsigned int *in = (p & 1) ? b : a;
        unsigned int *out = (p & 1) ? a : b;
        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
            unsigned int l = in[i == 0 ? n - 1 : i - 1];
            unsigned int r = in[i + 1 == n ? 0 : i + 1];
            out[i] = stencil(l, in[i], r, (unsigned int)p);
        }
        if (p + 1 < phase_end) {
            round++;
            grid_barrier(bar, round * gridDim.x);
        }
    }
}
