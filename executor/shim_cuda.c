//go:build cuda

// The small part of the CUDA driver API that gorgonia.org/cu v0.9.6 does not
// wrap: cooperative launch, pinned and registered host memory, function
// attributes, device attributes above enum 91, and occupancy with flags;
// and NVTX ranges, loaded at run time.
//
// It also interposes cuInit. gorgonia.org/cu calls cuInit in its package
// init and exits the process when that fails (no GPU, no device node).
// Defining cuInit here makes the executable's definition win over
// libcuda's: it calls the real cuInit through dlsym(RTLD_NEXT), records the
// result for gp_init_status, and reports success to the caller, so a
// CUDA-enabled gpuplan starts on a machine without a GPU and the executor
// reports "no device" as an error instead. Open and DeviceCount check
// gp_init_status first (see open_cuda.go).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "shim_cuda.h"
#include "_cgo_export.h"

static int gp_init_done = 0;
static int gp_init_result = -1;

CUresult CUDAAPI cuInit(unsigned int flags) {
    typedef CUresult (*init_fn)(unsigned int);
    // The driver reads CUDA_CACHE_* when it initialises: apply vyre's JIT
    // cache rules (jitcache.go) first.
    gpuplanJITCacheInit();
    init_fn real = (init_fn)dlsym(RTLD_NEXT, "cuInit");
    if (real == NULL) {
        gp_init_result = -1;
    } else {
        gp_init_result = (int)real(flags);
    }
    gp_init_done = 1;
    return CUDA_SUCCESS;
}

int gp_init_status(void) {
    if (!gp_init_done) {
        cuInit(0);
    }
    return gp_init_result;
}

int gp_dev_attr(int attr, int dev, int *out) {
    return (int)cuDeviceGetAttribute(out, (CUdevice_attribute)attr, (CUdevice)dev);
}

int gp_mem_get_info(unsigned long long *free_b, unsigned long long *total_b) {
    size_t f = 0, t = 0;
    CUresult r = cuMemGetInfo(&f, &t);
    *free_b = f;
    *total_b = t;
    return (int)r;
}

int gp_host_alloc(void **p, unsigned long long n) {
    return (int)cuMemHostAlloc(p, (size_t)n, 0);
}

int gp_host_free(void *p) { return (int)cuMemFreeHost(p); }

// Registered memory is portable (CU_MEMHOSTREGISTER_PORTABLE), as vyre
// registers it.
int gp_host_register(void *p, unsigned long long n) {
    return (int)cuMemHostRegister(p, (size_t)n, CU_MEMHOSTREGISTER_PORTABLE);
}

int gp_host_unregister(void *p) { return (int)cuMemHostUnregister(p); }

// NVTX: libnvToolsExt is opened with dlopen, so the build needs neither the
// NVTX header nor the library; without the library the ranges are off.
typedef int (*gp_nvtx_push_fn)(const char *);
typedef int (*gp_nvtx_pop_fn)(void);
static gp_nvtx_push_fn gp_nvtx_push_p = NULL;
static gp_nvtx_pop_fn gp_nvtx_pop_p = NULL;
static pthread_once_t gp_nvtx_once = PTHREAD_ONCE_INIT;

static void gp_nvtx_open(void) {
    const char *names[] = {"libnvToolsExt.so.1", "libnvToolsExt.so"};
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            continue;
        }
        gp_nvtx_push_fn push = (gp_nvtx_push_fn)dlsym(h, "nvtxRangePushA");
        gp_nvtx_pop_fn pop = (gp_nvtx_pop_fn)dlsym(h, "nvtxRangePop");
        if (push != NULL && pop != NULL) {
            gp_nvtx_push_p = push;
            gp_nvtx_pop_p = pop;
            return;
        }
        dlclose(h);
    }
}

int gp_nvtx_load(void) {
    pthread_once(&gp_nvtx_once, gp_nvtx_open);
    return gp_nvtx_push_p != NULL;
}

int gp_nvtx_push(const char *label) { return gp_nvtx_push_p != NULL ? gp_nvtx_push_p(label) : -1; }

int gp_nvtx_pop(void) { return gp_nvtx_pop_p != NULL ? gp_nvtx_pop_p() : -1; }

int gp_func_get_attr(void *fn, int attr, int *out) {
    return (int)cuFuncGetAttribute(out, (CUfunction_attribute)attr, (CUfunction)fn);
}

int gp_func_set_attr(void *fn, int attr, int value) {
    return (int)cuFuncSetAttribute((CUfunction)fn, (CUfunction_attribute)attr, value);
}

int gp_occupancy(void *fn, int block, unsigned long long dyn, unsigned int flags, int *out) {
    return (int)cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(out, (CUfunction)fn, block, (size_t)dyn, flags);
}

