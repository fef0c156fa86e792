// Graph500 Kronecker graphs built on the GPU, identical to what
// frontier.Kronecker builds on the CPU.
//
// The build, driven by the host (build.go), in three steps:
//
// 1. The label permutation: frontier shuffles 0..n-1 with math/rand/v2's
//    Fisher-Yates (for i = n-1 down to 1: swap(p[i], p[j_i]), j_i drawn
//    uniformly in 0..i from a PCG). The draws j_i are computed in parallel
//    (kron_perm_draw: the PCG jumps ahead to any draw), and the shuffle's
//    result follows from them without running the swaps in order. Step i
//    writes p[i] for good (no later step touches position i): p[i] is
//    what position j_i held just before step i. Position k holds k until
//    its first writer, the largest step s with j_s = k, which gives it
//    R(s), what position s held just before step s; every later writer s'
//    (smaller, with j_s' = k) gives it R(s') in turn. So with the steps
//    sorted by (j, s) (the radix sort below), kron_perm_links writes, for
//    each step s, the next larger step of the same draw (the writer before
//    it) or its draw j_s flagged with LINK_FLAG when there is none, and
//    for each position t, last[t]: the smallest step s > t with j_s = t
//    (the last writer before step t), 0 for none. Then R(t) is t when
//    last[t] is 0 and R(last[t]) otherwise, a chain of increasing steps
//    (about ln(n/t) long), and kron_perm_labels sets p[s] = j_s (flagged)
//    or R(the writer before s), and p[0] = R(0).
//
//    A PCG draw is rejected (and drawn again) when the 128-bit product
//    falls in the biased sliver; this happens with probability below
//    2^-34 a draw, but it shifts every later draw by one: kron_perm_draw
//    reports the first rejected step and the host draws the steps below
//    it again from the right draw.
//
// 2. The edges: edge e is edge e % CHUNK_EDGES of SplitMix64 stream
//    e / CHUNK_EDGES, whose t-th draw is the stream's seed plus t times
//    the golden gamma, mixed; an edge draws one word per bit (the row bit
//    from its low half, the column bit from its high half against the
//    row half's threshold). Both endpoints are labelled through the
//    permutation; an edge u-v with u != v is two adjacency entries (u, v)
//    and (v, u). kron_count counts the entries of every bucket of sources
//    so that the host can size the parts exactly; kron_generate writes a
//    part's entries, those whose source lies in the part's rows, as keys
//    (u - row_first) << scale | v, appended with one atomic per block.
//
// 3. The CSR of a part: an LSD radix sort of its keys on the bits they
//    use, 8 bits a pass, each pass three launches: kron_sort_hist counts
//    each block's digits into a digit-major matrix (digit d of block b at
//    d * blocks + b), kron_scan turns it into every (digit, block)'s first
//    output position, and kron_sort_scatter moves each block's keys,
//    tile by tile: cub::BlockRadixRankMatch ranks a tile (stably: the keys
//    are loaded warp-striped, the order the ranking keeps), the tile is
//    exchanged in shared memory into digit order and written out at its
//    digits' running positions. Then kron_unique_count counts each block's
//    distinct keys, kron_scan places them, and kron_compact writes the
//    distinct keys' targets and, at the first key of each row, the offsets
//    of that row and of the empty rows before it (kron_fill writes an
//    empty part's offsets).
//
// Every parameter is 64 bits wide: the executor passes each kernel argument
// as 8 bytes. The parameter lists and the constants shared with the host
// come from kronbuild_abi.h, generated from the kernel ABI declared in Go
// (abi.go: go generate ./workloads/kronbuild).
//
// Build: make ptx (nvcc 11.8, -arch=compute_80); the PTX is committed and
// embedded in the kronbuild package. CUB (libcub-dev) provides the block
// primitives; it is included before the ABI header, whose macros have
// short names. cub/block/block_load.cuh is not: it brings CUB's device
// utilities and their EmptyKernel entry point into the PTX.

