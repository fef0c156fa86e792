// E-graph congruence closure (egg's rebuild) in data-parallel rounds.
//
// The e-graph stays resident as egraph's nine-section device image (row
// classes, ops, child offsets and lengths, signatures, the children, and
// the rows grouped by class); the kernels read five of its sections through
// word offsets into the image. The pending union pairs of the input are a
// second resident buffer. The state of a rebuild:
//   parent[classes]    union-find over class ids: a root is its own parent,
//                      every link points to a smaller id, so the root of a
//                      class is its smallest id whatever the order of unions;
//   cls[rows]          every e-node's canonical class;
//   canon[child_slots] every child slot rewritten to its root;
//   table[table_slots] the hash table of one round, a power of two of
//                      64-bit slots: 0 (empty) or signature << 32 | (row + 1);
//   pairs[2 * rows]    the pairs one round emits for the next (an e-node
//                      emits at most one);
//   out                the two results in vyre's readback format, each an
//                      8-byte count then 8-byte (left, right) u32 pairs: the
//                      canonical rewrites (class, root) of every class whose
//                      root differs (classes pairs), then the deduplicated
//                      e-node table (row, class) of every e-node that owns a
//                      key of the final table (rows pairs).
//
// A round is five stages (Stage in abi.go), each a pass over a flat array:
//   unite           apply the round's pending pairs: find both roots, link
//                   the larger under the smaller with a compare-and-swap
//                   expecting it still a root, retry on failure; find halves
//                   paths as it walks (a benign race: every store is an
//                   ancestor, and ancestors only grow smaller);
//   clear           empty the table;
//   canon-classes   cls[i] = find(class of row i);
//   canon-children  canon[k] = find(children[k]);
//   group           insert every row under NodeSignature(op, canonical
//                   children) by linear probing; a slot with the same
//                   signature is compared word by word, and a match makes
//                   its row the owner; a row whose owner's class differs
//                   emits (cls[owner], cls[row]).
// The round that emits nothing is the last. Stages that need a grid-wide
// barrier between them never share a launch: unite and clear come before
// the rest. When canon-children and group share a launch, each row's
// thread rewrites its own children before inserting it; a row publishes
// its class and children (a fence) before its compare-and-swap, and a
// reader that matches a slot's signature fences before reading the
// owner's, so the comparison always sees them.
//
// Control words live in `ctl`, one 128-byte line each (32 uint32):
//   line 0..2  the persistent kernel's barrier words, a ring of three 64-bit
//              words: phase p arrives on word (p+1)%3 (bits 0..15: one per
//              block) after reserving its emitted pairs in the same word's
//              high half, and clears word (p+2)%3;
//   line 3..5  the step kernels' ring of pending-pair counts: round r reads
//              slot r%3, its group stage counts into slot (r+1)%3, and its
//              unite stage clears that slot first;
//   line 6     the results (RESULT_* in rebuild_abi.h);
//   line 7     the structural-equivalence counters (64-bit).
//
// Every parameter is 64 bits wide: the executor passes each kernel argument
// as 8 bytes. The parameter lists and the constants shared with the host
// come from rebuild_abi.h, generated from the kernel ABI declared in Go
// (abi.go: go generate ./workloads/rebuild).
//
// Build: make ptx (nvcc 11.8, -arch=compute_80); the PTX is committed and
// embedded in the rebuild package.

#include "rebuild_abi.h"
#include "gpuplan_device.h"

#define HAS(mask, s) ((((mask) >> (s)) & 1u) != 0u)
#define BIT(s) (1u << (s))
#define ROUND_STAGES \
    (BIT(STAGE_UNITE) | BIT(STAGE_CLEAR) | BIT(STAGE_CANON_CLASSES) | BIT(STAGE_CANON_CHILDREN) | BIT(STAGE_GROUP))
#define COMPACT_STAGES (BIT(STAGE_COMPACT_CLASSES) | BIT(STAGE_COMPACT_NODES))
// The stages that read the union-find after the pending pairs are applied.
#define AFTER_UNITE (BIT(STAGE_CANON_CLASSES) | BIT(STAGE_CANON_CHILDREN) | BIT(STAGE_GROUP))
#define CTL_COUNT(slot) ((CTL_COUNT_LINE + (slot)) * CTL_LINE)

static_assert(STAGE_COMPACT_NODES < 32, "a stage mask fits in 32 bits");

// State is the resident state of a rebuild.
struct State {
    const u32* row_class;  // the image's row_eclass_ids
    const u32* row_op;
    const u32* row_offset;
    const u32* row_len;
    const u32* children;
    const u32* groups;  // group_eclass_ids: every class id, ascending
    const u32* unions;
    u32* parent;
    u32* cls;
    u32* canon;
    u64* table;
    u32* pairs;
    u32* ctl;
    u64* out_classes;  // count, then (class, root) pairs
    u64* out_nodes;    // count, then (row, class) pairs
    u64 rows, child_slots, classes, union_pairs, table_slots;
};

// Emit is where a pass counts the pairs it emits: a plain 32-bit count
// (the step kernels' ring) or the high half of a barrier word.
struct Emit {
    u32* count;
    u64* word;
};

// find returns the root of x, halving the path as it walks: each step
// stores x's grandparent as its parent. Other threads may store into the
// same words; every store is an ancestor, so every walk still ends at the
// root. Reads bypass L1, which is not coherent across SMs.
__device__ __forceinline__ u32 find(u32* parent, u32 x) {
    for (;;) {
        u32 p = __ldcg(&parent[x]);
        if (p == x) return x;
        u32 gp = __ldcg(&parent[p]);
        if (gp == p) return p;
        parent[x] = gp;
        x = gp;
    }
}

