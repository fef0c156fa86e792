// Breadth-first search kernels for gpuplan's frontier arms.
//
// Graphs are CSR: offsets (uint32, n+1 entries) and targets (int32). Levels
// are int32, -1 for unreached. The frontier queue holds work items: an edge
// range (begin, end) of one frontier vertex's adjacency, at most `chunk`
// edges long, so a hub vertex becomes many items and no warp is stuck with a
// 100,000-edge list. A warp takes up to 32 items and spreads their edges
// over its lanes (one edge per lane per round), so a warp is busy whether its
// items hold 2 edges or 200.
//
// Control words live in `ctl`, one 128-byte line each (32 uint32):
//   line 0..2  the queue counts of a three-level ring: level d reads the
//              count in slot d%3, pushes into slot (d+1)%3 and clears slot
//              (d+2)%3, which nothing reads until level d+1 pushes into it;
//   line 3     unused;
//   line 4     results: [0] levels with a non-empty frontier, [1] the final
//              changed flag (0 = converged), [2] queue overflow (must stay 0),
//              [3] 1: a bfs_queue_level launch given more than one phase;
//              2: a megakernel grid of more than 65,535 blocks,
//              [8] and [9] the scan wave's changed flags (by depth parity);
//   line 5..7  the megakernel's level words, a ring of three 64-bit words:
//              level d pushes into word (d+1)%3 (bits 32..63: items pushed
//              to the global queue) and its blocks then arrive on the same
//              word (bits 0..15: one per block; bits 16..31: one per block
//              that kept items of its own), so the barrier's final acquire
//              load also yields the next level's global count and whether
//              any block has local work. Level d clears word (d+2)%3.
//
// The megakernel keeps small frontiers in shared memory: a block keeps the
// single-item vertices it discovers (up to KEEP_ITEMS items and KEEP_EDGES
// edges a level: one edge per thread) and expands them itself in the next
// level, each thread taking one edge. Everything else (hubs, and whatever
// passes the budget) goes through the global queue, which every warp of the
// grid shares. A block that had to turn a candidate away sheds all but
// KEEP_LOW items to the global queue, so that it does not spill again on the
// next levels. While a block waits at the barrier it reads ahead for its
// kept items (targets and offsets into L1, level words into L2), so a
// high-diameter graph's level (a grid's frontier is a few thousand
// vertices) costs one claim, a few shared-memory steps and the barrier.
//
// Every scalar parameter is 64 bits wide: the Go driver binding copies each
// kernel argument as 8 bytes.
//
// Build: make ptx (nvcc 11.8, -arch=compute_80); the PTX is committed and
// embedded in the frontier package.

#define FULL_MASK 0xffffffffu
#define CTL_LINE 32u
#define CTL_COUNT(slot) ((slot) * CTL_LINE)
#define CTL_RESULT (4u * CTL_LINE)
#define CTL_MEGA(slot) ((5u + (slot)) * CTL_LINE)
#define CTL_WORDS (8u * CTL_LINE)
// Items a block stages in shared memory per level before spilling.
#define LEVEL_BLOCK_QCAP 1024u
#define MEGA_BLOCK_QCAP 2048u
// A megakernel block keeps at most KEEP_ITEMS items and KEEP_EDGES edges of
// its own discoveries for the next level; a kept item has at most
// KEEP_ITEM_EDGES edges. A block that turned a candidate away keeps only
// its first KEEP_LOW items. The keep queue's reservation word packs items
// (bits 20..31) and edges (bits 0..19); reservations stop once the queue is
// full, so neither field can overflow (past the limits come at most 32
// warps' reservations of 32 items and 32 x KEEP_ITEM_EDGES edges each).
// The budget is near a fair share of a large high-diameter frontier per SM
// (a 2048 x 2048 grid's is about 16,000 edges): concentrating a level's
// claims on few SMs makes their issue rate the bottleneck (measured on an
// H100: 3.50 us per grid-2048 level at 256 edges, 3.88 us at 1,024, 4.21 us
// at 64). Each can be overridden with -D to experiment.
#ifndef KEEP_ITEMS
#define KEEP_ITEMS 64u
#endif
#ifndef KEEP_EDGES
#define KEEP_EDGES 256u
#endif
#define KEEP_ITEM_EDGES 64u
#ifndef KEEP_LOW
#define KEEP_LOW 16u
#endif
#define KEEP_SHIFT 20u
#define KEEP_EMASK ((1u << KEEP_SHIFT) - 1u)
// Spilled items go to warps that rotate with the level (a multiplicative
// hash of the level), so they do not pile up on the same warps.
#define ROTATE_MUL 2654435761u
// Fields of a megakernel level word's low half.
#define ARRIVE_MASK 0xffffu
#define ARRIVE_KEPT (1ull << 16)

