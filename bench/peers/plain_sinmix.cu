// The peers' kernel: sinmix written as a user would write it (issue 17), one thread per
// element, blocks of 256, compiled with CUDA's defaults (so x*0.5f + x*x*0.1f contracts to
// an FMA). C linkage, so that the C ring can launch it.
#include <cuda_runtime.h>

static __global__ void plain_sinmix(const float *in, float *out, size_t n, unsigned iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    float v = x * 0.5f + x * x * 0.1f;
    for (unsigned k = 0; k < iters; k++)
        v += sinf(v * 0.01f);
    out[i] = v;
}

extern "C" cudaError_t peer_sinmix(const float *in, float *out, size_t n, unsigned iters,
                                   cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    plain_sinmix<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(in, out, n, iters);
    return cudaGetLastError();
}
