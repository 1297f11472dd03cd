// The digits MLP's head: the last layer (256 -> 10) and the argmax in one kernel, so the ten
// logits never leave registers. Its reference is sp_mlp_head_host (src/mlp/mlp_host.c).
//
// A warp takes HEAD_RECORDS records at a time and issues all their loads before any
// arithmetic: the stage reads 1 KiB per record and does little with it, so its speed is set
// by how many bytes are in flight, not by the arithmetic. For each record, lane l holds
// columns [4l, 4l+4) and [128+4l, 128+4l+4) (two 16-byte loads; the warp reads the row in two
// fully coalesced 512-byte pieces) and the same columns of all ten weight rows, kept in
// registers for the whole kernel.
//
// The ten partial sums are then added across the warp by halving: padded to 16 classes, at
// each step a lane keeps half of its values and swaps the other half with a partner, so 15
// shuffles (plus one) leave lane l with the total of class (l >> 1) & 15, where summing each
// class on its own would take 50. The argmax is 4 more shuffle steps over those lanes, the
// lower class winning a tie as in the reference.
#include <cstdint>

#include "mlp/mlp_cuda.h"
#include "mlp/mlp_cuda_check.h"

#define HEAD_BLOCK_THREADS 256
#define HEAD_MIN_BLOCKS_PER_SM 2 // caps registers at 128 per thread, 16 warps per SM
#define HEAD_BLOCKS_PER_SM 8
#define HEAD_RECORDS 2           // records a warp loads together
#define HEAD_WARP 32
#define HEAD_PADDED 16           // classes padded to a power of two for the halving sum
#define HEAD_HALF_FLOAT4S (SP_MLP_HIDDEN / 8) // float4s in half a row: 32, one per lane
#define FULL_MASK 0xffffffffu

static_assert(SP_MLP_HIDDEN == 8 * HEAD_WARP, "a lane covers 8 columns of a hidden row");
static_assert(SP_MLP_CLASSES <= HEAD_PADDED, "the classes fit the padded sum");

static __device__ __forceinline__ float dot4(float4 a, float4 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

// One halving step: lanes whose bit (2 * HALF) is set keep v[HALF..2*HALF) and send
// v[0..HALF); their partners keep and send the other halves. Afterwards v[0..HALF) holds
// the pair's sums of the kept classes.
template <int HALF>
static __device__ __forceinline__ void fold(float (&v)[HEAD_PADDED], unsigned lane)
{
    const bool upper = (lane & (2 * HALF)) != 0;
#pragma unroll
    for (int j = 0; j < HALF; j++) {
        const float send = upper ? v[j] : v[j + HALF];
        const float keep = upper ? v[j + HALF] : v[j];
        v[j] = keep + __shfl_xor_sync(FULL_MASK, send, 2 * HALF);
    }
}

// The class of the largest logit; `bias` is this lane's class's bias (see lane_class).
static __device__ __forceinline__ int argmax_across(float (&v)[HEAD_PADDED], unsigned lane,
                                                    float bias)
{
    fold<8>(v, lane);
    fold<4>(v, lane);
    fold<2>(v, lane);
    fold<1>(v, lane);
    float value = v[0] + __shfl_xor_sync(FULL_MASK, v[0], 1);
    int cls = (int)((lane >> 1) & (HEAD_PADDED - 1));
    value = cls < SP_MLP_CLASSES ? value + bias : -INFINITY;
#pragma unroll
    for (int offset = 2; offset < HEAD_WARP; offset *= 2) {
        const float other = __shfl_xor_sync(FULL_MASK, value, offset);
        const int other_cls = __shfl_xor_sync(FULL_MASK, cls, offset);
        if (other > value || (other == value && other_cls < cls)) {
            value = other;
            cls = other_cls;
        }
    }
    return cls;
}

static __device__ __forceinline__ int head_of_row(float4 lo, float4 hi, const float4 (&w_lo)[10],
                                                  const float4 (&w_hi)[10], unsigned lane,
                                                  float bias)
{
    float v[HEAD_PADDED];
#pragma unroll
    for (int c = 0; c < HEAD_PADDED; c++)
        v[c] = c < SP_MLP_CLASSES ? dot4(lo, w_lo[c]) + dot4(hi, w_hi[c]) : 0.0f;
    return argmax_across(v, lane, bias);
}

static __global__ void __launch_bounds__(HEAD_BLOCK_THREADS, HEAD_MIN_BLOCKS_PER_SM)
    head_kernel(const float4 *__restrict__ in, const float4 *__restrict__ w3,
                const float *__restrict__ b3, int32_t *__restrict__ labels, size_t records)
{
    const unsigned lane = threadIdx.x % HEAD_WARP;
    float4 w_lo[SP_MLP_CLASSES], w_hi[SP_MLP_CLASSES];
#pragma unroll
    for (int c = 0; c < SP_MLP_CLASSES; c++) {
        w_lo[c] = w3[c * (SP_MLP_HIDDEN / 4) + lane];
        w_hi[c] = w3[c * (SP_MLP_HIDDEN / 4) + HEAD_HALF_FLOAT4S + lane];
    }
    const unsigned my_class = (lane >> 1) & (HEAD_PADDED - 1);
    const float bias = my_class < SP_MLP_CLASSES ? b3[my_class] : 0.0f;
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / HEAD_WARP;
    const size_t warps = (size_t)gridDim.x * blockDim.x / HEAD_WARP;
    for (size_t first = warp * HEAD_RECORDS; first < records; first += warps * HEAD_RECORDS) {
        float4 lo[HEAD_RECORDS], hi[HEAD_RECORDS];
#pragma unroll
        for (int k = 0; k < HEAD_RECORDS; k++) { // every load first: the bytes in flight
            const size_t r = first + k < records ? first + k : first;
            const float4 *row = in + r * (SP_MLP_HIDDEN / 4);
            lo[k] = __ldcs(&row[lane]);
            hi[k] = __ldcs(&row[HEAD_HALF_FLOAT4S + lane]);
        }
#pragma unroll
        for (int k = 0; k < HEAD_RECORDS; k++) {
            const int best = head_of_row(lo[k], hi[k], w_lo, w_hi, lane, bias);
            if (lane == (unsigned)k && first + k < records)
                labels[first + k] = best;
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
    const size_t records_per_block = HEAD_BLOCK_THREADS / HEAD_WARP * HEAD_RECORDS;
    const size_t needed = (records + records_per_block - 1) / records_per_block;
    const size_t filling = (size_t)(sm_count > 0 ? sm_count : 1) * HEAD_BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(needed < filling ? needed : filling);
    head_kernel<<<blocks, HEAD_BLOCK_THREADS, 0, static_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<const float4 *>(in), reinterpret_cast<const float4 *>(w3), b3, labels,
        records);
    return MLP_CUDA_CHECK(cudaGetLastError(), err, err_size);
}
