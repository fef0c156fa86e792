// Breadth-first search kernels for gpuplan's frontier arms.
//
// Graphs are CSR: offsets (n+1 entries) and targets (int32). The offsets
// are uint32 for graphs of at most 2^32-1 adjacency entries; the entry
// points named *_w64 (init, the queue level and the direction-optimizing
// level) take uint64 offsets and 16-byte queue items instead, and keep the
// frontier's edges in a 64-bit word of their own (CTL_EDGES_W64) and their
// decisions in 32-byte log entries, for graphs of more. The same templates
// compile both widths, so the 32-bit entry points are unchanged. Levels
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
//              words 2..3 of a slot (CTL_COUNTS) are the 64-bit frontier
//              count of a direction-optimizing BFS: the level's vertices
//              (high half) and the sum of their degrees (low half);
//   line 3     unused;
//   line 4     results: [0] the number of levels (the largest level + 1),
//              [1] the megakernel's final changed flag (0 = converged),
//              [2] queue overflow (must stay 0), [3] 1: a per-level
//              launch given more than one phase; 2: a megakernel grid of
//              more than 65,535 blocks, [4] the megakernel's steps (grid
//              barriers), [5] the first level whose direction, given by
//              the host, the device rule disagreed with, [6..7] the
//              megakernel's relabels (claims that lowered a label, 64
//              bits), [8] and [9] the scan wave's changed flags (by depth
//              parity);
//   line 5..7  the megakernel's barrier words, a ring of three 64-bit words:
//              step s pushes into word (s+1)%3 (bits 32..63: items pushed
//              to the global queue) and its blocks then arrive on the same
//              word (bits 0..15: one per block; bits 16..31: one per block
//              that kept work of its own), so the barrier's final acquire
//              load also yields the next step's global count and whether
//              any block has local work. Step s clears word (s+2)%3. The
//              same line holds the step's counts: its first claims and
//              their degrees (CTL_COUNTS, as in a count line) and the
//              claims that lowered a label (CTL_STEP_RELABELS).
//
// A direction-optimizing BFS (bfs_do_level, and the megakernel when the
// device rule may go bottom-up) also keeps a visited bitmap, one bit per
// vertex, in two buffers: a top-down level sets the bit of every vertex it
// claims in the current one; a bottom-up level reads the current one and
// writes every word of the other (the old word and the vertices it found),
// which becomes current. A bottom-up level gives an unvisited vertex level
// d+1 when any neighbour is visited: no neighbour of an unvisited vertex
// can be below level d, or the vertex would have been reached already. The
// direction of each level is the planner's rule (planners.PlanBFSDirection,
// with its constants from the ABI), evaluated from the frontier's counts;
// every decision goes into a log of 16-byte entries (ring of log_cap): the
// direction, the reason, which bitmap was current and the run-ahead depth,
// then the frontier's vertices, its edges and the unexplored edges. A
// bottom-up level pushes the queue items of the vertices it finds only
// while the level's running count of finds stays within vertices/beta: the
// rule goes back top-down only after a level with that few finds, and
// then every find was pushed, so a top-down level always has its queue.
//
// The megakernel works in steps between grid barriers. A block keeps the
// single-item vertices it discovers in shared memory (up to the launch's
// keep budget, 256 or 512 edges: one edge per thread), already resolved to
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
#include "gpuplan_device.h"

// An unreached vertex's level as a label: -1, the largest uint32.
#define UNREACHED 0xffffffffu
#define CTL_COUNT(slot) ((slot) * CTL_LINE)
#define CTL_MEGA(slot) ((CTL_MEGA_LINE + (slot)) * CTL_LINE)
// A megakernel block keeps at most KEEP_EDGES_SMALL or KEEP_EDGES edges
// (the launch's parameter `keep` chooses) and a KEEP_EDGES_PER_ITEM-th as
// many vertices of its own discoveries for its next level; a kept vertex
// has at most KEEP_ITEM_EDGES edges. A block that turned a candidate away
// keeps only its first KEEP_LOW vertices. The keep queue's reservation word packs
// vertices (bits KEEP_SHIFT..31) and edges (below); reservations stop once
// the queue is full, so neither field can overflow (past the limits come at
// most 32 warps' reservations of 32 vertices and 32 x KEEP_ITEM_EDGES edges
// each). The right budget depends on the graph: a small one (about a fair
// share of a 2048 x 2048 grid's frontier of 16,000 edges per SM) spreads a
// straight wave over every SM, whose issue rate is then the bottleneck; a
// large one keeps a winding frontier (road networks) with the blocks that
// found it, where shedding it to the global queue scatters it over blocks
// that then run ahead into each other. The host measures which pays. The
// tunable constants can be overridden with -D to experiment.
#define KEEP_EMASK ((1u << KEEP_SHIFT) - 1u)
// A claiming thread of the megakernel reads up to SPEC targets of the
// vertex alongside its claim (they are only used if the claim succeeds).
// Spilled items go to warps that rotate with the step (a multiplicative
// hash of the step, ROTATE_MUL), so they do not pile up on the same warps.
// A barrier word's low half: ARRIVE_MASK arrivals, then one per block that
// kept work.
#define ARRIVE_KEPT (1ull << ARRIVE_KEPT_SHIFT)

static_assert(sizeof(uint2) + sizeof(u32) == QUEUE_ITEM_BYTES, "a queue item is an edge range and a label");
static_assert(sizeof(ulonglong2) + sizeof(u32) == QUEUE_ITEM_BYTES_W64, "a 64-bit queue item is an edge range and a label");
static_assert(CTL_EDGES_W64 % 2 == 0 && CTL_EDGES_W64 >= CTL_HUBS + 2 && CTL_EDGES_W64 + 2 <= CTL_LINE,
              "the 64-bit edges word lies in a count line, after its other words");
static_assert(ARRIVE_KEPT_SHIFT == 16 && ARRIVE_MASK == 0xffffu, "a barrier word's low half holds two 16-bit fields");

// A read that bypasses L1 (which is not coherent across SMs): for data
// other blocks wrote since this launch began.
__device__ __forceinline__ u32 load_cg(const u32* p) { return __ldcg(p); }

__device__ __forceinline__ void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// queue_labels returns the labels that follow a queue's qcap items.
template <typename I>
__device__ __forceinline__ u32* queue_labels(I* q, u32 qcap) { return (u32*)(q + qcap); }

// ItemOf<E>::T is the frontier-queue item of edge offsets E (u32 or u64):
// an edge range [x, y); make_item builds one.
template <typename E>
struct ItemOf;
template <>
struct ItemOf<u32> { typedef uint2 T; };
template <>
struct ItemOf<u64> { typedef ulonglong2 T; };
__device__ __forceinline__ uint2 make_item(u32 b, u32 e) { return make_uint2(b, e); }
__device__ __forceinline__ ulonglong2 make_item(u64 b, u64 e) { return make_ulonglong2(b, e); }

