// gpuplan: relocatable device code
//
// Wave functions of the wavedag tests: integer functions whose result
// changes if any wave runs before a producer it reads.
#include "gpuplan_wave.h"

static __device__ __forceinline__ unsigned int fmix(unsigned int h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

// t_seed: out[i] = fmix(salt ^ i) over the tile's elements.
// args: out, n, salt.
GP_WAVE t_seed(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int *out = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int n = gp_arg_u32(args, 1), salt = gp_arg_u32(args, 2);
    unsigned int i = tile * gp_threads() + threadIdx.x;
    if (i < n) out[i] = fmix(salt ^ i);
}

// t_all: out[i] = fmix(i + in_0[(7i+1) mod n_0] + ...): each element reads
// another tile's element of every producer.
// args: out, n, np, then per producer: in, n_in.
GP_WAVE t_all(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int *out = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int n = gp_arg_u32(args, 1), np = gp_arg_u32(args, 2);
    unsigned int i = tile * gp_threads() + threadIdx.x;
    if (i >= n) return;
    unsigned int h = i;
    for (unsigned int p = 0; p < np; p++) {
        const unsigned int *in = gp_arg_ptr<const unsigned int>(args, 3 + 2 * p);
        unsigned int m = gp_arg_u32(args, 4 + 2 * p);
        h = fmix(h + in[(7u * i + 1u) % m]);
    }
    out[i] = h;
}

// t_block: out[i] = fmix over the k producer elements block i reads:
// in[k*i .. k*i+k) clipped to n_in. args: out, n, in, n_in, k.
GP_WAVE t_block(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int *out = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int n = gp_arg_u32(args, 1);
    const unsigned int *in = gp_arg_ptr<const unsigned int>(args, 2);
    unsigned int m = gp_arg_u32(args, 3), k = gp_arg_u32(args, 4);
    unsigned int i = tile * gp_threads() + threadIdx.x;
    if (i >= n) return;
    unsigned int h = i;
    for (unsigned int j = k * i; j < k * i + k && j < m; j++) h = fmix(h ^ in[j]);
    out[i] = h;
}

// t_prologue: loads its weights into shared memory before gp_wait, then
// out[i] = w[i] * 3 + in[i]. args: out, n, w, in.
GP_WAVE t_prologue(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    unsigned int *out = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int n = gp_arg_u32(args, 1);
    const unsigned int *w = gp_arg_ptr<const unsigned int>(args, 2);
    const unsigned int *in = gp_arg_ptr<const unsigned int>(args, 3);
    unsigned int *s = (unsigned int *)gp_shared();
    unsigned int i = tile * gp_threads() + threadIdx.x;
    s[threadIdx.x] = i < n ? w[i] : 0;
    gp_wait();
    gp_sync();
    if (i < n) out[i] = s[threadIdx.x] * 3u + in[i];
}

// t_wrong_args takes the wrong signature, for the link-check tests.
extern "C" __device__ void t_wrong_args(unsigned long long x) {}
