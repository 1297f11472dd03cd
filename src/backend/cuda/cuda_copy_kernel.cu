// Host<->device copies done by a kernel (copy_kernel). The copy engines serve one busy stream
// until it is empty, whatever the streams' priorities (bench/PERF.md), so a small copy of a
// latency-critical pipeline waits behind every copy another pipeline has queued. A kernel on the
// pipeline's own stream instead reads or writes the pinned host memory directly over PCIe
// (zero-copy: mapped pinned memory is addressable from the device) and is scheduled on the SMs
// by stream priority. It costs SM time and is slower than the engines for large copies.
#include <stdint.h>

#include "backend/cuda/cuda_copy_kernel.h"
#include "backend/cuda/cuda_error.h"

#define COPY_THREADS 256
// 16-byte loads each thread issues before its stores: a read over PCIe takes about a
// microsecond, so each thread keeps several in flight rather than one.
#define COPY_UNROLL 4
#define COPY_VECTOR 16 // bytes of one uint4

// [0, head) and [head + 16 * n_vec, bytes) byte by byte; in between 16 bytes at a time, where
// both src + head and dst + head are 16-byte aligned (the launcher chooses head so). Every loop
// is grid-stride, so any grid covers any size; consecutive threads touch consecutive addresses,
// so each warp's accesses coalesce into whole PCIe transactions. No __restrict__: it would let
// the compiler read host memory through the non-coherent texture path, which gains nothing for
// a stream read once; the loads come before the stores in program order anyway.
static __global__ void __launch_bounds__(COPY_THREADS)
    copy_kernel(unsigned char *dst, const unsigned char *src, size_t head, size_t n_vec,
                size_t bytes)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t threads = (size_t)gridDim.x * blockDim.x;
    for (size_t i = tid; i < head; i += threads)
        dst[i] = src[i];
    uint4 *vdst = reinterpret_cast<uint4 *>(dst + head);
    const uint4 *vsrc = reinterpret_cast<const uint4 *>(src + head);
    for (size_t base = tid; base < n_vec; base += threads * COPY_UNROLL) {
        uint4 v[COPY_UNROLL] = {};
#pragma unroll
        for (int k = 0; k < COPY_UNROLL; k++) {
            const size_t i = base + (size_t)k * threads;
            if (i < n_vec)
                v[k] = vsrc[i];
        }
#pragma unroll
        for (int k = 0; k < COPY_UNROLL; k++) {
            const size_t i = base + (size_t)k * threads;
            if (i < n_vec)
                vdst[i] = v[k];
        }
    }
    for (size_t i = head + n_vec * COPY_VECTOR + tid; i < bytes; i += threads)
        dst[i] = src[i];
}

// Blocks for `bytes`: enough for one pass of COPY_UNROLL vectors per thread (a 1 MiB copy
// takes 64 blocks, fewer than the H200's 132 SMs, with all of it in flight at once), at most
// max_blocks, so that a large copy loops instead of taking every SM from the other kernels.
static unsigned grid_blocks(size_t bytes, int max_blocks)
{
    const size_t per_block = (size_t)COPY_THREADS * COPY_UNROLL * COPY_VECTOR;
    size_t blocks = (bytes + per_block - 1) / per_block;
    size_t cap = max_blocks > 0 ? (size_t)max_blocks : 1;
    if (blocks > cap)
        blocks = cap;
    return blocks > 0 ? (unsigned)blocks : 1u;
}

extern "C" sp_status sp_cuda_copy_kernel_enqueue(void *dst, const void *src, size_t bytes,
                                                 int max_blocks, cudaStream_t stream)
{
    if (bytes == 0)
        return SP_OK;
    const size_t src_mis = (size_t)((uintptr_t)src % COPY_VECTOR);
    const size_t dst_mis = (size_t)((uintptr_t)dst % COPY_VECTOR);
    // Vectors only when a common head brings both to 16-byte alignment; else byte by byte.
    size_t head = bytes, n_vec = 0;
    if (src_mis == dst_mis) {
        const size_t lead = (COPY_VECTOR - src_mis) % COPY_VECTOR;
        head = lead < bytes ? lead : bytes;
        n_vec = (bytes - head) / COPY_VECTOR;
    }
    // An error left over from code outside the library must not be blamed on this launch; a
    // sticky one means the device is already gone.
    const cudaError_t stale = cudaGetLastError();
    if (sp_cuda_is_sticky(stale))
        return sp_cuda_check(stale, "device check before copy_kernel", __FILE__, __LINE__);
    copy_kernel<<<grid_blocks(bytes, max_blocks), COPY_THREADS, 0, stream>>>(
        static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src), head, n_vec,
        bytes);
    return sp_cuda_check(cudaGetLastError(), "copy_kernel<<<blocks, 256>>>", __FILE__,
                         __LINE__);
}
