// Kernels of gpuplan's partitioned BFS. One part of the graph lives on each
// device: the CSR rows of its vertex range (targets are global vertex
// ids), the levels of its vertices and bitmaps in the plan's layout, where
// part e's vertices take slice e of s 64-bit words in every buffer that
// spans all parts (next, xbuf). Part boundaries are multiples of 64, so
// local vertex j of part e is bit j%64 of word e*s + j/64.
//
// Every kernel runs a grid-stride loop over its work and may be launched
// with any grid. The host runs them level by level:
//   top-down:  expand, count, [all-gather counts], compact, [all-to-all],
//              apply
//   bottom-up: [all-gather frontier slices into xbuf], bottom_up
// A step that expands depth adds its found vertices and their degrees into
// the control slot depth%2 and zeroes slot (depth+1)%2 for the next step.
#include "partbfs_abi.h"
#include "gpuplan_device.h"

// The part bounds, staged in shared memory by every kernel that maps a
// global vertex to its part.
struct Bounds {
    u32 b[MAX_PARTS + 1];
};

__device__ __forceinline__ void load_bounds(Bounds *sb, const u32 *__restrict__ bounds, u64 parts) {
    for (u32 i = threadIdx.x; i <= parts; i += blockDim.x) {
        sb->b[i] = bounds[i];
    }
    __syncthreads();
}

// owner returns the part holding global vertex v: the first k in 1..parts
// with b[k] > v, minus one (empty parts are skipped).
__device__ __forceinline__ u32 owner(const Bounds *sb, u32 parts, u32 v) {
    u32 lo = 1, hi = parts;
    while (lo < hi) {
        u32 mid = (lo + hi) >> 1;
        if (sb->b[mid] > v) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo - 1;
}

// bad_shape checks the launch's part description; the first thread records
// the misuse. Every thread takes the same branch.
__device__ __forceinline__ bool bad_shape(u64 *ctl, u64 n, u64 s, u64 parts, u64 self) {
    if (parts == 0 || parts > MAX_PARTS || self >= parts || n > 64ull * s) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            ctl[CTL_MISUSE] = MISUSE_SHAPE;
        }
        return true;
    }
    return false;
}

__device__ __forceinline__ u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }

__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_down_sync(FULL_MASK, v, off);
    }
    return v;
}

// add_found adds every thread's found vertices and edges into slot
// depth%2; the first thread zeroes slot (depth+1)%2 (no thread of this
// step adds into it).
__device__ __forceinline__ void add_found(u64 *ctl, u64 depth, u64 found, u64 edges) {
    found = warp_sum(found);
    edges = warp_sum(edges);
    if ((threadIdx.x & 31) == 0 && (found | edges) != 0) {
        atomicAdd(&ctl[CTL_FOUND + depth % 2], found);
        atomicAdd(&ctl[CTL_EDGES + depth % 2], edges);
    }
    if (global_thread() == 0) {
        ctl[CTL_FOUND + (depth + 1) % 2] = 0;
        ctl[CTL_EDGES + (depth + 1) % 2] = 0;
    }
}

extern "C" __global__ void pbfs_init(PBFS_INIT_PARAMS) {
    if (parts == 0 || parts > MAX_PARTS || n > 64ull * s) {
        if (global_thread() == 0) {
            ctl[CTL_MISUSE] = MISUSE_SHAPE;
        }
        return;
    }
    const u64 t = global_thread(), stride = grid_threads();
    for (u64 i = t; i < n; i += stride) {
        level[i] = i == root ? 0 : -1;
    }
    for (u64 w = t; w < s; w += stride) {
        front0[w] = (root < n && w == root / 64) ? 1ull << (root % 64) : 0ull;
        front1[w] = 0;
    }
    for (u64 w = t; w < parts * s; w += stride) {
        next[w] = 0;
    }
    for (u64 i = t; i < parts * (parts + 1); i += stride) {
        counts[i] = 0;
    }
    for (u64 i = t; i < CTL_WORDS; i += stride) {
        ctl[i] = 0;
    }
}