// warp_sum returns the warp's sum of v.
__device__ __forceinline__ u32 warp_sum(u32 v) { return __reduce_add_sync(FULL_MASK, v); }
__device__ __forceinline__ u64 warp_sum(u64 v) {
#pragma unroll
    for (u32 o = 16; o >= 1; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// add_frontier adds nf vertices of mf edges to the frontier count at
// counts (a count line's CTL_COUNTS word) and returns the word's old value,
// whose high half is the vertices before: with 32-bit edges both in the one
// word (edges in the low half), with 64-bit edges the edges in the line's
// CTL_EDGES_W64 word.
__device__ __forceinline__ u64* edges_word(u64* counts) { return (u64*)((u32*)counts - CTL_COUNTS + CTL_EDGES_W64); }
__device__ __forceinline__ u64 add_frontier(u64* counts, u32 nf, u32 mf) {
    return atomicAdd((unsigned long long*)counts, ((u64)nf << 32) | mf);
}
__device__ __forceinline__ u64 add_frontier(u64* counts, u32 nf, u64 mf) {
    if (mf != 0) atomicAdd((unsigned long long*)edges_word(counts), (unsigned long long)mf);
    return atomicAdd((unsigned long long*)counts, (u64)nf << 32);
}

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
    if (threadIdx.x == 0) *s_word = spin_arrivals(word, ARRIVE_MASK);
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
template <u32 CAP, typename I = uint2>
struct BlockQueue {
    u32 n;     // slots reserved this level (may exceed CAP)
    u32 base;  // the block's offset in the global queue
    I items[CAP];
};

// Tally is what a thread of a per-level kernel counts over its level, in
// registers: the largest label it claimed, its first claims, their degrees
// and the claims that lowered a label (which only the megakernel's running
// ahead can cause). claimed counts a claim of label nl, of a vertex of deg
// edges, that found the vertex at old; the other methods give and clear
// the level's counts.
template <typename E>
struct TallyOf {
    u32 maxlab;
    u32 relabels;
    u32 first;
    E fedges;
    __device__ __forceinline__ void claimed(u32 old, u32 nl, E deg) {
        maxlab = max(maxlab, nl);
        if (old != UNREACHED) {
            relabels++;
        } else {
            first++;
            fedges += deg;
        }
    }
    __device__ __forceinline__ u32 take_first() { u32 v = first; first = 0; return v; }
    __device__ __forceinline__ E take_fedges() { E v = fedges; fedges = 0; return v; }
    __device__ __forceinline__ u32 take_relabels() { u32 v = relabels; relabels = 0; return v; }
};
typedef TallyOf<u32> Tally;

// mega_step_counts are a megakernel block's per-thread counts of the step
// (first claims, their degrees, lowered labels), kept in shared memory so
// that counting costs the claim path no registers.
__shared__ u32 mega_step_counts[3][1024];

// MegaTally is what a megakernel thread counts: over the launch, in
// registers, the largest label it claimed and the claims that lowered a
// label someone else had set (which only running ahead can cause); over
// the step, in mega_step_counts, its first claims, their degrees and its
// lowered labels. Its methods are Tally's.
struct MegaTally {
    u32 maxlab;
    u32 relabels;
    __device__ __forceinline__ void claimed(u32 old, u32 nl, u32 deg) {
        maxlab = max(maxlab, nl);
        if (old != UNREACHED) {
            relabels++;
            mega_step_counts[2][threadIdx.x]++;
        } else {
            mega_step_counts[0][threadIdx.x]++;
            mega_step_counts[1][threadIdx.x] += deg;
        }
    }
    __device__ __forceinline__ u32 take(u32 k) {
        u32 v = mega_step_counts[k][threadIdx.x];
        mega_step_counts[k][threadIdx.x] = 0;
        return v;
    }
    __device__ __forceinline__ u32 take_first() { return take(0); }
    __device__ __forceinline__ u32 take_fedges() { return take(1); }
    __device__ __forceinline__ u32 take_relabels() { return take(2); }
};

// mark_visited sets vertex w's bit in a visited bitmap (a reduction: its
// result is not waited for).
__device__ __forceinline__ void mark_visited(u32* vis, u32 w) { atomicOr(&vis[w >> 5], 1u << (w & 31u)); }

// Found is what one lane's claim found: the claimed vertex (v) and its
// items (none if the claim failed), its edge range, its new label and, in
// the megakernel, its first SPEC targets (read alongside the claim).
template <typename E>
struct FoundOf {
    bool spec;  // t holds the first SPEC targets
    u32 v, nitems;
    E b, e;
    u32 lab;
    u32 t[SPEC];
};
typedef FoundOf<u32> Found;

struct KeepQueue;

// Where a level's discoveries go: the megakernel's keep queue (null in the
// per-level kernels) with its budget KE in edges (a constant, so the keep
// test costs no load on the claim path), the block queue and its labels
// (null outside the megakernel), its count, and the global queue with its
// labels and count.
template <u32 CAP, typename C, u32 KE = KEEP_EDGES, typename E = u32>
struct Sink {
    KeepQueue* kq;
    BlockQueue<CAP, typename ItemOf<E>::T>* bq;
    u32* blab;
    u32* bn;
    typename ItemOf<E>::T* qout;
    u32* qlab;
    u32 qcap;
    C* out_count;
    u32* overflow;
    // The asynchronous traversal's: where the round counts what it finds
    // by label modulo ASYNC_LABELS and the lowest label it keeps (null: not
    // counted), and the ring pushes go to at once, with its tail and head
    // (null: the block queue).
    int* hist;
    u32* klab;
    u64* ring;
    u32* tail;
    const u32* head;
};

// The asynchronous traversal's ring slot (see mega_async): an edge range's
// start, its length (at most ASYNC_ITEM_EDGES) and its vertex's label (at
// most ASYNC_MAX_LABEL) in one 64-bit word; all ones is an empty slot.
#define ASYNC_EMPTY 0xffffffffffffffffull
#define ASYNC_LEN_SHIFT 32u
#define ASYNC_LAB_SHIFT 41u
static_assert(ASYNC_ITEM_EDGES == (1u << (ASYNC_LAB_SHIFT - ASYNC_LEN_SHIFT)) - 1u, "a slot's length field");
static_assert(ASYNC_MAX_LABEL < (1u << (64u - ASYNC_LAB_SHIFT)) - 1u, "a slot's label field, below the empty slot's");

// async_pack returns an item's ring slot; an item or label past the
// slot's fields sets the overflow flag (the host then runs the traversal
// again with grid barriers).
__device__ __forceinline__ u64 async_pack(uint2 it, u32 lab, u32* overflow) {
    u32 len = it.y - it.x;
    if (len > ASYNC_ITEM_EDGES || lab > ASYNC_MAX_LABEL) atomicExch(overflow, 1u);
    return (u64)it.x | ((u64)(len & ASYNC_ITEM_EDGES) << ASYNC_LEN_SHIFT) | ((u64)min(lab, ASYNC_MAX_LABEL) << ASYNC_LAB_SHIFT);
}

// ring_reserve reserves total slots at the tail of the asynchronous
// traversal's ring (one lane of a warp, for the warp) and returns the first.
// It reads the head first, so that a reservation taking the tail more than
// the ring's qcap slots past it sets the overflow flag.
__device__ __forceinline__ u32 ring_reserve(u32* tail, const u32* head, u32 total, u32 qcap, u32* overflow) {
    u32 hd = load_relaxed32(head);
    u32 rb = atomicAdd(tail, total);
    if (rb + total - hd > qcap) atomicExch(overflow, 1u);
    return rb;
}

// push_ring appends the lanes' items (incl: the warp's inclusive scan of
// their counts, total in all) straight to the asynchronous traversal's
// ring (see mega_async) with one reservation a warp on its tail; *bn counts
// the items, and hist, where not null, the units by label.
template <u32 CAP, typename C, u32 KE>
__device__ __forceinline__ void push_ring(const Sink<CAP, C, KE>& s, u32 lane, const Found& f, u32 chunk, u32 incl, u32 total) {
    u32 nitems = f.nitems;
    if (s.hist != nullptr && nitems > 0) atomicAdd(&s.hist[f.lab % ASYNC_LABELS], (int)nitems);
    u32 rb = 0;
    if (lane == 31) {
        atomicAdd(s.bn, total);
        rb = ring_reserve(s.tail, s.head, total, s.qcap, s.overflow);
    }
    rb = __shfl_sync(FULL_MASK, rb, 31) + incl - nitems;
    for (u32 i = 0; i < nitems; i++) {
        u32 ib = f.b + i * chunk;
        store_relaxed64(&s.ring[(rb + i) % s.qcap], async_pack(make_uint2(ib, min(ib + chunk, f.e)), f.lab, s.overflow));
    }
}

// The 64-bit kernels have no ring (only the asynchronous megakernel does):
// a sink of 64-bit items with one is misused, and its pushes overflow.
template <u32 CAP, typename C, u32 KE>
__device__ __forceinline__ void push_ring(const Sink<CAP, C, KE, u64>& s, u32 lane, const FoundOf<u64>& f, u32 chunk, u32 incl,
                                          u32 total) {
    if (lane == 0) atomicExch(s.overflow, 1u);
}

// push_items appends ceil((e-b)/chunk) items of the lanes' claimed vertices
// (f.lab is each one's label), to the ring where the sink has one
// (push_ring), else to the block queue. The warp reserves all lanes' items
// with one shared-memory atomic on *bn (the block queue's count); a
// warp-wide scan gives each lane its offset. Slots past the block queue's
// capacity spill straight to the global queue with one global atomic for
// the warp's spilled items. The sink's blab and qlab, when not null, take
// the items' labels (in the block queue and in the global queue).
template <u32 CAP, typename C, u32 KE, typename E>
__device__ __forceinline__ void push_items(const Sink<CAP, C, KE, E>& s, u32 lane, const FoundOf<E>& f, u32 chunk) {
    u32 nitems = f.nitems;
    if (__ballot_sync(FULL_MASK, nitems != 0) == 0) return;
    u32 incl = warp_incl(nitems, lane);
    u32 total = __shfl_sync(FULL_MASK, incl, 31);
    if (s.ring != nullptr) {
        push_ring(s, lane, f, chunk, incl, total);
        return;
    }
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
        E ib = f.b + (E)i * chunk;
        typename ItemOf<E>::T item = make_item(ib, min(ib + chunk, f.e));
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
template <u32 CAP, typename C, typename I>
__device__ __forceinline__ void flush_staged(BlockQueue<CAP, I>* bq, I* qout, u32 qcap, C* out_count, u32* overflow) {
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
// the most edges per queue item, whether to take the low-degree path, and
// the visited bitmap a top-down claim marks (null: none).
template <typename E>
struct GraphOf {
    const E* __restrict__ offsets;
    const int* __restrict__ targets;
    int* level;
    u32 chunk;
    bool low_degree;
    u32* vis;
};
typedef GraphOf<u32> Graph;

// WarpPos places a warp: its lane, its number among nwarps warps and, in
// the megakernel (rotate), the step whose hash rotates the warps; with
// by_block the hash rotates only the blocks, so a warp keeps its rank
// among the warps that take items.
struct WarpPos {
    u32 lane;
    u32 gwarp;
    u32 nwarps;
    bool rotate;
    bool by_block;
    u32 step;
};

// Frontier is a queue's items to expand: count items, each with its
// vertex's label in labels, or base_lab for every item when labels is null.
template <typename I>
struct FrontierOf {
    const I* items;
    const u32* labels;
    u32 base_lab;
    u32 count;
};
typedef FrontierOf<uint2> Frontier;

// visited tests vertex u's bit in a visited bitmap; NC reads it through
// the read-only cache (a per-level launch, which never writes this bitmap),
// otherwise with a plain load (the megakernel wrote it in an earlier step,
// before a grid barrier; a top-down claim reads the bitmap its own level
// sets, where a bit it misses only costs the level test).
template <bool NC>
__device__ __forceinline__ bool visited(const u32* vis, u32 u) {
    u32 w = NC ? __ldg(&vis[u >> 5]) : vis[u >> 5];
    return ((w >> (u & 31u)) & 1u) != 0;
}

// claim offers vertex w (if valid) the label nl. The low-degree path (grids,
// road networks) claims straight away and reads w's offsets (and, with
// spec, its first SPEC targets, for the keep queue) in parallel with the
// claim, one memory round trip shorter than testing the level first.
// Graphs of high degree test first (a stale cached level is never smaller
// than the current one, so the test only lets through claims that may
// succeed), so most edges cost one cached load instead of an atomic. Where
// the traversal keeps a visited bitmap (a level-synchronous, direction-
// optimizing one, whose visited vertices are all labelled at or below nl),
// they test its bit before the level: the bitmap is a 32nd of the levels'
// size and stays in L2 where the levels do not. A bit not seen yet (a claim
// of this level elsewhere) only lets the level test run.
template <typename E, typename T>
__device__ __forceinline__ void claim(const GraphOf<E>& g, bool valid, u32 w, u32 nl, bool spec, FoundOf<E>* f, T* tally) {
    f->spec = false;
    f->v = w;
    f->nitems = 0;
    f->b = 0;
    f->e = 0;
    f->lab = nl;
    if (!valid) return;
    u32* lv = (u32*)g.level;
    if (g.low_degree) {
        E b = __ldg(&g.offsets[w]);
        E en = __ldg(&g.offsets[w + 1]);
        if (spec) {
#pragma unroll
            for (u32 i = 0; i < SPEC; i++) f->t[i] = (b + i < en) ? (u32)__ldg(&g.targets[b + i]) : 0u;
        }
        u32 old = atomicMin(&lv[w], nl);
        if (old > nl) {
            f->spec = spec;
            tally->claimed(old, nl, en - b);
            if (g.vis != nullptr && old == UNREACHED) mark_visited(g.vis, w);
            f->b = b;
            f->e = en;
            f->nitems = (u32)((en - b + g.chunk - 1) / g.chunk);
            // The next level reads this adjacency: start moving it into L2
            // now, off the critical path.
            if (!spec && f->nitems > 0) prefetch_l2(g.targets + b);
        }
    } else if ((g.vis == nullptr || !visited<false>(g.vis, w)) && lv[w] > nl) {
        u32 old = atomicMin(&lv[w], nl);
        if (old > nl) {
            f->b = __ldg(&g.offsets[w]);
            f->e = __ldg(&g.offsets[w + 1]);
            f->nitems = (u32)((f->e - f->b + g.chunk - 1) / g.chunk);
            tally->claimed(old, nl, f->e - f->b);
            if (g.vis != nullptr && old == UNREACHED) mark_visited(g.vis, w);
        }
    }
}

// KeepQueue holds the vertices a megakernel block keeps for its next level,
// resolved to their edges: kept edge i goes to tgt[i] from the vertex in
// slot eslot[i], kept with label ilab[slot], which is vertex vid[slot]
// (written only where the freshness check, MEGA_FRESH, reads it).
// Each candidate reserves its vertex slot and its edges together with one
// shared atomic on resv; a candidate is kept only if its slot and its edge range fit the
// budget (the sink's KE edges and KE / KEEP_EDGES_PER_ITEM vertices, within
// the queue's capacity). Reservations only grow, so once one candidate is
// turned away every later one is too: the kept vertices are exactly slots
// [0, done >> KEEP_SHIFT), and vertex i's edges are [pos[i], pos[i] + len)
// of the (done & KEEP_EMASK) kept edges, in slot order. full is set when a
// candidate was turned away. items (each vertex's edge range) are for
// shedding.
struct KeepQueue {
    u32 resv;
    u32 done;
    u32 full;
    uint2 items[KEEP_ITEMS];
    u32 ilab[KEEP_ITEMS];
    u32 pos[KEEP_ITEMS];
    u32 vid[KEEP_ITEMS];
    u32 tgt[KEEP_EDGES];
    unsigned char eslot[KEEP_EDGES];
};
static_assert(KEEP_ITEMS <= 256, "a kept edge's slot is one byte");

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

// keep_edge writes kept edge i (to target t, from the vertex in slot) and
// starts moving t's offsets into L1 and its level into L2.
__device__ __forceinline__ void keep_edge(KeepQueue* kq, u32 i, u32 t, u32 slot, const Graph& g) {
    kq->tgt[i] = t;
    kq->eslot[i] = (unsigned char)slot;
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
    if (MEGA_FRESH != 0) kq->vid[slot] = f.v;
    u32 first = 0;
    if (f.spec) {
#pragma unroll
        for (u32 i = 0; i < SPEC; i++) {
            if (i < len) keep_edge(kq, epos + i, f.t[i], slot, g);
        }
        first = SPEC;
    }
    for (u32 i = first; i < len; i++) keep_edge(kq, epos + i, __ldg(&g.targets[f.b + i]), slot, g);
}

// keep_or_push hands the lanes' claimed vertices on. With a KeepQueue, a
// vertex of one item of at most KEEP_ITEM_EDGES edges is a candidate and is
// kept if the block's budget allows: its thread writes the vertex's targets
// and label into the queue and starts moving each target's offsets into L1
// and its level into L2 for the next level's claim. Everything else goes to
// push_items.
template <u32 CAP, typename C, u32 KE>
__device__ __forceinline__ void keep_or_push(const Sink<CAP, C, KE>& s, u32 lane, Found f, const Graph& g) {
    if (KeepQueue* kq = s.kq) {
        u32 len = f.e - f.b;
        bool cand = f.nitems == 1 && len <= KEEP_ITEM_EDGES;
        u32 full = 0;
        if (lane == 0) full = full_hint(kq);
        full = __shfl_sync(FULL_MASK, full, 0);
        if (__ballot_sync(FULL_MASK, cand) != 0 && full == 0) {
            // Each candidate reserves its slot (bits KEEP_SHIFT..) and its
            // edges (bits 0..) with its own shared atomic: a warp rarely
            // holds more than a few, and the atomics cost less than a scan.
            u32 old = cand ? atomicAdd(&kq->resv, (1u << KEEP_SHIFT) | len) : 0u;
            u32 slot = old >> KEEP_SHIFT;
            u32 epos = old & KEEP_EMASK;
            bool kept = cand && slot < KE / KEEP_EDGES_PER_ITEM && epos + len <= KE;
            if (kept) keep_vertex(kq, slot, epos, f, g);
            if (s.hist != nullptr) {
                if (kept) atomicAdd(&s.hist[f.lab % ASYNC_LABELS], 1);
                u32 lo = __reduce_min_sync(FULL_MASK, kept ? f.lab : UNREACHED);
                if (lane == 0 && lo != UNREACHED) atomicMin(s.klab, lo);
            }
            if (__ballot_sync(FULL_MASK, cand && !kept) != 0 && lane == 0) set_full_hint(kq);
            u32 top = __reduce_max_sync(FULL_MASK, kept ? ((slot + 1) << KEEP_SHIFT) | (epos + len) : 0u);
            if (lane == 0 && top != 0) atomicMax(&kq->done, top);
            if (kept) f.nitems = 0;
        }
    }
    push_items(s, lane, f, g.chunk);
}

// The 64-bit kernels keep nothing (only the megakernel has keep queues):
// they push every claimed vertex's items.
template <u32 CAP, typename C, u32 KE>
__device__ __forceinline__ void keep_or_push(const Sink<CAP, C, KE, u64>& s, u32 lane, const FoundOf<u64>& f,
                                             const GraphOf<u64>& g) {
    push_items(s, lane, f, g.chunk);
}

// expand_items expands the warp's items (lane i holds one, or an empty
// range, and its vertex's label lab): the lanes' edges are spread over the
// lanes, one edge per lane per round, so a warp is busy whether its items
// hold 2 edges or 200. Each target is offered its source's label + 1.
template <u32 CAP, typename C, u32 KE, typename T, typename E>
__device__ __forceinline__ void expand_items(const GraphOf<E>& g, const Sink<CAP, C, KE, E>& s, typename ItemOf<E>::T it,
                                             u32 lab, u32 lane, T* tally) {
    u32 len = (u32)(it.y - it.x);
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
        E ob = __shfl_sync(FULL_MASK, it.x, j);
        u32 oe = __shfl_sync(FULL_MASK, excl, j);
        u32 ol = __shfl_sync(FULL_MASK, lab, j);
        bool valid = e < total;
        u32 w = valid ? (u32)__ldg(&g.targets[ob + (e - oe)]) : 0u;
        FoundOf<E> f;
        claim(g, valid, w, ol + 1, spec, &f, tally);
        keep_or_push(s, lane, f, g);
    }
}

// expand_kept expands a block's kept edges (`edges` of them in cur): thread
// t takes kept edges t, t + blockDim.x, ... The round count is block-
// uniform, so every warp takes part in every push. A kept vertex's label
// is the one it was kept with, and while blocks run ahead (FRESH) another
// block may have lowered it: the thread reads the source's level alongside
// the claim (no longer path), and where the level is now lower it offers
// the target that level + 1 too, and hands on what that claim found instead.
// The stale claim is never kept or pushed, so what running ahead got wrong
// does not run on ahead with the block; the block that lowered the source
// expands it again anyway.
template <bool FRESH, u32 CAP, typename C, u32 KE, typename T>
__device__ __forceinline__ void expand_kept(const Graph& g, const Sink<CAP, C, KE>& s, const KeepQueue* cur, u32 edges,
                                            u32 lane, T* tally) {
    for (u32 e0 = 0; e0 < edges; e0 += blockDim.x) {
        u32 e = e0 + threadIdx.x;
        bool valid = e < edges;
        u32 w = 0, lab = 0, now = UNREACHED;
        if (valid) {
            w = cur->tgt[e];
            u32 slot = cur->eslot[e];
            lab = cur->ilab[slot];
            if (FRESH) now = __ldcg((const u32*)g.level + cur->vid[slot]);
        }
        Found f;
        claim(g, valid, w, lab + 1, true, &f, tally);
        bool stale = FRESH && valid && now < lab;
        if (FRESH && __ballot_sync(FULL_MASK, stale) != 0) {
            Found fresh;
            claim(g, stale, w, now + 1, true, &fresh, tally);
            if (stale) f = fresh;
        }
        keep_or_push(s, lane, f, g);
    }
}

// expand_level processes the items of `in` with pos.nwarps warps; this warp
// is pos.gwarp and takes up to 32 items a round. In the megakernel
// (pos.rotate) the warps rotate with the step.
template <u32 CAP, typename C, u32 KE, typename T, typename E>
__device__ __forceinline__ void expand_level(const GraphOf<E>& g, const Sink<CAP, C, KE, E>& s,
                                             FrontierOf<typename ItemOf<E>::T> in, WarpPos pos, T* tally) {
    if (in.count == 0) return;
    // A count past the capacity means pushes overflowed (the overflow flag
    // is set and the result is invalid); read only what the queue holds.
    u32 count = min(in.count, s.qcap);
    u32 k = (count + pos.nwarps - 1) / pos.nwarps;  // items per warp and round, at most 32
    if (k > 32) k = 32;
    u32 stride = pos.nwarps * k;
    u32 gwarp = pos.gwarp;
    if (pos.rotate && pos.by_block) {
        u32 nb = gridDim.x;
        gwarp = gwarp - gwarp % nb + (gwarp % nb + pos.step * ROTATE_MUL % nb) % nb;
    } else if (pos.rotate) {
        gwarp = (gwarp + pos.step * ROTATE_MUL % pos.nwarps) % pos.nwarps;
    }
    for (u32 base = gwarp * k; base < count; base += stride) {
        u32 idx = base + pos.lane;
        typename ItemOf<E>::T it = make_item((E)0, (E)0);
        u32 lab = in.base_lab;
        if (pos.lane < k && idx < count) {
            it = __ldcg(&in.items[idx]);
            if (in.labels != nullptr) lab = __ldcg(&in.labels[idx]);
        }
        expand_items(g, s, it, lab, pos.lane, tally);
    }
}
// set_root_count sets ring slot 0's frontier count to the root alone, of
// deg edges: in the one word with 32-bit edges, in the edges word too with
// 64-bit edges.
__device__ __forceinline__ void set_root_count(u32* ctl, u32 deg) { *(u64*)&ctl[CTL_COUNT(0) + CTL_COUNTS] = (1ull << 32) | (u64)deg; }
__device__ __forceinline__ void set_root_count(u32* ctl, u64 deg) {
    *(u64*)&ctl[CTL_COUNT(0) + CTL_COUNTS] = 1ull << 32;
    *(u64*)&ctl[CTL_COUNT(0) + CTL_EDGES_W64] = deg;
}

template <typename E>
__device__ __forceinline__ void init_body(const E* __restrict__ offsets, int* level, typename ItemOf<E>::T* q0, u32* vis, u32* ctl,
                                          u64 n, u64 root, u64 chunk, u64 qcap) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        level[i] = (i == root) ? 0 : -1;
    }
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n + 31) / 32; i += stride) {
        vis[i] = (i == root / 32) ? 1u << (root % 32) : 0u;
    }
    if (blockIdx.x == 0) {
        for (u32 i = threadIdx.x; i < CTL_WORDS; i += blockDim.x) ctl[i] = 0;
        __syncthreads();
        E b = offsets[root], e = offsets[root + 1];
        u32 c = (u32)chunk;
        u32 nitems = (u32)((e - b + c - 1) / c);
        u32* lab = queue_labels(q0, (u32)qcap);
        for (u32 i = threadIdx.x; i < nitems; i += blockDim.x) {
            E ib = b + (E)i * c;
            q0[i] = make_item(ib, min(ib + c, e));
            lab[i] = 0;
        }
        if (threadIdx.x == 0) {
            ctl[CTL_COUNT(0)] = nitems;
            set_root_count(ctl, e - b);
        }
    }
}

