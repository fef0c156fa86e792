// Breadth-first search kernels for gpuplan's frontier arms.
//
// Graphs are CSR: offsets (uint32, n+1 entries) and targets (int32). Levels
// are int32, -1 (as uint32: 0xffffffff, the largest label) for unreached;
// every claim is an atomicMin of the label, so a vertex is (re)claimed
// whenever someone offers it a smaller label than it has. Level-synchronous
// arms only ever offer the next level to unreached vertices, so for them a
// claim is exactly a first visit.
//
// The frontier queue holds work items: an edge range (begin, end) of one
// frontier vertex's adjacency, at most `chunk` edges long, so a hub vertex
// becomes many items and no warp is stuck with a 100,000-edge list. Each
// queue of qcap items is followed by qcap uint32 labels, the level of each
// item's vertex (the megakernel's items carry their own labels; the
// per-level kernels' items all have the launch's level). A warp takes up to
// 32 items and spreads their edges over its lanes (one edge per lane per
// round), so a warp is busy whether its items hold 2 edges or 200.
//
// Control words live in `ctl`, one 128-byte line each (32 uint32):
//   line 0..2  the queue counts of a three-level ring: level d reads the
//              count in slot d%3, pushes into slot (d+1)%3 and clears slot
//              (d+2)%3, which nothing reads until level d+1 pushes into it;
//   line 3     unused;
//   line 4     results: [0] the number of levels (the largest level + 1),
//              [1] the megakernel's final changed flag (0 = converged),
//              [2] queue overflow (must stay 0), [3] 1: a bfs_queue_level
//              launch given more than one phase; 2: a megakernel grid of
//              more than 65,535 blocks, [4] the megakernel's steps (grid
//              barriers), [6..7] its relabels (claims that lowered a label,
//              64 bits), [8] and [9] the scan wave's changed flags (by depth
//              parity);
//   line 5..7  the megakernel's barrier words, a ring of three 64-bit words:
//              step s pushes into word (s+1)%3 (bits 32..63: items pushed
//              to the global queue) and its blocks then arrive on the same
//              word (bits 0..15: one per block; bits 16..31: one per block
//              that kept work of its own), so the barrier's final acquire
//              load also yields the next step's global count and whether
//              any block has local work. Step s clears word (s+2)%3.
//
// The megakernel works in steps between grid barriers. A block keeps the
// single-item vertices it discovers in shared memory (up to KEEP_ITEMS
// vertices and KEEP_EDGES edges: one edge per thread), already resolved to
// their edges' targets: the claiming thread reads the targets alongside its
// claim and starts moving the targets' offsets into L1, so expanding a kept
// vertex costs one memory round trip (the claim). Everything else (hubs,
// and whatever passes the budget) goes through the global queue, which
// every warp of the grid shares. A block that turned a candidate away
// sheds all but KEEP_LOW kept vertices to the global queue at the end of
// the step, so that it does not spill again on the next steps.
//
// Within a step a block may expand its kept vertices `ahead` levels deep
// without waiting for the grid: after the first level (which also expands
// the global queue) it goes on to its own next level for as long as its
// keep queue took every candidate, up to `ahead` levels. A block running
// ahead may reach a vertex before the block whose frontier is nearer to it
// and give it too large a label; the nearer block then lowers the label
// with its atomicMin and expands the vertex again, so the levels converge
// to the BFS levels (label correcting: every step expands every pending
// vertex, and a lowered vertex is pending again). On a high-diameter graph
// (a grid's frontier is a few thousand vertices spread over every SM) this
// takes one grid barrier for every `ahead` levels instead of one per level.
// With ahead = 1 the megakernel is level-synchronous.
//
// Every parameter is 64 bits wide: the executor passes each kernel argument
// as 8 bytes. The parameter lists and the constants shared with the host
// come from bfs_abi.h, generated from the kernel ABI declared in Go (abi.go:
// go generate ./workloads/bfs).
//
// Build: make ptx (nvcc 11.8, -arch=compute_80); the PTX is committed and
// embedded in the bfs package.

#include "bfs_abi.h"

