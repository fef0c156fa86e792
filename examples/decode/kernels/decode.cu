// gpuplan: relocatable device code
#include "gpuplan_wave.h"

// One decode step of an LLM at batch 1, per layer five waves over the
// hidden state x (H floats):
//
//   decode_rmsnorm  xn = x * rsqrt(mean(x^2) + eps) * g       1 tile
//   decode_gemv     h  = W_up · xn     (I rows, K = H, bf16)  I / R_up tiles
//   decode_silu     a  = silu(h)       on the up tiles' rows  same tiles
//   decode_gemv     d  = W_down · a    (H rows, K = I, bf16)  H / R_down tiles
//   decode_resadd   x += d             on the down tiles' rows
//
// Activations are f32, weights bf16 (uint16 words, row-major, K per row),
// accumulation fp32. The GEMV waves have a prologue: before gp_wait they
// copy their tile's R x K weights (nobody writes them) into shared memory
// with 16-byte loads, so the weight stream of one layer overlaps the tail
// of the waves before it.

// bf_lo and bf_hi widen the low and high bfloat16 of a 32-bit word.
static __device__ __forceinline__ float bf_lo(unsigned int w) { return __uint_as_float(w << 16); }
static __device__ __forceinline__ float bf_hi(unsigned int w) { return __uint_as_float(w & 0xffff0000u); }

// dot8 adds the 8 bf16 weights q times the 8 floats a, b to acc.
static __device__ __forceinline__ float dot8(uint4 q, float4 a, float4 b, float acc) {
    acc = fmaf(bf_lo(q.x), a.x, acc);
    acc = fmaf(bf_hi(q.x), a.y, acc);
    acc = fmaf(bf_lo(q.y), a.z, acc);
    acc = fmaf(bf_hi(q.y), a.w, acc);
    acc = fmaf(bf_lo(q.z), b.x, acc);
    acc = fmaf(bf_hi(q.z), b.y, acc);
    acc = fmaf(bf_lo(q.w), b.z, acc);
    acc = fmaf(bf_hi(q.w), b.w, acc);
    return acc;
}

static __device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Shared memory by 32-bit shared address: gp_shared() is a generic
// pointer, through which the compiler would emit generic loads.
static __device__ __forceinline__ void st_shared_v4(unsigned int addr, uint4 v) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
static __device__ __forceinline__ uint4 ld_shared_v4(unsigned int addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}
static __device__ __forceinline__ void st_shared_f32(unsigned int addr, float v) {
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}
static __device__ __forceinline__ float ld_shared_f32(unsigned int addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}
static __device__ __forceinline__ unsigned int shared_base() {
    return (unsigned int)__cvta_generic_to_shared(gp_shared());
}

// decode_rmsnorm: xn = x * rsqrt(mean(x^2) + eps) * g over n floats, in
// one tile. shared_bytes: 4 per warp (128 covers any block).
// args: xn, x, g, n, eps.
GP_WAVE decode_rmsnorm(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int threads = gp_threads();
    unsigned int s = shared_base();
    float *xn = gp_arg_ptr<float>(args, 0);
    const float *x = gp_arg_ptr<const float>(args, 1);
    const float *g = gp_arg_ptr<const float>(args, 2);
    unsigned int n = gp_arg_u32(args, 3);
    float eps = gp_arg_f32(args, 4);
    float sum = 0.f;
    for (unsigned int i = threadIdx.x; i < n; i += threads) sum = fmaf(x[i], x[i], sum);
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) st_shared_f32(s + 4 * (threadIdx.x >> 5), sum);
    gp_sync();
    // Every thread adds the warps' sums in the same order.
    float total = 0.f;
    for (unsigned int w = 0; w < threads / 32; w++) total += ld_shared_f32(s + 4 * w);
    float r = rsqrtf(total / (float)n + eps);
    for (unsigned int i = threadIdx.x; i < n; i += threads) xn[i] = x[i] * r * g[i];
}