#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kronbuild_abi.h"
#include "gpuplan_device.h"

static_assert(THREADS == DIGITS, "kron_sort_scatter: one thread tracks each digit");
static_assert(SORT_TILE == THREADS * SORT_ITEMS, "a sort tile is SORT_ITEMS keys a thread");
static_assert((CHUNK_EDGES & (CHUNK_EDGES - 1)) == 0, "a stream's edges are a power of two");

__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }
__device__ __forceinline__ u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }

// ---------------------------------------------------------------------------
// The label permutation.

// U128 is a 128-bit unsigned integer.
struct U128 {
    u64 hi, lo;
};

__device__ __forceinline__ U128 mul128(U128 a, U128 b) {
    U128 r;
    r.lo = a.lo * b.lo;
    r.hi = __umul64hi(a.lo, b.lo) + a.hi * b.lo + a.lo * b.hi;
    return r;
}

__device__ __forceinline__ U128 add128(U128 a, U128 b) {
    U128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1ull : 0ull);
    return r;
}

// pcg_jump returns the PCG state k steps after state: the LCG's step
// x -> a*x + c composed with itself by squaring.
__device__ U128 pcg_jump(U128 state, u64 k) {
    U128 a = {PCG_MUL_HI, PCG_MUL_LO}, c = {PCG_INC_HI, PCG_INC_LO};
    U128 acc_a = {0ull, 1ull}, acc_c = {0ull, 0ull};
    while (k != 0ull) {
        if (k & 1ull) {
            acc_a = mul128(a, acc_a);
            acc_c = add128(mul128(a, acc_c), c);
        }
        c = add128(mul128(a, c), c);
        a = mul128(a, a);
        k >>= 1;
    }
    return add128(mul128(acc_a, state), acc_c);
}

// pcg_next advances the state and returns its DXSM output (math/rand/v2's
// PCG.Uint64).
__device__ __forceinline__ u64 pcg_next(U128& state) {
    const U128 mul = {PCG_MUL_HI, PCG_MUL_LO}, inc = {PCG_INC_HI, PCG_INC_LO};
    state = add128(mul128(state, mul), inc);
    u64 hi = state.hi;
    hi ^= hi >> 32;
    hi *= PCG_DXSM_MUL;
    hi ^= hi >> 48;
    hi *= (state.lo | 1ull);
    return hi;
}

// Each thread draws PERM_STEPS consecutive steps, from step_hi down, as
// math/rand/v2's Rand.uint64n(i+1) does for step i; a rejected draw is
// drawn again and reported in ctl[CTL_REJECT] (the largest such step, with
// its rejections), for the host to redraw every step below it.
extern "C" __global__ void __launch_bounds__(THREADS) kron_perm_draw(KRON_PERM_DRAW_PARAMS) {
    u64 t = global_thread();
    u64 first = t * PERM_STEPS;
    if (first >= step_hi) return;
    U128 state = pcg_jump(U128{seed1, seed2}, draw + first);
    u64 end = first + PERM_STEPS < step_hi ? first + PERM_STEPS : step_hi;
    for (u64 d = first; d < end; d++) {
        u64 i = step_hi - d;
        u64 bound = i + 1ull;
        u64 x = pcg_next(state);
        u64 j;
        if ((bound & (bound - 1ull)) == 0ull) {
            j = x & (bound - 1ull);
        } else {
            j = __umul64hi(x, bound);
            u64 lo = x * bound;
            if (lo < bound) {
                u64 thresh = (0ull - bound) % bound;
                u64 rejected = 0ull;
                while (lo < thresh) {
                    x = pcg_next(state);
                    j = __umul64hi(x, bound);
                    lo = x * bound;
                    rejected++;
                }
                if (rejected != 0ull) atomicMax(&ctl[CTL_REJECT], (i << 32) | rejected);
            }
        }
        keys[i - 1ull] = (j << scale) | i;
    }
}

