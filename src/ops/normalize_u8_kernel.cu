// The normalize_u8 kernel and its launcher. The CPU reference it must match bit for bit is
// sp_normalize_u8_reference in src/ops/normalize_u8.c: out = x * scale + shift, the multiply
// and the add each rounded on its own.

#include "ops/normalize_u8_cuda.h"

#define NORMALIZE_BLOCK_THREADS 256
#define NORMALIZE_MAX_BLOCKS 0x7fffffffu // the grid's x limit

// Four values per thread: one 32-bit load of uint8s and four float stores, where the chunk's
// buffers allow it (the slots are allocated aligned; a device end may not be), so a memory-
// bound stage moves whole words. The tail and unaligned buffers go one value at a time.
static __global__ void normalize_u8_kernel(const unsigned char *in, float *out, size_t n,
                                           float scale, float shift, int vector)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t i = 4 * t;
    if (vector && i + 4 <= n) {
        const uchar4 x = *(const uchar4 *)(in + i);
        float4 y;
        y.x = __fadd_rn(__fmul_rn((float)x.x, scale), shift);
        y.y = __fadd_rn(__fmul_rn((float)x.y, scale), shift);
        y.z = __fadd_rn(__fmul_rn((float)x.z, scale), shift);
        y.w = __fadd_rn(__fmul_rn((float)x.w, scale), shift);
        *(float4 *)(out + i) = y;
        return;
    }
    for (size_t k = i; k < i + 4 && k < n; k++)
        out[k] = __fadd_rn(__fmul_rn((float)in[k], scale), shift);
}

extern "C" sp_status sp_normalize_u8_cuda_enqueue(const sp_chunk *chunk, size_t n, float scale,
                                                  float shift)
{
    const unsigned char *in = (const unsigned char *)chunk->in;
    float *out = (float *)chunk->out;
    if (!in || !out || !chunk->stream) {
        // A NULL stream would be the legacy default stream, which the library never uses.
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT,
                             "normalize_u8: NULL %s for %zu values",
                             chunk->stream ? "device pointer" : "stream", n);
    }
    const size_t threads = (n + 3) / 4;
    const size_t needed = (threads + NORMALIZE_BLOCK_THREADS - 1) / NORMALIZE_BLOCK_THREADS;
    if (needed > NORMALIZE_MAX_BLOCKS)
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT,
                             "normalize_u8: %zu values in one launch, more than a grid holds", n);
    const int vector = (uintptr_t)in % 4 == 0 && (uintptr_t)out % 16 == 0;
    const unsigned blocks = (unsigned)needed;
    normalize_u8_kernel<<<blocks, NORMALIZE_BLOCK_THREADS, 0, (cudaStream_t)chunk->stream>>>(
        in, out, n, scale, shift, vector);
    const cudaError_t launched = cudaGetLastError();
    if (launched == cudaSuccess)
        return SP_OK;
    return sp_chunk_fail(chunk, sp_cuda_error_status((int)launched),
                         "normalize_u8_kernel<<<%u, %d>>> failed: %s (%s)", blocks,
                         NORMALIZE_BLOCK_THREADS, cudaGetErrorName(launched),
                         cudaGetErrorString(launched));
}
