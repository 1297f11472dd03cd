/* The launcher of the normalize_u8 kernel (src/ops/normalize_u8_kernel.cu); its reference is
 * sp_normalize_u8_reference in src/ops/normalize_u8.c. Only built with CUDA. */
#ifndef SP_NORMALIZE_U8_CUDA_H
#define SP_NORMALIZE_U8_CUDA_H

#include <stddef.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues out[i] = in[i] * scale + shift for the chunk's n values (n > 0) on chunk->stream;
 * in (uint8) and out (float32) are device memory. A failed launch fails the chunk with its
 * reason (sp_chunk_fail). */
sp_status sp_normalize_u8_cuda_enqueue(const sp_chunk *chunk, size_t n, float scale,
                                       float shift);

#ifdef __cplusplus
}
#endif

#endif /* SP_NORMALIZE_U8_CUDA_H */