// unite joins the classes of a and b under the smaller root and reports
// whether it linked two roots. The compare-and-swap expects the larger
// root still to be its own parent; if another thread linked it first, the
// walk goes on from where that link points.
__device__ __forceinline__ bool unite(u32* parent, u32 a, u32 b) {
    for (;;) {
        a = find(parent, a);
        b = find(parent, b);
        if (a == b) return false;
        if (a > b) {
            u32 t = a;
            a = b;
            b = t;
        }
        u32 old = atomicCAS(&parent[b], b, a);
        if (old == b) return true;
        b = old;
    }
}

// warp_slot reserves one slot for every lane that wants one, with one
// atomic per warp, and returns this lane's slot. Every lane of the warp
// must call it.
__device__ __forceinline__ u32 warp_slot(Emit e, bool want, u32 lane) {
    u32 m = __ballot_sync(FULL_MASK, want);
    if (m == 0u) return 0u;
    u32 leader = __ffs(m) - 1u;
    u32 base = 0u;
    if (lane == leader) {
        base = e.count ? atomicAdd(e.count, (u32)__popc(m))
                       : (u32)(atomicAdd((unsigned long long*)e.word, (unsigned long long)__popc(m) << 32) >> 32);
    }
    base = __shfl_sync(FULL_MASK, base, leader);
    return base + (u32)__popc(m & ((1u << lane) - 1u));
}

// warp_slot64 is warp_slot on a 64-bit count (an output slab's).
__device__ __forceinline__ u64 warp_slot64(u64* count, bool want, u32 lane) {
    u32 m = __ballot_sync(FULL_MASK, want);
    if (m == 0u) return 0ull;
    u32 leader = __ffs(m) - 1u;
    u64 base = 0ull;
    if (lane == leader) base = atomicAdd((unsigned long long*)count, (unsigned long long)__popc(m));
    base = __shfl_sync(FULL_MASK, base, leader);
    return base + (u64)__popc(m & ((1u << lane) - 1u));
}

// Range is a launch's share of one pass: items [lo, hi), walked with a
// stride of the grid's threads, warp by warp so that every lane of a warp
// takes the same number of steps (warp_slot needs all of them).
struct Range {
    u64 lo, hi;
};

__device__ __forceinline__ Range clip(u64 n, u64 first, u64 count) {
    Range r;
    r.lo = first < n ? first : n;
    r.hi = (count < n - r.lo) ? r.lo + count : n;
    return r;
}

__device__ __forceinline__ u64 warp_start(Range r) { return r.lo + (u64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); }

__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }

// add_warp adds every lane's v to *dst with one atomic per warp.
__device__ __forceinline__ void add_warp(u32* dst, u32 v) {
    u32 t = __reduce_add_sync(FULL_MASK, v);
    if ((threadIdx.x & 31u) == 0u && t != 0u) atomicAdd(dst, t);
}

// unite_pass applies pairs [0, pending) of src and returns this thread's
// links.
__device__ u32 unite_pass(const State& s, const u32* src, u64 pending) {
    u32 links = 0u;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < pending; k += grid_threads()) {
        u32 a = __ldcg(&src[2 * k]), b = __ldcg(&src[2 * k + 1]);
        if (unite(s.parent, a, b)) links++;
    }
    return links;
}

// clear_pass empties the table, two slots per store.
__device__ void clear_pass(const State& s) {
    ulonglong2* t = (ulonglong2*)s.table;
    ulonglong2 z = make_ulonglong2(0ull, 0ull);
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < s.table_slots / 2; k += grid_threads()) t[k] = z;
}

// canon_children_pass rewrites child slots [r.lo, r.hi) to their roots.
__device__ void canon_children_pass(const State& s, Range r) {
    for (u64 k = r.lo + (u64)blockIdx.x * blockDim.x + threadIdx.x; k < r.hi; k += grid_threads())
        s.canon[k] = find(s.parent, __ldg(&s.children[k]));
}

// same_row reports whether row j has op op and the canonical children
// canon[lo, lo + n).
__device__ __forceinline__ bool same_row(const State& s, u32 j, u32 op, u32 lo, u32 n) {
    if (__ldg(&s.row_op[j]) != op || __ldg(&s.row_len[j]) != n) return false;
    u32 jl = __ldg(&s.row_offset[j]);
    for (u32 k = 0; k < n; k++)
        if (__ldcg(&s.canon[jl + k]) != __ldcg(&s.canon[lo + k])) return false;
    return true;
}

// insert puts row i, whose canonical children are canon[lo, lo + n) and
// whose signature is h, into the table and returns the row that owns its
// key: i if it claimed an empty slot, else the equal row found first. A
// probe that passes every slot (impossible: the table holds at most half
// as many keys as slots) sets the overflow flag.
__device__ u32 insert(const State& s, u32 i, u32 h, u32 op, u32 lo, u32 n) {
    u64 mask = s.table_slots - 1ull;
    u64 key = ((u64)h << 32) | (u64)(i + 1u);
    u64 pos = (u64)h & mask;
    for (u64 probes = 0; probes < s.table_slots; probes++, pos = (pos + 1ull) & mask) {
        u64 v = load_relaxed64(&s.table[pos]);
        if (v == 0ull) {
            v = atomicCAS((unsigned long long*)&s.table[pos], 0ull, (unsigned long long)key);
            if (v == 0ull) return i;
        }
        if ((u32)(v >> 32) == h) {
            u32 j = (u32)v - 1u;
            __threadfence();  // acquire: the owner published its words before its compare-and-swap
            if (same_row(s, j, op, lo, n)) return j;
        }
    }
    s.ctl[CTL_RESULT + RESULT_OVERFLOW] = 1u;
    return i;
}

// signature is NodeSignature over op and the canonical children of row i,
// which it first rewrites itself when `rewrite` (canon-children fused into
// the group stage).
__device__ __forceinline__ u32 signature(const State& s, u32 op, u32 lo, u32 n, bool rewrite) {
    u32 h = op * SIG_OP_MUL ^ n;
    for (u32 k = 0; k < n; k++) {
        u32 c;
        if (rewrite) {
            c = find(s.parent, __ldg(&s.children[lo + k]));
            s.canon[lo + k] = c;
        } else {
            c = __ldcg(&s.canon[lo + k]);
        }
        h = (h ^ c) * SIG_CHILD_MUL;
        h ^= h >> 15;
    }
    h ^= h >> 16;
    h *= SIG_FIN_MUL1;
    h ^= h >> 13;
    h *= SIG_FIN_MUL2;
    h ^= h >> 16;
    return h;
}