// pbfs_expand: one warp per word of the part's frontier; the lanes share
// each frontier vertex's edges. A target's bit is set in its part's slice
// of next, unless it is one of this part's vertices already visited.
extern "C" __global__ void pbfs_expand(PBFS_EXPAND_PARAMS) {
    __shared__ Bounds sb;
    if (bad_shape(ctl, n, s, parts, self)) {
        return;
    }
    load_bounds(&sb, bounds, parts);
    const u32 lane = threadIdx.x & 31;
    const u64 warps = grid_threads() / 32, words = (n + 63) / 64;
    for (u64 w = global_thread() / 32; w < words; w += warps) {
        u64 bits = front[w];
        while (bits != 0) {
            const u32 u = (u32)(w * 64 + __ffsll((long long)bits) - 1);
            bits &= bits - 1;
            const u64 end = offsets[u + 1];
            for (u64 k = (u64)offsets[u] + lane; k < end; k += 32) {
                const u32 v = (u32)targets[k];
                const u32 e = owner(&sb, (u32)parts, v);
                const u32 j = v - sb.b[e];
                if (e == self && level[j] != -1) {
                    continue;
                }
                u64 *word = next + (u64)e * s + (j >> 6);
                const u64 bit = 1ull << (j & 63);
                if ((*(volatile u64 *)word & bit) == 0) {
                    atomicOr(word, bit);
                }
            }
        }
    }
}

// pbfs_count adds the set bits of every other part's slice of next into
// counts[e] (the part's row of discovery counts).
extern "C" __global__ void pbfs_count(PBFS_COUNT_PARAMS) {
    __shared__ Bounds sb;
    if (bad_shape(ctl, 0, s, parts, self)) {
        return;
    }
    load_bounds(&sb, bounds, parts);
    for (u32 e = 0; e < parts; e++) {
        if (e == self) {
            continue;
        }
        const u64 words = ((u64)sb.b[e + 1] - sb.b[e] + 63) / 64;
        u64 c = 0;
        for (u64 w = global_thread(); w < words; w += grid_threads()) {
            c += __popcll(next[(u64)e * s + w]);
        }
        c = warp_sum(c);
        if ((threadIdx.x & 31) == 0 && c != 0) {
            atomicAdd(&counts[e], c);
        }
    }
}

// pbfs_compact writes, for every part e in queue_mask, the local indices of
// the bits of slice e of next into the queue at outbox[e * 2s] (2s 4-byte
// slots, as many as the slice's bytes allow), in any order.
extern "C" __global__ void pbfs_compact(PBFS_COMPACT_PARAMS) {
    __shared__ Bounds sb;
    if (bad_shape(ctl, 0, s, parts, self)) {
        return;
    }
    load_bounds(&sb, bounds, parts);
    for (u32 e = 0; e < parts; e++) {
        if (e == self || ((queue_mask >> e) & 1) == 0) {
            continue;
        }
        const u64 words = ((u64)sb.b[e + 1] - sb.b[e] + 63) / 64;
        u32 *queue = outbox + (u64)e * 2 * s;
        for (u64 w = global_thread(); w < words; w += grid_threads()) {
            u64 bits = next[(u64)e * s + w];
            if (bits == 0) {
                continue;
            }
            const u64 c = __popcll(bits);
            u64 pos = atomicAdd(&ctl[CTL_QPOS + e], c);
            if (pos + c > 2 * s) {
                ctl[CTL_OVERFLOW] = 1;
                continue;
            }
            while (bits != 0) {
                queue[pos++] = (u32)(w * 64 + __ffsll((long long)bits) - 1);
                bits &= bits - 1;
            }
        }
    }
}

// claim gives local vertex j level depth+1 if it has none, and puts it in
// the next frontier.
__device__ __forceinline__ void claim(int *level, u64 *front_next, const u32 *__restrict__ offsets, u32 j, u64 depth, u64 *found,
                                      u64 *edges) {
    if (level[j] == -1 && atomicCAS(&level[j], -1, (int)(depth + 1)) == -1) {
        atomicOr(&front_next[j >> 6], 1ull << (j & 63));
        *found += 1;
        *edges += offsets[j + 1] - offsets[j];
    }
}