typedef unsigned int u32;
typedef unsigned long long u64;

// ld.acquire.gpu: a load that orders the loads after it.
__device__ __forceinline__ u64 load_acquire64(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// red.release.gpu: an add that publishes the writes before it (and, after a
// __syncthreads, the writes of the whole block).
__device__ __forceinline__ void add_release64(u64* p, u64 v) {
    asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// A read that bypasses L1 (which is not coherent across SMs): for data
// other blocks wrote since this launch began.
__device__ __forceinline__ u32 load_cg(const u32* p) { return __ldcg(p); }

// reserve adds n to a queue count and returns the old count: a plain 32-bit
// count, or the high half of a megakernel level word.
__device__ __forceinline__ u32 reserve(u32* count, u32 n) { return atomicAdd(count, n); }
__device__ __forceinline__ u32 reserve(u64* word, u32 n) {
    return (u32)(atomicAdd((unsigned long long*)word, (unsigned long long)n << 32) >> 32);
}

// The megakernel's level barrier is a counter barrier on a level word. After
// a __syncthreads (so that the release covers the writes of the whole
// block), the block's first thread adds `arrive` (1, plus ARRIVE_KEPT if the
// block kept items) to the low half (barrier_arrive, release); later it
// spins until the arrivals reach gridDim.x (barrier_wait, acquire). Between
// the two the block may do work that does not depend on other blocks. The
// word is fresh for every level (the ring clears it two levels ahead), so
// nothing is reset inside the barrier, and the final load also carries the
// level's global push count in the high half; the block receives the whole
// word through shared memory. One barrier per level.
__device__ __forceinline__ void barrier_arrive(u64* word, u64 arrive) {
    if (threadIdx.x == 0) add_release64(word, arrive);
}

__device__ __forceinline__ u64 barrier_wait(u64* word, u64* s_word) {
    if (threadIdx.x == 0) {
        u64 v;
        do {
            v = load_acquire64(word);
        } while ((u32)(v & ARRIVE_MASK) < gridDim.x);
        *s_word = v;
    }
    __syncthreads();
    return *s_word;
}

// BlockQueue is a block's shared-memory staging area for the items it
// discovers during one level. Warps reserve slots with a shared-memory
// atomic; at the end of the level the block reserves space in the global
// queue with one atomic add and copies its items there. One global atomic
// per block and level instead of one per warp: a single global counter
// takes about 1.3 G increments/s, so thousands of warp-level adds per level
// would cost microseconds of serialisation on one address.
template <u32 CAP>
struct BlockQueue {
    u32 n;     // slots reserved this level (may exceed CAP)
    u32 base;  // the block's offset in the global queue
    uint2 items[CAP];
};

// push_items appends ceil((e-b)/chunk) items for a newly discovered vertex
// whose adjacency is [b, e). The warp reserves all lanes' items with one
// shared-memory atomic on *bn (the block queue's count for this level) (a warp-wide scan gives each lane its offset); slots
// past the block queue's capacity spill straight to the global queue with
// one global atomic for the warp's spilled items.
template <u32 CAP, typename C>
__device__ __forceinline__ void push_items(BlockQueue<CAP>* bq, u32* bn, uint2* qout, u32 qcap, C* out_count,
                                           u32* overflow, u32 lane, u32 nitems, u32 b, u32 e, u32 chunk) {
    if (__ballot_sync(FULL_MASK, nitems != 0) == 0) return;
    u32 incl = nitems;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        u32 t = __shfl_up_sync(FULL_MASK, incl, o);
        if (lane >= o) incl += t;
    }
    u32 total = __shfl_sync(FULL_MASK, incl, 31);
    if (total == 0) return;
    u32 base = 0;
    if (lane == 31) base = atomicAdd(bn, total);
    base = __shfl_sync(FULL_MASK, base, 31);
    u32 first_spill = max(base, CAP);  // slots >= CAP spill
    u32 spilled = (base + total > CAP) ? base + total - first_spill : 0;
    u32 gbase = 0;
    if (spilled > 0) {
        if (lane == 31) gbase = reserve(out_count, spilled);
        gbase = __shfl_sync(FULL_MASK, gbase, 31);
    }
    u32 pos = base + incl - nitems;
    for (u32 i = 0; i < nitems; i++) {
        u32 ib = b + i * chunk;
        uint2 item = make_uint2(ib, min(ib + chunk, e));
        u32 slot = pos + i;
        if (slot < CAP) {
            bq->items[slot] = item;
        } else if (gbase + (slot - first_spill) < qcap) {
            qout[gbase + (slot - first_spill)] = item;
        } else {
            atomicExch(overflow, 1u);
        }
    }
}

// flush_staged copies the block's staged items to the global queue with one
// atomic add. Every thread of the block calls it after a __syncthreads (so n
// is block-uniform); the caller empties the block queue after the next one.
template <u32 CAP, typename C>
__device__ __forceinline__ void flush_staged(BlockQueue<CAP>* bq, uint2* qout, u32 qcap, C* out_count,
                                             u32* overflow) {
    u32 n = min(bq->n, CAP);
    if (n == 0) return;
    if (threadIdx.x == 0) bq->base = reserve(out_count, n);
    __syncthreads();
    u32 base = bq->base;
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
        if (base + i < qcap) {
            qout[base + i] = bq->items[i];
        } else {
            atomicExch(overflow, 1u);
        }
    }
}

