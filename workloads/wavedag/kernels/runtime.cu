// gpuplan: relocatable device code
//
// The persistent schedulers of `gpuplan run`. They are linked at run time
// with the user's wave functions and with gp_dispatch, a switch over
// function ids that gpuplan generates as PTX for each workload:
//
//   gp_sched_waits     one launch; each block claims tasks (a unit's tile)
//                      from a queue in plan order and starts each as soon as
//                      the producer tiles it reads are done, with no grid
//                      barrier (the per-producer wait plan, tile by tile);
//   gp_sched_barriers  one cooperative launch that runs the barrier plan's
//                      groups, with a grid barrier between groups.
//
// A block runs one task at a time with threads [0, wave threads); the
// others wait at the block barrier. Thread 0 copies the current wave's
// table entry into shared memory once, through the read-only cache, so the
// waves' tables are not read again after each acquire. Producers publish a
// tile's completion after a block barrier and a fence (one fence for all
// the waves of a fused unit, which publish together at its end): a per-wave counter of completed tiles
// (cumulative over runs: a run's target is epoch x tiles) and, for waves
// whose consumers read single tiles, a per-tile flag holding the epoch.
// Claims run in plan order, producers first, so the lowest claimed and
// unfinished task never waits: the queue cannot deadlock at any grid size.
// A wait that exceeds the watchdog's budget records what it waited for,
// sets the abort flag, and every block then records its own wait and
// leaves.
#include "gpuplan_wave.h"
#include "wavedag_abi.h"

extern "C" __device__ void gp_dispatch(unsigned int fn, unsigned int tile, unsigned int tiles, const unsigned long long *args);

// gp_state is what gp_wait and the other ABI functions need of the block's
// current task; thread 0 writes it between block barriers.
struct gp_state {
    const unsigned int *waves;
    const unsigned int *waits;
    unsigned long long *counters;
    unsigned int *flags;
    unsigned long long *ctl;
    unsigned long long *diag;
    unsigned long long epoch;
    unsigned long long watchdog_ns;
    unsigned long long waits_done;
    unsigned int meta[WAVE_WORDS];  // the current wave's table entry
    unsigned int wave;
    unsigned int tile;
    unsigned int threads;
    unsigned int waited;
    unsigned int aborted;
    unsigned int claimed;
};

__shared__ gp_state gp_st;
extern __shared__ __align__(16) unsigned char gp_dyn_smem[];