#define FULL_MASK 0xffffffffu
// An unreached vertex's level as a label: -1, the largest uint32.
#define UNREACHED 0xffffffffu
#define CTL_COUNT(slot) ((slot) * CTL_LINE)
#define CTL_MEGA(slot) ((CTL_MEGA_LINE + (slot)) * CTL_LINE)
// A megakernel block keeps at most KEEP_ITEMS vertices and KEEP_EDGES edges
// of its own discoveries for its next level; a kept vertex has at most
// KEEP_ITEM_EDGES edges. A block that turned a candidate away keeps only
// its first KEEP_LOW vertices. The keep queue's reservation word packs
// vertices (bits KEEP_SHIFT..31) and edges (below); reservations stop once
// the queue is full, so neither field can overflow (past the limits come at
// most 32 warps' reservations of 32 vertices and 32 x KEEP_ITEM_EDGES edges
// each). The budget is near a fair share of a large high-diameter frontier
// per SM (a 2048 x 2048 grid's is about 16,000 edges): concentrating a
// level's claims on few SMs makes their issue rate the bottleneck. The
// tunable ones can be overridden with -D to experiment.
#define KEEP_EMASK ((1u << KEEP_SHIFT) - 1u)
// A claiming thread of the megakernel reads up to SPEC targets of the
// vertex alongside its claim (they are only used if the claim succeeds).
// Spilled items go to warps that rotate with the step (a multiplicative
// hash of the step, ROTATE_MUL), so they do not pile up on the same warps.
// A barrier word's low half: ARRIVE_MASK arrivals, then one per block that
// kept work.
#define ARRIVE_KEPT (1ull << ARRIVE_KEPT_SHIFT)

typedef unsigned int u32;
typedef unsigned long long u64;

static_assert(sizeof(uint2) + sizeof(u32) == QUEUE_ITEM_BYTES, "a queue item is an edge range and a label");
static_assert(ARRIVE_KEPT_SHIFT == 16 && ARRIVE_MASK == 0xffffu, "a barrier word's low half holds two 16-bit fields");

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

__device__ __forceinline__ void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// queue_labels returns the labels that follow a queue's qcap items.
__device__ __forceinline__ u32* queue_labels(uint2* q, u32 qcap) { return (u32*)(q + qcap); }

// warp_incl returns the warp's inclusive prefix sum of v.
__device__ __forceinline__ u32 warp_incl(u32 v, u32 lane) {
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        u32 t = __shfl_up_sync(FULL_MASK, v, o);
        if (lane >= o) v += t;
    }
    return v;
}

// reserve adds n to a queue count and returns the old count: a plain 32-bit
// count, or the high half of a megakernel barrier word.
__device__ __forceinline__ u32 reserve(u32* count, u32 n) { return atomicAdd(count, n); }
__device__ __forceinline__ u32 reserve(u64* word, u32 n) {
    return (u32)(atomicAdd((unsigned long long*)word, (unsigned long long)n << 32) >> 32);
}

// The megakernel's grid barrier is a counter barrier on a barrier word.
// After a __syncthreads (so that the release covers the writes of the whole
// block), the block's first thread adds `arrive` (1, plus ARRIVE_KEPT if the
// block kept work) to the low half (barrier_arrive, release); then it spins
// until the arrivals reach gridDim.x (barrier_wait, acquire). The word is
// fresh for every step (the ring clears it two steps ahead), so nothing is
// reset inside the barrier, and the final load also carries the step's
// global push count in the high half; the block receives the whole word
// through shared memory.
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
// discovers during one level (one step of the megakernel). Warps reserve
// slots with a shared-memory atomic; at the end the block reserves space in
// the global queue with one atomic add and copies its items there. One
// global atomic per block and level instead of one per warp: a single global
// counter takes about 1.3 G increments/s, so thousands of warp-level adds
// per level would cost microseconds of serialisation on one address.
template <u32 CAP>
struct BlockQueue {
    u32 n;     // slots reserved this level (may exceed CAP)
    u32 base;  // the block's offset in the global queue
    uint2 items[CAP];
};

// Tally is what a thread counts over a megakernel launch: the largest
// label it claimed and the claims that lowered a label someone else had
// set (which only running ahead can cause).
struct Tally {
    u32 maxlab;
    u32 relabels;
};

// tally_claim counts a claim of label nl that found the vertex at old.
__device__ __forceinline__ void tally_claim(Tally* tally, u32 old, u32 nl) {
    tally->maxlab = max(tally->maxlab, nl);
    if (old != UNREACHED) tally->relabels++;
}

// Found is what one lane's claim found: the claimed vertex's items (none if
// the claim failed), its edge range, its new label and, in the megakernel,
// its first SPEC targets (read alongside the claim).
struct Found {
    bool spec;  // t holds the first SPEC targets
    u32 nitems, b, e, lab;
    u32 t[SPEC];
};

struct KeepQueue;