// decode_gemv: out[t*R + r] = sum_k W[t*R + r][k] * in[k] for the tile's R
// rows. W is bf16, K per row (a multiple of 8); shared_bytes = R*K*2.
// Prologue: the tile's weights into shared memory; then gp_wait, since in
// is a producer's output. Each warp then computes rows r = warp, warp +
// warps, ..., two at a time where it has two, so that it reads in once
// per pair: lane l takes the 16-byte chunks l, l + 32, ... of the row, and
// a warp-shuffle reduction gives the row's sum.
// args: out, in, W (this layer's matrix), K, R.
GP_WAVE decode_gemv(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int threads = gp_threads();
    unsigned int s = shared_base();
    float *out = gp_arg_ptr<float>(args, 0);
    const float4 *in = gp_arg_ptr<const float4>(args, 1);
    const uint4 *w = gp_arg_ptr<const uint4>(args, 2);
    unsigned int k = gp_arg_u32(args, 3);
    unsigned int rows = gp_arg_u32(args, 4);
    unsigned int kv = k / 8;  // 16-byte chunks per row
    unsigned int total = rows * kv;
    const uint4 *src = w + (size_t)tile * total;

    // Prologue: 8 loads in flight per thread, then their stores.
    unsigned int i = threadIdx.x;
    for (; i + 7 * threads < total; i += 8 * threads) {
        uint4 v[8];
#pragma unroll
        for (int j = 0; j < 8; j++) v[j] = __ldg(src + i + j * threads);
#pragma unroll
        for (int j = 0; j < 8; j++) st_shared_v4(s + 16 * (i + j * threads), v[j]);
    }
    for (; i < total; i += threads) st_shared_v4(s + 16 * i, __ldg(src + i));
    gp_wait();
    gp_sync();

    unsigned int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = threads >> 5;
    float *dst = out + (size_t)tile * rows;
    unsigned int r = warp;
    for (; r + warps < rows; r += 2 * warps) {
        unsigned int r0 = s + 16 * r * kv, r1 = s + 16 * (r + warps) * kv;
        float acc0 = 0.f, acc1 = 0.f;
#pragma unroll 2
        for (unsigned int c = lane; c < kv; c += 32) {
            float4 a = in[2 * c], b = in[2 * c + 1];
            acc0 = dot8(ld_shared_v4(r0 + 16 * c), a, b, acc0);
            acc1 = dot8(ld_shared_v4(r1 + 16 * c), a, b, acc1);
        }
        acc0 = warp_sum(acc0);
        acc1 = warp_sum(acc1);
        if (lane == 0) {
            dst[r] = acc0;
            dst[r + warps] = acc1;
        }
    }
    for (; r < rows; r += warps) {
        unsigned int r0 = s + 16 * r * kv;
        float acc = 0.f;
#pragma unroll 2
        for (unsigned int c = lane; c < kv; c += 32) acc = dot8(ld_shared_v4(r0 + 16 * c), in[2 * c], in[2 * c + 1], acc);
        acc = warp_sum(acc);
        if (lane == 0) dst[r] = acc;
    }
}

// decode_silu: a = h / (1 + exp(-h)) on the tile's R elements.
// args: a, h, R.
GP_WAVE decode_silu(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int threads = gp_threads();
    float *a = gp_arg_ptr<float>(args, 0);
    const float *h = gp_arg_ptr<const float>(args, 1);
    unsigned int rows = gp_arg_u32(args, 2);
    for (unsigned int j = threadIdx.x; j < rows; j += threads) {
        unsigned int i = tile * rows + j;
        float v = h[i];
        a[i] = v / (1.f + expf(-v));
    }
}

// decode_resadd: x += d on the tile's R elements.
// args: x, d, R.
GP_WAVE decode_resadd(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int threads = gp_threads();
    float *x = gp_arg_ptr<float>(args, 0);
    const float *d = gp_arg_ptr<const float>(args, 1);
    unsigned int rows = gp_arg_u32(args, 2);
    for (unsigned int j = threadIdx.x; j < rows; j += threads) {
        unsigned int i = tile * rows + j;
        x[i] += d[i];
    }
}