static __device__ __forceinline__ unsigned long long ld_acquire64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned int ld_relaxed32(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned long long ld_relaxed64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// ld_table reads a word of the plan image's tables, which no launch
// writes, through the read-only cache.
static __device__ __forceinline__ unsigned int ld_table(const unsigned int *p) { return __ldg(p); }

static __device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

static __device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// wave_sync is the barrier over the current wave's threads (named barrier
// 1; the block barrier 0 is the scheduler's).
static __device__ __forceinline__ void wave_sync(unsigned int threads) {
    asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
}

// record writes one watchdog record and raises the abort flag.
static __device__ void record(unsigned long long kind, unsigned long long producer, unsigned long long ptile,
                              unsigned long long observed, unsigned long long target, unsigned long long waited) {
    unsigned long long i = atomicAdd(&gp_st.ctl[CTL_DIAG_N], 1ull);
    if (i < DIAG_MAX) {
        unsigned long long *d = gp_st.diag + i * DIAG_WORDS;
        d[DIAG_WAVE] = gp_st.wave;
        d[DIAG_TILE] = gp_st.tile;
        d[DIAG_PRODUCER] = producer;
        d[DIAG_PTILE] = ptile;
        d[DIAG_OBSERVED] = observed;
        d[DIAG_TARGET] = target;
        d[DIAG_WAITED_NS] = waited;
        d[DIAG_KIND] = kind;
    }
    atomicExch(&gp_st.ctl[CTL_ABORT], 1ull);
    gp_st.aborted = 1;
}

// overdue checks the abort flag and the watchdog's clock every
// POLLS_PER_CHECK polls; it records the wait and returns true once the
// block must give up.
static __device__ bool overdue(unsigned int polls, unsigned long long t0, unsigned long long kind, unsigned long long producer,
                               unsigned long long ptile, unsigned long long observed, unsigned long long target) {
    if (polls % POLLS_PER_CHECK != 0) {
        return false;
    }
    unsigned long long waited = now_ns() - t0;
    if (ld_relaxed64(&gp_st.ctl[CTL_ABORT]) != 0 || waited > gp_st.watchdog_ns) {
        record(kind, producer, ptile, observed, target, waited);
        return true;
    }
    return false;
}

// wait_producers waits, on thread 0, until every producer tile the current
// tile reads is done; false when the watchdog gave up. It polls with
// relaxed loads and acquires once, with a fence, when all are done.
static __device__ bool wait_producers() {
    unsigned int first = gp_st.meta[WAVE_WAIT_FIRST], count = gp_st.meta[WAVE_WAIT_COUNT];
    unsigned long long t0 = 0;
    for (unsigned int i = 0; i < count; i++) {
        const unsigned int *wt = gp_st.waits + (first + i) * WAIT_WORDS;
        unsigned int p = ld_table(wt + WAIT_PRODUCER), kind = ld_table(wt + WAIT_KIND);
        const unsigned int *pw = gp_st.waves + p * WAVE_WORDS;
        unsigned int ptiles = ld_table(pw + WAVE_TILES);
        if (kind == MAP_ALL) {
            gp_st.waits_done++;
            unsigned long long target = gp_st.epoch * ptiles;
            const unsigned long long *c = gp_st.counters + p;
            unsigned long long v;
            for (unsigned int polls = 1; (v = ld_relaxed64(c)) < target; polls++) {
                if (t0 == 0) t0 = now_ns();
                if (overdue(polls, t0, DIAG_COUNTER, p, ~0ull, v, target)) return false;
            }
            continue;
        }
        unsigned int lo = gp_st.tile, hi = gp_st.tile + 1;
        if (kind == MAP_BLOCK) {
            unsigned long long b = ld_table(wt + WAIT_BLOCK);
            unsigned long long l = min((unsigned long long)gp_st.tile * b, (unsigned long long)ptiles);
            lo = (unsigned int)l;
            hi = (unsigned int)min(l + b, (unsigned long long)ptiles);
        }
        const unsigned int *f = gp_st.flags + ld_table(pw + WAVE_FLAG_FIRST);
        unsigned int e = (unsigned int)gp_st.epoch;
        for (unsigned int q = lo; q < hi; q++) {
            gp_st.waits_done++;
            unsigned int v;
            for (unsigned int polls = 1; (int)((v = ld_relaxed32(f + q)) - e) < 0; polls++) {
                if (t0 == 0) t0 = now_ns();
                if (overdue(polls, t0, DIAG_FLAG, p, q, v, e)) return false;
            }
        }
    }
    if (count > 0) {
        fence_acq_rel();
    }
    return true;
}

// gp_wait: the wave's threads wait for the current tile's producers
// (prologue waves; elsewhere the scheduler has waited and it returns).
extern "C" __device__ void gp_wait(void) {
    if (gp_st.waited) {
        return;
    }
    if (threadIdx.x == 0) {
        wait_producers();
    }
    wave_sync(gp_st.threads);
    if (threadIdx.x == 0) {
        gp_st.waited = 1;
    }
}

extern "C" __device__ void gp_sync(void) { wave_sync(gp_st.threads); }

extern "C" __device__ void *gp_shared(void) { return gp_dyn_smem; }

extern "C" __device__ unsigned int gp_threads(void) { return gp_st.threads; }

// init copies the launch's tables into the block's state.
static __device__ void init(GP_SCHED_WAITS_PARAMS) {
    if (threadIdx.x == 0) {
        gp_st.waves = waves;
        gp_st.waits = waits;
        gp_st.counters = counters;
        gp_st.flags = flags;
        gp_st.ctl = ctl;
        gp_st.diag = diag;
        gp_st.epoch = epoch;
        gp_st.watchdog_ns = watchdog_ns;
        gp_st.waits_done = 0;
        gp_st.aborted = 0;
        gp_st.claimed = 0;
    }
}

// begin sets the block's current wave and tile and copies the wave's table
// entry (thread 0).
static __device__ __forceinline__ void begin(unsigned int wave, unsigned int tile, unsigned int waited) {
    const uint4 *w = reinterpret_cast<const uint4 *>(gp_st.waves + wave * WAVE_WORDS);
    uint4 a = __ldg(w), b = __ldg(w + 1);
    gp_st.meta[0] = a.x, gp_st.meta[1] = a.y, gp_st.meta[2] = a.z, gp_st.meta[3] = a.w;
    gp_st.meta[4] = b.x, gp_st.meta[5] = b.y, gp_st.meta[6] = b.z, gp_st.meta[7] = b.w;
    gp_st.wave = wave;
    gp_st.tile = tile;
    gp_st.threads = a.z;
    gp_st.waited = waited;
}

// run calls the current wave's function on its threads, then, behind a
// block barrier, makes sure a prologue wave waited before its completion
// is published.
static __device__ void run(const unsigned long long *args) {
    if (threadIdx.x < gp_st.threads && !gp_st.aborted) {
        gp_dispatch(gp_st.meta[WAVE_FN], gp_st.tile, gp_st.meta[WAVE_TILES], args + gp_st.meta[WAVE_ARG_FIRST]);
    }
    __syncthreads();
    if (threadIdx.x == 0 && !gp_st.waited && !gp_st.aborted) {
        atomicAdd(&gp_st.ctl[CTL_UNWAITED], 1ull);
        if (!wait_producers()) {
            gp_st.aborted = 1;
        }
    }
}

// publish_tile marks tile of wave done, given the wave's flag bits and
// first flag (thread 0, after the fence that releases its writes).
static __device__ __forceinline__ void publish_tile(unsigned int wave, unsigned int tile, unsigned int bits, unsigned int flag_first) {
    if (bits & WAVE_PUBLISHES) {
        unsigned int *f = gp_st.flags + flag_first + tile;
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(f), "r"((unsigned int)gp_st.epoch) : "memory");
    }
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;" ::"l"(gp_st.counters + wave) : "memory");
}

