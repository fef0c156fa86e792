// The run-time loader of the CUDA driver library (loader_linux_amd64.c):
// what its constructor found, for the Go side.
#ifndef GPUPLAN_CUDALIB_LOADER_H
#define GPUPLAN_CUDALIB_LOADER_H

// gp_cudalib_loaded is 1 when the constructor opened the library.
int gp_cudalib_loaded(void);
// gp_cudalib_library is the name or path the constructor opened.
const char *gp_cudalib_library(void);
// gp_cudalib_from_env is 1 when that name came from GPUPLAN_LIBCUDA.
int gp_cudalib_from_env(void);
// gp_cudalib_error is dlerror's text when the library could not be opened.
const char *gp_cudalib_error(void);
// gp_cudalib_nsyms is the number of trampolines; gp_cudalib_name(i) names
// the driver function of slot i, and gp_cudalib_resolved(i) is 1 when the
// library defines it.
int gp_cudalib_nsyms(void);
const char *gp_cudalib_name(int i);
int gp_cudalib_resolved(int i);

#endif