// bfs_init resets one BFS: every level to -1 except the root's 0, the
// visited bitmap vis to the root's bit alone, the root's items (label 0)
// into q0 and the control words (counts, barrier, results), with the root
// as level 0's frontier (one vertex and its degree). bfs_init_w64 is the
// same over 64-bit offsets and items.
extern "C" __global__ void bfs_init(BFS_INIT_PARAMS) {
    init_body(offsets, level, q0, vis, ctl, n, root, chunk, qcap);
}
extern "C" __global__ void bfs_init_w64(BFS_INIT_W64_PARAMS) {
    init_body(offsets, level, q0, vis, ctl, n, root, chunk, qcap);
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
template <typename E>
__device__ __forceinline__ void queue_level_body(const E* __restrict__ offsets, const int* __restrict__ targets, int* level,
                                                 typename ItemOf<E>::T* q0, typename ItemOf<E>::T* q1, u32* ctl, u64 chunk,
                                                 u64 qcap, u64 low_degree, u64 depth_base, u64 phase_begin, u64 phase_end) {
    typedef typename ItemOf<E>::T I;
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
    __shared__ BlockQueue<LEVEL_BLOCK_QCAP, I> bq;
    if (threadIdx.x == 0) bq.n = 0;
    __syncthreads();
    const I* qin = (d & 1) ? q1 : q0;
    I* qout = (d & 1) ? q0 : q1;
    u32* out = &ctl[CTL_COUNT((d + 1) % 3)];
    u32* overflow = &ctl[CTL_RESULT + RESULT_OVERFLOW];
    GraphOf<E> g = {offsets, targets, level, (u32)chunk, low_degree != 0, nullptr};
    WarpPos pos = {threadIdx.x & 31u, (blockIdx.x * blockDim.x + threadIdx.x) >> 5, (gridDim.x * blockDim.x) >> 5, false, false, d};
    Sink<LEVEL_BLOCK_QCAP, u32, KEEP_EDGES, E> s = {nullptr, &bq, nullptr, &bq.n, qout, nullptr, (u32)qcap, out, overflow};
    TallyOf<E> tally = {};
    expand_level(g, s, FrontierOf<I>{qin, nullptr, d, count}, pos, &tally);
    __syncthreads();
    flush_staged(&bq, qout, (u32)qcap, out, overflow);
}

extern "C" __global__ void bfs_queue_level(BFS_QUEUE_LEVEL_PARAMS) {
    queue_level_body(offsets, targets, level, q0, q1, ctl, chunk, qcap, low_degree, depth_base, phase_begin, phase_end);
}

// bfs_queue_level_w64 is bfs_queue_level over 64-bit offsets and items.
extern "C" __global__ void bfs_queue_level_w64(BFS_QUEUE_LEVEL_W64_PARAMS) {
    queue_level_body(offsets, targets, level, q0, q1, ctl, chunk, qcap, low_degree, depth_base, phase_begin, phase_end);
}

// DirState is what a direction-optimizing traversal carries from one level
// to the next: the previous level's direction (0 before the first) and
// frontier size, the unexplored edges at the previous decision (all of
// them before the first), and which visited bitmap is current.
template <typename E>
struct DirStateOf {
    u32 prev;
    u32 prev_nf;
    E mu;
    u32 parity;
};
typedef DirStateOf<u32> DirState;

// direction_rule is planners.PlanBFSDirection on the device, for the step
// that expands a frontier of nf vertices with mf edges when mu edges are
// unexplored (and the previous frontier had prev_nf vertices), on a graph
// of n vertices and `entries` adjacency entries: graphs under the degree
// gate stay top-down; after a top-down level go bottom-up when mf x alpha
// exceeds mu; after a bottom-up level stay bottom-up while the frontier
// grows or holds more than n / beta vertices. The products are exact: the
// counts are below 2^32 and the constants small. It returns the direction
// and sets *reason.
__device__ __forceinline__ u32 direction_rule(u32 prev, u64 nf, u64 prev_nf, u64 mf, u64 mu, u64 n, u64 entries,
                                              u32* reason) {
    if (DIR_MIN_DEGREE > 0 && DIR_MIN_DEGREE * n > entries) {
        *reason = REASON_LOW_DEGREE;
        return DIR_TOP_DOWN;
    }
    if (prev != DIR_BOTTOM_UP) {
        *reason = mf * DIR_ALPHA > mu ? REASON_EDGES_ABOVE : REASON_EDGES_WITHIN;
        return mf * DIR_ALPHA > mu ? DIR_BOTTOM_UP : DIR_TOP_DOWN;
    }
    if (nf >= prev_nf) {
        *reason = REASON_GROWING;
        return DIR_BOTTOM_UP;
    }
    if (nf * DIR_BETA > n) {
        *reason = REASON_ABOVE;
        return DIR_BOTTOM_UP;
    }
    *reason = REASON_BELOW;
    return DIR_TOP_DOWN;
}

// log_word packs a decision log entry's first word.
__device__ __forceinline__ u32 log_word(u32 dir, u32 reason, u32 parity, u32 depth) {
    return dir | (reason << LOG_REASON_SHIFT) | (parity << LOG_PARITY_BIT) | (depth << LOG_DEPTH_SHIFT);
}

// add_counts adds the block's tallied first claims and their degrees to
// the 64-bit frontier count at counts and, if rel is not null, its lowered
// labels to *rel, and clears the threads' level tallies. Every thread of
// the block calls it; sh is three words of shared scratch, zero on entry
// and again on return (thread 0 clears it after the __syncthreads).
template <typename T>
__device__ __forceinline__ void add_counts(T* tally, u32* sh, u64* counts, u32* rel) {
    u32 f = __reduce_add_sync(FULL_MASK, tally->take_first());
    u32 e = __reduce_add_sync(FULL_MASK, tally->take_fedges());
    u32 r = __reduce_add_sync(FULL_MASK, tally->take_relabels());
    if ((threadIdx.x & 31u) == 0 && (f | e | r) != 0) {
        atomicAdd(&sh[0], f);
        atomicAdd(&sh[1], e);
        atomicAdd(&sh[2], r);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if ((sh[0] | sh[1]) != 0) atomicAdd((unsigned long long*)counts, ((u64)sh[0] << 32) | sh[1]);
        if (rel != nullptr && sh[2] != 0) atomicAdd(rel, sh[2]);
        sh[0] = sh[1] = sh[2] = 0;
    }
}

// add_counts is the same for a tally of 64-bit edges, which it sums in 64
// bits into the line's CTL_EDGES_W64 word (add_frontier); the 64-bit
// kernels lower no labels, so rel is not taken.
__device__ __forceinline__ void add_counts(TallyOf<u64>* tally, u32* sh, u64* counts) {
    __shared__ unsigned long long sh_edges;
    if (threadIdx.x == 0) sh_edges = 0;
    __syncthreads();
    u32 f = __reduce_add_sync(FULL_MASK, tally->take_first());
    u64 e = warp_sum(tally->take_fedges());
    tally->take_relabels();
    if ((threadIdx.x & 31u) == 0 && (f != 0 || e != 0)) {
        atomicAdd(&sh[0], f);
        atomicAdd(&sh_edges, (unsigned long long)e);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (sh[0] != 0 || sh_edges != 0) add_frontier(counts, sh[0], (u64)sh_edges);
        sh[0] = 0;
    }
}

// warp_owner returns the last lane j whose excl_j <= e: the owner of slot e
// of a warp-wide exclusive scan (lanes with nothing share their
// successor's excl and are passed over).
__device__ __forceinline__ u32 warp_owner(u32 excl, u32 e) {
    u32 j = 0;
#pragma unroll
    for (u32 step = 16; step >= 1; step >>= 1) {
        u32 v = __shfl_sync(FULL_MASK, excl, (j + step) & 31);
        if (j + step < 32 && v <= e) j += step;
    }
    return j;
}

// bu_search looks for a visited neighbour of the lane's vertex (when
// active; its edges are [b, e)). Each lane first checks up to BU_SERIAL
// edges on its own, their loads in flight together; then the warp scans
// the remaining edges of its lanes still searching, 32 edges a round packed
// across vertices (one edge per lane), and a vertex stops at the first
// round that finds a visited neighbour. Most vertices of a dense level find
// one among their first edges; a vertex with none costs its edges / 32
// rounds instead of its edges.
template <bool NC, typename E>
__device__ __forceinline__ bool bu_search(const GraphOf<E>& g, const u32* vin, bool active, E b, E e, u32 lane) {
    bool found = false;
    E cur = b;
    if (active) {
        u32 m = (u32)min(e - b, (E)BU_SERIAL);
        u32 t[BU_SERIAL];
#pragma unroll
        for (u32 i = 0; i < BU_SERIAL; i++) t[i] = i < m ? (u32)__ldg(&g.targets[b + i]) : 0u;
#pragma unroll
        for (u32 i = 0; i < BU_SERIAL; i++) found = found || (i < m && visited<NC>(vin, t[i]));
        cur = b + m;
    }
    u32 rem = (active && !found) ? (u32)(e - cur) : 0u;
    while (__ballot_sync(FULL_MASK, rem > 0) != 0) {
        u32 incl = warp_incl(rem, lane);
        u32 total = __shfl_sync(FULL_MASK, incl, 31);
        u32 excl = incl - rem;
        u32 j = warp_owner(excl, lane);
        E ocur = __shfl_sync(FULL_MASK, cur, j);
        u32 oex = __shfl_sync(FULL_MASK, excl, j);
        bool hit = false;
        if (lane < total) hit = visited<NC>(vin, (u32)__ldg(&g.targets[ocur + (lane - oex)]));
        u32 hm = __ballot_sync(FULL_MASK, hit);
        if (rem > 0 && excl < 32) {
            u32 len = min(incl, 32u) - excl;
            u32 seg = (hm >> excl) & (len == 32 ? FULL_MASK : (1u << len) - 1u);
            if (seg != 0) {
                found = true;
                rem = 0;
            } else {
                cur += len;
                rem -= len;
            }
        }
    }
    return found;
}

// BuTile is a block's count of one tile of a bottom-up level and whether
// the tile's finds are pushed to the queue.
template <typename E>
struct BuTileOf {
    u32 nf;
    E mf;
    u32 push;
};
typedef BuTileOf<u32> BuTile;

// bu_level runs one bottom-up level d: every unvisited vertex (bit clear
// in vin) with a visited neighbour takes level d+1; every word of vout is
// written (vin's word with the finds). Blocks take tiles of BU_TILE_WORDS
// words per warp (a warp's 32 lanes are one word's 32 vertices, so the
// level, offset and bitmap accesses of a word are one line each); after
// each tile the block adds its finds and their degrees to the 64-bit count
// at counts with one atomic, and pushes the finds' queue items (label d+1)
// through the sink only while the level's running count of finds is
// within n / DIR_BETA: past that the rule stays bottom-up and no queue is
// needed. Every thread of the block calls it (it synchronises the block).
// bu_word is the bitmap word that warp's k-th word of the tile at t0 is
// (wpb warps a block); its lane's vertex is bu_word(...) * 32 + lane.
__device__ __forceinline__ u32 bu_word(u32 t0, u32 k, u32 wpb, u32 warp) { return t0 + k * wpb + warp; }

template <bool NC, u32 CAP, typename C, u32 KE, typename T, typename E>
__device__ __forceinline__ void bu_level(const GraphOf<E>& g, const u32* vin, u32* vout, u32 n, u32 d,
                                         const Sink<CAP, C, KE, E>& s, u64* counts, BuTileOf<E>* tile, T* tally) {
    u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    u32 nwords = (n + 31) / 32;
    u32 per_tile = wpb * BU_TILE_WORDS;
    u32 lab = d + 1;
    for (u32 t0 = blockIdx.x * per_tile; t0 < nwords; t0 += gridDim.x * per_tile) {
        // Each word's find keeps only its degree (0: no find; a find has an
        // edge, and a vertex fewer than 2^32); a tile that pushes reads its
        // finds' starts again, from the lines the search just read.
        u32 fd[BU_TILE_WORDS];
        u32 mynf = 0;
        E mymf = 0;
#pragma unroll
        for (u32 k = 0; k < BU_TILE_WORDS; k++) {
            u32 w = bu_word(t0, k, wpb, warp);
            u32 v = w * 32 + lane;
            bool inr = w < nwords;
            u32 word = inr ? (NC ? __ldg(&vin[w]) : vin[w]) : FULL_MASK;
            bool active = v < n && ((word >> lane) & 1u) == 0;
            E b = 0, e = 0;
            if (active) {
                b = __ldg(&g.offsets[v]);
                e = __ldg(&g.offsets[v + 1]);
            }
            bool f = bu_search<NC>(g, vin, active && e > b, b, e, lane);
            u32 fm = __ballot_sync(FULL_MASK, f);
            if (inr && lane == 0) vout[w] = word | fm;
            if (f) {
                g.level[v] = (int)lab;
                tally->maxlab = max(tally->maxlab, lab);
                mynf++;
                mymf += e - b;
            }
            fd[k] = f ? (u32)(e - b) : 0u;
        }
        u32 wnf = __reduce_add_sync(FULL_MASK, mynf);
        E wmf = warp_sum(mymf);
        if (lane == 0 && wnf > 0) {
            atomicAdd(&tile->nf, wnf);
            atomicAdd(&tile->mf, wmf);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            u32 push = 0;
            if (tile->nf > 0) {
                u64 old = add_frontier(counts, tile->nf, tile->mf);
                push = ((old >> 32) + tile->nf) * DIR_BETA <= n ? 1u : 0u;
            }
            tile->push = push;
            tile->nf = tile->mf = 0;
        }
        __syncthreads();
        if (tile->push != 0) {
#pragma unroll
            for (u32 k = 0; k < BU_TILE_WORDS; k++) {
                FoundOf<E> f;
                f.spec = false;
                f.b = fd[k] != 0 ? __ldg(&g.offsets[bu_word(t0, k, wpb, warp) * 32 + lane]) : (E)0;
                f.e = f.b + fd[k];
                f.lab = lab;
                f.nitems = (fd[k] + g.chunk - 1) / g.chunk;
                push_items(s, lane, f, g.chunk);
            }
        }
    }
}

// bfs_do_level runs level d = depth_base + phase_begin of a direction-
// optimizing BFS (one launch per level; the phase range is the split
// dispatch's, as for bfs_queue_level). It reads the frontier's count of
// ring slot d%3 and the previous decision from the log, evaluates the
// device rule, logs the decision in dlog[d % log_cap] and runs the level
// top-down from the queue (marking claims in the current visited bitmap)
// or bottom-up over it, as `direction` says when the host decided (it then
// records in RESULT_DIR_MISMATCH the first level where the device rule
// disagreed) or as the rule says when direction is 0. It counts the next
// frontier's vertices and edges into ring slot (d+1)%3 and clears slot
// (d+2)%3. A launch past the end of the traversal (an empty frontier)
// returns at once.
// The decision log's entries: 16 bytes (uint4: the first word, the
// frontier's vertices and edges, the unexplored edges) with 32-bit edges,
// 32 bytes (ulonglong4: the first word with the vertices above it, the
// edges, the unexplored edges, 0) with 64-bit edges. log_entry builds one
// and log_prev reads the state the entry before leaves for a level.
__device__ __forceinline__ uint4 log_entry(u32 word, u32 nf, u32 mf, u32 mu) { return make_uint4(word, nf, mf, mu); }
__device__ __forceinline__ ulonglong4 log_entry(u32 word, u32 nf, u64 mf, u64 mu) {
    return make_ulonglong4((u64)word | ((u64)nf << 32), mf, mu, 0ull);
}
__device__ __forceinline__ DirStateOf<u32> log_prev(const uint4* e) {
    uint4 prev = __ldcg(e);
    DirStateOf<u32> st;
    st.prev = prev.x & LOG_DIR_MASK;
    st.prev_nf = prev.y;
    st.mu = prev.w;
    st.parity = ((prev.x >> LOG_PARITY_BIT) & 1u) ^ (st.prev == DIR_BOTTOM_UP ? 1u : 0u);
    return st;
}
__device__ __forceinline__ DirStateOf<u64> log_prev(const ulonglong4* e) {
    ulonglong2 lo = __ldcg((const ulonglong2*)e), hi = __ldcg((const ulonglong2*)e + 1);
    u32 word = (u32)lo.x;
    DirStateOf<u64> st;
    st.prev = word & LOG_DIR_MASK;
    st.prev_nf = (u32)(lo.x >> 32);
    st.mu = hi.x;
    st.parity = ((word >> LOG_PARITY_BIT) & 1u) ^ (st.prev == DIR_BOTTOM_UP ? 1u : 0u);
    return st;
}

// frontier_edges reads the frontier's edges of a count line whose
// CTL_COUNTS word is fc: its low half with 32-bit edges, the line's
// CTL_EDGES_W64 word with 64-bit edges (the dummy third argument picks).
__device__ __forceinline__ u32 frontier_edges(const u32* slot, u64 fc, u32) { return (u32)fc; }
__device__ __forceinline__ u64 frontier_edges(const u32* slot, u64 fc, u64) {
    return __ldcg((const unsigned long long*)&slot[CTL_EDGES_W64]);
}

// clear_counts clears a count line's item count and frontier counts (the
// dummy edge count picks the width).
__device__ __forceinline__ void clear_counts(u32* clr, u32) {
    clr[0] = 0;
    *(u64*)&clr[CTL_COUNTS] = 0;
}
__device__ __forceinline__ void clear_counts(u32* clr, u64) {
    clear_counts(clr, 0u);
    *(u64*)&clr[CTL_EDGES_W64] = 0;
}

// finish_counts adds the block's tallied first claims and their degrees
// to the next frontier's count.
__device__ __forceinline__ void finish_counts(TallyOf<u32>* tally, u32* sc, u64* counts) { add_counts(tally, sc, counts, nullptr); }
__device__ __forceinline__ void finish_counts(TallyOf<u64>* tally, u32* sc, u64* counts) { add_counts(tally, sc, counts); }

template <typename E, typename L>
__device__ __forceinline__ void do_level_body(const E* __restrict__ offsets, const int* __restrict__ targets, int* level,
                                              typename ItemOf<E>::T* q0, typename ItemOf<E>::T* q1, u32* vis0, u32* vis1,
                                              u32* ctl, L* dlog, u64 n, u64 chunk, u64 qcap, u64 low_degree, u64 log_cap,
                                              u64 direction, u64 depth_base, u64 phase_begin, u64 phase_end) {
    typedef typename ItemOf<E>::T I;
    if (phase_end != phase_begin + 1) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_PHASES;
        return;
    }
    u32 d = (u32)(depth_base + phase_begin);
    u32* slot = &ctl[CTL_COUNT(d % 3)];
    u64 fc = __ldcg((const unsigned long long*)&slot[CTL_COUNTS]);
    u32 nf = (u32)(fc >> 32);
    E mf = frontier_edges(slot, fc, (E)0);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clear_counts(&ctl[CTL_COUNT((d + 2) % 3)], (E)0);
        if (nf > 0) ctl[CTL_RESULT + RESULT_LEVELS] = d + 1;
    }
    if (nf == 0) return;
    E total = __ldg(&offsets[n]);
    u32 cap = (u32)log_cap;
    DirStateOf<E> st = {0, 0, total, 0};
    if (d > 0) st = log_prev(&dlog[(d - 1) % cap]);
    E mu = st.mu - mf;
    u32 reason;
    u32 dir = direction_rule(st.prev, nf, st.prev_nf, mf, mu, n, total, &reason);
    if (direction != 0 && direction != dir) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicCAS(&ctl[CTL_RESULT + RESULT_DIR_MISMATCH], 0u, d + 1);
        dir = (u32)direction;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) dlog[d % cap] = log_entry(log_word(dir, reason, st.parity, 1), nf, mf, mu);
    __shared__ BlockQueue<LEVEL_BLOCK_QCAP, I> bq;
    __shared__ u32 sc[3];
    __shared__ BuTileOf<E> tile;
    if (threadIdx.x == 0) {
        bq.n = 0;
        sc[0] = sc[1] = sc[2] = 0;
        tile.nf = tile.mf = tile.push = 0;
    }
    __syncthreads();
    u32* vcur = st.parity ? vis1 : vis0;
    u32* vnxt = st.parity ? vis0 : vis1;
    const I* qin = (d & 1) ? q1 : q0;
    I* qout = (d & 1) ? q0 : q1;
    u32* out = &ctl[CTL_COUNT((d + 1) % 3)];
    u64* counts = (u64*)&out[CTL_COUNTS];
    u32* overflow = &ctl[CTL_RESULT + RESULT_OVERFLOW];
    GraphOf<E> g = {offsets, targets, level, (u32)chunk, low_degree != 0, vcur};
    Sink<LEVEL_BLOCK_QCAP, u32, KEEP_EDGES, E> s = {nullptr, &bq, nullptr, &bq.n, qout, nullptr, (u32)qcap, out, overflow};
    TallyOf<E> tally = {};
    if (dir == DIR_TOP_DOWN) {
        WarpPos pos = {threadIdx.x & 31u, (blockIdx.x * blockDim.x + threadIdx.x) >> 5, (gridDim.x * blockDim.x) >> 5, false, false, d};
        expand_level(g, s, FrontierOf<I>{qin, nullptr, d, load_cg(&slot[0])}, pos, &tally);
    } else {
        bu_level<true>(g, vcur, vnxt, (u32)n, d, s, counts, &tile, &tally);
    }
    __syncthreads();
    flush_staged(&bq, qout, (u32)qcap, out, overflow);
    finish_counts(&tally, sc, counts);
}

