// The digits MLP's head: the last layer (256 -> 10) and the argmax in one kernel, so the ten
// logits never leave registers. Its reference is sp_mlp_head_host (src/ops/mlp_host.c).
//
// One warp per record. Lane l holds columns [4l, 4l+4) and [128+4l, 128+4l+4) of the record
// (two 16-byte loads; the warp reads the 1 KiB row in two fully coalesced 512-byte pieces)
// and the same columns of all ten weight rows in registers, loaded once per warp and reused
// for every record the warp visits. Each class's partial sum is then reduced across the warp
// with xor shuffles, which leaves every lane with all ten logits.
#include <cstdint>

#include "ops/mlp_cuda.h"
#include "ops/mlp_cuda_check.h"

#define HEAD_BLOCK_THREADS 256
#define HEAD_BLOCKS_PER_SM 8
#define HEAD_WARP 32
#define HEAD_HALF_FLOAT4S (SP_MLP_HIDDEN / 8) // float4s in half a row: 32, one per lane

static_assert(SP_MLP_HIDDEN == 8 * HEAD_WARP, "a lane covers 8 columns of a hidden row");

static __device__ __forceinline__ float dot4(float4 a, float4 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

static __global__ void __launch_bounds__(HEAD_BLOCK_THREADS)
    head_kernel(const float4 *__restrict__ in, const float4 *__restrict__ w3,
                const float *__restrict__ b3, int32_t *__restrict__ labels, size_t records)
{
    const unsigned lane = threadIdx.x % HEAD_WARP;
    float4 w_lo[SP_MLP_CLASSES], w_hi[SP_MLP_CLASSES];
    for (int c = 0; c < SP_MLP_CLASSES; c++) {
        w_lo[c] = w3[c * (SP_MLP_HIDDEN / 4) + lane];
        w_hi[c] = w3[c * (SP_MLP_HIDDEN / 4) + HEAD_HALF_FLOAT4S + lane];
    }
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / HEAD_WARP;
    const size_t stride = (size_t)gridDim.x * blockDim.x / HEAD_WARP;
    for (size_t r = first; r < records; r += stride) {
        const float4 *row = in + r * (SP_MLP_HIDDEN / 4);
        const float4 lo = __ldcs(&row[lane]), hi = __ldcs(&row[HEAD_HALF_FLOAT4S + lane]);
        float logit[SP_MLP_CLASSES];
        for (int c = 0; c < SP_MLP_CLASSES; c++)
            logit[c] = dot4(lo, w_lo[c]) + dot4(hi, w_hi[c]);
        for (int offset = HEAD_WARP / 2; offset > 0; offset /= 2)
            for (int c = 0; c < SP_MLP_CLASSES; c++)
                logit[c] += __shfl_xor_sync(0xffffffffu, logit[c], offset);
        if (lane == 0) {
            int best = 0;
            float best_value = logit[0] + b3[0];
            for (int c = 1; c < SP_MLP_CLASSES; c++) {
                const float value = logit[c] + b3[c];
                if (value > best_value) { // strictly: the lowest class wins a tie
                    best = c;
                    best_value = value;
                }
            }
            labels[r] = best;
        }
    }
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" sp_status sp_mlp_head_enqueue(const float *w3, const float *b3, const float *in,
                                         int32_t *labels, size_t records, int sm_count,
                                         void *stream, char *err, size_t err_size)
{
    if (records == 0)
        return SP_OK;
    if (w3 == nullptr || b3 == nullptr || in == nullptr || labels == nullptr ||
        stream == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT, "head: NULL %s",
                             stream == nullptr ? "stream" : "device pointer");
    if (!aligned16(in) || !aligned16(w3))
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "head: buffers must be 16-byte aligned");
    const size_t warps_per_block = HEAD_BLOCK_THREADS / HEAD_WARP;
    const size_t needed = (records + warps_per_block - 1) / warps_per_block;
    const size_t filling = (size_t)(sm_count > 0 ? sm_count : 1) * HEAD_BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(needed < filling ? needed : filling);
    head_kernel<<<blocks, HEAD_BLOCK_THREADS, 0, static_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<const float4 *>(in), reinterpret_cast<const float4 *>(w3), b3, labels,
        records);
    return MLP_CUDA_CHECK(cudaGetLastError(), err, err_size);
}