// row_pass runs the row stages of mask over rows [r.lo, r.hi): the
// canonical class (canon-classes), the row's own children (canon-children
// fused into group) and the insertion with its emitted pair (group).
__device__ void row_pass(const State& s, u32 mask, Range r, Emit e) {
    u32 lane = threadIdx.x & 31u;
    bool classes = HAS(mask, STAGE_CANON_CLASSES), group = HAS(mask, STAGE_GROUP);
    bool rewrite = group && HAS(mask, STAGE_CANON_CHILDREN);
    for (u64 base = warp_start(r); base < r.hi; base += grid_threads()) {
        u64 row = base + lane;
        bool emit = false;
        u32 c = 0u, oc = 0u;
        if (row < r.hi) {
            u32 i = (u32)row;
            if (classes) {
                c = find(s.parent, __ldg(&s.row_class[i]));
                s.cls[i] = c;
            } else {
                c = __ldcg(&s.cls[i]);
            }
            if (group) {
                u32 op = __ldg(&s.row_op[i]), lo = __ldg(&s.row_offset[i]), n = __ldg(&s.row_len[i]);
                u32 h = signature(s, op, lo, n, rewrite);
                // Release: publish cls[i] and the children before the
                // compare-and-swap (written by an earlier launch otherwise).
                if (classes || rewrite) __threadfence();
                u32 owner = insert(s, i, h, op, lo, n);
                if (owner != i) {
                    oc = __ldcg(&s.cls[owner]);
                    emit = oc != c;
                }
            }
        }
        __syncwarp();
        if (!group) continue;
        u32 slot = warp_slot(e, emit, lane);
        if (emit) {
            s.pairs[2 * (u64)slot] = oc;
            s.pairs[2 * (u64)slot + 1] = c;
        }
    }
}

// compact_classes_pass emits (class, root) for every class id of groups
// [r.lo, r.hi) whose root differs.
__device__ void compact_classes_pass(const State& s, Range r) {
    u32 lane = threadIdx.x & 31u;
    for (u64 base = warp_start(r); base < r.hi; base += grid_threads()) {
        u64 g = base + lane;
        u32 cl = 0u, root = 0u;
        if (g < r.hi) {
            cl = __ldg(&s.groups[g]);
            root = find(s.parent, cl);
        }
        bool emit = g < r.hi && root != cl;
        u64 slot = warp_slot64(&s.out_classes[0], emit, lane);
        if (emit) s.out_classes[1 + slot] = ((u64)root << 32) | cl;
    }
}

// compact_nodes_pass emits (row, class) for every row that owns a slot of
// the final table (a tombstone of the incremental rounds owns none).
__device__ void compact_nodes_pass(const State& s) {
    u32 lane = threadIdx.x & 31u;
    Range r = {0ull, s.table_slots};
    for (u64 base = warp_start(r); base < r.hi; base += grid_threads()) {
        u64 k = base + lane;
        u64 v = k < r.hi ? __ldcg(&s.table[k]) : 0ull;
        u32 row = (u32)v - 1u;
        bool emit = v != 0ull && (u32)v != INC_TOMBSTONE;  // the incremental rounds' retired slots
        u64 slot = warp_slot64(&s.out_nodes[0], emit, lane);
        if (emit) s.out_nodes[1 + slot] = ((u64)__ldcg(&s.cls[row]) << 32) | row;
    }
}

// phase_ok reports whether the stages of mask may share a launch: none
// that needs the pending pairs applied with unite, group never with clear,
// and round stages never with the compaction.
__device__ __forceinline__ bool phase_ok(u32 mask) {
    if (HAS(mask, STAGE_UNITE) && (mask & AFTER_UNITE)) return false;
    if (HAS(mask, STAGE_CLEAR) && HAS(mask, STAGE_GROUP)) return false;
    return !((mask & ROUND_STAGES) && (mask & COMPACT_STAGES));
}

// run_phase runs the stages of mask for one round (or the compaction):
// the pending pairs src[0, pending) for unite, the items first..+count of
// the row, child and class passes. It returns this thread's links.
__device__ u32 run_phase(const State& s, u32 mask, const u32* src, u64 pending, u64 first, u64 count, Emit e) {
    u32 links = 0u;
    if (HAS(mask, STAGE_UNITE)) links = unite_pass(s, src, pending);
    if (HAS(mask, STAGE_CLEAR)) clear_pass(s);
    if (HAS(mask, STAGE_CANON_CHILDREN) && !HAS(mask, STAGE_GROUP))
        canon_children_pass(s, clip(s.child_slots, first, count));
    if (mask & (BIT(STAGE_CANON_CLASSES) | BIT(STAGE_GROUP))) row_pass(s, mask, clip(s.rows, first, count), e);
    if (HAS(mask, STAGE_COMPACT_CLASSES)) compact_classes_pass(s, clip(s.classes, first, count));
    if (HAS(mask, STAGE_COMPACT_NODES)) compact_nodes_pass(s);
    return links;
}

__device__ __forceinline__ State make_state(const u32* image, const u32* unions, u32* parent, u32* cls, u32* canon,
                                            u64* table, u32* pairs, u32* ctl, u64* out, u64 sec_class, u64 sec_op,
                                            u64 sec_offset, u64 sec_len, u64 sec_children, u64 sec_groups, u64 rows,
                                            u64 child_slots, u64 classes, u64 union_pairs, u64 table_slots) {
    State s = {image + sec_class, image + sec_op, image + sec_offset, image + sec_len, image + sec_children,
               image + sec_groups, unions, parent, cls, canon, table, pairs, ctl, out, out + 1 + classes,
               rows, child_slots, classes, union_pairs, table_slots};
    return s;
}

