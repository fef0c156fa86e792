// gpuplan: relocatable device code
#include "gpuplan_wave.h"

// The quickstart's four waves, over n floats:
//
//   wave 0  qs_square  out0 = x * x
//   wave 1  qs_axpy    out1 = a * out0 + x
//   wave 2  qs_scale   out2 = b * out0
//   wave 3  qs_add     y    = out1 + out2
//
// gpuplan runs each wave once per tile, by gp_threads() threads (the
// wave's "block"); tile t covers elements [t * gp_threads(), (t + 1) *
// gp_threads()). args[i] is the wave's i-th "args" entry in
// quickstart.json: a buffer's address or a scalar.

// elem is this thread's element of the tile.
static __device__ __forceinline__ unsigned int elem(unsigned int tile) {
    return tile * gp_threads() + threadIdx.x;
}

// args: out0, x, n.
GP_WAVE qs_square(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    float *out0 = gp_arg_ptr<float>(args, 0);
    const float *x = gp_arg_ptr<const float>(args, 1);
    unsigned int n = gp_arg_u32(args, 2);
    unsigned int i = elem(tile);
    if (i < n) out0[i] = x[i] * x[i];
}

// args: out1, out0, x, a, n.
GP_WAVE qs_axpy(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    float *out1 = gp_arg_ptr<float>(args, 0);
    const float *out0 = gp_arg_ptr<const float>(args, 1);
    const float *x = gp_arg_ptr<const float>(args, 2);
    float a = gp_arg_f32(args, 3);
    unsigned int n = gp_arg_u32(args, 4);
    unsigned int i = elem(tile);
    if (i < n) out1[i] = a * out0[i] + x[i];
}

// args: out2, out0, b, n.
GP_WAVE qs_scale(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    float *out2 = gp_arg_ptr<float>(args, 0);
    const float *out0 = gp_arg_ptr<const float>(args, 1);
    float b = gp_arg_f32(args, 2);
    unsigned int n = gp_arg_u32(args, 3);
    unsigned int i = elem(tile);
    if (i < n) out2[i] = b * out0[i];
}

// args: y, out1, out2, n.
GP_WAVE qs_add(unsigned int tile, unsigned int tiles, const unsigned long long *args) {
    float *y = gp_arg_ptr<float>(args, 0);
    const float *out1 = gp_arg_ptr<const float>(args, 1);
    const float *out2 = gp_arg_ptr<const float>(args, 2);
    unsigned int n = gp_arg_u32(args, 3);
    unsigned int i = elem(tile);
    if (i < n) y[i] = out1[i] + out2[i];
}