// discover visits edge eidx (if valid): a target reached for the first time
// gets level `next`, and its adjacency [nb, ne) becomes nitems items.
// low_degree selects the path for graphs of small degree (grids, road
// networks): claim each target with a compare-and-swap straight away and
// read its offsets in parallel with it, one memory round trip shorter per
// level than testing the level first. Graphs of high degree test first, so
// most edges cost one cached load instead of an atomic.
__device__ __forceinline__ void discover(const u32* __restrict__ offsets, const int* __restrict__ targets, int* level,
                                         bool valid, u32 eidx, int next, u32 chunk, bool low_degree, u32* nitems,
                                         u32* nb, u32* ne) {
    *nitems = 0;
    *nb = 0;
    *ne = 0;
    if (!valid) return;
    int w = __ldg(&targets[eidx]);
    if (low_degree) {
        u32 b = __ldg(&offsets[w]);
        u32 en = __ldg(&offsets[w + 1]);
        if (atomicCAS(&level[w], -1, next) == -1) {
            *nb = b;
            *ne = en;
            *nitems = (en - b + chunk - 1) / chunk;
            // The next level reads this adjacency: start moving it into L2
            // now, off the critical path.
            if (*nitems > 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(targets + b));
        }
    } else if (level[w] == -1) {
        if (atomicCAS(&level[w], -1, next) == -1) {
            *nb = __ldg(&offsets[w]);
            *ne = __ldg(&offsets[w + 1]);
            *nitems = (*ne - *nb + chunk - 1) / chunk;
        }
    }
}

