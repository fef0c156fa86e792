//go:build cuda

// The NCCL binding: libnccl.so.2 is opened with dlopen and its entry points
// are called through pointers, so no NCCL header or library is needed to
// build. The declarations below are NCCL 2's ABI: ncclComm_t is a pointer,
// ncclResult_t and ncclDataType_t are ints (ncclUint8 is 1), and
// cudaStream_t is the driver's CUstream.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nccl_cuda.h"

#define NCCL_UINT8 1
#define NCCL_UNIQUE_ID_BYTES 128

// ncclUniqueId, passed by value to ncclCommInitRank.
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } unique_id;

// NCCL 2.14's ncclConfig_t. NCCL reads a caller's config up to its `size`
// and gives every later field (added by later NCCL versions) its default,
// so this prefix is a valid config for every NCCL from 2.14 on.
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
} config_v21400;
#define NCCL_CONFIG_MAGIC 0xcafebeef
#define NCCL_VERSION_2_14 21400

typedef int (*get_version_fn)(int *);
typedef const char *(*error_string_fn)(int);
typedef int (*comm_init_all_fn)(void **, int, const int *);
typedef int (*comm_destroy_fn)(void *);
typedef int (*group_fn)(void);
typedef int (*all_gather_fn)(const void *, void *, size_t, int, void *, void *);
typedef int (*send_fn)(const void *, size_t, int, int, void *, void *);
typedef int (*recv_fn)(void *, size_t, int, int, void *, void *);
typedef int (*get_unique_id_fn)(unique_id *);
typedef int (*comm_init_rank_fn)(void **, int, unique_id, int);
typedef int (*comm_init_rank_config_fn)(void **, int, unique_id, int, config_v21400 *);
typedef int (*comm_async_error_fn)(void *, int *);
typedef int (*comm_abort_fn)(void *);

static void *lib;
static get_version_fn p_get_version;
static error_string_fn p_error_string;
static comm_init_all_fn p_comm_init_all;
static comm_destroy_fn p_comm_destroy;
static group_fn p_group_start, p_group_end;
static all_gather_fn p_all_gather;
static send_fn p_send;
static recv_fn p_recv;
static get_unique_id_fn p_get_unique_id;
static comm_init_rank_fn p_comm_init_rank;
static comm_init_rank_config_fn p_comm_init_rank_config;
static comm_async_error_fn p_comm_async_error;
static comm_abort_fn p_comm_abort;

static void *sym(const char *name, char *err, int errlen, int *failed) {
    void *p = dlsym(lib, name);
    if (p == NULL && !*failed) {
        snprintf(err, errlen, "the library has no %s: it is not NCCL 2.7 or later", name);
        *failed = 1;
    }
    return p;
}

int gp_nccl_load(const char *path, char *err, int errlen) {
    if (lib != NULL) {
        return 0;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : "dlopen failed");
        return -1;
    }
    lib = h;
    int failed = 0;
    p_get_version = (get_version_fn)sym("ncclGetVersion", err, errlen, &failed);
    p_error_string = (error_string_fn)sym("ncclGetErrorString", err, errlen, &failed);
    p_comm_init_all = (comm_init_all_fn)sym("ncclCommInitAll", err, errlen, &failed);
    p_comm_destroy = (comm_destroy_fn)sym("ncclCommDestroy", err, errlen, &failed);
    p_group_start = (group_fn)sym("ncclGroupStart", err, errlen, &failed);
    p_group_end = (group_fn)sym("ncclGroupEnd", err, errlen, &failed);
    p_all_gather = (all_gather_fn)sym("ncclAllGather", err, errlen, &failed);
    p_send = (send_fn)sym("ncclSend", err, errlen, &failed);
    p_recv = (recv_fn)sym("ncclRecv", err, errlen, &failed);
    p_get_unique_id = (get_unique_id_fn)sym("ncclGetUniqueId", err, errlen, &failed);
    p_comm_init_rank = (comm_init_rank_fn)sym("ncclCommInitRank", err, errlen, &failed);
    p_comm_async_error = (comm_async_error_fn)sym("ncclCommGetAsyncError", err, errlen, &failed);
    p_comm_abort = (comm_abort_fn)sym("ncclCommAbort", err, errlen, &failed);
    // Optional: NCCL 2.14 and later.
    p_comm_init_rank_config = (comm_init_rank_config_fn)dlsym(lib, "ncclCommInitRankConfig");
    if (failed) {
        dlclose(h);
        lib = NULL;
        return -1;
    }
    return 0;
}

