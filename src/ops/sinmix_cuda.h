/* The launcher of the sinmix kernel (src/ops/sinmix_kernel.cu); its reference is
 * sp_sinmix_reference in src/ops/sinmix.c. Only built with CUDA. */
#ifndef SP_SINMIX_CUDA_H
#define SP_SINMIX_CUDA_H

#include <stddef.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues out[i] = sinmix(in[i]) for i < n on `stream` (a cudaStream_t of the current
 * device); in and out are device memory and may be equal. n == 0 enqueues nothing. Returns
 * SP_ERR_BACKEND (or SP_ERR_DEVICE_LOST) with a reason when the launch fails. */
sp_status sp_sinmix_cuda_enqueue(const float *in, float *out, size_t n, unsigned iters,
                                 void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SP_SINMIX_CUDA_H */