// KeepQueue holds the items a megakernel block keeps for the next level.
// Warps reserve slots and edges together with one shared atomic on resv; a
// candidate is kept only if its slot and its edge range fit the budget.
// Reservations only grow, so once one candidate is turned away every later
// one is too: the kept items are exactly slots [0, done >> KEEP_SHIFT), and
// item i's edges are [pos[i], pos[i] + len) of the (done & KEEP_EMASK) kept
// edges. full is set when a candidate was turned away.
struct KeepQueue {
    u32 resv;
    u32 done;
    u32 full;
    uint2 items[KEEP_ITEMS];
    u32 pos[KEEP_ITEMS];
};

// kept_item returns the kept item that holds kept edge e (the last item j
// with pos[j] <= e; pos[0] is 0) and sets *first to its first edge.
__device__ __forceinline__ uint2 kept_item(const KeepQueue* kq, u32 n, u32 e, u32* first) {
    u32 lo = 0, hi = n;
    while (hi - lo > 1) {
        u32 mid = (lo + hi) >> 1;
        if (kq->pos[mid] <= e) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *first = kq->pos[lo];
    return kq->items[lo];
}

// keep_or_push hands the lanes' new items on. With a KeepQueue, a vertex of
// one item of at most KEEP_ITEM_EDGES edges is a candidate and is kept if
// the block's budget allows; everything else goes to push_items.
template <u32 CAP, typename C>
__device__ __forceinline__ void keep_or_push(KeepQueue* kq, BlockQueue<CAP>* bq, u32* bn, uint2* qout, u32 qcap, C* out_count,
                                             u32* overflow, u32 lane, u32 nitems, u32 b, u32 e, u32 chunk) {
    if (kq != nullptr) {
        u32 len = e - b;
        bool cand = nitems == 1 && len <= KEEP_ITEM_EDGES;
        u32 full = 0;
        if (lane == 0) full = *(volatile u32*)&kq->full;
        full = __shfl_sync(FULL_MASK, full, 0);
        if (__ballot_sync(FULL_MASK, cand) != 0 && full == 0) {
            // Candidates (bits 16..) and their edges (bits 0..15) in one scan.
            u32 incl = cand ? (1u << 16) | len : 0u;
#pragma unroll
            for (u32 o = 1; o < 32; o <<= 1) {
                u32 t = __shfl_up_sync(FULL_MASK, incl, o);
                if (lane >= o) incl += t;
            }
            u32 total = __shfl_sync(FULL_MASK, incl, 31);
            u32 old = 0;
            if (lane == 31) old = atomicAdd(&kq->resv, ((total >> 16) << KEEP_SHIFT) | (total & 0xffffu));
            old = __shfl_sync(FULL_MASK, old, 31);
            u32 slot = (old >> KEEP_SHIFT) + (incl >> 16) - 1;
            u32 epos = (old & KEEP_EMASK) + (incl & 0xffffu) - len;
            bool kept = cand && slot < KEEP_ITEMS && epos + len <= KEEP_EDGES;
            if (kept) {
                kq->items[slot] = make_uint2(b, e);
                kq->pos[slot] = epos;
            }
            if (__ballot_sync(FULL_MASK, cand && !kept) != 0 && lane == 0) kq->full = 1;
            u32 kmask = __ballot_sync(FULL_MASK, kept);
            if (kmask != 0 && lane == 31 - __clz(kmask)) atomicMax(&kq->done, ((slot + 1) << KEEP_SHIFT) | (epos + len));
            if (kept) nitems = 0;
        }
    }
    push_items(bq, bn, qout, qcap, out_count, overflow, lane, nitems, b, e, chunk);
}

// expand_items expands the warp's items (lane i holds one, or an empty
// range): the lanes' edges are spread over the lanes, one edge per lane per
// round, so a warp is busy whether its items hold 2 edges or 200. Each newly
// reached vertex gets level `next`.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_items(uint2 it, KeepQueue* kq, BlockQueue<CAP>* bq, u32* bn,
                                             const u32* __restrict__ offsets, const int* __restrict__ targets,
                                             int* level, uint2* qout, C* out_count, u32* overflow, int next,
                                             u32 chunk, u32 qcap, bool low_degree, u32 lane) {
    u32 len = it.y - it.x;
    u32 incl = len;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        u32 t = __shfl_up_sync(FULL_MASK, incl, o);
        if (lane >= o) incl += t;
    }
    u32 total = __shfl_sync(FULL_MASK, incl, 31);
    u32 excl = incl - len;
    for (u32 e0 = 0; e0 < total; e0 += 32) {
        u32 e = e0 + lane;
        // The owner of edge e is the last lane j with excl_j <= e (lanes
        // with empty items share their successor's excl and are skipped).
        u32 j = 0;
#pragma unroll
        for (u32 step = 16; step >= 1; step >>= 1) {
            u32 v = __shfl_sync(FULL_MASK, excl, (j + step) & 31);
            if (j + step < 32 && v <= e) j += step;
        }
        u32 ob = __shfl_sync(FULL_MASK, it.x, j);
        u32 oe = __shfl_sync(FULL_MASK, excl, j);
        u32 nitems, nb, ne;
        discover(offsets, targets, level, e < total, ob + (e - oe), next, chunk, low_degree, &nitems, &nb, &ne);
        keep_or_push(kq, bq, bn, qout, qcap, out_count, overflow, lane, nitems, nb, ne, chunk);
    }
}