// rebuild_reset makes every class its own root and clears the control
// words and both output counts.
extern "C" __global__ void rebuild_reset(REBUILD_RESET_PARAMS) {
    u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (u64 c = id; c < classes; c += grid_threads()) parent[c] = (u32)c;
    for (u64 w = id; w < CTL_WORDS; w += grid_threads()) ctl[w] = 0u;
    if (id == 0) {
        out[0] = 0ull;
        out[1 + classes] = 0ull;
    }
}

// rebuild_step runs the stages `stages` of round `round`, or the
// compaction, over the items item_first..+item_count of its row, child and
// class passes (all of the pending pairs and of the table). A round launch
// returns at once once a launch has found the rebuild done; the first
// launch of the round after the one that emitted nothing marks it done
// and records the rounds. A stage set that needs a grid barrier inside the
// launch sets the misuse result and does nothing.
extern "C" __global__ void __launch_bounds__(1024) rebuild_step(REBUILD_STEP_PARAMS) {
    u32 mask = (u32)stages;
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (!phase_ok(mask) || stages > 0xffffffffull) {
        if (first) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_PHASES;
        return;
    }
    State s = make_state(image, unions, parent, cls, canon, table, pairs, ctl, out, sec_class, sec_op, sec_offset,
                         sec_len, sec_children, sec_groups, rows, child_slots, classes, union_pairs, table_slots);
    u64 pending = 0;
    Emit e = {nullptr, nullptr};
    if (mask & ROUND_STAGES) {
        if (__ldcg(&ctl[CTL_RESULT + RESULT_DONE]) != 0u) return;
        pending = round == 0 ? union_pairs : (u64)__ldcg(&ctl[CTL_COUNT(round % 3)]);
        if (round > 0 && pending == 0) {
            if (first) {
                ctl[CTL_RESULT + RESULT_DONE] = 1u;
                ctl[CTL_RESULT + RESULT_ROUNDS] = (u32)round;
            }
            return;
        }
        if (HAS(mask, STAGE_UNITE) && first) ctl[CTL_COUNT((round + 1) % 3)] = 0u;
        e.count = &ctl[CTL_COUNT((round + 1) % 3)];
    }
    u32 links = run_phase(s, mask, round == 0 ? unions : pairs, pending, item_first, item_count, e);
    if (HAS(mask, STAGE_UNITE)) add_warp(&ctl[CTL_RESULT + (round == 0 ? RESULT_UNION_MERGES : RESULT_CONGRUENCE_MERGES)], links);
}

// The persistent kernel's grid barrier is a counter barrier on a barrier
// word. After a __syncthreads (so that the release covers the writes of
// the whole block), the block's first thread adds 1 to the low half
// (release); then it spins until the arrivals reach gridDim.x (acquire).
// The word is fresh for every phase (the ring clears it two phases ahead),
// and its high half counts the pairs the phase emitted; the block receives
// the whole word through shared memory.
__device__ __forceinline__ u64 grid_barrier(u64* word, u64* s_word) {
    __syncthreads();
    if (threadIdx.x == 0) {
        add_release64(word, 1ull);
        *s_word = spin_arrivals(word, ARRIVE_MASK);
    }
    __syncthreads();
    return *s_word;
}

// next_phase returns the stages of the phase that starts at stage `from`:
// up to the next stage that starts a phase, within the round.
__device__ __forceinline__ u32 next_phase(u32 starts, u32 from) {
    u32 m = 0u;
    for (u32 st = from; st <= STAGE_GROUP; st++) {
        if (st > from && HAS(starts, st)) break;
        m |= BIT(st);
    }
    return m;
}

// phases_ok checks the persistent kernel's phase starts: the first stage
// starts a phase and every phase may share a launch.
__device__ bool phases_ok(u32 starts) {
    if (!HAS(starts, STAGE_UNITE) || (starts & ~ROUND_STAGES)) return false;
    for (u32 st = 0; st <= STAGE_GROUP; st++)
        if (HAS(starts, st) && !phase_ok(next_phase(starts, st))) return false;
    return true;
}

// finish_persistent ends a persistent rebuild after its rounds: the
// compaction, then the merges each thread counted and (thread 0 of block
// 0) the rounds, whether the last changed anything and the barriers
// crossed, into the result words.
__device__ void finish_persistent(const State& s, u32 round, bool changed, u32 p, u32 union_links, u32 links) {
    run_phase(s, COMPACT_STAGES, s.pairs, 0ull, 0ull, ~0ull, Emit{nullptr, nullptr});
    add_warp(&s.ctl[CTL_RESULT + RESULT_UNION_MERGES], union_links);
    add_warp(&s.ctl[CTL_RESULT + RESULT_CONGRUENCE_MERGES], links);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        s.ctl[CTL_RESULT + RESULT_ROUNDS] = round;
        s.ctl[CTL_RESULT + RESULT_CHANGED] = changed ? 1u : 0u;
        s.ctl[CTL_RESULT + RESULT_BARRIERS] = p;
    }
}