// Where a level's discoveries go: the megakernel's keep queue (null in the
// per-level kernels), the block queue and its labels (null outside the
// megakernel), its count, and the global queue with its labels and count.
template <u32 CAP, typename C>
struct Sink {
    KeepQueue* kq;
    BlockQueue<CAP>* bq;
    u32* blab;
    u32* bn;
    uint2* qout;
    u32* qlab;
    u32 qcap;
    C* out_count;
    u32* overflow;
};

// push_items appends ceil((e-b)/chunk) items of the lanes' claimed vertices
// (f.lab is each one's label). The warp reserves all lanes' items with one
// shared-memory atomic on *bn (the block queue's count); a warp-wide scan
// gives each lane its offset. Slots past the block queue's capacity spill
// straight to the global queue with one global atomic for the warp's
// spilled items. The sink's blab and qlab, when not null, take the items'
// labels (in the block queue and in the global queue).
template <u32 CAP, typename C>
__device__ __forceinline__ void push_items(const Sink<CAP, C>& s, u32 lane, const Found& f, u32 chunk) {
    u32 nitems = f.nitems;
    if (__ballot_sync(FULL_MASK, nitems != 0) == 0) return;
    u32 incl = warp_incl(nitems, lane);
    u32 total = __shfl_sync(FULL_MASK, incl, 31);
    u32 base = 0;
    if (lane == 31) base = atomicAdd(s.bn, total);
    base = __shfl_sync(FULL_MASK, base, 31);
    u32 first_spill = max(base, CAP);  // slots >= CAP spill
    u32 spilled = (base + total > CAP) ? base + total - first_spill : 0;
    u32 gbase = 0;
    if (spilled > 0) {
        if (lane == 31) gbase = reserve(s.out_count, spilled);
        gbase = __shfl_sync(FULL_MASK, gbase, 31);
    }
    u32 pos = base + incl - nitems;
    for (u32 i = 0; i < nitems; i++) {
        u32 ib = f.b + i * chunk;
        uint2 item = make_uint2(ib, min(ib + chunk, f.e));
        u32 slot = pos + i;
        if (slot < CAP) {
            s.bq->items[slot] = item;
            if (s.blab != nullptr) s.blab[slot] = f.lab;
        } else if (gbase + (slot - first_spill) < s.qcap) {
            s.qout[gbase + (slot - first_spill)] = item;
            if (s.qlab != nullptr) s.qlab[gbase + (slot - first_spill)] = f.lab;
        } else {
            atomicExch(s.overflow, 1u);
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

// Graph is the resident CSR and levels with a traversal's fixed settings:
// the most edges per queue item and whether to take the low-degree path.
struct Graph {
    const u32* __restrict__ offsets;
    const int* __restrict__ targets;
    int* level;
    u32 chunk;
    bool low_degree;
};

// WarpPos places a warp: its lane, its number among nwarps warps and, in
// the megakernel (rotate), the step whose hash rotates the warps.
struct WarpPos {
    u32 lane;
    u32 gwarp;
    u32 nwarps;
    bool rotate;
    u32 step;
};

// Frontier is a queue's items to expand: count items, each with its
// vertex's label in labels, or base_lab for every item when labels is null.
struct Frontier {
    const uint2* items;
    const u32* labels;
    u32 base_lab;
    u32 count;
};

// claim offers vertex w (if valid) the label nl. The low-degree path (grids,
// road networks) claims straight away and reads w's offsets (and, with
// spec, its first SPEC targets, for the keep queue) in parallel with the
// claim, one memory round trip shorter than testing the level first.
// Graphs of high degree test first (a stale cached level is never smaller
// than the current one, so the test only lets through claims that may
// succeed), so most edges cost one cached load instead of an atomic.
__device__ __forceinline__ void claim(const Graph& g, bool valid, u32 w, u32 nl, bool spec, Found* f, Tally* tally) {
    f->spec = false;
    f->nitems = 0;
    f->b = 0;
    f->e = 0;
    f->lab = nl;
    if (!valid) return;
    u32* lv = (u32*)g.level;
    if (g.low_degree) {
        u32 b = __ldg(&g.offsets[w]);
        u32 en = __ldg(&g.offsets[w + 1]);
        if (spec) {
#pragma unroll
            for (u32 i = 0; i < SPEC; i++) f->t[i] = (b + i < en) ? (u32)__ldg(&g.targets[b + i]) : 0u;
        }
        u32 old = atomicMin(&lv[w], nl);
        if (old > nl) {
            f->spec = spec;
            tally_claim(tally, old, nl);
            f->b = b;
            f->e = en;
            f->nitems = (en - b + g.chunk - 1) / g.chunk;
            // The next level reads this adjacency: start moving it into L2
            // now, off the critical path.
            if (!spec && f->nitems > 0) prefetch_l2(g.targets + b);
        }
    } else if (lv[w] > nl) {
        u32 old = atomicMin(&lv[w], nl);
        if (old > nl) {
            tally_claim(tally, old, nl);
            f->b = __ldg(&g.offsets[w]);
            f->e = __ldg(&g.offsets[w + 1]);
            f->nitems = (f->e - f->b + g.chunk - 1) / g.chunk;
        }
    }
}

// KeepQueue holds the vertices a megakernel block keeps for its next level,
// resolved to their edges: kept edge i goes to tgt[i] and its source has
// label elab[i]. Warps reserve vertex slots and edges together with one
// shared atomic on resv; a candidate is kept only if its slot and its edge
// range fit the budget. Reservations only grow, so once one candidate is
// turned away every later one is too: the kept vertices are exactly slots
// [0, done >> KEEP_SHIFT), and vertex i's edges are [pos[i], pos[i] + len)
// of the (done & KEEP_EMASK) kept edges, in slot order. full is set when a
// candidate was turned away. items and ilab (each vertex's edge range and
// label) are for shedding.
struct KeepQueue {
    u32 resv;
    u32 done;
    u32 full;
    uint2 items[KEEP_ITEMS];
    u32 ilab[KEEP_ITEMS];
    u32 pos[KEEP_ITEMS];
    u32 tgt[KEEP_EDGES];
    u32 elab[KEEP_EDGES];
};

__device__ __forceinline__ void keep_reset(KeepQueue* kq) { kq->resv = kq->done = kq->full = 0; }

// full_hint and set_full_hint read and set a keep queue's full flag while
// the block's warps reserve concurrently. The flag is only a hint that
// spares a warp a reservation bound to fail: it only goes from 0 to 1
// during a level (keep_reset clears it behind a __syncthreads), and the
// reservation word, not the flag, decides what is kept, so a warp that
// reads a stale 0 merely tries and is turned away. Both are atomics, so
// that race detectors see a benign race as one (relaxed order suffices).
__device__ __forceinline__ u32 full_hint(KeepQueue* kq) { return atomicOr(&kq->full, 0u); }
__device__ __forceinline__ void set_full_hint(KeepQueue* kq) { atomicOr(&kq->full, 1u); }

// keep_edge writes kept edge i (to target t, from a vertex of label lab)
// and starts moving t's offsets into L1 and its level into L2.
__device__ __forceinline__ void keep_edge(KeepQueue* kq, u32 i, u32 t, u32 lab, const Graph& g) {
    kq->tgt[i] = t;
    kq->elab[i] = lab;
    prefetch_l1(g.offsets + t);
    prefetch_l2(g.level + t);
}

// keep_vertex writes a kept vertex's slot, its edges and their targets:
// the first SPEC from registers (a constant index each, so f.t stays out of
// local memory) when the claim read them, the rest from memory.
__device__ __forceinline__ void keep_vertex(KeepQueue* kq, u32 slot, u32 epos, const Found& f, const Graph& g) {
    u32 len = f.e - f.b;
    kq->items[slot] = make_uint2(f.b, f.e);
    kq->ilab[slot] = f.lab;
    kq->pos[slot] = epos;
    u32 first = 0;
    if (f.spec) {
#pragma unroll
        for (u32 i = 0; i < SPEC; i++) {
            if (i < len) keep_edge(kq, epos + i, f.t[i], f.lab, g);
        }
        first = SPEC;
    }
    for (u32 i = first; i < len; i++) keep_edge(kq, epos + i, __ldg(&g.targets[f.b + i]), f.lab, g);
}

// keep_or_push hands the lanes' claimed vertices on. With a KeepQueue, a
// vertex of one item of at most KEEP_ITEM_EDGES edges is a candidate and is
// kept if the block's budget allows: its thread writes the vertex's targets
// and label into the queue and starts moving each target's offsets into L1
// and its level into L2 for the next level's claim. Everything else goes to
// push_items.
template <u32 CAP, typename C>
__device__ __forceinline__ void keep_or_push(const Sink<CAP, C>& s, u32 lane, Found f, const Graph& g) {
    if (KeepQueue* kq = s.kq) {
        u32 len = f.e - f.b;
        bool cand = f.nitems == 1 && len <= KEEP_ITEM_EDGES;
        u32 full = 0;
        if (lane == 0) full = full_hint(kq);
        full = __shfl_sync(FULL_MASK, full, 0);
        if (__ballot_sync(FULL_MASK, cand) != 0 && full == 0) {
            // Candidates (bits 16..) and their edges (bits 0..15) in one scan.
            u32 incl = warp_incl(cand ? (1u << 16) | len : 0u, lane);
            u32 total = __shfl_sync(FULL_MASK, incl, 31);
            u32 old = 0;
            if (lane == 31) old = atomicAdd(&kq->resv, ((total >> 16) << KEEP_SHIFT) | (total & 0xffffu));
            old = __shfl_sync(FULL_MASK, old, 31);
            u32 slot = (old >> KEEP_SHIFT) + (incl >> 16) - 1;
            u32 epos = (old & KEEP_EMASK) + (incl & 0xffffu) - len;
            bool kept = cand && slot < KEEP_ITEMS && epos + len <= KEEP_EDGES;
            if (kept) keep_vertex(kq, slot, epos, f, g);
            if (__ballot_sync(FULL_MASK, cand && !kept) != 0 && lane == 0) set_full_hint(kq);
            u32 kmask = __ballot_sync(FULL_MASK, kept);
            if (kmask != 0 && lane == 31 - __clz(kmask)) atomicMax(&kq->done, ((slot + 1) << KEEP_SHIFT) | (epos + len));
            if (kept) f.nitems = 0;
        }
    }
    push_items(s, lane, f, g.chunk);
}

// expand_items expands the warp's items (lane i holds one, or an empty
// range, and its vertex's label lab): the lanes' edges are spread over the
// lanes, one edge per lane per round, so a warp is busy whether its items
// hold 2 edges or 200. Each target is offered its source's label + 1.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_items(const Graph& g, const Sink<CAP, C>& s, uint2 it, u32 lab, u32 lane,
                                             Tally* tally) {
    u32 len = it.y - it.x;
    u32 incl = warp_incl(len, lane);
    u32 total = __shfl_sync(FULL_MASK, incl, 31);
    u32 excl = incl - len;
    bool spec = s.kq != nullptr;
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
        u32 ol = __shfl_sync(FULL_MASK, lab, j);
        bool valid = e < total;
        u32 w = valid ? (u32)__ldg(&g.targets[ob + (e - oe)]) : 0u;
        Found f;
        claim(g, valid, w, ol + 1, spec, &f, tally);
        keep_or_push(s, lane, f, g);
    }
}

// expand_kept expands a block's kept edges (`edges` of them in cur): thread
// t takes kept edges t, t + blockDim.x, ... The round count is block-
// uniform, so every warp takes part in every push.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_kept(const Graph& g, const Sink<CAP, C>& s, const KeepQueue* cur, u32 edges,
                                            u32 lane, Tally* tally) {
    for (u32 e0 = 0; e0 < edges; e0 += blockDim.x) {
        u32 e = e0 + threadIdx.x;
        bool valid = e < edges;
        u32 w = valid ? cur->tgt[e] : 0u;
        u32 nl = valid ? cur->elab[e] + 1 : 0u;
        Found f;
        claim(g, valid, w, nl, true, &f, tally);
        keep_or_push(s, lane, f, g);
    }
}