// expand_kept expands the block's kept items (n items, edges in all): thread
// t takes kept edges t, t + blockDim.x, ... The round count is block-
// uniform, so every warp takes part in every push.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_kept(const KeepQueue* cur, u32 n, u32 edges, KeepQueue* nxt,
                                            BlockQueue<CAP>* bq, u32* bn, const u32* __restrict__ offsets,
                                            const int* __restrict__ targets, int* level, uint2* qout, C* out_count,
                                            u32* overflow, int next, u32 chunk, u32 qcap, bool low_degree,
                                            u32 lane) {
    for (u32 e0 = 0; e0 < edges; e0 += blockDim.x) {
        u32 e = e0 + threadIdx.x;
        bool valid = e < edges;
        u32 eidx = 0;
        if (valid) {
            u32 first;
            uint2 it = kept_item(cur, n, e, &first);
            eidx = it.x + (e - first);
        }
        u32 nitems, nb, ne;
        discover(offsets, targets, level, valid, eidx, next, chunk, low_degree, &nitems, &nb, &ne);
        keep_or_push(nxt, bq, bn, qout, qcap, out_count, overflow, lane, nitems, nb, ne, chunk);
    }
}

// warm reads ahead for the block's kept items while the barrier is open:
// each thread loads the target of a kept edge (through L1, which keeps it
// for the next level), moves the target's offsets into L1 and its level
// word into L2, so that the next level's claim is the only memory round
// trip left on its path. It writes nothing. The first warp, whose first
// thread waits at the barrier, takes no part: a block that arrives last
// must not delay its own wait (measured on an H100: 3.24 us per grid-2048
// level against 3.72 us when every warp reads ahead).
__device__ __forceinline__ void warm(const KeepQueue* kq, u32 n, u32 edges, const u32* __restrict__ offsets,
                                     const int* __restrict__ targets, const int* level) {
    if (threadIdx.x < 32) return;
    for (u32 e = threadIdx.x - 32; e < edges; e += blockDim.x - 32) {
        u32 first;
        uint2 it = kept_item(kq, n, e, &first);
        int w = __ldg(&targets[it.x + (e - first)]);
        asm volatile("prefetch.global.L1 [%0];" ::"l"(offsets + w));
        asm volatile("prefetch.global.L2 [%0];" ::"l"(level + w));
    }
}