// The entry points' calls stay on lines of their own: ptxas 11.8 for
// sm_90 fails on line information inlined at the far column of a long
// expanded line.
extern "C" __global__ void bfs_do_level(BFS_DO_LEVEL_PARAMS) {
    do_level_body(offsets, targets, level, q0, q1, vis0, vis1, ctl, dlog, n, chunk, qcap, low_degree, log_cap, direction,
                  depth_base, phase_begin, phase_end);
}

// bfs_do_level_w64 is bfs_do_level over 64-bit offsets and items, with the
// frontier's edges in CTL_EDGES_W64 and 32-byte log entries. Its launch
// bounds hold it to the registers of as many blocks an SM as the 32-bit
// level (a few bytes spill), where it would otherwise fit one block fewer.
extern "C" __global__ void __launch_bounds__(LEVEL_W64_MAX_THREADS, LEVEL_W64_MIN_BLOCKS) bfs_do_level_w64(BFS_DO_LEVEL_W64_PARAMS) {
    do_level_body(offsets, targets, level, q0, q1, vis0, vis1, ctl, dlog, n, chunk, qcap, low_degree, log_cap, direction,
                  depth_base, phase_begin, phase_end);
}

// MegaState is a megakernel block's view of the traversal between two
// steps, the same in every block: thread 0 computes it from the barrier
// word and the step's counts, and the block reads it after a __syncthreads
// (block-uniform values in shared memory rather than in every thread's
// registers). It holds the next step's global items, whether a block kept
// work, the frontier's vertices and edges, the direction state, the
// decision (direction, reason, unexplored edges) and the run-ahead depth
// with the traversal's first claims and lowered labels so far.
struct MegaState {
    u32 count;
    u32 kept;
    u32 nf;
    u32 mf;
    DirState dir_state;
    u32 dir;
    u32 reason;
    u32 mu;
    u32 depth;
    u64 cum_found;
    u64 cum_rel;
};

// MegaConfig is what a megakernel launch fixes for all its steps, kept in
// shared memory for thread 0's updates of the state.
struct MegaConfig {
    u32 n;
    u32 total;  // adjacency entries
    u32 cap;    // deepest run-ahead
    u32 sync_do;
    u32 adapt;
    u32 auto_dir;
};

// AsyncShared is a block's shared memory for the asynchronous traversal:
// what its first warp leaves for the next round by the round's parity (the
// ring items it took, wm and work as it read them, and the kept vertices it
// moved to the ring), the items each round pushed (by parity), the lowest
// label each round kept (by round modulo 3: written during a round, read
// after it, emptied the round after), the change of work and of cnt the
// first warp sends next.
struct AsyncShared {
    uint2 titems[2][ASYNC_TAKE];
    u32 tlabs[2][ASYNC_TAKE];
    u32 tn[2], nwm[2], nwork[2], staged[2];
    u32 pushed[2];
    u32 klabn[3];
    int dwork;
    int hist[2][ASYNC_LABELS];
};

