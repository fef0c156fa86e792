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
// gp_link JIT-links n PTX inputs (each NUL-terminated, sizes counting the
// NUL) and loads the image into *mod. The logs are written into the
// caller's buffers; *step is 1 (cuLinkCreate), 2 (cuLinkAddData of input
// *input), 3 (cuLinkComplete) or 4 (cuModuleLoadData) when a call fails.
// max_regs > 0 caps every compiled function's registers per thread.
int gp_link(int n, const char *const *data, const unsigned long long *sizes, const char *const *names,
            unsigned int max_regs, char *info, unsigned int info_size, char *err, unsigned int err_size, void **mod,
            int *step, int *input);
int gp_stream_wait_event(void *stream, void *event);
int gp_graph_create(void **g);
// gp_graph_add_kernel adds a kernel node with plain dependencies deps[i]
// where prog[i] is 0, and programmatic ones (cuGraphAddDependencies_v2,
// resolved at run time; CUDA_ERROR_NOT_SUPPORTED without it) where it is 1.
int gp_graph_add_kernel(void *g, void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                        unsigned long long *vals, int n, void *const *deps, const unsigned char *prog, int ndeps, void **node);
int gp_graph_instantiate(void **exec, void *g);
int gp_graph_launch(void *exec, void *stream);
int gp_graph_exec_destroy(void *exec);
int gp_graph_destroy(void *g);
#endif
