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

// CUDA driver calls on the primary context of a device.
int gp_nccl_primary(int dev, CUcontext *ctx, CUstream *stream);
int gp_nccl_release(int dev, CUcontext ctx, CUstream stream);
int gp_nccl_alloc(CUcontext ctx, CUdeviceptr *p, size_t bytes);
int gp_nccl_free(CUcontext ctx, CUdeviceptr p);
int gp_nccl_ptr_ctx(CUdeviceptr p, CUcontext *ctx);
int gp_nccl_copy(CUcontext cur, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, CUstream s);
int gp_nccl_sync(CUcontext ctx, CUstream s);
#endif