// MegaShared is a megakernel block's shared memory.
struct MegaShared {
    u64 word;                        // the barrier word, as the block received it
    BlockQueue<MEGA_BLOCK_QCAP> bq;  // the step's staged items (bq.n is unused: n counts)
    u32 blab[MEGA_BLOCK_QCAP];       // the staged items' labels
    u32 n[2];                        // staged items, by step parity
    u32 maxlab;
    u32 relabels;
    u32 sc[3];     // add_counts' scratch
    BuTile tile;   // a bottom-up tile's count
    MegaState st;  // the traversal's state, kept by thread 0
    MegaConfig cfg;
    // A ring of three keep queues: level t of the block expands keep[t % 3]
    // into keep[(t + 1) % 3] and empties keep[(t + 2) % 3], which it read
    // the level before.
    KeepQueue keep[3];
    AsyncShared as;  // the asynchronous traversal's
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
// step's first level, its share of the global queue; FRESH (blocks running
// ahead) checks each kept vertex's label against its level (expand_kept).
template <bool FRESH, u32 KE>
__device__ __forceinline__ void mega_level(const Graph& g, MegaShared& sh, MegaBlock& b, Sink<MEGA_BLOCK_QCAP, u64, KE>& s,
                                           const Frontier* global, const WarpPos& pos, MegaTally* tally) {
    s.kq = &sh.keep[(b.t + 1) % 3];
    if (threadIdx.x == 0) keep_reset(&sh.keep[(b.t + 2) % 3]);
    expand_kept<FRESH>(g, s, &sh.keep[b.t % 3], b.kedges, pos.lane, tally);
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
__device__ __forceinline__ u32 mega_levels(MegaShared& sh, const MegaTally& tally, u32* ctl, u64* words, u32 d,
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

// adapt_depth returns the next step's run-ahead depth from the step's first
// claims (found) and lowered labels (rel), the same in every block: it
// halves when the step lowered more labels than it found vertices, or when
// the traversal so far lowered more than one label per four vertices
// found, and grows by one (up to cap) when the step lowered at most one
// label per eight vertices found. The cumulative rule keeps a traversal's
// lowered labels well below one per vertex (a label lowered during a step
// is found again by later steps, so the count a run reports runs above the
// bound); the step rule follows the frontier over
// the graph, deep where blocks running ahead rarely cross (a grid's
// straight wave) and shallow where they do (winding shortest paths).
__device__ __forceinline__ u32 adapt_depth(u32 depth, u32 cap, u32 found, u32 rel, u64* cum_found, u64* cum_rel) {
    *cum_found += found;
    *cum_rel += rel;
    if (rel > found || 4 * *cum_rel > *cum_found) return max(1u, depth / 2);
    if (8ull * rel <= found) return min(cap, depth + 1);
    return depth;
}

// mega_decide sets the state's decision for the coming step (thread 0):
// the device rule when level-synchronous and direction-optimizing, else
// top-down (the degree gate's reason, or none when the direction was
// forced).
__device__ __forceinline__ void mega_decide(MegaState& st, const MegaConfig& c) {
    DirState& ds = st.dir_state;
    st.mu = ds.mu - st.mf;
    st.reason = c.auto_dir ? (u32)REASON_LOW_DEGREE : 0u;
    st.dir = DIR_TOP_DOWN;
    if (c.sync_do) st.dir = direction_rule(ds.prev, st.nf, ds.prev_nf, st.mf, st.mu, c.n, c.total, &st.reason);
}

// mega_advance is thread 0's update of the state after a step's barrier (v
// is the barrier word, line the word's control line): the next step's
// global count and kept flag, the frontier count (when the launch counts),
// the direction state, the adapted depth and the next decision.
__device__ __forceinline__ void mega_advance(MegaState& st, const MegaConfig& c, u64 v, const u64* line) {
    // The counts cost one more L2 round trip after the barrier's acquire;
    // a fixed-depth top-down launch does not count.
    u64 cnt = 0;
    u32 rel = 0;
    if (c.sync_do || c.adapt) {
        cnt = __ldcg((const unsigned long long*)&line[CTL_COUNTS / 2]);
        rel = __ldcg((const u32*)line + CTL_STEP_RELABELS);
    }
    st.count = (u32)(v >> 32);
    st.kept = ((v >> 16) & ARRIVE_MASK) != 0 ? 1u : 0u;
    DirState& ds = st.dir_state;
    ds.prev = st.dir;
    ds.prev_nf = st.nf;
    ds.mu = st.mu;
    ds.parity ^= st.dir == DIR_BOTTOM_UP ? 1u : 0u;
    st.nf = (u32)(cnt >> 32);
    st.mf = (u32)cnt;
    if (!c.sync_do && c.adapt) st.depth = adapt_depth(st.depth, c.cap, st.nf, rel, &st.cum_found, &st.cum_rel);
    mega_decide(st, c);
}

// mega_more reports whether another step is due: frontier vertices when
// level-synchronous and direction-optimizing, global items or kept work
// otherwise.
__device__ __forceinline__ bool mega_more(const MegaState& st, bool sync_do) {
    return sync_do ? st.nf > 0 : (st.count > 0 || st.kept != 0);
}

// mega_start fills the block's shared memory before the first step:
// staging counts, keep queues, the launch's configuration (c) and the
// state, with the root's frontier from the count line and the first
// decision.
__device__ __forceinline__ void mega_start(MegaShared& sh, const MegaConfig& c, const u32* ctl) {
    if (threadIdx.x == 0) {
        sh.n[0] = sh.n[1] = 0;
        sh.maxlab = sh.relabels = 0;
        sh.sc[0] = sh.sc[1] = sh.sc[2] = 0;
        sh.tile.nf = sh.tile.mf = sh.tile.push = 0;
        keep_reset(&sh.keep[0]);
        keep_reset(&sh.keep[1]);
        keep_reset(&sh.keep[2]);
        sh.cfg = c;
        MegaState& st = sh.st;
        st.count = load_cg(&ctl[CTL_COUNT(0)]);
        st.kept = 0;
        u64 fc = __ldcg((const unsigned long long*)&ctl[CTL_COUNT(0) + CTL_COUNTS]);
        st.nf = (u32)(fc >> 32);
        st.mf = (u32)fc;
        st.dir_state = DirState{0, 0, c.total, 0};
        st.depth = c.sync_do ? 1u : (c.adapt ? min(c.cap, (u32)RUN_AHEAD_START) : c.cap);
        st.cum_found = st.cum_rel = 0;
        mega_decide(st, c);
    }
    for (u32 i = threadIdx.x; i < 3 * 1024; i += blockDim.x) (&mega_step_counts[0][0])[i] = 0;
    __syncthreads();
}

// MegaArgs are the megakernel's parameters, for its step loop.
struct MegaArgs {
    const u32* __restrict__ offsets;
    const int* __restrict__ targets;
    int* level;
    uint2* q0;
    uint2* q1;
    u32* vis0;
    u32* vis1;
    u32* ctl;
    uint4* dlog;
    u32 chunk;
    u32 qcap;
    bool low_degree;
    u32 max_steps;
    u32 log_cap;
};

// mega_steps runs the megakernel's steps (see bfs_megakernel) and returns
// how many ran; DO is whether it is level-synchronous and direction-
// optimizing (its top-down steps then mark the visited bitmap and never
// run ahead), so each kind compiles without the other's code, and KE is
// the keep budget in edges.
template <bool DO, u32 KE>
__device__ __forceinline__ u32 mega_steps(MegaShared& sh, const MegaArgs& a, MegaTally* tally) {
    Graph g = {a.offsets, a.targets, a.level, a.chunk, a.low_degree, nullptr};
    // Only blocks running ahead can hold a kept vertex that another block
    // lowered since.
    constexpr bool FRESH = !DO && MEGA_FRESH != 0;
    // Warps are numbered across blocks first, so a small step spreads over
    // every SM instead of filling the first blocks. A level-synchronous
    // step, and a step with the large keep budget, expands its kept edges
    // on each block's first warps and the global queue at the same time,
    // from each block's last warps on (numbered in reverse, rotated by
    // block), so that a block's share of the queue does not wait behind
    // its kept edges: one round of memory latency a level instead of two
    // wherever both are due. With the small budget (a grid's straight
    // wave) the warps keep their order and rotate across the grid, which
    // measured faster there.
    constexpr bool REVERSE = DO || KE == KEEP_EDGES;
    u32 rank = REVERSE ? (blockDim.x >> 5) - 1u - (threadIdx.x >> 5) : threadIdx.x >> 5;
    WarpPos pos = {threadIdx.x & 31u, rank * gridDim.x + blockIdx.x, (gridDim.x * blockDim.x) >> 5, true, REVERSE, 0};
    u32* overflow = &a.ctl[CTL_RESULT + RESULT_OVERFLOW];
    u64* words = (u64*)&a.ctl[CTL_MEGA(0)];  // word i at words[i * CTL_LINE / 2]
    bool counting = DO || sh.cfg.adapt != 0;
    MegaBlock b = {0, 0, 0, false};
    u32 d = 0;  // steps
    while (mega_more(sh.st, DO) && d < a.max_steps) {
        u32 parity = sh.st.dir_state.parity;
        u32 dir = sh.st.dir;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            const MegaState& st = sh.st;
            u64* clr = &words[((d + 2) % 3) * (CTL_LINE / 2)];
            clr[0] = 0ull;
            clr[CTL_COUNTS / 2] = 0ull;
            ((u32*)clr)[CTL_STEP_RELABELS] = 0u;
            a.dlog[d % a.log_cap] = make_uint4(log_word(dir, st.reason, parity, st.depth), st.nf, st.mf, st.mu);
        }
        const uint2* qin = (d & 1) ? a.q1 : a.q0;
        uint2* qout = (d & 1) ? a.q0 : a.q1;
        u64* out = &words[((d + 1) % 3) * (CTL_LINE / 2)];
        Sink<MEGA_BLOCK_QCAP, u64, KE> s = {nullptr, &sh.bq, sh.blab, &sh.n[d & 1], qout, queue_labels(qout, a.qcap), a.qcap, out, overflow};
        pos.step = d;
        if (DO && dir == DIR_BOTTOM_UP) {
            // The kept vertices are visited; the bitmap stands for them.
            b.kn = b.kedges = 0;
            b.full = false;
            bu_level<false>(g, parity ? a.vis1 : a.vis0, parity ? a.vis0 : a.vis1, sh.cfg.n, d, s, &out[CTL_COUNTS / 2],
                            &sh.tile, tally);
            __syncthreads();
        } else {
            if (DO) g.vis = parity ? a.vis1 : a.vis0;
            Frontier global = {qin, queue_labels((uint2*)qin, a.qcap), 0u, sh.st.count};
            u32 depth = DO ? 1u : sh.st.depth;
            mega_level<FRESH>(g, sh, b, s, &global, pos, tally);
            // Run ahead on the block's own frontier (block-uniform: every
            // thread read the same counters after the __syncthreads).
            for (u32 j = 1; j < depth && b.kn > 0 && !b.full; j++) mega_level<FRESH>(g, sh, b, s, nullptr, pos, tally);
        }
        mega_publish(sh, b, d, out, qout, a.qcap, overflow);
        if (counting) add_counts(tally, sh.sc, &out[CTL_COUNTS / 2], (u32*)out + CTL_STEP_RELABELS);
        // The release costs about 0.2 us a step on an H100, but without it
        // nothing orders this block's claims before the next step's.
        barrier_arrive(out, 1ull | (b.kn > 0 ? ARRIVE_KEPT : 0ull));
        d++;
        // The barrier, with thread 0 advancing the state once every block
        // has arrived.
        if (threadIdx.x == 0) {
            u64 v;
            do {
                v = load_acquire64(out);
            } while ((u32)(v & ARRIVE_MASK) < gridDim.x);
            mega_advance(sh.st, sh.cfg, v, out);
        }
        __syncthreads();
    }
    return d;
}

// The asynchronous traversal (direction MEGA_ASYNC): every level top-down
// and no grid barrier between levels. Blocks take work as it appears and
// expand it while its label is within a window of ahead - 1 labels over
// the lowest label still pending anywhere (wm); the window bounds how far
// blocks run ahead of the rest, and so the labels they set too high.
//
// The global queue is a ring of qcap 64-bit slots over q0's items: an edge
// range's start, its length and its vertex's label in one word, written and
// read whole (ASYNC_EMPTY: no item). q1 holds the counters, each on its own
// 128-byte line: head (slots taken), tail (slots reserved), work (units
// pending: kept vertices and ring items not yet expanded), wm, and
// cnt[ASYNC_LABELS], the pending units by label modulo ASYNC_LABELS.
//
// A block's round expands its kept vertices within the window (those past
// it go to the ring) and the ring items taken for it the round before. Its
// first warp expands nothing: while the others expand, it sends the last
// round's counts (reductions nobody waits for), counts the round's
// expanded units, reads the counters and the ring's leading slots in one
// round trip, takes the leading items within the window with one compare-
// and-swap (only when it has no kept work of its own), and raises wm past
// labels with nothing pending. A warp that pushes reserves ring slots with
// one atomic add and writes them at once. One __syncthreads ends a round.
//
// Termination rests on work alone: a block adds what it found and
// subtracts what it expanded in one reduction, and leaves only when it
// holds nothing and read work as 0 after its own last reduction. wm and
// cnt only bound how far blocks run ahead, and a block idle for
// ASYNC_FORCE rounds ignores the window, so a stale count can slow the
// traversal but never stall it.
#define A_HEAD 0u
#define A_TAIL 32u
#define A_WORK 64u
#define A_WM 96u
#define A_CNT 128u
static_assert(A_CNT + ASYNC_LABELS <= ASYNC_COUNTER_WORDS, "the counters fit the words the host reserves");
static_assert(ASYNC_TAKE <= 64, "the first warp reads two ring slots a lane");
#define ASYNC_STALL (1u << 22)


__device__ __forceinline__ u32 async_label(u64 w) { return (u32)(w >> ASYNC_LAB_SHIFT); }

__device__ __forceinline__ uint2 async_item(u64 w) {
    u32 b = (u32)w;
    return make_uint2(b, b + ((u32)(w >> ASYNC_LEN_SHIFT) & ASYNC_ITEM_EDGES));
}

// hist_add adds sign to hist[l % ASYNC_LABELS] for each lane with valid
// set, one shared atomic per distinct label in the warp.
__device__ __forceinline__ void hist_add(int* hist, bool valid, u32 l, int sign) {
    u32 m = __ballot_sync(FULL_MASK, valid);
    if (!valid) return;
    u32 key = l % ASYNC_LABELS;
    u32 same = __match_any_sync(m, key);
    if ((threadIdx.x & 31u) == (u32)(__ffs(same) - 1)) atomicAdd(&hist[key], sign * __popc(same));
}

// async_commit sends a round's counts (parity q) and the change of work as
// reductions and clears them (the first warp).
__device__ __forceinline__ void async_commit(AsyncShared& as, u32* c, u32 q) {
    u32 lane = threadIdx.x;
    for (u32 i = lane; i < ASYNC_LABELS; i += 32) {
        int v = as.hist[q][i];
        if (v != 0) {
            atomicAdd(&c[A_CNT + i], (u32)v);
            as.hist[q][i] = 0;
        }
    }
    if (lane == 0 && as.dwork != 0) {
        atomicAdd(&c[A_WORK], (u32)as.dwork);
        as.dwork = 0;
    }
}

// async_stage moves the kept vertices past limit to the ring (the first
// warp; their counts move with them) and returns how many.
__device__ __forceinline__ u32 async_stage(const KeepQueue* cur, u32 kn, u32 limit, u32* c, u64* ring, u32 qc, u32* overflow) {
    u32 lane = threadIdx.x;
    u32 total = 0;
    for (u32 i = lane; i - lane < kn; i += 32) total += __popc(__ballot_sync(FULL_MASK, i < kn && cur->ilab[i] > limit));
    if (total == 0) return 0;
    u32 base = 0;
    if (lane == 0) base = ring_reserve(&c[A_TAIL], &c[A_HEAD], total, qc, overflow);
    base = __shfl_sync(FULL_MASK, base, 0);
    for (u32 i = lane; i - lane < kn; i += 32) {
        bool past = i < kn && cur->ilab[i] > limit;
        u32 m = __ballot_sync(FULL_MASK, past);
        if (past) store_relaxed64(&ring[(base + __popc(m & ((1u << lane) - 1u))) % qc], async_pack(cur->items[i], cur->ilab[i], overflow));
        base += __popc(m);
    }
    return total;
}

// AsyncRound is a round's plan, the same in every thread, and what the
// first warp carries between rounds: its guess of head, and the slots it
// took and the raise of wm it sends the round after.
struct AsyncRound {
    u32 p;      // the round's parity
    bool go;    // the round expands something
    bool kok;   // its kept vertices are expanded (or it has none)
    bool busy;  // it has kept vertices within the window
    bool force; // the window is ignored
    u32 limit;  // the window's last label
    u32 nt;     // ring items taken for it
};

struct AsyncCarry {
    u32 hc, epos, en, wmraise;
};

// async_manage is the first warp's part of a round.
__device__ __forceinline__ void async_manage(AsyncShared& as, u32* c, u64* ring, u32 qc, u32 window, const AsyncRound& rd,
                                             const KeepQueue* cur, u32 kn, u32* overflow, AsyncCarry& k) {
    u32 lane = threadIdx.x;
    u32 p = rd.p;
    async_commit(as, c, p ^ 1u);
    // Empty the slots taken last round and send its raise of wm, early, so
    // that none of this warp's writes is in flight when the round ends.
    for (u32 i = lane; i < k.en; i += 32) store_relaxed64(&ring[k.epos + i], ASYNC_EMPTY);
    if (lane == 0 && k.wmraise != 0) atomicMax(&c[A_WM], k.wmraise);
    u32 wmc = as.nwm[p];
    u32 hpos = k.hc % qc;
    u32 guess = min(ASYNC_TAKE, qc - hpos);
    u64 slot = ASYNC_EMPTY, slot1 = ASYNC_EMPTY;
    u32 val = 0, work = 0;
    if (lane < guess) slot = load_relaxed64(&ring[hpos + lane]);
    if (lane + 32 < guess) slot1 = load_relaxed64(&ring[hpos + 32 + lane]);
    if (lane == 0) work = load_relaxed32(&c[A_WORK]);
    if (lane == 1) val = load_relaxed32(&c[A_HEAD]);
    if (lane == 2) val = load_relaxed32(&c[A_TAIL]);
    if (lane == 3) val = load_relaxed32(&c[A_WM]);
    if (lane >= 4 && lane < 12) val = load_relaxed32(&c[A_CNT + (wmc + lane - 4) % ASYNC_LABELS]);
    // While the loads are in flight: the round's expanded units, and the
    // kept vertices past the window, which go to the ring.
    u32 staged = 0;
    if (rd.go) {
        for (u32 i = lane; i - lane < rd.nt; i += 32) hist_add(as.hist[p], i < rd.nt, i < rd.nt ? as.tlabs[p][i] : 0u, -1);
        if (rd.kok) {
            for (u32 i = lane; i - lane < kn; i += 32) {
                u32 l = i < kn ? cur->ilab[i] : 0u;
                hist_add(as.hist[p], i < kn && l <= rd.limit, l, -1);
            }
            staged = async_stage(cur, kn, rd.limit, c, ring, qc, overflow);
        }
    }
    u32 h = __shfl_sync(FULL_MASK, val, 1);
    u32 t = __shfl_sync(FULL_MASK, val, 2);
    u32 wm = max(__shfl_sync(FULL_MASK, val, 3), wmc);
    work = __shfl_sync(FULL_MASK, work, 0);
    // Raise wm past the labels from wmc on whose count is 0 (by one when
    // all eight read 0 while work is pending: a count in flight).
    u32 nz = (__ballot_sync(FULL_MASK, lane >= 4 && lane < 12 && val != 0) >> 4) & 0xffu;
    k.wmraise = 0;
    if (wm == wmc && work != 0) {
        u32 up = nz == 0 ? 1u : (u32)(__ffs(nz) - 1);
        if (up > 0) {
            wm += up;
            k.wmraise = wm;
        }
    }
    // Take the ring's leading items within the window, unless the block
    // has kept work of its own.
    u32 lim = rd.force ? ASYNC_MAX_LABEL : wm + window - 1;
    u32 n = 0;
    if (h == k.hc && !rd.busy) {
        u32 avail = (int)(t - h) > 0 ? min(t - h, guess) : 0u;
        bool ok = lane < avail && slot != ASYNC_EMPTY && async_label(slot) <= lim;
        bool ok1 = lane + 32 < avail && slot1 != ASYNC_EMPTY && async_label(slot1) <= lim;
        u32 bad = __ballot_sync(FULL_MASK, !ok), bad1 = __ballot_sync(FULL_MASK, !ok1);
        n = bad != 0 ? (u32)(__ffs(bad) - 1) : (bad1 != 0 ? 32u + (u32)(__ffs(bad1) - 1) : 64u);
        if (n > 0) {
            u32 old = 0;
            if (lane == 0) old = atomicCAS(&c[A_HEAD], h, h + n);
            old = __shfl_sync(FULL_MASK, old, 0);
            if (old == h) {
                if (lane < n) {
                    as.titems[p ^ 1u][lane] = async_item(slot);
                    as.tlabs[p ^ 1u][lane] = async_label(slot);
                }
                if (lane + 32 < n) {
                    as.titems[p ^ 1u][lane + 32] = async_item(slot1);
                    as.tlabs[p ^ 1u][lane + 32] = async_label(slot1);
                }
                h += n;
            } else {
                h = old;
                n = 0;
            }
        }
    }
    k.epos = hpos;
    k.en = n;
    k.hc = h;
    if (lane == 0) {
        as.tn[p ^ 1u] = n;
        as.nwm[p ^ 1u] = wm;
        as.nwork[p ^ 1u] = work;
        as.staged[p ^ 1u] = staged;
    }
}

// async_expand is the other warps' part of a round: the kept edges of
// vertices within limit (edges of them in all) from warp 1 on, the taken
// items from the last warp down, one item a warp where there are as many
// warps.
template <u32 KE>
__device__ __forceinline__ void async_expand(const Graph& g, const Sink<MEGA_BLOCK_QCAP, u64, KE>& s, const KeepQueue* cur,
                                             u32 edges, u32 limit, const uint2* items, const u32* labs, u32 nt, MegaTally* tally) {
    u32 lane = threadIdx.x & 31u;
    u32 nth = blockDim.x - 32u;
    for (u32 e0 = 0; e0 < edges; e0 += nth) {
        u32 e = e0 + threadIdx.x - 32u;
        u32 w = 0, lab = 0;
        if (e < edges) {
            w = cur->tgt[e];
            lab = cur->ilab[cur->eslot[e]];
        }
        Found f;
        claim(g, e < edges && lab <= limit, w, lab + 1, true, &f, tally);
        keep_or_push(s, lane, f, g);
    }
    u32 nw = (blockDim.x >> 5) - 1u;
    u32 gw = nw - (threadIdx.x >> 5);  // the last warp is 0
    if (gw < nt) {
        u32 i = gw + lane * nw;
        uint2 it = make_uint2(0, 0);
        u32 lab = 0;
        if (i < nt) {
            it = items[i];
            lab = labs[i];
        }
        expand_items(g, s, it, lab, lane, tally);
    }
}

// async_close is thread 0's close of the last round (r - 1): its change of
// work, which this round's first warp sends, and the emptying of the
// counters and the keep queue the next round fills.
__device__ __forceinline__ void async_close(AsyncShared& as, MegaShared& sh, const MegaBlock& b, u32 r, bool pgo, bool pkok, u32 pnt,
                                            u32 pkn) {
    u32 p = r & 1u, q = p ^ 1u;
    if (pgo) {
        u32 found = (pkok ? b.kn : 0u) + as.pushed[q];
        u32 done = pnt + (pkok ? pkn - as.staged[p] : 0u);
        as.dwork += (int)(found - done);
    }
    as.pushed[q] = 0;
    as.klabn[(r + 1) % 3] = UNREACHED;
    keep_reset(&sh.keep[(b.t + 2) % 3]);
}

// async_start turns the root's items (label 0) into ring slots, empties
// the others and sets the counters (block 0), then crosses one grid barrier.
__device__ __forceinline__ void async_start(MegaShared& sh, AsyncShared& as, const MegaArgs& a, u32 root_items) {
    u32* c = (u32*)a.q1;
    u64* ring = (u64*)a.q0;
    u32* overflow = &a.ctl[CTL_RESULT + RESULT_OVERFLOW];
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x + root_items; i < a.qcap; i += (u64)gridDim.x * blockDim.x) ring[i] = ASYNC_EMPTY;
    if (blockIdx.x == 0) {
        for (u32 i = threadIdx.x; i < root_items; i += blockDim.x) ring[i] = async_pack(__ldcg(&a.q0[i]), 0u, overflow);
        for (u32 i = threadIdx.x; i < ASYNC_COUNTER_WORDS; i += blockDim.x) c[i] = 0;
        __syncthreads();
        if (threadIdx.x == 0) c[A_TAIL] = c[A_WORK] = c[A_CNT] = root_items;
    }
    for (u32 i = threadIdx.x; i < 2 * ASYNC_LABELS; i += blockDim.x) (&as.hist[0][0])[i] = 0;
    if (threadIdx.x == 0) {
        as.tn[0] = as.tn[1] = as.nwm[0] = as.nwm[1] = as.staged[0] = as.staged[1] = as.pushed[0] = as.pushed[1] = 0;
        as.nwork[0] = as.nwork[1] = root_items;
        as.klabn[0] = as.klabn[1] = as.klabn[2] = UNREACHED;
        as.dwork = 0;
    }
    __syncthreads();
    u64* words = (u64*)&a.ctl[CTL_MEGA(0)];
    barrier_arrive(&words[1 * (CTL_LINE / 2)], 1ull);
    barrier_wait(&words[1 * (CTL_LINE / 2)], &sh.word);
}

// mega_async runs the asynchronous traversal (see above) with a window of
// window labels and returns 1, the grid barriers it crossed.
template <u32 KE>
__device__ __forceinline__ u32 mega_async(MegaShared& sh, AsyncShared& as, const MegaArgs& a, MegaTally* tally, u32 window) {
    Graph g = {a.offsets, a.targets, a.level, a.chunk, a.low_degree, nullptr};
    u32* c = (u32*)a.q1;
    u64* ring = (u64*)a.q0;
    u32 qc = a.qcap;
    u32* overflow = &a.ctl[CTL_RESULT + RESULT_OVERFLOW];
    async_start(sh, as, a, load_cg(&a.ctl[CTL_COUNT(0)]));
    Sink<MEGA_BLOCK_QCAP, u64, KE> s = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, qc, nullptr, overflow};
    s.ring = ring;
    s.tail = &c[A_TAIL];
    s.head = &c[A_HEAD];
    MegaBlock b = {0, 0, 0, false};
    // Every thread carries the last round's plan, the block's idle rounds
    // and the lowest label it keeps (the same in all).
    u32 klab = UNREACHED, idle = 0, pnt = 0, pkn = 0;
    bool pgo = false, pkok = false;
    AsyncCarry k = {0, 0, 0, 0};
    for (u32 r = 0;; r++) {
        u32 p = r & 1u;
        // The last round's kept vertices and their lowest label.
        if (pgo && pkok) {
            mega_next_level(sh, b);
            klab = as.klabn[(r + 2) % 3];
        }
        idle = pgo ? 0u : idle + 1u;
        AsyncRound rd;
        rd.p = p;
        rd.force = idle > ASYNC_FORCE;
        rd.limit = rd.force ? ASYNC_MAX_LABEL : as.nwm[p] + window - 1;
        rd.nt = as.tn[p];
        rd.busy = b.kn > 0 && klab <= rd.limit;
        rd.kok = b.kn == 0 || rd.busy;
        rd.go = rd.busy || rd.nt > 0;
        // Done when the block holds nothing and the last round, idle, read
        // work as 0 after the block's last change of it was sent.
        if (!rd.go && b.kn == 0 && r > 0 && !pgo && as.nwork[p] == 0) break;
        if (idle > ASYNC_STALL) {
            if (threadIdx.x == 0) atomicExch(overflow, 1u);  // a stall guard, never expected
            break;
        }
        const KeepQueue* cur = &sh.keep[b.t % 3];
        if (threadIdx.x < 32) {
            if (threadIdx.x == 0) async_close(as, sh, b, r, pgo, pkok, pnt, pkn);
            __syncwarp();
            async_manage(as, c, ring, qc, window, rd, cur, b.kn, overflow, k);
        } else if (rd.go) {
            Sink<MEGA_BLOCK_QCAP, u64, KE> s2 = s;
            s2.kq = rd.kok ? &sh.keep[(b.t + 1) % 3] : nullptr;
            s2.hist = as.hist[p];
            s2.klab = &as.klabn[r % 3];
            s2.bn = &as.pushed[p];
            async_expand<KE>(g, s2, cur, rd.kok ? b.kedges : 0u, rd.limit, as.titems[p], as.tlabs[p], rd.nt, tally);
        }
        __syncthreads();
        pgo = rd.go;
        pkok = rd.kok;
        pnt = rd.nt;
        pkn = b.kn;
    }
    // Nothing is left: the launch has converged.
    if (threadIdx.x == 0) sh.st.count = sh.st.kept = 0;
    return 1;
}