// gp_launch launches with 8-byte arguments vals[0..n). The driver copies the
// parameters before returning, so vals may be freed afterwards.
int gp_launch(void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
              unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
              void *stream, unsigned long long *vals, int n, int cooperative) {
    void *stack_params[64];
    void **params = stack_params;
    if (n > 64) {
        params = (void **)malloc(sizeof(void *) * (size_t)n);
        if (params == NULL) {
            return (int)CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    for (int i = 0; i < n; i++) {
        params[i] = &vals[i];
    }
    CUresult r;
    if (cooperative) {
        r = cuLaunchCooperativeKernel((CUfunction)fn, gx, gy, gz, bx, by, bz, smem, (CUstream)stream, params);
    } else {
        r = cuLaunchKernel((CUfunction)fn, gx, gy, gz, bx, by, bz, smem, (CUstream)stream, params, NULL);
    }
    if (params != stack_params) {
        free(params);
    }
    return (int)r;
}

int gp_link(int n, const char *const *data, const unsigned long long *sizes, const char *const *names,
            unsigned int max_regs, char *info, unsigned int info_size, char *err, unsigned int err_size, void **mod,
            int *step, int *input) {
    CUjit_option opts[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_MAX_REGISTERS};
    void *vals[5] = {info, (void *)(size_t)info_size, err, (void *)(size_t)err_size, (void *)(size_t)max_regs};
    CUlinkState st;
    *step = 1;
    *input = -1;
    CUresult r = cuLinkCreate(max_regs > 0 ? 5 : 4, opts, vals, &st);
    if (r != CUDA_SUCCESS) {
        return (int)r;
    }
    *step = 2;
    for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
        *input = i;
        r = cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)data[i], (size_t)sizes[i], names[i], 0, NULL, NULL);
    }
    if (r == CUDA_SUCCESS) {
        void *image = NULL;
        size_t image_size = 0;
        *step = 3;
        *input = -1;
        r = cuLinkComplete(st, &image, &image_size);
        if (r == CUDA_SUCCESS) {
            *step = 4;
            r = cuModuleLoadData((CUmodule *)mod, image);
        }
    }
    cuLinkDestroy(st);
    return (int)r;
}

int gp_stream_wait_event(void *stream, void *event) {
    return (int)cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0);
}

int gp_graph_create(void **g) { return (int)cuGraphCreate((CUgraph *)g, 0); }

// The edge data of cuGraphAddDependencies_v2 (CUDA 12.3), which the
// pinned CUDA 11.8 headers lack: a programmatic edge from the producer's
// programmatic port.
typedef struct {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} gp_graph_edge_data;
typedef CUresult (*gp_add_deps_v2_fn)(CUgraph, const CUgraphNode *, const CUgraphNode *, const gp_graph_edge_data *, size_t);
#define GP_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC 1
#define GP_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC 1

int gp_graph_add_kernel(void *g, void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                        unsigned long long *vals, int n, void *const *deps, const unsigned char *prog, int ndeps, void **node) {
    void *stack_params[64];
    void **params = stack_params;
    CUgraphNode stack_plain[64];
    CUgraphNode *plain = stack_plain;
    if (n > 64) {
        params = (void **)malloc(sizeof(void *) * (size_t)n);
    }
    if (ndeps > 64) {
        plain = (CUgraphNode *)malloc(sizeof(CUgraphNode) * (size_t)ndeps);
    }
    CUresult r = CUDA_SUCCESS;
    if (params == NULL || plain == NULL) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        params[i] = &vals[i];
    }
    int nplain = 0;
    for (int i = 0; i < ndeps; i++) {
        if (!prog[i]) {
            plain[nplain++] = (CUgraphNode)deps[i];
        }
    }
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = (CUfunction)fn;
    p.gridDimX = gx;
    p.gridDimY = gy;
    p.gridDimZ = gz;
    p.blockDimX = bx;
    p.blockDimY = by;
    p.blockDimZ = bz;
    p.sharedMemBytes = smem;
    p.kernelParams = params;
    r = cuGraphAddKernelNode((CUgraphNode *)node, (CUgraph)g, plain, (size_t)nplain, &p);
    if (r != CUDA_SUCCESS || nplain == ndeps) {
        goto out;
    }
    gp_add_deps_v2_fn add = (gp_add_deps_v2_fn)dlsym(RTLD_DEFAULT, "cuGraphAddDependencies_v2");
    if (add == NULL) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    for (int i = 0; i < ndeps && r == CUDA_SUCCESS; i++) {
        if (!prog[i]) {
            continue;
        }
        CUgraphNode from = (CUgraphNode)deps[i];
        CUgraphNode to = (CUgraphNode)*node;
        gp_graph_edge_data e;
        memset(&e, 0, sizeof e);
        e.from_port = GP_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
        e.type = GP_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        r = add((CUgraph)g, &from, &to, &e, 1);
    }
out:
    if (params != stack_params) {
        free(params);
    }
    if (plain != stack_plain) {
        free(plain);
    }
    return (int)r;
}

int gp_graph_instantiate(void **exec, void *g) {
    return (int)cuGraphInstantiateWithFlags((CUgraphExec *)exec, (CUgraph)g, 0);
}

int gp_graph_launch(void *exec, void *stream) { return (int)cuGraphLaunch((CUgraphExec)exec, (CUstream)stream); }

int gp_graph_exec_destroy(void *exec) { return (int)cuGraphExecDestroy((CUgraphExec)exec); }

int gp_graph_destroy(void *g) { return (int)cuGraphDestroy((CUgraph)g); }