// expand_level processes the items of `in` with pos.nwarps warps; this warp
// is pos.gwarp and takes up to 32 items a round. In the megakernel
// (pos.rotate) the warps rotate with the step.
template <u32 CAP, typename C>
__device__ __forceinline__ void expand_level(const Graph& g, const Sink<CAP, C>& s, Frontier in, WarpPos pos,
                                             Tally* tally) {
    if (in.count == 0) return;
    // A count past the capacity means pushes overflowed (the overflow flag
    // is set and the result is invalid); read only what the queue holds.
    u32 count = min(in.count, s.qcap);
    u32 k = (count + pos.nwarps - 1) / pos.nwarps;  // items per warp and round, at most 32
    if (k > 32) k = 32;
    u32 stride = pos.nwarps * k;
    u32 gwarp = pos.gwarp;
    if (pos.rotate) gwarp = (gwarp + pos.step * ROTATE_MUL % pos.nwarps) % pos.nwarps;
    for (u32 base = gwarp * k; base < count; base += stride) {
        u32 idx = base + pos.lane;
        uint2 it = make_uint2(0, 0);
        u32 lab = in.base_lab;
        if (pos.lane < k && idx < count) {
            it = __ldcg(&in.items[idx]);
            if (in.labels != nullptr) lab = __ldcg(&in.labels[idx]);
        }
        expand_items(g, s, it, lab, pos.lane, tally);
    }
}