// bfs_megakernel runs every level in one cooperative launch, in steps
// between grid barriers. With direction MEGA_AUTO on a graph that passes
// the rule's degree gate it is level-synchronous and direction-optimizing:
// the device rule decides each step from the frontier's count (thread 0 of
// every block evaluates it from the same counts), block 0 logs the
// decision, and the step runs top-down (its kept edges and the global
// queue, marking the current visited bitmap) or bottom-up (its share of
// the bitmap's words, pushing its finds to the global queue while the
// level needs a queue). Otherwise every step is top-down: it expands the
// block's kept edges and its share of the global queue, then, for as long
// as the block kept every candidate and at most the step's run-ahead depth
// in all, its own next levels from its keep queue. The depth is `ahead`,
// or with adapt it starts at RUN_AHEAD_START and adapts from each step's
// counts (adapt_depth); `keep` chooses the keep budget (the host measures
// which depth and budget pay on the graph). Then the block publishes to
// the global queue and crosses the grid barrier, which hands every block the next step's global
// count, whether any block kept work, and the step's counts. The launch
// ends when no work is left or max_steps steps ran; the host reads the
// final changed flag once, after the launch (the final-flag-only
// convergence plan), with the levels, the steps run and the claims that
// lowered a label. With direction MEGA_ASYNC every level is top-down
// without grid barriers between levels (mega_async, with a window of
// ahead - 1 labels). The barrier word's arrival field is 16 bits wide: a
// grid of more than ARRIVE_MASK blocks sets the misuse result to
// MISUSE_GRID and does nothing. bfs_megakernel_narrow is the same kernel
// compiled for blocks of at most 512 threads, one block per SM: it may
// then keep 96 registers a thread instead of spilling at 64.
// Each entry point declares its own shared memory (sh): a shared variable
// of the inlined body would be one module-level variable of all.
// bfs_megakernel_async is the narrow kernel with the asynchronous traversal
// (ASYNC), kept apart so that the others keep their registers: given
// MEGA_ASYNC, they set the misuse result to MISUSE_ASYNC and do nothing.
template <bool ASYNC>
__device__ __forceinline__ void mega_main(MegaShared& sh, BFS_MEGAKERNEL_PARAMS) {
    if (gridDim.x > ARRIVE_MASK || (!ASYNC && direction == MEGA_ASYNC)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) ctl[CTL_RESULT + RESULT_MISUSE] = gridDim.x > ARRIVE_MASK ? MISUSE_GRID : MISUSE_ASYNC;
        return;
    }
    MegaConfig c;
    c.n = (u32)n;
    c.total = __ldg(&offsets[n]);
    c.cap = ahead < 1 ? 1u : (ahead > 0xffffu ? 0xffffu : (u32)ahead);
    c.auto_dir = direction == MEGA_AUTO ? 1u : 0u;
    // Level-synchronous and direction-optimizing when the rule can leave
    // top-down: the degree gate is the graph's, the same at every level.
    c.sync_do = c.auto_dir != 0 && !(DIR_MIN_DEGREE > 0 && DIR_MIN_DEGREE * n > (u64)c.total) ? 1u : 0u;
    c.adapt = adapt != 0 ? 1u : 0u;
    mega_start(sh, c, ctl);
    MegaArgs a = {offsets, targets, level, q0, q1, vis0, vis1, ctl, dlog, (u32)chunk, (u32)qcap, low_degree != 0,
                  (u32)min(max_steps, 0xffffffffull), (u32)max(log_cap, 1ull)};
    MegaTally tally = {0, 0};
    // The keep budget: KEEP_EDGES when keep asks for as many, else
    // KEEP_EDGES_SMALL.
    bool large = keep >= KEEP_EDGES;
    // The asynchronous traversal's window: ahead - 1 labels, at least one.
    u32 window = max(c.cap, 2u) - 1u;
    u32 d;
    if (c.sync_do) {
        d = large ? mega_steps<true, KEEP_EDGES>(sh, a, &tally) : mega_steps<true, KEEP_EDGES_SMALL>(sh, a, &tally);
    } else if (ASYNC && direction == MEGA_ASYNC) {
        d = large ? mega_async<KEEP_EDGES>(sh, sh.as, a, &tally, window) : mega_async<KEEP_EDGES_SMALL>(sh, sh.as, a, &tally, window);
    } else {
        d = large ? mega_steps<false, KEEP_EDGES>(sh, a, &tally) : mega_steps<false, KEEP_EDGES_SMALL>(sh, a, &tally);
    }
    u64* words = (u64*)&ctl[CTL_MEGA(0)];
    u32 levels = mega_levels(sh, tally, ctl, words, d, level, n);
    if (threadIdx.x == 0) atomicMax(&ctl[CTL_RESULT + RESULT_LEVELS], levels);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[CTL_RESULT + RESULT_CHANGED] = mega_more(sh.st, c.sync_do != 0) ? 1u : 0u;
        ctl[CTL_RESULT + RESULT_BARRIERS] = d;
    }
}

#define MEGA_ARGS \
    offsets, targets, level, q0, q1, vis0, vis1, ctl, dlog, n, chunk, qcap, low_degree, max_steps, ahead, adapt, \
        direction, log_cap, keep

extern "C" __global__ void __launch_bounds__(1024) bfs_megakernel(BFS_MEGAKERNEL_PARAMS) {
    __shared__ MegaShared sh;
    mega_main<false>(sh, MEGA_ARGS);
}

extern "C" __global__ void __launch_bounds__(MEGA_NARROW_THREADS, 1) bfs_megakernel_narrow(BFS_MEGAKERNEL_NARROW_PARAMS) {
    __shared__ MegaShared sh;
    mega_main<false>(sh, MEGA_ARGS);
}

extern "C" __global__ void __launch_bounds__(MEGA_NARROW_THREADS, 1) bfs_megakernel_async(BFS_MEGAKERNEL_ASYNC_PARAMS) {
    __shared__ MegaShared sh;
    mega_main<true>(sh, MEGA_ARGS);
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

// Multi-source BFS. A pass traverses from up to `width` roots at once (32
// or 64): every vertex has a seen word, a frontier word (cur) and a next
// word of that width, one bit per root of the pass, so one scan of an edge
// serves every root whose frontier holds its source. A pass keeps its
// levels as bit planes: plane b of vertex v is a word of the pass's width
// whose bit i is bit b of v's level from root i, so a root that first sees
// v at level L ORs its bit into the planes of L's set bits (a root's own
// level 0 sets none), one word for most levels instead of a 4-byte level
// per root. The planes lie in groups of MS_GROUP_BYTES, one per vertex and
// group (MS_GROUP_BYTES / sizeof(W) planes), group after group (all the
// vertices' first groups, then their second ones, ...); the host clears
// the groups a pass can reach before it and reads a level only where the
// seen bit is set. A level pushes (every vertex of the list_in, the frontier, ORs its
// frontier bits that a neighbour has not seen into the neighbour's next
// word; a neighbour whose next word was 0 joins list_out) or pulls (every
// vertex some root has not seen ORs its neighbours' frontier words,
// stopping once every missing root is found, and joins list_out if it
// found any; a hub's edges are spread over the grid instead, in chunks,
// each OR-ing what it finds into the hub's next word); msbfs_finish then
// records the pushed vertices' new bits, or after a pull the hubs' bits.
// It clears the level's frontier words. cur and next swap every level
// (the host passes them by depth parity). Ring slot d%3 of the count lines
// holds level d's list length (word 0) and its frontier count (CTL_COUNTS:
// vertices and degrees), which tells the host whether to push or pull.

// IdQueue is a block's shared-memory staging of the vertex ids it appends
// to a list during one level.
struct IdQueue {
    u32 n;     // ids reserved this level (may exceed MS_LIST_CAP)
    u32 base;  // the block's offset in the list
    u32 ids[MS_LIST_CAP];
};

// push_ids appends the id of every lane with has to a list: one shared
// atomic per warp reserves staging slots; slots past the staging capacity
// go straight to the list with one atomic on its count per warp.
__device__ __forceinline__ void push_ids(IdQueue* q, u32* list, u32* count, u32 lane, bool has, u32 id) {
    u32 m = __ballot_sync(FULL_MASK, has);
    if (m == 0) return;
    u32 total = __popc(m);
    u32 base = 0;
    if (lane == 0) base = atomicAdd(&q->n, total);
    base = __shfl_sync(FULL_MASK, base, 0);
    u32 first_spill = max(base, (u32)MS_LIST_CAP);
    u32 spilled = base + total > MS_LIST_CAP ? base + total - first_spill : 0u;
    u32 gbase = 0;
    if (spilled > 0) {
        if (lane == 0) gbase = atomicAdd(count, spilled);
        gbase = __shfl_sync(FULL_MASK, gbase, 0);
    }
    if (has) {
        u32 slot = base + __popc(m & ((1u << lane) - 1u));
        if (slot < MS_LIST_CAP) {
            q->ids[slot] = id;
        } else {
            list[gbase + (slot - first_spill)] = id;
        }
    }
}

// flush_ids copies the block's staged ids to the list with one atomic.
// Every thread of the block calls it after a __syncthreads.
__device__ __forceinline__ void flush_ids(IdQueue* q, u32* list, u32* count) {
    u32 n = min(q->n, (u32)MS_LIST_CAP);
    if (n == 0) return;
    if (threadIdx.x == 0) q->base = atomicAdd(count, n);
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) list[q->base + i] = q->ids[i];
}

// MS is a multi-source pass's state for one level, with W the word type.
template <typename W>
struct MS {
    const u32* __restrict__ offsets;
    const int* __restrict__ targets;
    W* seen;
    W* cur;
    W* next;
    W* planes;
    u64 n;
    u32 lab;
};

// ms_plane returns plane b of vertex u: its group holds planes b - b % G
// to b - b % G + G - 1, for G planes of words W.
template <typename W>
__device__ __forceinline__ W* ms_plane(const MS<W>& ms, u32 b, u32 u) {
    constexpr u32 G = MS_GROUP_BYTES / sizeof(W);
    return &ms.planes[((u64)(b / G) * ms.n + u) * G + b % G];
}

// ms_record gives vertex u level ms.lab from every root of the bits fresh:
// it ORs them into the planes of the label's set bits, with reductions
// (no reply awaited). Every (vertex, level) has one recording thread, and
// distinct levels' bits are disjoint.
template <typename W>
__device__ __forceinline__ void ms_record(const MS<W>& ms, u32 u, W fresh) {
    if (fresh == 0) return;
    for (u32 l = ms.lab, b = 0; l != 0; l >>= 1, b++) {
        if (l & 1) atomicOr(ms_plane(ms, b, u), fresh);
    }
}

