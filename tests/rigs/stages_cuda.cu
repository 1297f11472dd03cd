/* Device side of the mix test stages: one thread per record, the same arithmetic as
 * record_hash/spread_byte in stages.c (an independent copy, so the GPU result is checked
 * against the host reference rather than against itself). */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

__device__ static uint32_t mix_hash_dev(const uint8_t *in, size_t n, uint32_t salt,
                                        uint64_t index)
{
    uint32_t h = FNV_OFFSET ^ salt;
    for (unsigned k = 0; k < 8; k++)
        h = (h ^ (uint8_t)(index >> (8 * k))) * FNV_PRIME;
    for (size_t i = 0; i < n; i++)
        h = (h ^ in[i]) * FNV_PRIME;
    return h;
}

__device__ static uint8_t spread_byte_dev(uint32_t h, size_t j)
{
    uint32_t x = h + (uint32_t)j * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return (uint8_t)x;
}

__global__ static void mix_kernel(const uint8_t *in, uint8_t *out, size_t records,
                                  size_t in_rec, size_t out_rec, uint32_t salt,
                                  size_t first_record)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x; r < records; r += stride) {
        uint32_t h = mix_hash_dev(in + r * in_rec, in_rec, salt, first_record + r);
        for (size_t j = 0; j < out_rec; j++)
            out[r * out_rec + j] = spread_byte_dev(h, j);
    }
}

extern "C" int sp_test_mix_cuda(const void *in, void *out, size_t records, size_t in_rec,
                                size_t out_rec, uint32_t salt, size_t first_record,
                                void *stream)
{
    const unsigned threads = 256;
    size_t want = (records + threads - 1) / threads;
    unsigned blocks = (unsigned)(want < 4096 ? (want > 0 ? want : 1) : 4096);
    mix_kernel<<<blocks, threads, 0, (cudaStream_t)stream>>>(
        (const uint8_t *)in, (uint8_t *)out, records, in_rec, out_rec, salt, first_record);
    return (int)cudaGetLastError();
}

/* A consumer's CUDA stream for the hand-off tests, a copy on it, a sync: 0 or a cudaError_t. */
extern "C" int sp_test_stream_new(void **stream)
{
    cudaStream_t s = NULL;
    int err = (int)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    *stream = s;
    return err;
}

extern "C" int sp_test_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
    return (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream);
}

extern "C" int sp_test_stream_sync(void *stream)
{
    return (int)cudaStreamSynchronize((cudaStream_t)stream);
}

extern "C" void sp_test_stream_free(void *stream) { cudaStreamDestroy((cudaStream_t)stream); }
