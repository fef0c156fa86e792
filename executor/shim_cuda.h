//go:build cuda

// The driver calls gorgonia.org/cu v0.9.6 lacks, plus the cuInit guard.
#ifndef GPUPLAN_SHIM_CUDA_H
#define GPUPLAN_SHIM_CUDA_H
#include <cuda.h>

// gp_init_status runs the real cuInit once (if nothing has yet) and returns
// its CUresult; -1 means libcuda's cuInit could not be found.
int gp_init_status(void);
int gp_dev_attr(int attr, int dev, int *out);
int gp_mem_get_info(unsigned long long *free_b, unsigned long long *total_b);
int gp_host_alloc(void **p, unsigned long long n);
int gp_host_free(void *p);
int gp_func_get_attr(void *fn, int attr, int *out);
int gp_func_set_attr(void *fn, int attr, int value);
int gp_occupancy(void *fn, int block, unsigned long long dyn, unsigned int flags, int *out);
int gp_host_register(void *p, unsigned long long n);
int gp_host_unregister(void *p);
// gp_nvtx_load loads libnvToolsExt once (dlopen, no link-time dependency)
// and returns 1 when its range functions were found, else 0.
int gp_nvtx_load(void);
int gp_nvtx_push(const char *label);
int gp_nvtx_pop(void);
int gp_launch(void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
              unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
              void *stream, unsigned long long *vals, int n, int cooperative);
#endif