// bfs_init resets one BFS: every level to -1 except the root's 0, the
// root's items (label 0) into q0 and the control words (counts, barrier,
// results).
extern "C" __global__ void bfs_init(BFS_INIT_PARAMS) {
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
        u32* lab = queue_labels(q0, (u32)qcap);
        for (u32 i = threadIdx.x; i < nitems; i += blockDim.x) {
            u32 ib = b + i * c;
            q0[i] = make_uint2(ib, min(ib + c, e));
            lab[i] = 0;
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
extern "C" __global__ void bfs_wave_scan(BFS_WAVE_SCAN_PARAMS) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    int d = (int)depth;
    if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + RESULT_SCAN_CHANGED + ((d + 1) & 1)] = 0;
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
    if (__any_sync(FULL_MASK, any) && (threadIdx.x & 31) == 0) ctl[CTL_RESULT + RESULT_SCAN_CHANGED + (d & 1)] = 1u;
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
// Every item of level d has label d (the queue's labels are not used).
extern "C" __global__ void bfs_queue_level(BFS_QUEUE_LEVEL_PARAMS) {
    if (phase_end != phase_begin + 1) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_PHASES;
        return;
    }
    u32 d = (u32)(depth_base + phase_begin);
    u32 count = load_cg(&ctl[CTL_COUNT(d % 3)]);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[CTL_COUNT((d + 2) % 3)] = 0;
        if (count > 0) ctl[CTL_RESULT + RESULT_LEVELS] = d + 1;
    }
    if (count == 0) return;
    __shared__ BlockQueue<LEVEL_BLOCK_QCAP> bq;
    if (threadIdx.x == 0) bq.n = 0;
    __syncthreads();
    const uint2* qin = (d & 1) ? q1 : q0;
    uint2* qout = (d & 1) ? q0 : q1;
    u32* out = &ctl[CTL_COUNT((d + 1) % 3)];
    u32* overflow = &ctl[CTL_RESULT + RESULT_OVERFLOW];
    Graph g = {offsets, targets, level, (u32)chunk, low_degree != 0};
    WarpPos pos = {threadIdx.x & 31u, (blockIdx.x * blockDim.x + threadIdx.x) >> 5, (gridDim.x * blockDim.x) >> 5, false, d};
    Sink<LEVEL_BLOCK_QCAP, u32> s = {nullptr, &bq, nullptr, &bq.n, qout, nullptr, (u32)qcap, out, overflow};
    Tally tally = {0, 0};
    expand_level(g, s, Frontier{qin, nullptr, d, count}, pos, &tally);
    __syncthreads();
    flush_staged(&bq, qout, (u32)qcap, out, overflow);
}

