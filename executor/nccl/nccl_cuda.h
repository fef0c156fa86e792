//go:build cuda

// NCCL, loaded at run time, and the CUDA driver calls its communicator
// needs: each device's primary context, a stream in it, staging memory and
// copies between the executor's context and the primary one.
#ifndef GPUPLAN_NCCL_CUDA_H
#define GPUPLAN_NCCL_CUDA_H
#include <stddef.h>
#include <cuda.h>

// gp_nccl_load dlopens path and resolves the NCCL entry points; it returns
// 0, or -1 with the loader's message in err.
int gp_nccl_load(const char *path, char *err, int errlen);
int gp_nccl_version(int *version);
const char *gp_nccl_error_string(int result);
int gp_nccl_comm_init_all(void **comms, int ndev, const int *devs);
int gp_nccl_comm_destroy(void *comm);
int gp_nccl_group_start(void);
int gp_nccl_group_end(void);
int gp_nccl_all_gather(CUdeviceptr send, CUdeviceptr recv, size_t bytes, void *comm, CUstream s);
int gp_nccl_send(CUdeviceptr send, size_t bytes, int peer, void *comm, CUstream s);
int gp_nccl_recv(CUdeviceptr recv, size_t bytes, int peer, void *comm, CUstream s);

// One rank of a communicator whose ranks are in separate processes.
// gp_nccl_get_unique_id writes ncclGetUniqueId's 128 bytes to id.
int gp_nccl_get_unique_id(void *id);
// gp_nccl_has_config reports whether the library has
// ncclCommInitRankConfig (NCCL 2.14 and later).
int gp_nccl_has_config(void);
// gp_nccl_comm_init_rank creates rank of nranks from the 128-byte id on the
// current context's device, non-blocking when nonblocking is set (through
// ncclCommInitRankConfig). *slot, allocated here and freed with
// gp_nccl_slot_free, receives the communicator: NCCL may still write it
// while a non-blocking creation is in progress.
int gp_nccl_comm_init_rank(void ***slot, int nranks, const void *id, int rank, int nonblocking);
void gp_nccl_slot_free(void **slot);
int gp_nccl_comm_get_async_error(void *comm, int *state);
int gp_nccl_comm_abort(void *comm);
// gp_nccl_query returns cuStreamQuery's result with ctx current.
int gp_nccl_query(CUcontext ctx, CUstream s);

// CUDA driver calls on the primary context of a device.
int gp_nccl_primary(int dev, CUcontext *ctx, CUstream *stream);
int gp_nccl_release(int dev, CUcontext ctx, CUstream stream);
int gp_nccl_alloc(CUcontext ctx, CUdeviceptr *p, size_t bytes);
int gp_nccl_free(CUcontext ctx, CUdeviceptr p);
int gp_nccl_ptr_ctx(CUdeviceptr p, CUcontext *ctx);
int gp_nccl_copy(CUcontext cur, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, CUstream s);
int gp_nccl_sync(CUcontext ctx, CUstream s);
#endif