// publish marks the current tile done (thread 0, after a block barrier):
// behind a fence in the waits arm, without one in the barriers arm, whose
// grid barrier orders the waves and whose counters are read by the next
// launch only.
static __device__ __forceinline__ void publish(bool fence) {
    if (fence) {
        fence_acq_rel();
    }
    publish_tile(gp_st.wave, gp_st.tile, gp_st.meta[WAVE_FLAG_BITS], gp_st.meta[WAVE_FLAG_FIRST]);
}

// publish_unit marks the current tile of every wave of a fused unit done,
// behind one fence: the last wave (in the block's state) first, then the
// others (thread 0, after a block barrier).
static __device__ void publish_unit(const unsigned int *order, unsigned int first, unsigned int count) {
    publish(true);
    for (unsigned int j = 0; j + 1 < count; j++) {
        unsigned int wave = ld_table(order + first + j);
        const unsigned int *w = gp_st.waves + wave * WAVE_WORDS;
        publish_tile(wave, gp_st.tile, ld_table(w + WAVE_FLAG_BITS), ld_table(w + WAVE_FLAG_FIRST));
    }
}

// finish adds the block's statistics and, in the last block to finish,
// resets the queue for the next run.
static __device__ void finish(unsigned long long tasks) {
    if (threadIdx.x != 0) {
        return;
    }
    unsigned long long *ctl = gp_st.ctl;
    atomicAdd(&ctl[CTL_WAITS], gp_st.waits_done);
    atomicAdd(&ctl[CTL_TASKS], tasks);
    fence_acq_rel();
    if (atomicAdd(&ctl[CTL_DONE], 1ull) == gridDim.x - 1) {
        ctl[CTL_HEAD] = 0;
        ctl[CTL_DONE] = 0;
        fence_acq_rel();
    }
}

// claim takes the next task of the queue, or ntasks once it is empty or
// the run aborted.
static __device__ __forceinline__ unsigned long long claim(unsigned long long ntasks) {
    if (gp_st.aborted || ld_relaxed64(&gp_st.ctl[CTL_ABORT]) != 0) {
        return ntasks;
    }
    unsigned long long t = atomicAdd(&gp_st.ctl[CTL_HEAD], 1ull);
    return t < ntasks ? t : ntasks;
}