// MegaShared is a megakernel block's shared memory.
struct MegaShared {
    u64 word;                        // the barrier word, as the block received it
    BlockQueue<MEGA_BLOCK_QCAP> bq;  // the step's staged items (bq.n is unused: n counts)
    u32 blab[MEGA_BLOCK_QCAP];       // the staged items' labels
    u32 n[2];                        // staged items, by step parity
    u32 maxlab;
    u32 relabels;
    // A ring of three keep queues: level t of the block expands keep[t % 3]
    // into keep[(t + 1) % 3] and empties keep[(t + 2) % 3], which it read
    // the level before.
    KeepQueue keep[3];
};

// MegaBlock is what a megakernel block carries from one of its levels to
// the next: its levels so far, and the vertices and edges it kept for the
// next (and whether it turned a candidate away). Every thread holds the
// same values.
struct MegaBlock {
    u32 t;
    u32 kn;
    u32 kedges;
    bool full;
};

// mega_next_level ends one of the block's levels (after a __syncthreads):
// the kept work of the next comes from the keep queue it filled.
__device__ __forceinline__ void mega_next_level(MegaShared& sh, MegaBlock& b) {
    b.t++;
    u32 done = sh.keep[b.t % 3].done;
    b.full = sh.keep[b.t % 3].full != 0;
    b.kn = done >> KEEP_SHIFT;
    b.kedges = done & KEEP_EMASK;
}

