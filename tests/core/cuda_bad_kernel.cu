// A kernel that writes through a wild pointer: the way to make a real CUDA context lose its
// device (cudaErrorIllegalAddress), for the DEVICE_LOST test. Test code only.
#include <cuda_runtime.h>

static __global__ void write_wild(float *wild) { wild[threadIdx.x] = 1.0f; }

extern "C" int sp_test_launch_wild_write(void *stream)
{
    write_wild<<<1, 32, 0, (cudaStream_t)stream>>>(reinterpret_cast<float *>(0x10));
    return (int)cudaGetLastError();
}