// expand_level processes the `count` items of qin with `nwarps` warps; this
// warp is `gwarp` and takes up to 32 items a round.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_level(KeepQueue* kq, BlockQueue<CAP>* bq, u32* bn,
                                             const u32* __restrict__ offsets,
                                             const int* __restrict__ targets, int* level, const uint2* qin,
                                             uint2* qout, C* out_count, u32* overflow, u32 count, int next,
                                             u32 chunk, u32 qcap, bool low_degree, u32 gwarp, u32 nwarps,
                                             u32 lane) {
    if (count == 0) return;
    u32 k = (count + nwarps - 1) / nwarps;  // items per warp and round, at most 32
    if (k > 32) k = 32;
    u32 stride = nwarps * k;
    if (kq != nullptr) gwarp = (gwarp + (u32)next * ROTATE_MUL % nwarps) % nwarps;
    for (u32 base = gwarp * k; base < count; base += stride) {
        u32 idx = base + lane;
        uint2 it = make_uint2(0, 0);
        if (lane < k && idx < count) it = __ldcg(&qin[idx]);
        expand_items(it, kq, bq, bn, offsets, targets, level, qout, out_count, overflow, next, chunk, qcap, low_degree,
                     lane);
    }
}

// bfs_init resets one BFS: every level to -1 except the root's 0, the
// root's items into q0 and the control words (counts, barrier, results).
extern "C" __global__ void bfs_init(const u32* __restrict__ offsets, int* level, uint2* q0, u32* ctl, u64 n,
                                    u64 root, u64 chunk) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        level[i] = (i == root) ? 0 : -1;
    }
    if (blockIdx.x == 0) {
        for (u32 i = threadIdx.x; i < CTL_WORDS; i += blockDim.x) ctl[i] = 0;
        __syncthreads();
        u32 b = offsets[root], e = offsets[root + 1];
        u32 c = (u32)chunk;
        u32 nitems = (e - b + c - 1) / c;
        for (u32 i = threadIdx.x; i < nitems; i += blockDim.x) {
            u32 ib = b + i * c;
            q0[i] = make_uint2(ib, min(ib + c, e));
        }
        if (threadIdx.x == 0) ctl[CTL_COUNT(0)] = nitems;
    }
}

// bfs_wave_scan is the plain level-synchronous top-down wave: one thread per
// vertex; a vertex at level `depth` labels its unreached neighbours
// depth+1 and sets the changed flag of this level, ctl result word
// 8 + depth%2 (it clears the other slot, which the next level sets). The
// host reads the flag after each level and stops when a level changed
// nothing.
extern "C" __global__ void bfs_wave_scan(const u32* __restrict__ offsets, const int* __restrict__ targets,
                                         int* level, u32* ctl, u64 n, u64 depth) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    int d = (int)depth;
    if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + 8 + ((d + 1) & 1)] = 0;
    bool any = false;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        if (level[v] != d) continue;
        for (u32 i = offsets[v], e = offsets[v + 1]; i < e; i++) {
            int w = targets[i];
            if (level[w] == -1) {
                level[w] = d + 1;
                any = true;
            }
        }
    }
    if (__any_sync(FULL_MASK, any) && (threadIdx.x & 31) == 0) ctl[CTL_RESULT + 8 + (d & 1)] = 1u;
}