// rebuild_persistent runs every round in one cooperative launch: the
// round's stages in the phases phase_starts gives (the launch fusion plan's
// groups), a grid barrier after each, the last of which carries the pairs
// the round emitted; then, once a round emitted nothing or max_rounds ran,
// the compaction. The host reads the final changed flag once, after the
// launch (the final-flag-only convergence plan). A grid of more than
// ARRIVE_MASK blocks, or phases that need a barrier inside them, set the
// misuse result and do nothing.
extern "C" __global__ void __launch_bounds__(1024) rebuild_persistent(REBUILD_PERSISTENT_PARAMS) {
    u32 starts = (u32)phase_starts;
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (gridDim.x > ARRIVE_MASK || !phases_ok(starts) || phase_starts > 0xffffffffull) {
        if (first) ctl[CTL_RESULT + RESULT_MISUSE] = gridDim.x > ARRIVE_MASK ? MISUSE_GRID : MISUSE_PHASES;
        return;
    }
    __shared__ u64 s_word;
    State s = make_state(image, unions, parent, cls, canon, table, pairs, ctl, out, sec_class, sec_op, sec_offset,
                         sec_len, sec_children, sec_groups, rows, child_slots, classes, union_pairs, table_slots);
    u64* words = (u64*)ctl;  // word i at words[i * CTL_LINE / 2]
    u32 p = 0u, round = 0u, union_links = 0u, links = 0u;
    u64 pending = union_pairs;
    bool changed = true;
    while (round < max_rounds) {
        u64 v = 0ull;
        for (u32 st = 0; st <= STAGE_GROUP;) {
            u32 mask = next_phase(starts, st);
            if (first) words[((p + 2) % 3) * (CTL_LINE / 2)] = 0ull;
            u64* word = &words[((p + 1) % 3) * (CTL_LINE / 2)];
            Emit e = {nullptr, word};
            u32 l = run_phase(s, mask, round == 0 ? unions : pairs, pending, 0ull, ~0ull, e);
            if (round == 0) union_links += l;
            else links += l;
            v = grid_barrier(word, &s_word);
            p++;
            st += __popc(mask);
        }
        round++;
        pending = v >> 32;
        if (pending == 0) {
            changed = false;
            break;
        }
    }
    finish_persistent(s, round, changed, p, union_links, links);
}

// rebuild_barrier_only crosses `phases` persistent-kernel barriers per
// round for `rounds` rounds and does nothing else: the round floor of the
// persistent kernel's synchronisation, measured next to it. ctl must be
// reset (rebuild_reset) before the launch.
extern "C" __global__ void __launch_bounds__(1024) rebuild_barrier_only(REBUILD_BARRIER_ONLY_PARAMS) {
    __shared__ u64 s_word;
    u64* words = (u64*)ctl;
    u64 n = rounds * phases;
    for (u64 p = 0; p < n; p++) {
        if (blockIdx.x == 0 && threadIdx.x == 0) words[((p + 2) % 3) * (CTL_LINE / 2)] = 0ull;
        grid_barrier(&words[((p + 1) % 3) * (CTL_LINE / 2)], &s_word);
    }
}

// pairs_before returns r * (2n - r - 1) / 2, the candidate pairs whose
// first row is below r, dividing the even factor first.
__device__ __forceinline__ u64 pairs_before(u64 r, u64 n) {
    u64 f = 2 * n - r - 1;
    return (r % 2 == 0) ? (r / 2) * f : r * (f / 2);
}

// rebuild_bucket_pairs is vyre's structural-equivalence kernel over one
// wave of one signature bucket (egraph.PlanSignatureBuckets): thread t
// decodes candidate pair first + t into its two rows (binary search on the
// pair prefix, as egraph.SignaturePairRows), compares signature, op,
// length and every original child (egraph.CollectStructuralEquivalences)
// and counts it exact, redundant (equal, one class) or rejected; an exact
// pair is emitted as (min class, max class) into the slab's output pairs
// behind its 8-byte count.
extern "C" __global__ void rebuild_bucket_pairs(REBUILD_BUCKET_PAIRS_PARAMS) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 lane = threadIdx.x & 31u;
    const u32* rec = (const u32*)(slab + bucket_words) + bucket * BUCKET_RECORD_WORDS;
    u64 n = rec[2], total = (u64)rec[3] | ((u64)rec[4] << 32);
    u64 ord = first + t;
    u32 exact = 0u, redundant = 0u, rejected = 0u, lo_class = 0u, hi_class = 0u;
    if (t < count && ord < total && n >= 2) {
        u64 lo = 0, hi = n - 2;
        while (lo < hi) {
            u64 mid = lo + (hi - lo + 1) / 2;
            if (pairs_before(mid, n) <= ord) lo = mid;
            else hi = mid - 1;
        }
        u64 j = lo + 1 + (ord - pairs_before(lo, n));
        const u32* rows = (const u32*)(slab + bucket_rows) + rec[1];
        u32 a = rows[lo], b = rows[j];
        const u32* sig = image + sec_sig;
        const u32* op = image + sec_op;
        const u32* off = image + sec_offset;
        const u32* len = image + sec_len;
        const u32* ch = image + sec_children;
        bool eq = sig[a] == sig[b] && op[a] == op[b] && len[a] == len[b] && (u64)off[a] + len[a] <= child_slots &&
                  (u64)off[b] + len[b] <= child_slots;
        for (u32 k = 0; eq && k < len[a]; k++) eq = ch[off[a] + k] == ch[off[b] + k];
        u32 ca = image[sec_class + a], cb = image[sec_class + b];
        if (!eq) {
            rejected = 1u;
        } else if (ca == cb) {
            redundant = 1u;
        } else {
            exact = 1u;
            lo_class = ca < cb ? ca : cb;
            hi_class = ca < cb ? cb : ca;
        }
    }
    u64 slot = warp_slot64((u64*)(slab + out_count), exact != 0u, lane);
    if (exact) ((u64*)(slab + out_pairs))[slot] = ((u64)hi_class << 32) | lo_class;
    u64* counters = (u64*)&ctl[CTL_BUCKET];
    u32 te = __reduce_add_sync(FULL_MASK, exact), tr = __reduce_add_sync(FULL_MASK, redundant),
        tj = __reduce_add_sync(FULL_MASK, rejected);
    if (lane == 0) {
        if (te) atomicAdd((unsigned long long*)&counters[BUCKET_EXACT / 2], (unsigned long long)te);
        if (tr) atomicAdd((unsigned long long*)&counters[BUCKET_REDUNDANT / 2], (unsigned long long)tr);
        if (tj) atomicAdd((unsigned long long*)&counters[BUCKET_REJECTED / 2], (unsigned long long)tj);
    }
}

