// The digits MLP's preprocess stage: uint8 grey levels -> float pixel / 16. Its reference is
// sp_mlp_preprocess_host (src/mlp/mlp_host.c); dividing by a power of two is exact, so the
// two agree bit for bit.
#include <cstdint>

#include "mlp/mlp_cuda.h"
#include "mlp/mlp_cuda_check.h"

#define PREPROCESS_BLOCK_THREADS 256
#define PREPROCESS_BLOCKS_PER_SM 8

// Each thread turns 4 pixels (one 4-byte load) into one float4: consecutive threads read
// consecutive words and write consecutive float4s, so both sides are fully coalesced. The
// pixels are read once, hence the streaming load.
static __global__ void preprocess_kernel(const uchar4 *__restrict__ pixels,
                                         float4 *__restrict__ x, size_t n4)
{
    const float scale = 1.0f / SP_MLP_MAX_PIXEL;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        const uchar4 p = __ldcs(&pixels[i]);
        x[i] = make_float4(p.x * scale, p.y * scale, p.z * scale, p.w * scale);
    }
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" sp_status sp_mlp_preprocess_enqueue(const unsigned char *pixels, float *x,
                                               size_t records, int sm_count, void *stream,
                                               char *err, size_t err_size)
{
    if (records == 0)
        return SP_OK;
    if (pixels == nullptr || x == nullptr || stream == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT, "preprocess: NULL %s",
                             stream == nullptr ? "stream" : "device pointer");
    // The pipeline's slot buffers are 256-byte aligned and records are 64 bytes.
    if (!aligned16(pixels) || !aligned16(x))
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "preprocess: buffers must be 16-byte aligned");
    const size_t n4 = records * (SP_MLP_INPUTS / 4); // fits: records * 64 bytes exist
    const size_t needed = (n4 + PREPROCESS_BLOCK_THREADS - 1) / PREPROCESS_BLOCK_THREADS;
    const size_t filling = (size_t)(sm_count > 0 ? sm_count : 1) * PREPROCESS_BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(needed < filling ? needed : filling);
    preprocess_kernel<<<blocks, PREPROCESS_BLOCK_THREADS, 0, static_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<const uchar4 *>(pixels), reinterpret_cast<float4 *>(x), n4);
    return MLP_CUDA_CHECK(cudaGetLastError(), err, err_size);
}
