/* Asynchronous copies on a queue. With pinned host memory the copy engine does the work and
 * the call returns at once; with pageable memory CUDA stages it itself (H2D returns once the
 * source has been read, D2H once the copy is done), which is correct but slow: the core
 * stages pageable data through pinned buffers so that this path is the exception. */
#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

static sp_status enqueue_copy(sp_cuda_impl *impl, void *dst, const void *src, size_t bytes,
                              sp_bqueue *q, enum cudaMemcpyKind kind, const char *call)
{
    if (!impl || !q || ((!dst || !src) && bytes > 0)) {
        sp_backend_fail("cuda %s: NULL argument", call);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (bytes == 0)
        return SP_OK;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return sp_cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, q->stream), call, __FILE__,
                         __LINE__);
}

sp_status sp_cuda_copy_h2d(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q)
{
    return enqueue_copy(impl, dst, src, bytes, q, cudaMemcpyHostToDevice,
                        "cudaMemcpyAsync(HostToDevice)");
}

sp_status sp_cuda_copy_d2h(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q)
{
    return enqueue_copy(impl, dst, src, bytes, q, cudaMemcpyDeviceToHost,
                        "cudaMemcpyAsync(DeviceToHost)");
}