// ---------------------------------------------------------------------------
// The incremental rounds (egraph.RebuildIncremental), one cooperative
// launch. Besides the state above:
//   use_start[classes+1], uses[rows+child_slots]  egraph.UsesIndex: the rows
//                      whose class or a child is class c;
//   link[3 * classes]  the link tree: head[c] (the last root linked under c),
//                      next[c] (the root linked under the same class before
//                      c), up[c] (the class c was linked under); pushed by the
//                      thread whose compare-and-swap linked c, never changed
//                      by path halving;
//   slot[rows]         the table slot a row owns, or INC_NIL;
//   stamp[classes + rows]  the round that last walked a class, or listed a
//                      row as dirty;
//   lists[classes + 2 * rows]  the round's losers, dirty rows, key-dirty rows;
//   inc_ctl            the counters (INC_* in rebuild_abi.h).
// A round is four phases, a grid barrier after each:
//   unite   apply the pending pairs; a link records its loser and pushes it
//           on the winner's list in the link tree;
//   mark    one thread per loser walks the loser's subtree of the link tree
//           (stackless: down through head, across through next, up through
//           up), claiming each class with an atomic exchange of its stamp so
//           that every class whose root changed is walked once, and lists
//           each use not yet listed (an exchange of the row's stamp);
//   canon   all threads take the same decision from the counts: round 0,
//           more than rows/2 dirty rows, or tombstones plus dirty rows over
//           table_slots/4 make a full pass (clear the table, canonicalise
//           every row and child); otherwise each dirty row is canonicalised
//           and, if a child changed, lists itself key-dirty and turns the
//           slot it owns into a tombstone;
//   group   insert the key-dirty rows (every row in a full pass) into the
//           table, stepping over tombstones; a row that claims a slot
//           records it, a row whose owner has another class emits the pair.
// The walk's order differs from the Go specification's depth-first walk,
// but the classes walked and the rows listed are the same sets.

struct Inc {
    const u32* use_start;
    const u32* uses;
    u32 *head, *next, *up;
    u32* slot;
    u32 *class_stamp, *row_stamp;
    u32 *losers, *dirty, *keyed;
    u32* c;
};

__device__ __forceinline__ Inc make_inc(const State& s, const u32* use_start, const u32* uses, u32* link, u32* slot,
                                        u32* stamp, u32* lists, u32* inc_ctl) {
    Inc m = {use_start, uses, link, link + s.classes, link + 2 * s.classes, slot, stamp, stamp + s.classes,
             lists, lists + s.classes, lists + s.classes + s.rows, inc_ctl};
    return m;
}

// inc_init empties the link tree and the stamps and zeroes the counters.
__device__ void inc_init(const State& s, const Inc& m) {
    u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (u64 c = id; c < s.classes; c += grid_threads()) {
        m.head[c] = INC_NIL;
        m.class_stamp[c] = 0u;
    }
    for (u64 i = id; i < s.rows; i += grid_threads()) {
        m.row_stamp[i] = 0u;
        m.slot[i] = INC_NIL;
    }
    for (u64 w = id; w < INC_CTL_WORDS; w += grid_threads()) m.c[w] = 0u;
}

// unite_link is unite that returns, on a link, the class linked (*lo the
// root it now points to, *hi the loser).
__device__ __forceinline__ bool unite_link(u32* parent, u32 a, u32 b, u32* lo, u32* hi) {
    for (;;) {
        a = find(parent, a);
        b = find(parent, b);
        if (a == b) return false;
        if (a > b) {
            u32 t = a;
            a = b;
            b = t;
        }
        u32 old = atomicCAS(&parent[b], b, a);
        if (old == b) {
            *lo = a;
            *hi = b;
            return true;
        }
        b = old;
    }
}

// inc_unite_pass applies pairs [0, pending) of src, pushes every loser on
// its winner's list and lists it, and returns this thread's links.
__device__ u32 inc_unite_pass(const State& s, const Inc& m, const u32* src, u64 pending) {
    u32 links = 0u;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < pending; k += grid_threads()) {
        u32 a = __ldcg(&src[2 * k]), b = __ldcg(&src[2 * k + 1]), w, l;
        if (!unite_link(s.parent, a, b, &w, &l)) continue;
        links++;
        m.up[l] = w;
        m.next[l] = atomicExch(&m.head[w], l);
        m.losers[atomicAdd(&m.c[INC_LOSERS], 1u)] = l;
    }
    return links;
}

// claim stamps x with st and reports whether it was not stamped st before.
__device__ __forceinline__ bool claim(u32* stamp, u32 x, u32 st) { return atomicExch(&stamp[x], st) != st; }

// mark_uses lists every use of class c not yet listed in round st.
__device__ void mark_uses(const Inc& m, u32 c, u32 st) {
    for (u32 k = __ldg(&m.use_start[c]); k < __ldg(&m.use_start[c + 1]); k++) {
        u32 i = __ldg(&m.uses[k]);
        if (claim(m.row_stamp, i, st)) m.dirty[atomicAdd(&m.c[INC_DIRTY], 1u)] = i;
    }
}

// first_claim returns the first class of the list from x that it claims,
// or INC_NIL.
__device__ __forceinline__ u32 first_claim(const Inc& m, u32 x, u32 st) {
    while (x != INC_NIL && !claim(m.class_stamp, x, st)) x = __ldcg(&m.next[x]);
    return x;
}

// walk marks the uses of every class of loser l's subtree that it claims.
__device__ void walk(const Inc& m, u32 l, u32 st) {
    if (!claim(m.class_stamp, l, st)) return;
    mark_uses(m, l, st);
    for (u32 c = l;;) {
        u32 d = first_claim(m, __ldcg(&m.head[c]), st);
        while (d == INC_NIL && c != l) {
            d = first_claim(m, __ldcg(&m.next[c]), st);
            if (d == INC_NIL) c = __ldcg(&m.up[c]);
        }
        if (d == INC_NIL) return;
        c = d;
        mark_uses(m, c, st);
    }
}