// Key x of the sorted (j, s) keys: link step s to the next larger step of
// its group (the same j), or flag its own j; the group's first key sets
// last[j], its smallest step other than j itself (last is zeroed by the
// host: 0 is no step).
extern "C" __global__ void __launch_bounds__(THREADS) kron_perm_links(KRON_PERM_LINKS_PARAMS) {
    u64 mask = (1ull << scale) - 1ull;
    for (u64 x = global_thread(); x < count; x += grid_threads()) {
        u64 key = keys[x];
        u32 j = (u32)(key >> scale), s = (u32)(key & mask);
        u32 next = 0u;
        if (x + 1ull < count && (u32)(keys[x + 1ull] >> scale) == j) next = (u32)(keys[x + 1ull] & mask);
        perm[s] = next != 0u ? next : (j | LINK_FLAG);
        bool first = x == 0ull || (u32)(keys[x - 1ull] >> scale) != j;
        if (first && j <= count) last[j] = s != j ? s : next;
    }
}

// chain_end follows last[] from t to the step whose position had no
// writer before it: what position t held just before step t. A writer is
// always a later step than its position (w > t), which also bounds the
// walk.
__device__ __forceinline__ u32 chain_end(const u32* last, u32 t) {
    for (u32 w = last[t]; w > t; w = last[t]) t = w;
    return t;
}

// The label of every position, in place over the links.
extern "C" __global__ void __launch_bounds__(THREADS) kron_perm_labels(KRON_PERM_LABELS_PARAMS) {
    for (u64 s = global_thread(); s < n; s += grid_threads()) {
        u32 v = s == 0ull ? 0u : perm[s];
        perm[s] = (v & LINK_FLAG) ? (v & ~LINK_FLAG) : chain_end(last, v);
    }
}

// ---------------------------------------------------------------------------
// The edges.

// Edges holds an edge kernel's generator parameters.
struct Edges {
    const u32* perm;
    u64 seed, edges, tab, ta, tc;
    u32 scale;
};

// edge_of draws edge e's endpoints (before labelling), as frontier's
// kronQuadrants.edge does from the stream's (k*scale + 1)-th draw on.
__device__ __forceinline__ void edge_of(const Edges& g, u64 e, u32& i, u32& j) {
    u64 c = e / CHUNK_EDGES, k = e % CHUNK_EDGES;
    u64 state = (g.seed ^ ((c + 1ull) * SPLIT_STREAM_MUL)) + k * g.scale * SPLIT_GAMMA;
    i = 0u;
    j = 0u;
    for (u32 b = 0u; b < g.scale; b++) {
        state += SPLIT_GAMMA;
        u64 z = state;
        z = (z ^ (z >> 30)) * SPLIT_MIX1;
        z = (z ^ (z >> 27)) * SPLIT_MIX2;
        z ^= z >> 31;
        u32 ii = (u64)(u32)z >= g.tab ? 1u : 0u;
        u32 jj = (z >> 32) >= (ii ? g.tc : g.ta) ? 1u : 0u;
        i |= ii << b;
        j |= jj << b;
    }
}

// Every bucket's entries: counted in shared memory, added to counts once
// per block (counts is zeroed by the host).
extern "C" __global__ void __launch_bounds__(THREADS) kron_count(KRON_COUNT_PARAMS) {
    __shared__ u32 hist[MAX_BUCKETS];
    Edges g = {perm, seed, edges, t_ab, t_a, t_c, (u32)scale};
    for (u64 b = threadIdx.x; b < buckets; b += THREADS) hist[b] = 0u;
    __syncthreads();
    for (u64 e = global_thread(); e < edges; e += grid_threads()) {
        u32 i, j;
        edge_of(g, e, i, j);
        if (i == j) continue;
        atomicAdd(&hist[perm[i] >> bucket_shift], 1u);
        atomicAdd(&hist[perm[j] >> bucket_shift], 1u);
    }
    __syncthreads();
    for (u64 b = threadIdx.x; b < buckets; b += THREADS) {
        if (hist[b] != 0u) atomicAdd(&counts[b], (u64)hist[b]);
    }
}

