/* The launcher of the sinmix kernel (src/ops/sinmix_kernel.cu); its reference is
 * sp_sinmix_reference in src/ops/sinmix.c. Only built with CUDA. */
#ifndef SP_SINMIX_CUDA_H
#define SP_SINMIX_CUDA_H

#include <stddef.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues out[i] = sinmix(in[i]) for the chunk's records on chunk->stream (a cudaStream_t
 * of the current device); in and out are device memory and may be equal. No records enqueue
 * nothing. A failed launch fails the chunk with its reason (sp_chunk_fail). */
sp_status sp_sinmix_cuda_enqueue(const sp_chunk *chunk, unsigned iters);

#ifdef __cplusplus
}
#endif

#endif /* SP_SINMIX_CUDA_H */