// bfs_queue_level expands one level from the frontier queue into the other
// queue (one launch per level): level d = depth_base + phase_begin reads q0
// when d is even and q1 when odd. It takes the executor's split-dispatch
// convention (phase_begin, phase_end) as its last two parameters so that
// many levels can be enqueued back to back on one stream without any host
// sync; it runs exactly one level, so phase_end must be phase_begin + 1
// (otherwise it sets ctl result word 3 and does nothing). It reads the
// level's count from ring slot d%3, pushes into slot (d+1)%3 and clears slot
// (d+2)%3; after the launch the next count is the level's changed flag.
extern "C" __global__ void bfs_queue_level(const u32* __restrict__ offsets, const int* __restrict__ targets,
                                           int* level, uint2* q0, uint2* q1, u32* ctl, u64 chunk, u64 qcap,
                                           u64 low_degree, u64 depth_base, u64 phase_begin, u64 phase_end) {
    if (phase_end != phase_begin + 1) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + 3] = 1u;
        return;
    }
    u32 d = (u32)(depth_base + phase_begin);
    u32 count = load_cg(&ctl[CTL_COUNT(d % 3)]);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[CTL_COUNT((d + 2) % 3)] = 0;
        if (count > 0) ctl[CTL_RESULT] = d + 1;
    }
    if (count == 0) return;
    __shared__ BlockQueue<LEVEL_BLOCK_QCAP> bq;
    if (threadIdx.x == 0) bq.n = 0;
    __syncthreads();
    const uint2* qin = (d & 1) ? q1 : q0;
    uint2* qout = (d & 1) ? q0 : q1;
    u32* out = &ctl[CTL_COUNT((d + 1) % 3)];
    u32 lane = threadIdx.x & 31;
    u32 nwarps = (gridDim.x * blockDim.x) >> 5;
    u32 gwarp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    expand_level((KeepQueue*)nullptr, &bq, &bq.n, offsets, targets, level, qin, qout, out, &ctl[CTL_RESULT + 2],
                        count, (int)d + 1, (u32)chunk, (u32)qcap, low_degree != 0, gwarp, nwarps, lane);
    __syncthreads();
    flush_staged(&bq, qout, (u32)qcap, out, &ctl[CTL_RESULT + 2]);
}

