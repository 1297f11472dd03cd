// The sinmix kernel and its launcher. The CPU reference it must match is sp_sinmix_one in
// src/ops/sinmix.c: v = x*0.5 + x*x*0.1, then `iters` times v += sinf(v*0.01).
#include <atomic>
#include <cstdint>

#include "backend/cuda/cuda_error.h"
#include "ops/sinmix_cuda.h"

extern "C" { // backend.h is a C header without C++ guards; sp_backend_fail has C linkage
#include "backend/backend.h"
}

#define SINMIX_BLOCK_THREADS 256
#define SINMIX_BLOCKS_PER_SM 8 // enough resident warps to hide memory latency at iters == 0
#define SINMIX_MAX_CACHED_DEVICES 64

// Each multiply and add is rounded on its own (no FMA contraction) exactly as the C reference
// does, so only sinf's own error separates the two. sinf is the accurate version: the
// library is never built with --use_fast_math.
static __device__ __forceinline__ float sinmix_value(float x, unsigned iters)
{
    float v = __fadd_rn(__fmul_rn(x, 0.5f), __fmul_rn(__fmul_rn(x, x), 0.1f));
    for (unsigned k = 0; k < iters; k++)
        v = __fadd_rn(v, sinf(__fmul_rn(v, 0.01f)));
    return v;
}

// Grid-stride over n4 float4s (16-byte loads and stores), then over n1 single floats: the
// tail after the float4s, or everything when the pointers are not 16-byte aligned. Each
// element is read and written by the same thread, read first, so in == out is safe; the
// pointers are deliberately not __restrict__ for that reason.
static __global__ void sinmix_kernel(const float4 *in4, float4 *out4, size_t n4,
                                     const float *in1, float *out1, size_t n1, unsigned iters)
{
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = first; i < n4; i += stride) {
        float4 v = in4[i];
        v.x = sinmix_value(v.x, iters);
        v.y = sinmix_value(v.y, iters);
        v.z = sinmix_value(v.z, iters);
        v.w = sinmix_value(v.w, iters);
        out4[i] = v;
    }
    for (size_t i = first; i < n1; i += stride)
        out1[i] = sinmix_value(in1[i], iters);
}

// The SM count of each device, asked once: launches happen per chunk on the hot path.
// 0 means not asked yet; atomics because several threads may launch at once.
static std::atomic<int> sm_count_cache[SINMIX_MAX_CACHED_DEVICES];

static sp_status current_sm_count(int *sm_count)
{
    int device = 0;
    sp_status status = SP_CUDA_CHECK(cudaGetDevice(&device));
    if (status != SP_OK)
        return status;
    const bool cacheable = device >= 0 && device < SINMIX_MAX_CACHED_DEVICES;
    if (cacheable) {
        *sm_count = sm_count_cache[device].load(std::memory_order_relaxed);
        if (*sm_count > 0)
            return SP_OK;
    }
    int count = 0;
    status = SP_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    if (status != SP_OK)
        return status;
    *sm_count = count > 0 ? count : 1;
    if (cacheable)
        sm_count_cache[device].store(*sm_count, std::memory_order_relaxed);
    return SP_OK;
}

// Enough blocks to fill every SM SINMIX_BLOCKS_PER_SM times, but no more than the work needs.
static unsigned grid_blocks(size_t work_items, int sm_count)
{
    const size_t needed = (work_items + SINMIX_BLOCK_THREADS - 1) / SINMIX_BLOCK_THREADS;
    const size_t filling = (size_t)sm_count * SINMIX_BLOCKS_PER_SM;
    const size_t blocks = needed < filling ? needed : filling;
    return (unsigned)(blocks > 0 ? blocks : 1);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" sp_status sp_sinmix_cuda_enqueue(const float *in, float *out, size_t n,
                                            unsigned iters, void *stream)
{
    if (n == 0)
        return SP_OK;
    if (!in || !out || !stream) {
        // A NULL stream would be the legacy default stream, which the library never uses.
        sp_backend_fail("sinmix: NULL %s for %zu elements", stream ? "device pointer" : "stream",
                        n);
        return SP_ERR_INVALID_ARGUMENT;
    }
    int sm_count = 0;
    sp_status status = current_sm_count(&sm_count);
    if (status != SP_OK)
        return status;

    const bool vectorized = aligned16(in) && aligned16(out);
    const size_t n4 = vectorized ? n / 4 : 0;
    const size_t n1 = n - 4 * n4;
    const unsigned blocks = grid_blocks(n4 > n1 ? n4 : n1, sm_count);
    sinmix_kernel<<<blocks, SINMIX_BLOCK_THREADS, 0, (cudaStream_t)stream>>>(
        reinterpret_cast<const float4 *>(in), reinterpret_cast<float4 *>(out), n4,
        in + 4 * n4, out + 4 * n4, n1, iters);
    return sp_cuda_check(cudaGetLastError(), "sinmix_kernel<<<...>>>", __FILE__, __LINE__);
}
