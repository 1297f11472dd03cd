/* The copy kernel behind copy_kernel: host<->device copies done on the SMs, reading and writing
 * mapped pinned host memory over PCIe, so that they run on their own stream's turn instead of
 * queueing behind other streams' copies on the copy engines. */
#ifndef SP_CUDA_COPY_KERNEL_H
#define SP_CUDA_COPY_KERNEL_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues a kernel on `stream` that copies `bytes` from src to dst, both addresses the
 * current device can dereference (device memory, or the device address of mapped pinned host
 * memory). At most max_blocks blocks (>= 1). The stream's device must be current. bytes == 0
 * enqueues nothing. Launch errors are mapped by sp_cuda_check. */
sp_status sp_cuda_copy_kernel_enqueue(void *dst, const void *src, size_t bytes, int max_blocks,
                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SP_CUDA_COPY_KERNEL_H */