// ms_note_hub appends vertex u, of degree deg, to the hub list of the
// level whose count line is `line` when deg reaches MS_HUB_EDGES: one
// 64-bit atomic on the line's hub count takes the hub's place and the
// first of its MS_HUB_CHUNK-edge chunks, so places and first chunks rise
// together. Each entry is two words: the vertex and its first chunk.
__device__ __forceinline__ void ms_note_hub(u32* hubs, u32* line, u32 u, u32 deg) {
    if (deg < MS_HUB_EDGES) return;
    u32 chunks = (deg + MS_HUB_CHUNK - 1) / MS_HUB_CHUNK;
    u64 old = atomicAdd((unsigned long long*)&line[CTL_HUBS], (1ull << 32) | (u64)chunks);
    u32 j = (u32)(old >> 32);
    hubs[2 * j] = u;
    hubs[2 * j + 1] = (u32)old;
}

// ms_hub_of returns the entry of the hub whose chunks hold chunk c: the
// last of the nh entries whose first chunk is at most c.
__device__ __forceinline__ u32 ms_hub_of(const u32* hubs, u32 nh, u32 c) {
    u32 lo = 0, hi = nh - 1;
    while (lo < hi) {
        u32 mid = (lo + hi + 1) / 2;
        if (__ldg(&hubs[2 * mid + 1]) <= c) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

// ms_push_edges pushes frontier word f over the edges [b, e), 32 a round
// (one per lane); the warp calls it with the same b, e and f in every lane.
template <typename W>
__device__ __forceinline__ void ms_push_edges(const MS<W>& ms, W f, u32 b, u32 e, IdQueue* q, u32* list_out,
                                              u32* out_count, u32 lane) {
    for (u32 i = b; i < e; i += 32) {
        bool fresh_vertex = false;
        u32 u = 0;
        if (i + lane < e) {
            u = (u32)__ldg(&ms.targets[i + lane]);
            W fresh = f & ~__ldg(&ms.seen[u]);
            if (fresh != 0) fresh_vertex = atomicOr(&ms.next[u], fresh) == 0;
        }
        push_ids(q, list_out, out_count, lane, fresh_vertex, u);
    }
}

// ms_push pushes from the count vertices of list_in: warps take up to 32
// of them a round and spread their edges over the lanes (one edge per lane
// per round, as expand_items does). A hub (degree MS_HUB_EDGES or more) is
// left to the whole grid instead: its MS_HUB_CHUNK-edge chunks, listed in
// hubs (hubc: hubs above, chunks below), go to the warps in turn, so one
// high-degree vertex no longer holds a single warp for the whole level.
// The frontier words stay set (the finish clears them), since a hub's word
// is read by many warps.
template <typename W>
__device__ __forceinline__ void ms_push(const MS<W>& ms, const u32* list_in, u32 count, const u32* hubs, u64 hubc,
                                        IdQueue* q, u32* list_out, u32* out_count) {
    u32 lane = threadIdx.x & 31u;
    u32 gwarp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, nwarps = (gridDim.x * blockDim.x) >> 5;
    u32 k = min((count + nwarps - 1) / nwarps, 32u);
    for (u32 base = gwarp * k; base < count; base += nwarps * k) {
        u32 idx = base + lane;
        u32 b = 0, e = 0;
        W f = 0;
        if (lane < k && idx < count) {
            u32 v = __ldcg(&list_in[idx]);
            b = __ldg(&ms.offsets[v]);
            e = __ldg(&ms.offsets[v + 1]);
            if (e - b >= MS_HUB_EDGES) {
                e = b;  // the grid takes a hub's edges below
            } else {
                f = ms.cur[v];
            }
        }
        u32 len = e - b;
        u32 incl = warp_incl(len, lane);
        u32 total = __shfl_sync(FULL_MASK, incl, 31);
        u32 excl = incl - len;
        for (u32 e0 = 0; e0 < total; e0 += 32) {
            u32 slot = e0 + lane;
            u32 j = warp_owner(excl, slot);
            u32 ob = __shfl_sync(FULL_MASK, b, j);
            u32 oe = __shfl_sync(FULL_MASK, excl, j);
            W of = __shfl_sync(FULL_MASK, f, j);
            bool fresh_vertex = false;
            u32 u = 0;
            if (slot < total) {
                u = (u32)__ldg(&ms.targets[ob + (slot - oe)]);
                W fresh = of & ~__ldg(&ms.seen[u]);
                if (fresh != 0) fresh_vertex = atomicOr(&ms.next[u], fresh) == 0;
            }
            push_ids(q, list_out, out_count, lane, fresh_vertex, u);
        }
    }
    u32 nh = (u32)(hubc >> 32), nch = (u32)hubc;
    for (u32 c = gwarp; c < nch; c += nwarps) {
        u32 j = ms_hub_of(hubs, nh, c);
        u32 v = __ldg(&hubs[2 * j]);
        u32 b = __ldg(&ms.offsets[v]) + (c - __ldg(&hubs[2 * j + 1])) * MS_HUB_CHUNK;
        u32 e = min(__ldg(&ms.offsets[v + 1]), b + MS_HUB_CHUNK);
        ms_push_edges(ms, ms.cur[v], b, e, q, list_out, out_count, lane);
    }
}

// warp_or returns the OR of v over the warp.
__device__ __forceinline__ u32 warp_or(u32 v) { return __reduce_or_sync(FULL_MASK, v); }
__device__ __forceinline__ u64 warp_or(u64 v) {
    return (u64)__reduce_or_sync(FULL_MASK, (u32)v) | (u64)__reduce_or_sync(FULL_MASK, (u32)(v >> 32)) << 32;
}

// ms_pull_hubs is a pulling level's share of the graph's hubs (the nh
// entries of hubs, nch chunks in all, as a level's hub list): the warps
// take their MS_HUB_CHUNK-edge chunks in turn, and each chunk of a hub that
// some root of full has not seen ORs its neighbours' frontier words that
// the hub misses into the hub's next word; the finish then records what
// every hub found. A hub never holds one warp for a whole level.
template <typename W>
__device__ __forceinline__ void ms_pull_hubs(const MS<W>& ms, W full, const u32* hubs, u32 nh, u32 nch) {
    u32 lane = threadIdx.x & 31u;
    u32 gwarp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, nwarps = (gridDim.x * blockDim.x) >> 5;
    for (u32 c = gwarp; c < nch; c += nwarps) {
        u32 j = ms_hub_of(hubs, nh, c);
        u32 v = __ldg(&hubs[2 * j]);
        W missing = full & ~ms.seen[v];
        if (missing == 0) continue;
        u32 b = __ldg(&ms.offsets[v]) + (c - __ldg(&hubs[2 * j + 1])) * MS_HUB_CHUNK;
        u32 e = min(__ldg(&ms.offsets[v + 1]), b + MS_HUB_CHUNK);
        // Every lane's targets first, then their words: two round trips.
        u32 t[MS_HUB_CHUNK / 32];
#pragma unroll
        for (u32 i = 0; i < MS_HUB_CHUNK / 32; i++) {
            u32 k = b + i * 32 + lane;
            t[i] = k < e ? (u32)__ldg(&ms.targets[k]) : UNREACHED;
        }
        W acc = 0;
#pragma unroll
        for (u32 i = 0; i < MS_HUB_CHUNK / 32; i++) acc |= t[i] != UNREACHED ? ms.cur[t[i]] & missing : (W)0;
        acc = warp_or(acc);
        if (lane == 0 && acc != 0) atomicOr(&ms.next[v], acc);
    }
}

// ms_pull has every vertex that some root has not seen (full: the pass's
// roots) look for those roots in its neighbours' frontier words: each lane
// first checks up to BU_SERIAL edges on its own, then the warp scans the
// remaining edges of its lanes still searching, MS_PULL_ROUNDS rounds of 32
// edges at a time packed across vertices (every round's targets loaded,
// then every round's frontier words, so that they are in flight together),
// with a segmented OR over each vertex's slots in each round; a vertex
// stops once every missing root is found. The targets are read once, as
// streaming loads, so that they do not push the frontier words out of L2.
// A vertex that found any records its levels and joins list_out; its
// frontier count goes to counts.
template <typename W>
__device__ __forceinline__ void ms_pull(const MS<W>& ms, u32 n, W full, IdQueue* q, u32* list_out, u32* out_count,
                                        Tally* tally) {
    constexpr u32 R = MS_PULL_ROUNDS;
    u32 lane = threadIdx.x & 31u;
    u32 stride = gridDim.x * blockDim.x;
    for (u32 base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
        u32 u = base + lane;
        W missing = 0;
        u32 b = 0, e = 0;
        if (u < n) {
            missing = full & ~ms.seen[u];
            if (missing != 0) {
                b = __ldg(&ms.offsets[u]);
                e = __ldg(&ms.offsets[u + 1]);
                // A hub's edges are the whole grid's (ms_pull_hubs).
                if (e - b >= MS_HUB_EDGES) missing = 0;
            }
        }
        W fresh = 0;
        u32 cur = b;
        if (missing != 0) {
            u32 m = min(e - b, (u32)BU_SERIAL);
            u32 t[BU_SERIAL];
#pragma unroll
            for (u32 i = 0; i < BU_SERIAL; i++) t[i] = i < m ? (u32)__ldcs(&ms.targets[b + i]) : 0u;
#pragma unroll
            for (u32 i = 0; i < BU_SERIAL; i++) fresh |= i < m ? ms.cur[t[i]] & missing : (W)0;
            cur = b + m;
        }
        u32 rem = (missing != 0 && fresh != missing) ? e - cur : 0u;
        while (__ballot_sync(FULL_MASK, rem > 0) != 0) {
            u32 incl = warp_incl(rem, lane);
            u32 total = __shfl_sync(FULL_MASK, incl, 31);
            u32 excl = incl - rem;
            u32 t[R], seg[R];
            W om[R];
#pragma unroll
            for (u32 r = 0; r < R; r++) {
                u32 slot = r * 32 + lane;
                u32 j = warp_owner(excl, slot);
                u32 ocur = __shfl_sync(FULL_MASK, cur, j);
                u32 oex = __shfl_sync(FULL_MASK, excl, j);
                om[r] = __shfl_sync(FULL_MASK, missing, j);
                // The owner's slots in this round start at this lane.
                seg[r] = oex > r * 32 ? oex - r * 32 : 0u;
                t[r] = slot < total ? (u32)__ldcs(&ms.targets[ocur + (slot - oex)]) : UNREACHED;
            }
            W val[R];
#pragma unroll
            for (u32 r = 0; r < R; r++) val[r] = t[r] != UNREACHED ? ms.cur[t[r]] & om[r] : (W)0;
            W acc = 0;
#pragma unroll
            for (u32 r = 0; r < R; r++) {
                // Inclusive OR within each owner's run of slots.
#pragma unroll
                for (u32 o = 1; o < 32; o <<= 1) {
                    W v = __shfl_up_sync(FULL_MASK, val[r], o);
                    if (lane >= o && lane - o >= seg[r]) val[r] |= v;
                }
                // This lane's vertex takes the OR at its last slot of the round.
                bool has = rem > 0 && excl < (r + 1) * 32 && incl > r * 32;
                u32 last = has ? min(incl, (r + 1) * 32) - 1 - r * 32 : lane;
                W a = __shfl_sync(FULL_MASK, val[r], last);
                if (has) acc |= a;
            }
            if (rem > 0 && excl < R * 32) {
                u32 len = min(incl, R * 32) - excl;
                fresh |= acc;
                if (fresh == missing) {
                    rem = 0;
                } else {
                    cur += len;
                    rem -= len;
                }
            }
        }
        if (fresh != 0) {
            ms.next[u] = fresh;
            ms.seen[u] |= fresh;
            tally->first++;
            tally->fedges += e - b;
            ms_record(ms, u, fresh);
        }
        push_ids(q, list_out, out_count, lane, fresh != 0, u);
    }
}

// ms_level_body is one level (pull or push) at depth d over words W.
template <typename W>
__device__ __forceinline__ void ms_level_body(const MS<W>& ms, u32 n, u32 nroots, u32 d, bool pull, const u32* list_in,
                                              u32* list_out, const u32* hubs, const u32* graph_hubs, u64 graph_hubc,
                                              u32* ctl) {
    __shared__ IdQueue q;
    __shared__ u32 sc[3];
    if (threadIdx.x == 0) {
        q.n = 0;
        sc[0] = sc[1] = sc[2] = 0;
    }
    __syncthreads();
    u32* out = &ctl[CTL_COUNT((d + 1) % 3)];
    Tally tally = {};
    if (pull) {
        W full = nroots >= sizeof(W) * 8 ? ~(W)0 : (((W)1 << nroots) - 1);
        ms_pull_hubs(ms, full, graph_hubs, (u32)(graph_hubc >> 32), (u32)graph_hubc);
        ms_pull(ms, n, full, &q, list_out, out, &tally);
    } else {
        u64 hubc = __ldcg((const unsigned long long*)&ctl[CTL_COUNT(d % 3) + CTL_HUBS]);
        ms_push(ms, list_in, load_cg(&ctl[CTL_COUNT(d % 3)]), hubs, hubc, &q, list_out, out);
    }
    __syncthreads();
    flush_ids(&q, list_out, out);
    add_counts(&tally, sc, (u64*)&out[CTL_COUNTS], nullptr);
}

// msbfs_init starts a pass. Phase 0 (any grid) clears the seen, frontier
// and next words of every vertex, the first plane_words 32-bit words of the
// planes and the control words; phase 1 (one block, after phase 0) gives
// each root its bit (its level 0 sets no plane) and, once per distinct
// root, a place in the first list, with the list's count (and in the hub
// list when its degree reaches MS_HUB_EDGES).
extern "C" __global__ void msbfs_init(MSBFS_INIT_PARAMS) {
    u64 words = n * (width / 32);  // 32-bit words per array
    if (phase == 0) {
        u64 stride = (u64)gridDim.x * blockDim.x;
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
            ((u32*)seen)[i] = 0;
            ((u32*)cur)[i] = 0;
            ((u32*)next)[i] = 0;
        }
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < plane_words; i += stride) ((u32*)planes)[i] = 0;
        if (blockIdx.x == 0) {
            for (u32 i = threadIdx.x; i < CTL_WORDS; i += blockDim.x) ctl[i] = 0;
        }
        return;
    }
    if (blockIdx.x != 0) return;
    for (u32 i = threadIdx.x; i < (u32)nroots; i += blockDim.x) {
        u32 v = roots[i];
        if (width == 64) {
            atomicOr((unsigned long long*)seen + v, 1ull << i);
            atomicOr((unsigned long long*)cur + v, 1ull << i);
        } else {
            atomicOr((u32*)seen + v, 1u << i);
            atomicOr((u32*)cur + v, 1u << i);
        }
        bool first = true;
        for (u32 j = 0; j < i; j++) first = first && roots[j] != v;
        if (first) {
            u32 deg = offsets[v + 1] - offsets[v];
            list[atomicAdd(&ctl[CTL_COUNT(0)], 1u)] = v;
            atomicAdd((unsigned long long*)&ctl[CTL_COUNT(0) + CTL_COUNTS], (1ull << 32) | (u64)deg);
            ms_note_hub(hubs, &ctl[CTL_COUNT(0)], v, deg);
        }
    }
}

// msbfs_level runs level `depth` of a pass: it pulls when pull is 1 and
// pushes from list_in otherwise, appending the next frontier's vertices to
// list_out (count in ring slot (depth+1)%3); it clears ring slot
// (depth+2)%3.
extern "C" __global__ void msbfs_level(MSBFS_LEVEL_PARAMS) {
    u32 d = (u32)depth;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        u32* clr = &ctl[CTL_COUNT((d + 2) % 3)];
        clr[0] = 0;
        *(u64*)&clr[CTL_COUNTS] = 0;
        *(u64*)&clr[CTL_HUBS] = 0;
    }
    if (width == 64) {
        MS<u64> ms = {offsets, targets, (u64*)seen, (u64*)cur, (u64*)next, (u64*)planes, n, d + 1};
        ms_level_body(ms, (u32)n, (u32)nroots, d, pull != 0, list_in, list_out, hubs, graph_hubs, graph_hubc, ctl);
    } else {
        MS<u32> ms = {offsets, targets, (u32*)seen, (u32*)cur, (u32*)next, (u32*)planes, n, d + 1};
        ms_level_body(ms, (u32)n, (u32)nroots, d, pull != 0, list_in, list_out, hubs, graph_hubs, graph_hubc, ctl);
    }
}