// pbfs_apply claims what reached the part in a top-down level: its own
// slice of next, the bitmap slices of the parts in bitmap_mask and the
// queues of the parts in queue_mask (xbuf holds the sender's data at slot
// sender*s words; a queue's length is the gathered count). It then clears
// next, the part's old frontier, its row of counts and its queue fills.
extern "C" __global__ void pbfs_apply(PBFS_APPLY_PARAMS) {
    if (bad_shape(ctl, n, s, parts, self)) {
        return;
    }
    const u64 t = global_thread(), stride = grid_threads();
    u64 found = 0, edges = 0;
    for (u64 w = t; w < (n + 63) / 64; w += stride) {
        u64 bits = next[self * s + w];
        next[self * s + w] = 0;
        for (u32 src = 0; src < parts; src++) {
            if ((bitmap_mask >> src) & 1) {
                bits |= xbuf[(u64)src * s + w];
            }
        }
        while (bits != 0) {
            claim(level, front_next, offsets, (u32)(w * 64 + __ffsll((long long)bits) - 1), depth, &found, &edges);
            bits &= bits - 1;
        }
    }
    for (u32 src = 0; src < parts; src++) {
        if (src == self || ((queue_mask >> src) & 1) == 0) {
            continue;
        }
        const u64 count = counts[parts + (u64)src * parts + self];
        const u32 *queue = (const u32 *)(xbuf + (u64)src * s);
        for (u64 k = t; k < count; k += stride) {
            const u32 j = queue[k];
            if (j >= n) {
                ctl[CTL_MISUSE] = MISUSE_VERTEX;
                continue;
            }
            claim(level, front_next, offsets, j, depth, &found, &edges);
        }
    }
    for (u64 w = t; w < parts * s; w += stride) {
        if (w / s != self) {
            next[w] = 0;
        }
    }
    for (u64 w = t; w < s; w += stride) {
        front[w] = 0;
    }
    for (u64 i = t; i < parts; i += stride) {
        counts[i] = 0;
        ctl[CTL_QPOS + i] = 0;
    }
    add_found(ctl, depth, found, edges);
}

// pbfs_bottom_up: every unvisited vertex of the part looks for a neighbour
// in the gathered frontier (xbuf, every part's slice) and stops at the
// first; a warp takes 32 consecutive vertices and sets their frontier bits
// with one atomic. It clears the part's old frontier.
extern "C" __global__ void pbfs_bottom_up(PBFS_BOTTOM_UP_PARAMS) {
    __shared__ Bounds sb;
    if (bad_shape(ctl, n, s, parts, self)) {
        return;
    }
    load_bounds(&sb, bounds, parts);
    const u32 lane = threadIdx.x & 31;
    const u64 warps = grid_threads() / 32;
    u64 found = 0, edges = 0;
    for (u64 base = global_thread() / 32 * 32; base < n; base += warps * 32) {
        const u64 i = base + lane;
        bool hit = false;
        if (i < n && level[i] == -1) {
            const u32 end = offsets[i + 1];
            for (u32 k = offsets[i]; k < end; k++) {
                const u32 v = (u32)targets[k];
                const u32 e = owner(&sb, (u32)parts, v);
                const u32 j = v - sb.b[e];
                if ((xbuf[(u64)e * s + (j >> 6)] >> (j & 63)) & 1) {
                    level[i] = (int)(depth + 1);
                    hit = true;
                    found += 1;
                    edges += end - offsets[i];
                    break;
                }
            }
        }
        const u32 ballot = __ballot_sync(FULL_MASK, hit);
        if (lane == 0 && ballot != 0) {
            atomicOr(&front_next[base >> 6], (u64)ballot << (base & 63));
        }
    }
    for (u64 w = global_thread(); w < s; w += grid_threads()) {
        front[w] = 0;
    }
    add_found(ctl, depth, found, edges);
}

extern "C" __global__ void pbfs_copy(PBFS_COPY_PARAMS) {
    for (u64 i = global_thread(); i < words; i += grid_threads()) {
        dst[i] = src[i];
    }
}