// One part's keys: each thread draws GEN_EDGES edges of a tile, keeps the
// entries whose source is in [row_first, row_first + rows), and the block
// appends them at the cursor (ctl is zeroed by the host). Writes past
// capacity are dropped; the host checks the cursor against the count.
extern "C" __global__ void __launch_bounds__(THREADS) kron_generate(KRON_GENERATE_PARAMS) {
    typedef cub::BlockScan<u32, THREADS> Scan;
    __shared__ typename Scan::TempStorage scan;
    __shared__ u64 block_base;
    Edges g = {perm, seed, edges, t_ab, t_a, t_c, (u32)scale};
    const u64 tile = (u64)THREADS * GEN_EDGES;
    for (u64 t0 = (u64)blockIdx.x * tile; t0 < edges; t0 += (u64)gridDim.x * tile) {
        u64 mine[2 * GEN_EDGES];
        u32 keep = 0u;
#pragma unroll
        for (u32 k = 0u; k < GEN_EDGES; k++) {
            u64 e = t0 + (u64)k * THREADS + threadIdx.x;
            mine[2 * k] = mine[2 * k + 1] = 0ull;
            if (e >= edges) continue;
            u32 i, j;
            edge_of(g, e, i, j);
            if (i == j) continue;
            u64 u = perm[i], v = perm[j];
            if (u - row_first < rows) {
                mine[2 * k] = ((u - row_first) << scale) | v;
                keep |= 1u << (2 * k);
            }
            if (v - row_first < rows) {
                mine[2 * k + 1] = ((v - row_first) << scale) | u;
                keep |= 1u << (2 * k + 1);
            }
        }
        u32 at, total;
        Scan(scan).ExclusiveSum((u32)__popc(keep), at, total);
        if (threadIdx.x == 0u) block_base = total != 0u ? atomicAdd(&ctl[CTL_CURSOR], (u64)total) : 0ull;
        __syncthreads();
        u64 w = block_base + at;
#pragma unroll
        for (u32 q = 0u; q < 2 * GEN_EDGES; q++) {
            if ((keep >> q) & 1u) {
                if (w < capacity) keys[w] = mine[q];
                w++;
            }
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// The radix sort.

// Segment is block b's share of a sort's keys: [lo, hi).
struct Segment {
    u64 lo, hi;
};

__device__ __forceinline__ Segment segment_of(u64 count, u64 segment) {
    Segment s;
    s.lo = (u64)blockIdx.x * segment;
    s.hi = s.lo + segment < count ? s.lo + segment : count;
    if (s.lo > s.hi) s.lo = s.hi;
    return s;
}

__device__ __forceinline__ u32 digit_of(u64 key, u64 bit, u64 bits) { return (u32)(key >> bit) & ((1u << bits) - 1u); }

// load_tile loads a tile warp-striped (lane l of warp w takes keys
// w*32*SORT_ITEMS + q*32 + l), the order cub::BlockRadixRankMatch ranks
// stably in; keys past valid are ~0, which rank after every key of the
// tile.
__device__ __forceinline__ void load_tile(const u64* in, int valid, u64 (&k)[SORT_ITEMS]) {
    int at = (int)(threadIdx.x / 32u) * 32 * SORT_ITEMS + (int)(threadIdx.x % 32u);
#pragma unroll
    for (int q = 0; q < SORT_ITEMS; q++) k[q] = at + q * 32 < valid ? in[at + q * 32] : ~0ull;
}

// Each block's digit counts, into hist[d * blocks + block], from one
// privatized histogram per warp.
extern "C" __global__ void __launch_bounds__(THREADS) kron_sort_hist(KRON_SORT_HIST_PARAMS) {
    __shared__ u32 h[THREADS / 32][DIGITS];
    u32 warp = threadIdx.x / 32u;
    for (u32 d = threadIdx.x; d < (THREADS / 32) * DIGITS; d += THREADS) (&h[0][0])[d] = 0u;
    __syncthreads();
    Segment s = segment_of(count, segment);
    u64 x = s.lo + threadIdx.x;
    for (; x + 3ull * THREADS < s.hi; x += 4ull * THREADS) {
        u64 k0 = keys[x], k1 = keys[x + THREADS], k2 = keys[x + 2ull * THREADS], k3 = keys[x + 3ull * THREADS];
        atomicAdd(&h[warp][digit_of(k0, bit, bits)], 1u);
        atomicAdd(&h[warp][digit_of(k1, bit, bits)], 1u);
        atomicAdd(&h[warp][digit_of(k2, bit, bits)], 1u);
        atomicAdd(&h[warp][digit_of(k3, bit, bits)], 1u);
    }
    for (; x < s.hi; x += THREADS) atomicAdd(&h[warp][digit_of(keys[x], bit, bits)], 1u);
    __syncthreads();
    for (u32 d = threadIdx.x; d < DIGITS; d += THREADS) {
        u32 sum = 0u;
#pragma unroll
        for (u32 w = 0u; w < THREADS / 32; w++) sum += h[w][d];
        hist[(u64)d * blocks + blockIdx.x] = sum;
    }
}

// data[0:count] becomes its exclusive prefix sum, data[count] the total:
// one block, rounds of SCAN_THREADS * SCAN_ITEMS values.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) kron_scan(KRON_SCAN_PARAMS) {
    typedef cub::BlockScan<u64, SCAN_THREADS> Scan;
    __shared__ typename Scan::TempStorage temp;
    u64 carry = 0ull;
    for (u64 base = 0ull; base < count; base += (u64)SCAN_THREADS * SCAN_ITEMS) {
        u64 v[SCAN_ITEMS];
        u64 at = base + (u64)threadIdx.x * SCAN_ITEMS;
#pragma unroll
        for (u32 k = 0u; k < SCAN_ITEMS; k++) v[k] = at + k < count ? data[at + k] : 0ull;
        u64 total;
        Scan(temp).ExclusiveSum(v, v, total);
#pragma unroll
        for (u32 k = 0u; k < SCAN_ITEMS; k++) {
            if (at + k < count) data[at + k] = v[k] + carry;
        }
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0u) data[count] = carry;
}

// Each block moves its segment's keys to their places for digit [bit,
// bit+bits), tile by tile: thread d keeps digit d's next output position.
extern "C" __global__ void __launch_bounds__(THREADS) kron_sort_scatter(KRON_SORT_SCATTER_PARAMS) {
    typedef cub::BlockRadixRankMatch<THREADS, DIGIT_BITS, false> Rank;
    __shared__ union {
        typename Rank::TempStorage rank;
        u64 keys[SORT_TILE];
    } s;
    __shared__ u64 rel[DIGITS];
    __shared__ int first[DIGITS + 1];
    Segment seg = segment_of(count, segment);
    u64 next = hist[(u64)threadIdx.x * blocks + blockIdx.x];
    for (u64 t0 = seg.lo; t0 < seg.hi; t0 += SORT_TILE) {
        int valid = seg.hi - t0 < SORT_TILE ? (int)(seg.hi - t0) : (int)SORT_TILE;
        u64 k[SORT_ITEMS];
        load_tile(in + t0, valid, k);
        int ranks[SORT_ITEMS], prefix[1];
        __syncthreads();
        Rank(s.rank).RankKeys(k, ranks, cub::BFEDigitExtractor<u64>((u32)bit, (u32)bits), prefix);
        first[threadIdx.x] = prefix[0];
        if (threadIdx.x == 0u) first[DIGITS] = SORT_TILE;
        rel[threadIdx.x] = next - (u64)prefix[0];
        __syncthreads();
#pragma unroll
        for (int q = 0; q < SORT_ITEMS; q++) s.keys[ranks[q]] = k[q];
        __syncthreads();
#pragma unroll
        for (int q = 0; q < SORT_ITEMS; q++) {
            int idx = q * THREADS + threadIdx.x;
            if (idx < valid) {
                u64 key = s.keys[idx];
                u64 to = rel[digit_of(key, bit, bits)] + (u64)idx;
                if (to < count) out[to] = key;
            }
        }
        next += (u64)(first[threadIdx.x + 1] - first[threadIdx.x]);
    }
}

// ---------------------------------------------------------------------------
// The CSR of a part.

// Each block's distinct keys: the keys that differ from the key before.
extern "C" __global__ void __launch_bounds__(THREADS) kron_unique_count(KRON_UNIQUE_COUNT_PARAMS) {
    typedef cub::BlockReduce<u64, THREADS> Reduce;
    __shared__ typename Reduce::TempStorage temp;
    Segment s = segment_of(count, segment);
    u64 mine = 0ull;
    for (u64 x = s.lo + threadIdx.x; x < s.hi; x += THREADS) {
        if (x == 0ull || keys[x] != keys[x - 1ull]) mine++;
    }
    u64 total = Reduce(temp).Sum(mine);
    if (threadIdx.x == 0u) counts[blockIdx.x] = total;
}

// set_rows writes the offsets of rows [from, to] (part rows, inclusive,
// none past the part's end, rows).
__device__ __forceinline__ void set_rows(u64* offsets, u64 row_first, u64 rows, u64 from, u64 to, u64 value) {
    for (u64 r = from; r <= to && r <= rows; r++) offsets[row_first + r] = value;
}

// Each block writes its segment's distinct keys' targets, in order (a
// block scan of the tile's flags after the block's first position), and
// at the first key of each row the offsets of the rows up to it; the
// part's last key also writes those of the rows after it and of the
// part's end.
extern "C" __global__ void __launch_bounds__(THREADS) kron_compact(KRON_COMPACT_PARAMS) {
    typedef cub::BlockScan<u32, THREADS> Scan;
    __shared__ typename Scan::TempStorage temp;
    Segment s = segment_of(count, segment);
    const u64 tile = (u64)THREADS * COMPACT_ITEMS;
    u64 mask = (1ull << scale) - 1ull, part_total = counts[blocks];
    u64 pos = counts[blockIdx.x];
    for (u64 t0 = s.lo; t0 < s.hi; t0 += tile) {
        u64 x0 = t0 + (u64)threadIdx.x * COMPACT_ITEMS;
        u64 kk[COMPACT_ITEMS + 1];
        kk[0] = x0 > 0ull && x0 < s.hi ? keys[x0 - 1ull] : ~0ull;
        u32 flags = 0u;
#pragma unroll
        for (u32 q = 0u; q < COMPACT_ITEMS; q++) {
            u64 x = x0 + q;
            kk[q + 1] = x < s.hi ? keys[x] : ~0ull;
            if (x < s.hi && (x == 0ull || kk[q + 1] != kk[q])) flags |= 1u << q;
        }
        u32 at, total;
        Scan(temp).ExclusiveSum((u32)__popc(flags), at, total);
        u64 w = pos + at;
#pragma unroll
        for (u32 q = 0u; q < COMPACT_ITEMS; q++) {
            u64 x = x0 + q, row = kk[q + 1] >> scale;
            if (x >= s.hi) break;
            if ((flags >> q) & 1u) {
                targets[w] = (u32)(kk[q + 1] & mask);
                // The rows from the previous key's row (exclusive) to this
                // one: none when the previous key is in the same row.
                u64 from = x == 0ull ? 0ull : (kk[q] >> scale) + 1ull;
                set_rows(offsets, row_first, rows, from, row, base + w);
                w++;
            }
            if (x == count - 1ull) set_rows(offsets, row_first, rows, row + 1ull, rows, base + part_total);
        }
        pos += total;
        __syncthreads();
    }
}

// words[first:first+count] = value.
extern "C" __global__ void __launch_bounds__(THREADS) kron_fill(KRON_FILL_PARAMS) {
    for (u64 x = global_thread(); x < count; x += grid_threads()) words[first + x] = value;
}