extern "C" __global__ void gp_sched_waits(GP_SCHED_WAITS_PARAMS) {
    init(ctl, waves, waits, units, order, tasks, groups, counters, flags, args, diag, nwaves, ntasks, ngroups, epoch, watchdog_ns);
    __shared__ unsigned long long s_task;
    unsigned long long next = 0, done = 0;
    if (threadIdx.x == 0) {
        next = claim(ntasks);
    }
    for (;;) {
        if (threadIdx.x == 0) {
            // Claim one task ahead: the claim's latency hides behind this
            // task's wait and work.
            s_task = next;
            if (next < ntasks) {
                next = claim(ntasks);
            }
        }
        __syncthreads();
        unsigned long long task = s_task;
        if (task >= ntasks) {
            break;
        }
        unsigned int unit = ld_table(tasks + task * TASK_WORDS), tile = ld_table(tasks + task * TASK_WORDS + 1);
        const unsigned int *u = units + unit * UNIT_WORDS;
        unsigned int first = ld_table(u + UNIT_FIRST), count = ld_table(u + UNIT_COUNT);
        for (unsigned int j = 0; j < count; j++) {
            if (threadIdx.x == 0) {
                // Only a unit's first wave waits: the others read the tile
                // this block just ran.
                begin(ld_table(order + first + j), tile, j > 0);
                if (j == 0 && !(gp_st.meta[WAVE_FLAG_BITS] & WAVE_PROLOGUE)) {
                    if (!wait_producers()) {
                        gp_st.aborted = 1;
                    }
                    gp_st.waited = 1;
                }
            }
            __syncthreads();
            run(args);
            if (j + 1 < count) {
                // The next wave's begin rewrites the state run just read.
                __syncthreads();
            }
        }
        if (threadIdx.x == 0 && !gp_st.aborted) {
            publish_unit(order, first, count);
        }
        __syncthreads();
        done++;
        if (gp_st.aborted) {
            // Every block leaves once the watchdog gave up; a block still
            // claiming finds the abort flag.
            if (threadIdx.x == 0) {
                next = ntasks;
            }
        }
    }
    finish(done);
}

// grid_barrier waits until every block of the cooperative grid arrives
// (thread 0 on behalf of its block); false when the watchdog gave up.
static __device__ bool grid_barrier(unsigned int group) {
    __syncthreads();
    bool ok = true;
    if (threadIdx.x == 0) {
        unsigned long long *ctl = gp_st.ctl;
        unsigned long long gen = ld_acquire64(&ctl[CTL_BAR_GEN]);
        fence_acq_rel();
        if (atomicAdd(&ctl[CTL_BAR_COUNT], 1ull) == gridDim.x - 1) {
            ctl[CTL_BAR_COUNT] = 0;
            fence_acq_rel();
            atomicAdd(&ctl[CTL_BAR_GEN], 1ull);
            atomicAdd(&ctl[CTL_BARRIERS], 1ull);
        } else {
            unsigned long long t0 = now_ns();
            for (unsigned int polls = 1; ld_relaxed64(&ctl[CTL_BAR_GEN]) == gen; polls++) {
                if (overdue(polls, t0, DIAG_BARRIER, ~0ull, group, ld_relaxed64(&ctl[CTL_BAR_COUNT]), gridDim.x)) {
                    ok = false;
                    break;
                }
            }
        }
        fence_acq_rel();
    }
    __syncthreads();
    return ok && !gp_st.aborted;
}

extern "C" __global__ void gp_sched_barriers(GP_SCHED_BARRIERS_PARAMS) {
    init(ctl, waves, waits, units, order, tasks, groups, counters, flags, args, diag, nwaves, ntasks, ngroups, epoch, watchdog_ns);
    unsigned long long done = 0;
    for (unsigned int g = 0; g < ngroups; g++) {
        for (unsigned int t = groups[g] + blockIdx.x; t < groups[g + 1]; t += gridDim.x) {
            if (threadIdx.x == 0) {
                begin(ld_table(tasks + t * TASK_WORDS), ld_table(tasks + t * TASK_WORDS + 1), 1);
            }
            __syncthreads();
            run(args);
            if (threadIdx.x == 0) {
                publish(false);
            }
            __syncthreads();
            done++;
        }
        if (g + 1 < ngroups && !grid_barrier(g)) {
            break;
        }
    }
    finish(done);
}

// gp_copy_u4 copies n16 16-byte words from src to dst (grid-stride): the
// device's copy-bandwidth ceiling, measured beside the arms so that a
// bandwidth-bound workload's bytes per second have their roof.
extern "C" __global__ void gp_copy_u4(GP_COPY_U4_PARAMS) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
        dst[i] = __ldcs(&src[i]);
    }
}