// mark_pass walks the subtree of every loser of round st.
__device__ void mark_pass(const Inc& m, u32 st) {
    u64 n = __ldcg(&m.c[INC_LOSERS]);
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += grid_threads()) walk(m, __ldcg(&m.losers[k]), st);
}

// canon_dirty_pass canonicalises the dirty rows; a row whose children
// changed lists itself key-dirty and retires the slot it owns.
__device__ void canon_dirty_pass(const State& s, const Inc& m, u64 nd) {
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < nd; k += grid_threads()) {
        u32 i = __ldcg(&m.dirty[k]);
        s.cls[i] = find(s.parent, __ldg(&s.row_class[i]));
        u32 lo = __ldg(&s.row_offset[i]), n = __ldg(&s.row_len[i]);
        bool changed = false;
        for (u32 j = lo; j < lo + n; j++) {
            u32 r = find(s.parent, __ldg(&s.children[j]));
            if (r != __ldcg(&s.canon[j])) {
                s.canon[j] = r;
                changed = true;
            }
        }
        if (!changed) continue;
        u32 p = __ldcg(&m.slot[i]);
        if (p != INC_NIL) {
            s.table[p] = (__ldcg(&s.table[p]) & 0xffffffff00000000ull) | INC_TOMBSTONE;
            m.slot[i] = INC_NIL;
            atomicAdd(&m.c[INC_TOMBS_NEW], 1u);
        }
        m.keyed[atomicAdd(&m.c[INC_KEYED], 1u)] = i;
    }
}

// canon_all_pass is a full pass's canonicalisation: the table cleared and
// every row's class and every child slot rewritten.
__device__ void canon_all_pass(const State& s) {
    clear_pass(s);
    canon_children_pass(s, clip(s.child_slots, 0ull, ~0ull));
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < s.rows; i += grid_threads())
        s.cls[i] = find(s.parent, __ldg(&s.row_class[i]));
}

// insert_live is insert that steps over tombstones and returns, when row
// i claims a slot, i and the slot in *pos.
__device__ u32 insert_live(const State& s, u32 i, u32 h, u32 op, u32 lo, u32 n, u32* at) {
    u64 mask = s.table_slots - 1ull;
    u64 key = ((u64)h << 32) | (u64)(i + 1u);
    u64 pos = (u64)h & mask;
    for (u64 probes = 0; probes < s.table_slots; probes++, pos = (pos + 1ull) & mask) {
        u64 v = load_relaxed64(&s.table[pos]);
        if (v == 0ull) {
            v = atomicCAS((unsigned long long*)&s.table[pos], 0ull, (unsigned long long)key);
            if (v == 0ull) {
                *at = (u32)pos;
                return i;
            }
        }
        if ((u32)v != INC_TOMBSTONE && (u32)(v >> 32) == h) {
            u32 j = (u32)v - 1u;
            __threadfence();  // acquire: the owner's words were published before its compare-and-swap
            if (same_row(s, j, op, lo, n)) return j;
        }
    }
    s.ctl[CTL_RESULT + RESULT_OVERFLOW] = 1u;
    return i;
}

// inc_group_pass inserts rows list[0, n) (rows 0..n-1 when list is null),
// records the slots claimed and emits the pairs.
__device__ void inc_group_pass(const State& s, const Inc& m, const u32* list, u64 n, Emit e) {
    u32 lane = threadIdx.x & 31u;
    Range r = {0ull, n};
    for (u64 base = warp_start(r); base < n; base += grid_threads()) {
        u64 k = base + lane;
        bool emit = false;
        u32 c = 0u, oc = 0u;
        if (k < n) {
            u32 i = list ? __ldcg(&list[k]) : (u32)k;
            u32 op = __ldg(&s.row_op[i]), lo = __ldg(&s.row_offset[i]), len = __ldg(&s.row_len[i]);
            u32 h = signature(s, op, lo, len, false), at = INC_NIL;
            c = __ldcg(&s.cls[i]);
            u32 owner = insert_live(s, i, h, op, lo, len, &at);
            m.slot[i] = at;  // INC_NIL unless claimed; a key-dirty row owns no slot before
            if (owner != i) {
                oc = __ldcg(&s.cls[owner]);
                emit = oc != c;
            }
        }
        __syncwarp();
        u32 slot = warp_slot(e, emit, lane);
        if (emit) {
            s.pairs[2 * (u64)slot] = oc;
            s.pairs[2 * (u64)slot + 1] = c;
        }
    }
}

// inc_full decides whether round `round` runs as a full pass; every thread
// decides the same from the counts of the finished mark phase.
__device__ __forceinline__ bool inc_full(const State& s, const Inc& m, u32 round, u64 nd) {
    return round == 0u || nd > s.rows / 2 || (u64)__ldcg(&m.c[INC_TOMBS]) + nd > s.table_slots / 4;
}

// inc_book is the bookkeeping thread 0 does in the group phase: the
// touches, the tombstones and the full passes counted, the losers and
// dirty rows of the round forgotten.
__device__ void inc_book(const State& s, const Inc& m, u32 round, bool full) {
    u64 nd = __ldcg(&m.c[INC_DIRTY]);
    atomicAdd((unsigned long long*)&m.c[INC_TOUCHES], (unsigned long long)(full ? s.rows : nd));
    m.c[INC_TOMBS] = full ? 0u : __ldcg(&m.c[INC_TOMBS]) + __ldcg(&m.c[INC_TOMBS_NEW]);
    m.c[INC_TOMBS_NEW] = 0u;
    if (full && round > 0u) m.c[INC_FULL_PASSES] = __ldcg(&m.c[INC_FULL_PASSES]) + 1u;
    m.c[INC_LOSERS] = 0u;
    m.c[INC_DIRTY] = 0u;
}

