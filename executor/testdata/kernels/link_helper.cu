// gpuplan: relocatable device code
//
// The function link_main.cu's entry points call.
extern "C" __device__ unsigned int scale_add(unsigned int x, unsigned int k) { return x * 3u + k; }