// mega_level expands one level of the block's own kept frontier and, on a
// step's first level, its share of the global queue.
__device__ __forceinline__ void mega_level(const Graph& g, MegaShared& sh, MegaBlock& b, Sink<MEGA_BLOCK_QCAP, u64>& s,
                                           const Frontier* global, const WarpPos& pos, Tally* tally) {
    s.kq = &sh.keep[(b.t + 1) % 3];
    if (threadIdx.x == 0) keep_reset(&sh.keep[(b.t + 2) % 3]);
    expand_kept(g, s, &sh.keep[b.t % 3], b.kedges, pos.lane, tally);
    if (global != nullptr) expand_level(g, s, *global, pos, tally);
    __syncthreads();
    mega_next_level(sh, b);
}

// mega_publish sends the step's staged items, and the kept vertices past
// KEEP_LOW if the block turned a candidate away, to the global queue with
// one reservation on the barrier word out. The next step then expands the
// first KEEP_LOW kept vertices' edges.
__device__ __forceinline__ void mega_publish(MegaShared& sh, MegaBlock& b, u32 d, u64* out, uint2* qout, u32 qc,
                                             u32* overflow) {
    const KeepQueue* nxt = &sh.keep[b.t % 3];
    u32 ns = min(sh.n[d & 1], MEGA_BLOCK_QCAP);
    u32 shedn = (b.full && b.kn > KEEP_LOW) ? b.kn - KEEP_LOW : 0u;
    u32 nout = ns + shedn;
    // Every thread read this step's staging count, and the next step's
    // was last read a step ago.
    if (threadIdx.x == 0) sh.n[(d + 1) & 1] = 0;
    if (nout > 0) {
        if (threadIdx.x == 0) sh.bq.base = reserve(out, nout);
        __syncthreads();
        u32 base = sh.bq.base;
        u32* qlab = queue_labels(qout, qc);
        for (u32 i = threadIdx.x; i < nout; i += blockDim.x) {
            uint2 it = i < ns ? sh.bq.items[i] : nxt->items[KEEP_LOW + (i - ns)];
            u32 lab = i < ns ? sh.blab[i] : nxt->ilab[KEEP_LOW + (i - ns)];
            if (base + i < qc) {
                qout[base + i] = it;
                qlab[base + i] = lab;
            } else {
                atomicExch(overflow, 1u);
            }
        }
        // The barrier's release must cover the copies of the whole block.
        __syncthreads();
    }
    if (shedn > 0) {
        b.kn = KEEP_LOW;
        b.kedges = nxt->pos[KEEP_LOW];
    }
}

// mega_levels returns the number of levels: the largest label claimed
// anywhere, + 1, unless some label was lowered (the largest claimed may
// then be gone): one more barrier (on the barrier word of step d + 1) makes
// the grid's relabel count known to every block, and if it is not 0 the
// blocks take the largest level in the level array.
__device__ __forceinline__ u32 mega_levels(MegaShared& sh, const Tally& tally, u32* ctl, u64* words, u32 d,
                                           const int* level, u64 n) {
    u32 lane = threadIdx.x & 31u;
    u32 m = __reduce_max_sync(FULL_MASK, tally.maxlab);
    u32 r = __reduce_add_sync(FULL_MASK, tally.relabels);
    if (lane == 0) {
        atomicMax(&sh.maxlab, m);
        if (r > 0) atomicAdd(&sh.relabels, r);
    }
    __syncthreads();
    u64* relabels = (u64*)&ctl[CTL_RESULT + RESULT_RELABELS];
    if (threadIdx.x == 0 && sh.relabels > 0) atomicAdd((unsigned long long*)relabels, (unsigned long long)sh.relabels);
    __syncthreads();
    barrier_arrive(&words[((d + 1) % 3) * (CTL_LINE / 2)], 1ull);
    barrier_wait(&words[((d + 1) % 3) * (CTL_LINE / 2)], &sh.word);
    if (__ldcg(relabels) > 0) {
        const u32* lv = (const u32*)level;
        u32 top = 0;
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
            u32 l = __ldcg(&lv[i]);
            if (l != UNREACHED) top = max(top, l);
        }
        top = __reduce_max_sync(FULL_MASK, top);
        if (threadIdx.x == 0) sh.maxlab = 0;
        __syncthreads();
        if (lane == 0) atomicMax(&sh.maxlab, top);
        __syncthreads();
    }
    return sh.maxlab + 1;
}

