/* The busy-delay kernel behind queue_delay (used by the fault backend to make races certain). */
#ifndef SP_CUDA_DELAY_H
#define SP_CUDA_DELAY_H

#include <cuda_runtime.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues a one-thread kernel on `stream` that occupies it for about usec microseconds of
 * wall time. The stream's device must be current. usec == 0 enqueues nothing. */
sp_status sp_cuda_delay_enqueue(unsigned usec, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SP_CUDA_DELAY_H */
