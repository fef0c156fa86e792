// gpuplan: relocatable device code
//
// The entry points of the executor's link tests: they call scale_add,
// which link_helper.cu defines, so only a JIT link resolves them.
extern "C" __device__ unsigned int scale_add(unsigned int x, unsigned int k);

// link_apply: out[i] = scale_add(in[i], k) for i < n.
extern "C" __global__ void link_apply(const unsigned int *in, unsigned int *out, unsigned long long n, unsigned long long k) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scale_add(in[i], (unsigned int)k);
}
