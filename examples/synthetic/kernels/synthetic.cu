// gpuplan: relocatable device code
#include "gpuplan_wave.h"

// Wave functions of generated DAGs (package synthetic): almost no work, so
// that a run measures what it costs to order waves, not to compute them.

// fmix32 is MurmurHash3's finaliser: a bijection of 32-bit words.
static __device__ __forceinline__ unsigned int fmix32(unsigned int h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

// syn_chain: wave w of a chain. Thread 0 of tile 0 sets marks[w] to 1 for
// the first wave and to marks[w - 1] + 1 after it, so marks[w] == w + 1
// exactly when every wave ran after the one before; the other tiles and
// threads do nothing. args: marks (u32), w.
GP_WAVE syn_chain(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    if (tile != 0 || threadIdx.x != 0) return;
    unsigned int *marks = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int w = gp_arg_u32(args, 1);
    marks[w] = w == 0 ? 1u : marks[w - 1] + 1u;
}

// syn_mix: wave w of a wide DAG, one tile. Thread 0 hashes the states of
// its producers p_0, p_1, ... (ascending ids) into state[w]:
//   h = fmix32(w + 1);  h = fmix32(h ^ (state[p_i] + i)) for each i.
// args: state (u32, one per wave), w, np, p_0, ..., p_{np-1}.
GP_WAVE syn_mix(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    if (threadIdx.x != 0) return;
    unsigned int *state = gp_arg_ptr<unsigned int>(args, 0);
    unsigned int w = gp_arg_u32(args, 1);
    unsigned int np = gp_arg_u32(args, 2);
    unsigned int h = fmix32(w + 1u);
    for (unsigned int i = 0; i < np; i++) h = fmix32(h ^ (state[gp_arg_u32(args, 3 + i)] + i));
    state[w] = h;
}