// ms_finish_body ends level d over words W: the frontier words of
// list_in's vertices are cleared (the level read them all level long);
// after a push, every vertex of list_out adds its next word to its seen
// word, records its levels and is counted into the frontier count, and
// every hub of list_out joins the next level's hub list. After a pull
// (whose list_out holds no hub) every hub of the graph whose chunks found
// roots does the same and joins list_out.
template <typename W>
__device__ __forceinline__ void ms_finish_body(const MS<W>& ms, u32 d, bool pull, const u32* list_in, u32* list_out,
                                               u32* hubs, const u32* graph_hubs, u64 graph_hubc, u32* ctl) {
    __shared__ u32 sc[3];
    if (threadIdx.x == 0) sc[0] = sc[1] = sc[2] = 0;
    __syncthreads();
    u32 stride = gridDim.x * blockDim.x;
    u32 first = blockIdx.x * blockDim.x + threadIdx.x;
    u32 nin = load_cg(&ctl[CTL_COUNT(d % 3)]);
    Tally tally = {};
    u32* line = &ctl[CTL_COUNT((d + 1) % 3)];
    for (u32 i = first; i < nin; i += stride) ms.cur[__ldcg(&list_in[i])] = 0;
    if (pull) {
        for (u32 i = first; i < (u32)(graph_hubc >> 32); i += stride) {
            u32 u = __ldg(&graph_hubs[2 * i]);
            W fresh = ms.next[u];
            if (fresh == 0) continue;
            u32 deg = __ldg(&ms.offsets[u + 1]) - __ldg(&ms.offsets[u]);
            ms.seen[u] |= fresh;
            ms_record(ms, u, fresh);
            tally.first++;
            tally.fedges += deg;
            list_out[atomicAdd(&line[0], 1u)] = u;
            ms_note_hub(hubs, line, u, deg);
        }
    } else {
        u32 nout = load_cg(&line[0]);
        for (u32 i = first; i < nout; i += stride) {
            u32 u = __ldcg(&list_out[i]);
            u32 deg = __ldg(&ms.offsets[u + 1]) - __ldg(&ms.offsets[u]);
            W fresh = ms.next[u];
            ms.seen[u] |= fresh;
            ms_record(ms, u, fresh);
            tally.first++;
            tally.fedges += deg;
            ms_note_hub(hubs, line, u, deg);
        }
    }
    add_counts(&tally, sc, (u64*)&line[CTL_COUNTS], nullptr);
}

// msbfs_finish ends level `depth` of a pass (see ms_finish_body).
extern "C" __global__ void msbfs_finish(MSBFS_FINISH_PARAMS) {
    u32 d = (u32)depth;
    if (width == 64) {
        MS<u64> ms = {offsets, nullptr, (u64*)seen, (u64*)cur, (u64*)next, (u64*)planes, n, d + 1};
        ms_finish_body(ms, d, pull != 0, list_in, list_out, hubs, graph_hubs, graph_hubc, ctl);
    } else {
        MS<u32> ms = {offsets, nullptr, (u32*)seen, (u32*)cur, (u32*)next, (u32*)planes, n, d + 1};
        ms_finish_body(ms, d, pull != 0, list_in, list_out, hubs, graph_hubs, graph_hubc, ctl);
    }
}

// Answers. A query of a traversal wants a few vertices' levels and how many
// vertices each level holds, not every level: these kernels read both on
// the device, so that only the targets' levels and one 64-bit count per
// level cross the bus. They read what the traversal left (the level array,
// or a multi-source pass's seen words and planes) and write only their
// outputs. The host zeroes the counts before a count kernel (the launch's
// Out argument) and checks the indices before a gather; a gather still reads
// an index past the graph as unreached rather than out of bounds.

// bfs_gather writes out[i] = level[idx[i]] for i < count (grid-stride).
extern "C" __global__ void bfs_gather(BFS_GATHER_PARAMS) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        u32 v = __ldg(&idx[i]);
        out[i] = v < n ? __ldg(&level[v]) : -1;
    }
}

// count_lanes adds one vertex of label l for every lane with ok: the lanes
// of one label add together, one lane adding their number, to the block's
// histogram (shared) or to the global counts. Every lane of the warp calls
// it.
__device__ __forceinline__ void count_lanes(u32* hist, u64* counts, bool shared, bool ok, u32 l, u32 lane) {
    u32 peers = __match_any_sync(FULL_MASK, ok ? l : UNREACHED);
    if (!ok || lane != (u32)__ffs(peers) - 1u) return;
    u32 c = __popc(peers);
    if (shared) {
        atomicAdd(&hist[l], c);
    } else {
        atomicAdd(&counts[l], (u64)c);
    }
}

// bfs_level_counts adds to counts[l] the vertices of level l, for every l
// below nlevels (unreached vertices, -1, are the largest label and never
// counted). Each block takes a contiguous range of the vertices, so a graph
// whose levels follow its vertex order (grids, roads) touches few bins per
// block; with at most COUNT_SHARED_BINS levels a block counts into shared
// memory (32-bit bins: a block counts fewer than 2^31 vertices) and adds
// its non-zero bins to counts at the end, otherwise it adds to counts
// directly. Blocks are whole warps.
extern "C" __global__ void bfs_level_counts(BFS_LEVEL_COUNTS_PARAMS) {
    __shared__ u32 hist[COUNT_SHARED_BINS];
    bool shared = nlevels <= COUNT_SHARED_BINS;
    u32 bins = shared ? (u32)nlevels : 0u;
    for (u32 i = threadIdx.x; i < bins; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    u64 per = (n + gridDim.x - 1) / gridDim.x;
    u64 begin = (u64)blockIdx.x * per, end = min(n, begin + per);
    u32 lane = threadIdx.x & 31u;
    for (u64 v0 = begin; v0 < end; v0 += blockDim.x) {
        u64 v = v0 + threadIdx.x;
        u32 l = v < end ? (u32)__ldg(&level[v]) : UNREACHED;
        count_lanes(hist, counts, shared, (u64)l < nlevels, l, lane);
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < bins; i += blockDim.x) {
        if (hist[i] != 0) atomicAdd(&counts[i], (u64)hist[i]);
    }
}

// ms_plane_at is plane b of vertex u among n vertices' planes, as ms_plane
// lays them out.
template <typename W>
__device__ __forceinline__ const W* ms_plane_at(const W* planes, u64 n, u32 b, u64 u) {
    constexpr u32 G = MS_GROUP_BYTES / sizeof(W);
    return &planes[((u64)(b / G) * n + u) * G + b % G];
}

// ms_level_of is root r's level of vertex u after a pass whose labels lie
// in the first `bits` planes: UNREACHED where r's seen bit is clear, else
// the number whose bit b is bit r of plane b.
template <typename W>
__device__ __forceinline__ u32 ms_level_of(const W* seen, const W* planes, u64 n, u32 bits, u32 r, u64 u) {
    if (((__ldg(&seen[u]) >> r) & 1u) == 0) return UNREACHED;
    u32 l = 0;
    for (u32 b = 0; b < bits; b++) l |= (u32)((__ldg(ms_plane_at(planes, n, b, u)) >> r) & 1u) << b;
    return l;
}

// ms_gather_body is msbfs_gather over words W.
template <typename W>
__device__ __forceinline__ void ms_gather_body(const W* seen, const W* planes, const uint2* pairs, int* out, u64 n,
                                               u64 nroots, u32 bits, u64 count) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        uint2 p = __ldg(&pairs[i]);
        out[i] = p.x < nroots && p.y < n ? (int)ms_level_of(seen, planes, n, bits, p.x, p.y) : -1;
    }
}

// msbfs_gather writes out[i] = root pairs[i].x's level of vertex pairs[i].y
// after a pass, -1 where the root did not reach it (grid-stride).
extern "C" __global__ void msbfs_gather(MSBFS_GATHER_PARAMS) {
    if (width == 64) {
        ms_gather_body((const u64*)seen, (const u64*)planes, pairs, out, n, nroots, (u32)bits, count);
    } else {
        ms_gather_body((const u32*)seen, (const u32*)planes, pairs, out, n, nroots, (u32)bits, count);
    }
}

// MSCount is one lane's run of vertices of one label for one root: a lane
// adds a run to the counts when the label changes, so a warp over vertices
// in the order of their levels adds once per run instead of once per
// vertex.
struct MSCount {
    u32 lab;
    u32 n;
};

// ms_count_flush adds root r's run to the block's histogram (shared, bin
// lab * nroots + r) or to counts[r * nlevels + lab].
__device__ __forceinline__ void ms_count_flush(u32* hist, u64* counts, bool shared, u32 nroots, u64 nlevels, u32 r,
                                               MSCount c) {
    if (c.n == 0) return;
    if (shared) {
        atomicAdd(&hist[c.lab * nroots + r], c.n);
    } else {
        atomicAdd(&counts[(u64)r * nlevels + c.lab], (u64)c.n);
    }
}

// ms_count_vertex adds one vertex to a lane's runs: for each of its roots
// (lane and lane + 32 of a 64-bit word) that reached the vertex (bit of
// seen) at label lab[k] below nlevels, it extends the run of that label or
// flushes the run and starts one.
template <typename W>
__device__ __forceinline__ void ms_count_vertex(u32* hist, u64* counts, bool shared, u32 nroots, u64 nlevels,
                                                u32 lane, W seen, const u32* lab, MSCount* run) {
#pragma unroll
    for (u32 k = 0; k < sizeof(W) / sizeof(u32); k++) {
        u32 r = lane + 32u * k;
        if (r >= nroots || ((seen >> r) & 1u) == 0 || lab[k] >= nlevels) continue;
        if (lab[k] != run[k].lab) {
            ms_count_flush(hist, counts, shared, nroots, nlevels, r, run[k]);
            run[k] = MSCount{lab[k], 0};
        }
        run[k].n++;
    }
}

// ms_counts_tiles counts a warp's vertices [begin, end) in tiles of 32: each
// lane loads one vertex's seen word and its first MAXB planes (coalesced
// across the warp, planes at and past bits read as 0), then the lanes take
// the tile's vertices in order from one another's registers (shuffles) and
// each lane decodes its roots' labels (lane and lane + 32 of a 64-bit
// word), adding runs of one label as ms_count_flush does.
template <typename W, u32 MAXB>
__device__ __forceinline__ void ms_counts_tiles(u32* hist, const W* seen, const W* planes, u64* counts, u64 n,
                                                u32 nroots, u32 bits, u64 nlevels, bool shared, u64 begin, u64 end,
                                                u32 lane) {
    constexpr u32 R = sizeof(W) / sizeof(u32);
    MSCount run[R] = {};
    for (u64 base = begin; base < end; base += 32u) {
        u64 u = base + lane;
        bool in = u < end;
        W s = in ? __ldg(&seen[u]) : (W)0;
        W pl[MAXB];
#pragma unroll
        for (u32 b = 0; b < MAXB; b++) pl[b] = in && b < bits ? __ldg(ms_plane_at(planes, n, b, u)) : (W)0;
        u32 m = (u32)min((u64)32u, end - base);
        for (u32 j = 0; j < m; j++) {
            W sj = __shfl_sync(FULL_MASK, s, j);
            u32 lab[R] = {};
#pragma unroll
            for (u32 b = 0; b < MAXB; b++) {
                W p = __shfl_sync(FULL_MASK, pl[b], j);
#pragma unroll
                for (u32 k = 0; k < R; k++) lab[k] |= (u32)((p >> (lane + 32u * k)) & 1u) << b;
            }
            ms_count_vertex<W>(hist, counts, shared, nroots, nlevels, lane, sj, lab, run);
        }
    }
#pragma unroll
    for (u32 k = 0; k < R; k++) {
        if (lane + 32u * k < nroots) ms_count_flush(hist, counts, shared, nroots, nlevels, lane + 32u * k, run[k]);
    }
}

// ms_counts_vertices counts a warp's vertices [begin, end) one at a time,
// the lanes reading each vertex's seen word and planes together (one
// broadcast load each): for passes deeper than 2^16 levels, whose planes
// ms_counts_tiles does not hold in registers.
template <typename W>
__device__ __forceinline__ void ms_counts_vertices(u32* hist, const W* seen, const W* planes, u64* counts, u64 n,
                                                   u32 nroots, u32 bits, u64 nlevels, bool shared, u64 begin, u64 end,
                                                   u32 lane) {
    constexpr u32 R = sizeof(W) / sizeof(u32);
    MSCount run[R] = {};
    for (u64 u = begin; u < end; u++) {
        W s = __ldg(&seen[u]);
        u32 lab[R] = {};
        for (u32 b = 0; b < bits; b++) {
            W p = __ldg(ms_plane_at(planes, n, b, u));
#pragma unroll
            for (u32 k = 0; k < R; k++) lab[k] |= (u32)((p >> (lane + 32u * k)) & 1u) << b;
        }
        ms_count_vertex<W>(hist, counts, shared, nroots, nlevels, lane, s, lab, run);
    }
#pragma unroll
    for (u32 k = 0; k < R; k++) {
        if (lane + 32u * k < nroots) ms_count_flush(hist, counts, shared, nroots, nlevels, lane + 32u * k, run[k]);
    }
}

// ms_counts_body is msbfs_level_counts over words W: each warp takes a
// contiguous range of the vertices, a whole number of 32-vertex tiles
// (ms_counts_tiles, with the planes held in registers sized for bits; one
// vertex at a time past 16 bits), into the block's shared histogram or the
// counts.
template <typename W>
__device__ __forceinline__ void ms_counts_body(u32* hist, const W* seen, const W* planes, u64* counts, u64 n,
                                               u32 nroots, u32 bits, u64 nlevels) {
    bool shared = (u64)nroots * nlevels <= COUNT_SHARED_BINS;
    u32 bins = shared ? nroots * (u32)nlevels : 0u;
    for (u32 i = threadIdx.x; i < bins; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    u32 lane = threadIdx.x & 31u, wpb = blockDim.x / 32u;
    u64 warps = (u64)gridDim.x * wpb;
    u64 per = ((n + warps - 1) / warps + 31u) & ~(u64)31u;
    u64 begin = min(n, ((u64)blockIdx.x * wpb + threadIdx.x / 32u) * per), end = min(n, begin + per);
    if (bits <= 4) {
        ms_counts_tiles<W, 4>(hist, seen, planes, counts, n, nroots, bits, nlevels, shared, begin, end, lane);
    } else if (bits <= 8) {
        ms_counts_tiles<W, 8>(hist, seen, planes, counts, n, nroots, bits, nlevels, shared, begin, end, lane);
    } else if (bits <= 16) {
        ms_counts_tiles<W, 16>(hist, seen, planes, counts, n, nroots, bits, nlevels, shared, begin, end, lane);
    } else {
        ms_counts_vertices(hist, seen, planes, counts, n, nroots, bits, nlevels, shared, begin, end, lane);
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < bins; i += blockDim.x) {
        if (hist[i] != 0) atomicAdd(&counts[(u64)(i % nroots) * nlevels + i / nroots], (u64)hist[i]);
    }
}

// msbfs_level_counts adds to counts[r * nlevels + l] the vertices root r
// of a pass reached at level l, for every root r below nroots and level l
// below nlevels: in a shared-memory histogram per block when nroots x
// nlevels is at most COUNT_SHARED_BINS, otherwise to counts directly.
// Blocks are whole warps.
extern "C" __global__ void msbfs_level_counts(MSBFS_LEVEL_COUNTS_PARAMS) {
    __shared__ u32 hist[COUNT_SHARED_BINS];
    if (width == 64) {
        ms_counts_body(hist, (const u64*)seen, (const u64*)planes, counts, n, (u32)nroots, (u32)bits, nlevels);
    } else {
        ms_counts_body(hist, (const u32*)seen, (const u32*)planes, counts, n, (u32)nroots, (u32)bits, nlevels);
    }
}
