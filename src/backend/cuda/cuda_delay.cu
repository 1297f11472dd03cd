// A kernel that only waits, so a queue stays busy for a known time and a missing dependency
// turns into a wrong answer instead of a lucky right one.
#include "backend/cuda/cuda_delay.h"
#include "backend/cuda/cuda_error.h"

// %globaltimer counts nanoseconds of wall time, independent of the SM clock (which varies
// with boost and power state), so the delay needs no clock-rate scaling.
static __device__ __forceinline__ unsigned long long global_nanoseconds()
{
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}

static __global__ void delay_kernel(unsigned long long nanoseconds)
{
    const unsigned long long start = global_nanoseconds();
    while (global_nanoseconds() - start < nanoseconds) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
        __nanosleep(500); // yield issue slots to the kernels sharing the SM
#endif
    }
}

extern "C" sp_status sp_cuda_delay_enqueue(unsigned usec, cudaStream_t stream)
{
    if (usec == 0)
        return SP_OK;
    delay_kernel<<<1, 1, 0, stream>>>((unsigned long long)usec * 1000ull);
    return sp_cuda_check(cudaGetLastError(), "delay_kernel<<<1, 1>>>", __FILE__, __LINE__);
}
