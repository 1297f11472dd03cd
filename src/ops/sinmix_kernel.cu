// The sinmix kernel and its launcher. The CPU reference it must match is sp_sinmix_one in
// src/ops/sinmix.c: v = x*0.5 + x*x*0.1, then `iters` times v += sinf(v*0.01).

#include <stdint.h>

#include "ops/sinmix_cuda.h"

#define SINMIX_BLOCK_THREADS 256
#define SINMIX_MAX_BLOCKS 0x7fffffffu // the grid's x limit: 5.5e11 elements, beyond any chunk

// Each multiply and add is rounded on its own (no FMA contraction) exactly as the C reference
// does, so only sinf's own error separates the two. sinf is the accurate version: the
// library is never built with --use_fast_math. The explicit rounding costs nothing measurable
// against the plain expression CUDA would contract (bench/PERF.md, issue 17).
static __device__ __forceinline__ float sinmix_value(float x, unsigned iters)
{
    float v = __fadd_rn(__fmul_rn(x, 0.5f), __fmul_rn(__fmul_rn(x, x), 0.1f));
    for (unsigned k = 0; k < iters; k++)
        v = __fadd_rn(v, sinf(__fmul_rn(v, 0.01f)));
    return v;
}

// One element per thread and a grid that covers the input, so the block scheduler balances
// the SMs to the end of the launch. A grid capped at 8 blocks per SM with float4 strides, as
// this kernel was before, ran 7.5% slower on the H200 at 100 and 1000 iterations: every
// thread had about 8 elements' work and the SMs finished unevenly (bench/sinmix_variants.cu).
// Each element is read and written by the same thread, read first, so in == out is safe; the
// pointers are deliberately not __restrict__ for that reason.
static __global__ void sinmix_kernel(const float *in, float *out, size_t n, unsigned iters)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = sinmix_value(in[i], iters);
}

// The memory-bound shape (few iterations): four elements per thread through one 16-byte load
// and store, so a device-to-device run's stage moves HBM at the copy engines' rate rather than
// at 0.72 of it as one float per thread did (bench/PERF.md, issue 25). Still one thread's
// work per float4 and a grid that covers the input, so the SMs stay balanced; the last
// thread takes the 0-3 elements past the last whole float4. Read before written by the same
// thread: in == out stays safe.
#define SINMIX_VECTOR_MAX_ITERS 2
static __global__ void sinmix_kernel_x4(const float4 *in, float4 *out, size_t n4, const float *in1,
                                        float *out1, size_t n, unsigned iters)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        v.x = sinmix_value(v.x, iters);
        v.y = sinmix_value(v.y, iters);
        v.z = sinmix_value(v.z, iters);
        v.w = sinmix_value(v.w, iters);
        out[i] = v;
    } else if (i == n4) {
        for (size_t k = 4 * n4; k < n; k++)
            out1[k] = sinmix_value(in1[k], iters);
    }
}

static int sinmix_vectorizes(const float *in, const float *out, unsigned iters)
{
    return iters <= SINMIX_VECTOR_MAX_ITERS && ((uintptr_t)in % 16) == 0 &&
           ((uintptr_t)out % 16) == 0;
}

// Fails through sp_chunk_fail, as any user's stage would: a built-in stage has no other
// way to say why.
extern "C" sp_status sp_sinmix_cuda_enqueue(const sp_chunk *chunk, unsigned iters)
{
    const size_t n = chunk->records;
    const float *in = (const float *)chunk->in;
    float *out = (float *)chunk->out;
    if (n == 0)
        return SP_OK;
    if (!in || !out || !chunk->stream) {
        // A NULL stream would be the legacy default stream, which the library never uses.
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "sinmix: NULL %s for %zu elements",
                             chunk->stream ? "device pointer" : "stream", n);
    }
    const int x4 = sinmix_vectorizes(in, out, iters);
    const size_t threads = x4 ? n / 4 + 1 : n; /* x4: one more thread for the tail */
    const size_t needed = (threads + SINMIX_BLOCK_THREADS - 1) / SINMIX_BLOCK_THREADS;
    if (needed > SINMIX_MAX_BLOCKS)
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT,
                             "sinmix: %zu elements in one launch, more than a grid holds", n);
    const unsigned blocks = (unsigned)needed;
    cudaStream_t stream = (cudaStream_t)chunk->stream;
    if (x4)
        sinmix_kernel_x4<<<blocks, SINMIX_BLOCK_THREADS, 0, stream>>>(
            (const float4 *)in, (float4 *)out, n / 4, in, out, n, iters);
    else
        sinmix_kernel<<<blocks, SINMIX_BLOCK_THREADS, 0, stream>>>(in, out, n, iters);
    const cudaError_t launched = cudaGetLastError();
    if (launched == cudaSuccess)
        return SP_OK;
    return sp_chunk_fail(chunk, sp_cuda_error_status((int)launched),
                         "%s<<<%u, %d>>> failed: %s (%s)",
                         x4 ? "sinmix_kernel_x4" : "sinmix_kernel", blocks,
                         SINMIX_BLOCK_THREADS, cudaGetErrorName(launched),
                         cudaGetErrorString(launched));
}
