//go:build cuda && !cudalib_direct

// Opens the CUDA driver library at run time and points the trampolines of
// trampolines_linux_amd64.S at its functions.
//
// The constructor runs when the program is loaded, before the Go runtime
// and so before gorgonia.org/cu's package init calls cuInit. The library
// is opened RTLD_GLOBAL, so that the executor's interposed cuInit
// (executor/shim_cuda.c) finds the real one with dlsym(RTLD_NEXT). When it
// cannot be opened, every slot keeps returning CUDA_ERROR_NOT_INITIALIZED,
// that cuInit finds no real cuInit, and the Go side reports dlerror's text.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "loader.h"
#include "symbols_linux_amd64.h"

// The trampolines' slots, defined in trampolines_linux_amd64.S.
extern void *gp_cudalib_table[GP_CUDALIB_NSYMS] __attribute__((visibility("hidden")));

// The library opened by default, and the variable that overrides it.
#define GP_CUDALIB_DEFAULT "libcuda.so.1"
#define GP_CUDALIB_ENV "GPUPLAN_LIBCUDA"

static int gp_loaded = 0;
static int gp_from_env = 0;
static char gp_library[4096] = GP_CUDALIB_DEFAULT;
static char gp_error[1024] = "";
static unsigned char gp_resolved[GP_CUDALIB_NSYMS];

// gp_cudalib_absent stands in for a function the opened library does not
// define (an older driver): CUDA_ERROR_NOT_FOUND.
static int gp_cudalib_absent(void) { return 500; }

static void gp_set_error(const char *msg) {
    strncpy(gp_error, msg != NULL ? msg : "unknown dlopen error", sizeof gp_error - 1);
    gp_error[sizeof gp_error - 1] = '\0';
}

__attribute__((constructor)) static void gp_cudalib_load(void) {
    const char *env = getenv(GP_CUDALIB_ENV);
    if (env != NULL && env[0] != '\0') {
        gp_from_env = 1;
        if (strlen(env) >= sizeof gp_library) {
            strncpy(gp_library, env, sizeof gp_library - 1);
            gp_library[sizeof gp_library - 1] = '\0';
            gp_set_error("the path is longer than 4095 bytes");
            return;
        }
        strcpy(gp_library, env);
    }
    void *h = dlopen(gp_library, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        gp_set_error(dlerror());
        return;
    }
    // A library without cuInit is not the driver (a wrong GPUPLAN_LIBCUDA).
    if (dlsym(h, "cuInit") == NULL) {
        gp_set_error("it defines no cuInit, so it is not the CUDA driver library");
        dlclose(h);
        return;
    }
    for (int i = 0; i < GP_CUDALIB_NSYMS; i++) {
        void *f = dlsym(h, gp_cudalib_names[i]);
        gp_resolved[i] = f != NULL;
        gp_cudalib_table[i] = f != NULL ? f : (void *)gp_cudalib_absent;
    }
    gp_loaded = 1;
}

int gp_cudalib_loaded(void) { return gp_loaded; }

const char *gp_cudalib_library(void) { return gp_library; }

int gp_cudalib_from_env(void) { return gp_from_env; }

const char *gp_cudalib_error(void) { return gp_error; }

int gp_cudalib_nsyms(void) { return GP_CUDALIB_NSYMS; }

const char *gp_cudalib_name(int i) { return i >= 0 && i < GP_CUDALIB_NSYMS ? gp_cudalib_names[i] : ""; }

int gp_cudalib_resolved(int i) { return i >= 0 && i < GP_CUDALIB_NSYMS && gp_resolved[i]; }
