// gpuplan: relocatable device code
#include "gpuplan_wave.h"

// The taint example's one wave function, taint_step, run by all 31 waves
// of the taint-dataflow DAG. Wave w writes n u32 elements,
//
//   out[i] = mix(salt, i, in_0[i mod n_0], ..., in_{np-1}[i mod n_{np-1}])
//   mix:  h = fmix32(salt ^ (i * 0x9e3779b9))
//         h = fmix32(((h ^ in_p[i mod n_p]) * 0x27d4eb2d) + p)  for p = 0, 1, ...
//
// over its producers' outputs in order (the waves without producers read
// a slice of the random "program" buffer instead). Every element depends
// on elements of every tile of each producer, so a wave that ran before a
// producer finished would change the result. Exact 32-bit integer math:
// the Go reference matches bit for bit.
//
// args: out, n, salt, np, then per producer: in, n_in.
// A tile is TAINT_PER_THREAD * gp_threads() consecutive elements; thread
// t handles elements t, t + gp_threads(), ... of it, so the warps' loads
// and stores are coalesced.

#define TAINT_PER_THREAD 16

// fmix32 is MurmurHash3's finaliser: a bijection of 32-bit words.
static __device__ __forceinline__ unsigned int fmix32(unsigned int h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

GP_WAVE taint_step(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int threads = gp_threads();
    unsigned int *out = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int n = gp_arg_u32(args, 1);
    unsigned int salt = gp_arg_u32(args, 2);
    unsigned int np = gp_arg_u32(args, 3);
    unsigned int base = tile * (TAINT_PER_THREAD * threads) + threadIdx.x;
    unsigned int h[TAINT_PER_THREAD];
#pragma unroll
    for (int j = 0; j < TAINT_PER_THREAD; j++) {
        h[j] = fmix32(salt ^ ((base + j * threads) * 0x9e3779b9u));
    }
    // Producer by producer, so each thread has TAINT_PER_THREAD loads in
    // flight at once.
    for (unsigned int p = 0; p < np; p++) {
        const unsigned int *in = gp_arg_ptr<const unsigned int>(args, 4 + 2 * p);
        unsigned int m = gp_arg_u32(args, 5 + 2 * p);
#pragma unroll
        for (int j = 0; j < TAINT_PER_THREAD; j++) {
            unsigned int i = base + j * threads;
            if (i < n) h[j] = fmix32(((h[j] ^ in[i % m]) * 0x27d4eb2du) + p);
        }
    }
#pragma unroll
    for (int j = 0; j < TAINT_PER_THREAD; j++) {
        unsigned int i = base + j * threads;
        if (i < n) out[i] = h[j];
    }
}