int gp_nccl_version(int *version) { return p_get_version(version); }

const char *gp_nccl_error_string(int result) { return p_error_string ? p_error_string(result) : ""; }

int gp_nccl_comm_init_all(void **comms, int ndev, const int *devs) { return p_comm_init_all(comms, ndev, devs); }

int gp_nccl_comm_destroy(void *comm) { return p_comm_destroy(comm); }

int gp_nccl_group_start(void) { return p_group_start(); }

int gp_nccl_group_end(void) { return p_group_end(); }

int gp_nccl_all_gather(CUdeviceptr send, CUdeviceptr recv, size_t bytes, void *comm, CUstream s) {
    return p_all_gather((const void *)send, (void *)recv, bytes, NCCL_UINT8, comm, (void *)s);
}

int gp_nccl_send(CUdeviceptr send, size_t bytes, int peer, void *comm, CUstream s) {
    return p_send((const void *)send, bytes, NCCL_UINT8, peer, comm, (void *)s);
}

int gp_nccl_recv(CUdeviceptr recv, size_t bytes, int peer, void *comm, CUstream s) {
    return p_recv((void *)recv, bytes, NCCL_UINT8, peer, comm, (void *)s);
}

int gp_nccl_get_unique_id(void *id) { return p_get_unique_id((unique_id *)id); }

int gp_nccl_has_config(void) { return p_comm_init_rank_config != NULL; }

int gp_nccl_comm_init_rank(void ***slot, int nranks, const void *id, int rank, int nonblocking) {
    *slot = calloc(1, sizeof(void *));
    if (*slot == NULL) {
        return 2; // ncclSystemError
    }
    unique_id uid;
    memcpy(&uid, id, sizeof(uid));
    if (nonblocking && p_comm_init_rank_config != NULL) {
        config_v21400 cfg = {sizeof(config_v21400), NCCL_CONFIG_MAGIC, NCCL_VERSION_2_14, 0};
        return p_comm_init_rank_config(*slot, nranks, uid, rank, &cfg);
    }
    return p_comm_init_rank(*slot, nranks, uid, rank);
}

void gp_nccl_slot_free(void **slot) { free(slot); }

int gp_nccl_comm_get_async_error(void *comm, int *state) { return p_comm_async_error(comm, state); }

int gp_nccl_comm_abort(void *comm) { return p_comm_abort(comm); }

int gp_nccl_query(CUcontext ctx, CUstream s) {
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = cuStreamQuery(s);
    return (int)r;
}

int gp_nccl_primary(int dev, CUcontext *ctx, CUstream *stream) {
    CUdevice d;
    CUresult r = cuDeviceGet(&d, dev);
    if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(ctx, d);
    if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(*ctx);
    if (r == CUDA_SUCCESS) r = cuStreamCreate(stream, CU_STREAM_NON_BLOCKING);
    return (int)r;
}

int gp_nccl_release(int dev, CUcontext ctx, CUstream stream) {
    CUdevice d;
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS && stream != NULL) r = cuStreamDestroy(stream);
    CUresult r2 = cuDeviceGet(&d, dev);
    if (r2 == CUDA_SUCCESS) r2 = cuDevicePrimaryCtxRelease(d);
    return (int)(r != CUDA_SUCCESS ? r : r2);
}

int gp_nccl_alloc(CUcontext ctx, CUdeviceptr *p, size_t bytes) {
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = cuMemAlloc(p, bytes);
    return (int)r;
}

int gp_nccl_free(CUcontext ctx, CUdeviceptr p) {
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = cuMemFree(p);
    return (int)r;
}

int gp_nccl_ptr_ctx(CUdeviceptr p, CUcontext *ctx) {
    return (int)cuPointerGetAttribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p);
}

int gp_nccl_copy(CUcontext cur, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, CUstream s) {
    CUresult r = cuCtxSetCurrent(cur);
    if (r == CUDA_SUCCESS) r = cuMemcpyPeerAsync(dst, dctx, src, sctx, bytes, s);
    return (int)r;
}

int gp_nccl_sync(CUcontext ctx, CUstream s) {
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    return (int)r;
}