// bfs_megakernel runs every level in one cooperative launch, in steps
// between grid barriers. A step expands the block's kept edges and its
// share of the global queue, then, for as long as the block kept every
// candidate and at most `ahead` levels in all, its own next levels from its
// keep queue; then the block publishes to the global queue and crosses the
// grid barrier, which hands every block the next step's global count and
// whether any block kept work. The launch ends when no work is left or
// max_steps steps ran; the host reads the final changed flag once, after
// the launch (the final-flag-only convergence plan), with the levels, the
// steps run and the claims that lowered a label. The barrier word's arrival
// field is 16 bits wide: a grid of more than ARRIVE_MASK blocks sets the
// misuse result to MISUSE_GRID and does nothing.
extern "C" __global__ void __launch_bounds__(1024) bfs_megakernel(BFS_MEGAKERNEL_PARAMS) {
    if (gridDim.x > ARRIVE_MASK) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_GRID;
        return;
    }
    __shared__ MegaShared sh;
    if (threadIdx.x == 0) {
        sh.n[0] = sh.n[1] = 0;
        sh.maxlab = sh.relabels = 0;
        keep_reset(&sh.keep[0]);
        keep_reset(&sh.keep[1]);
        keep_reset(&sh.keep[2]);
    }
    __syncthreads();
    Graph g = {offsets, targets, level, (u32)chunk, low_degree != 0};
    // Warps are numbered across blocks first, so a small step spreads over
    // every SM instead of filling the first blocks.
    WarpPos pos = {threadIdx.x & 31u, (threadIdx.x >> 5) * gridDim.x + blockIdx.x, (gridDim.x * blockDim.x) >> 5, true, 0};
    u32 depth = ahead < 1 ? 1u : (ahead > 0xffffu ? 0xffffu : (u32)ahead);
    u32 qc = (u32)qcap;
    u32* overflow = &ctl[CTL_RESULT + RESULT_OVERFLOW];
    u64* words = (u64*)&ctl[CTL_MEGA(0)];  // word i at words[i * CTL_LINE / 2]
    u32 d = 0;                                // steps
    u32 count = load_cg(&ctl[CTL_COUNT(0)]);  // the step's global items
    bool kept = false;                        // some block kept work for the step
    MegaBlock b = {0, 0, 0, false};
    Tally tally = {0, 0};
    while ((count > 0 || kept) && d < (u32)max_steps) {
        if (blockIdx.x == 0 && threadIdx.x == 0) words[((d + 2) % 3) * (CTL_LINE / 2)] = 0ull;
        const uint2* qin = (d & 1) ? q1 : q0;
        uint2* qout = (d & 1) ? q0 : q1;
        u64* out = &words[((d + 1) % 3) * (CTL_LINE / 2)];
        Sink<MEGA_BLOCK_QCAP, u64> s = {nullptr, &sh.bq, sh.blab, &sh.n[d & 1], qout, queue_labels(qout, qc), qc, out, overflow};
        Frontier global = {qin, queue_labels((uint2*)qin, qc), 0u, count};
        pos.step = d;
        mega_level(g, sh, b, s, &global, pos, &tally);
        // Run ahead on the block's own frontier (block-uniform: every
        // thread read the same counters after the __syncthreads).
        for (u32 j = 1; j < depth && b.kn > 0 && !b.full; j++) mega_level(g, sh, b, s, nullptr, pos, &tally);
        mega_publish(sh, b, d, out, qout, qc, overflow);
        // The release costs about 0.2 us a step on an H100, but without it
        // nothing orders this block's claims before the next step's.
        barrier_arrive(out, 1ull | (b.kn > 0 ? ARRIVE_KEPT : 0ull));
        d++;
        u64 v = barrier_wait(out, &sh.word);
        count = (u32)(v >> 32);
        kept = ((v >> 16) & ARRIVE_MASK) != 0;
    }
    u32 levels = mega_levels(sh, tally, ctl, words, d, level, n);
    if (threadIdx.x == 0) atomicMax(&ctl[CTL_RESULT + RESULT_LEVELS], levels);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[CTL_RESULT + RESULT_CHANGED] = (count > 0 || kept) ? 1u : 0u;
        ctl[CTL_RESULT + RESULT_BARRIERS] = d;
    }
}

// bfs_barrier_only crosses `levels` megakernel grid barriers and does
// nothing else: the per-step floor of the megakernel's synchronisation,
// measured next to it. ctl must be reset (bfs_init) before the launch.
extern "C" __global__ void __launch_bounds__(1024) bfs_barrier_only(BFS_BARRIER_ONLY_PARAMS) {
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
extern "C" __global__ void copy_u4(COPY_U4_PARAMS) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) dst[i] = __ldcs(&src[i]);
}