// bfs_megakernel runs every level in one cooperative launch: expand the
// level (the items this warp kept, then its share of the global queue),
// cross the grid barrier (which hands every block the next global count and
// whether any block kept items), repeat until the frontier is empty or
// max_levels levels ran. One barrier per level; the host reads the final
// changed flag (ctl result [1]) once, after the launch. The level word's
// arrival field is 16 bits wide: a grid of more than 65,535 blocks sets ctl
// result [3] to 2 and does nothing.
extern "C" __global__ void __launch_bounds__(1024) bfs_megakernel(const u32* __restrict__ offsets,
                                                                  const int* __restrict__ targets, int* level,
                                                                  uint2* q0, uint2* q1, u32* ctl, u64 chunk,
                                                                  u64 qcap, u64 low_degree, u64 max_levels) {
    if (gridDim.x > ARRIVE_MASK) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + 3] = 2u;
        return;
    }
    __shared__ u64 s_word;
    __shared__ BlockQueue<MEGA_BLOCK_QCAP> bq;  // bq.n is unused: s_n counts
    __shared__ u32 s_n[2];                       // staged items, by level parity
    __shared__ KeepQueue keep[2];
    if (threadIdx.x == 0) {
        s_n[0] = s_n[1] = 0;
        keep[0].resv = keep[0].done = keep[0].full = 0;
        keep[1].resv = keep[1].done = keep[1].full = 0;
    }
    __syncthreads();
    u32 lane = threadIdx.x & 31;
    u32 nwarps = (gridDim.x * blockDim.x) >> 5;
    // Warps are numbered across blocks first, so a small level spreads over
    // every SM instead of filling the first blocks.
    u32 gwarp = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
    bool lowd = low_degree != 0;
    u32* overflow = &ctl[CTL_RESULT + 2];
    u64* words = (u64*)&ctl[CTL_MEGA(0)];  // word i at words[i * CTL_LINE / 2]
    u32 d = 0;
    u32 count = load_cg(&ctl[CTL_COUNT(0)]);  // the level's global items
    bool kept = false;                        // some block kept items for the level
    u32 kn = 0, kedges = 0;                   // this block's kept items and edges
    while ((count > 0 || kept) && d < (u32)max_levels) {
        if (blockIdx.x == 0 && threadIdx.x == 0) words[((d + 2) % 3) * (CTL_LINE / 2)] = 0ull;
        KeepQueue* cur = &keep[d & 1];
        KeepQueue* nxt = &keep[(d + 1) & 1];
        const uint2* qin = (d & 1) ? q1 : q0;
        uint2* qout = (d & 1) ? q0 : q1;
        u64* out = &words[((d + 1) % 3) * (CTL_LINE / 2)];
        u32* bn = &s_n[d & 1];
        expand_kept(cur, kn, kedges, nxt, &bq, bn, offsets, targets, level, qout, out, overflow, (int)d + 1,
                    (u32)chunk, (u32)qcap, lowd, lane);
        expand_level(nxt, &bq, bn, offsets, targets, level, qin, qout, out, overflow, count, (int)d + 1,
                     (u32)chunk, (u32)qcap, lowd, gwarp, nwarps, lane);
        __syncthreads();
        // The staged items, and the kept items past KEEP_LOW if the block
        // turned a candidate away, go to the global queue together.
        u32 ns = min(*bn, MEGA_BLOCK_QCAP);
        u32 done = nxt->done;
        kn = done >> KEEP_SHIFT;
        kedges = done & KEEP_EMASK;
        u32 shedn = (nxt->full != 0 && kn > KEEP_LOW) ? kn - KEEP_LOW : 0u;
        u32 nout = ns + shedn;
        if (threadIdx.x == 0) {
            // Every thread is past its reads of cur, which the next level
            // fills, and the next level's staging count was last read a
            // level ago.
            cur->resv = cur->done = cur->full = 0;
            s_n[(d + 1) & 1] = 0;
        }
        if (nout > 0) {
            if (threadIdx.x == 0) bq.base = reserve(out, nout);
            __syncthreads();
            u32 base = bq.base;
            for (u32 i = threadIdx.x; i < nout; i += blockDim.x) {
                uint2 it = i < ns ? bq.items[i] : nxt->items[KEEP_LOW + (i - ns)];
                if (base + i < qcap) {
                    qout[base + i] = it;
                } else {
                    atomicExch(overflow, 1u);
                }
            }
            // The release below must cover the copies of the whole block.
            __syncthreads();
        }
        if (shedn > 0) {
            // The next level expands the first KEEP_LOW items (kn and
            // kedges, not nxt's counters, say what it holds).
            kn = KEEP_LOW;
            kedges = nxt->pos[KEEP_LOW];
        }
        // The release costs about 0.2 us a level on an H100 (2.81 against
        // 3.02 us per grid-2048 level with a relaxed add), but without it
        // nothing orders this block's claims before the next level's.
        barrier_arrive(out, 1ull | (kn > 0 ? ARRIVE_KEPT : 0ull));
        warm(nxt, kn, kedges, offsets, targets, level);
        d++;
        u64 v = barrier_wait(out, &s_word);
        count = (u32)(v >> 32);
        kept = ((v >> 16) & ARRIVE_MASK) != 0;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[CTL_RESULT] = d;
        ctl[CTL_RESULT + 1] = (count > 0 || kept) ? 1u : 0u;
    }
}

// bfs_barrier_only crosses `levels` megakernel level barriers and does
// nothing else: the per-level floor of the megakernel's synchronisation,
// measured next to it. ctl must be reset (bfs_init) before the launch.
extern "C" __global__ void __launch_bounds__(1024) bfs_barrier_only(u32* ctl, u64 levels) {
    __shared__ u64 s_word;
    u64* words = (u64*)&ctl[CTL_MEGA(0)];
    for (u32 d = 0; d < (u32)levels; d++) {
        if (blockIdx.x == 0 && threadIdx.x == 0) words[((d + 2) % 3) * (CTL_LINE / 2)] = 0ull;
        __syncthreads();
        barrier_arrive(&words[((d + 1) % 3) * (CTL_LINE / 2)], 1ull);
        barrier_wait(&words[((d + 1) % 3) * (CTL_LINE / 2)], &s_word);
    }
}

// copy_u4 copies n16 16-byte words from src to dst (grid-stride): the
// device's copy-bandwidth ceiling, measured in the same run as the BFS arms.
extern "C" __global__ void copy_u4(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n16) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) dst[i] = __ldcs(&src[i]);
}