// inc_phase runs phase `phase` of round `round` (pending pairs to unite,
// e where the group phase counts the pairs it emits) and returns this
// thread's links. A phase keeps nothing in registers for the next: the
// persistent kernel puts a grid barrier between phases, the step kernel a
// launch.
__device__ u32 inc_phase(const State& s, const Inc& m, u32 round, u32 phase, u64 pending, Emit e) {
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (phase == 0u) {
        if (first) m.c[INC_KEYED] = 0u;
        return inc_unite_pass(s, m, round == 0u ? s.unions : s.pairs, pending);
    }
    if (phase == 1u) {
        if (round > 0u) mark_pass(m, round);
        return 0u;
    }
    if (phase == 2u) {
        u64 nd = __ldcg(&m.c[INC_DIRTY]);
        bool full = inc_full(s, m, round, nd);
        if (first) m.c[INC_FULL] = full ? 1u : 0u;
        if (full) canon_all_pass(s);
        else canon_dirty_pass(s, m, nd);
        return 0u;
    }
    bool full = __ldcg(&m.c[INC_FULL]) != 0u;
    inc_group_pass(s, m, full ? nullptr : m.keyed, full ? s.rows : (u64)__ldcg(&m.c[INC_KEYED]), e);
    if (first) inc_book(s, m, round, full);
    return 0u;
}

// inc_round runs one round's four phases from barrier phase *p and
// returns the pairs it emitted; links counts its unite phase's links.
__device__ u64 inc_round(const State& s, const Inc& m, u32 round, u32* p, u32* links, u64 pending, u64* s_word) {
    u64* words = (u64*)s.ctl;
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    u64 v = 0ull;
    for (u32 phase = 0; phase < INC_PHASES; phase++) {
        if (first) words[((*p + 2) % 3) * (CTL_LINE / 2)] = 0ull;
        u64* word = &words[((*p + 1) % 3) * (CTL_LINE / 2)];
        *links += inc_phase(s, m, round, phase, pending, Emit{nullptr, word});
        v = grid_barrier(word, s_word);
        (*p)++;
    }
    return v >> 32;
}

// rebuild_incremental runs the incremental rounds of
// egraph.RebuildIncremental in one cooperative launch: the state is
// initialised (one barrier), then rounds of four phases run until one
// emits nothing or max_rounds ran, then the compaction. The results are
// those of rebuild_persistent (RESULT_BARRIERS counts 4 per round and the
// first); inc_ctl holds the touches and full passes. A grid of more than
// ARRIVE_MASK blocks sets the misuse result and does nothing.
extern "C" __global__ void __launch_bounds__(1024) rebuild_incremental(REBUILD_INCREMENTAL_PARAMS) {
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (gridDim.x > ARRIVE_MASK) {
        if (first) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_GRID;
        return;
    }
    __shared__ u64 s_word;
    State s = make_state(image, unions, parent, cls, canon, table, pairs, ctl, out, sec_class, sec_op, sec_offset,
                         sec_len, sec_children, sec_groups, rows, child_slots, classes, union_pairs, table_slots);
    Inc m = make_inc(s, use_start, uses, link, slot, stamp, lists, inc_ctl);
    u64* words = (u64*)ctl;
    if (first) words[2 * (CTL_LINE / 2)] = 0ull;
    inc_init(s, m);
    grid_barrier(&words[1 * (CTL_LINE / 2)], &s_word);
    u32 p = 1u, round = 0u, union_links = 0u, links = 0u;
    u64 pending = union_pairs;
    bool changed = true;
    while (round < max_rounds) {
        pending = inc_round(s, m, round, &p, round == 0u ? &union_links : &links, pending, &s_word);
        round++;
        if (pending == 0) {
            changed = false;
            break;
        }
    }
    finish_persistent(s, round, changed, p, union_links, links);
}

// rebuild_incremental_step runs phase `phase` of incremental round `round`
// (the host loop and the device loop launch the phases in order, each
// round's after the last's), or, with INC_PHASE_INIT, initialises the
// incremental state before round 0. The pending pairs, the done flag and
// the rounds follow rebuild_step: round r reads its pending count from the
// ring's slot r%3, its unite phase clears slot (r+1)%3 and its group phase
// counts into it; once a launch finds that the previous round emitted
// nothing, it marks the rebuild done and every later launch returns at
// once. A phase past INC_PHASE_INIT sets the misuse result.
extern "C" __global__ void __launch_bounds__(1024) rebuild_incremental_step(REBUILD_INCREMENTAL_STEP_PARAMS) {
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (phase > INC_PHASE_INIT) {
        if (first) ctl[CTL_RESULT + RESULT_MISUSE] = MISUSE_PHASES;
        return;
    }
    State s = make_state(image, unions, parent, cls, canon, table, pairs, ctl, out, sec_class, sec_op, sec_offset,
                         sec_len, sec_children, sec_groups, rows, child_slots, classes, union_pairs, table_slots);
    Inc m = make_inc(s, use_start, uses, link, slot, stamp, lists, inc_ctl);
    if (phase == INC_PHASE_INIT) {
        inc_init(s, m);
        return;
    }
    if (__ldcg(&ctl[CTL_RESULT + RESULT_DONE]) != 0u) return;
    u64 pending = round == 0 ? union_pairs : (u64)__ldcg(&ctl[CTL_COUNT(round % 3)]);
    if (round > 0 && pending == 0) {
        if (first) {
            ctl[CTL_RESULT + RESULT_DONE] = 1u;
            ctl[CTL_RESULT + RESULT_ROUNDS] = (u32)round;
        }
        return;
    }
    if (phase == 0 && first) ctl[CTL_COUNT((round + 1) % 3)] = 0u;
    Emit e = {&ctl[CTL_COUNT((round + 1) % 3)], nullptr};
    u32 links = inc_phase(s, m, (u32)round, (u32)phase, pending, e);
    if (phase == 0) add_warp(&ctl[CTL_RESULT + (round == 0 ? RESULT_UNION_MERGES : RESULT_CONGRUENCE_MERGES)], links);
}
