/* Asynchronous copies on a queue. With pinned host memory the copy engine does the work and
 * the call returns at once; with pageable memory CUDA stages it itself (H2D returns once the
 * source has been read, D2H once the copy is done), which is correct but slow: the core
 * stages pageable data through pinned buffers so that this path is the exception.
 * copy_kernel does the copy with a kernel on the queue instead (cuda_copy_kernel.cu). */
#include <stdint.h>

#include "backend/cuda/cuda_copy_kernel.h"
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

sp_status sp_cuda_copy_d2d(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q)
{
    return enqueue_copy(impl, dst, src, bytes, q, cudaMemcpyDeviceToDevice,
                        "cudaMemcpyAsync(DeviceToDevice)");
}

/* One attribute query; pageable memory reads as cudaMemoryTypeUnregistered (drivers before
 * CUDA 11 said cudaErrorInvalidValue, which means the same here). */
static sp_status pointer_attributes(const void *ptr, struct cudaPointerAttributes *attr)
{
    cudaError_t err = cudaPointerGetAttributes(attr, ptr);
    if (err == cudaErrorInvalidValue) {
        (void)sp_cuda_absorb(err);
        attr->type = cudaMemoryTypeUnregistered;
        attr->devicePointer = NULL;
        return SP_OK;
    }
    return SP_CUDA_CHECK(err);
}

/* The address a kernel on impl's device (current) reads or writes [ptr, ptr + bytes) at.
 * Device and managed memory: ptr. Pinned host memory: its device address, which under
 * unified addressing is ptr itself where cudaDevAttrCanUseHostPointerForRegisteredMem is set
 * (the H200 on x86-64 Linux), but which is asked for rather than assumed: memory that someone
 * else pinned without cudaHostRegisterMapped has none, and a kernel touching it would lose the
 * context. Both ends are asked, so a range over two registrations mapped apart is refused. */
static sp_status kernel_address(const sp_cuda_impl *impl, const void *ptr, size_t bytes,
                                const char *side, const void **out)
{
    struct cudaPointerAttributes first, last;
    sp_status status = pointer_attributes(ptr, &first);
    if (status != SP_OK)
        return status;
    if (first.type == cudaMemoryTypeManaged ||
        (first.type == cudaMemoryTypeDevice && first.device == impl->device)) {
        *out = ptr;
        return SP_OK;
    }
    if (first.type != cudaMemoryTypeHost) {
        sp_backend_fail("cuda copy_kernel: the %s at %p is neither pinned host memory nor "
                        "memory of CUDA device %d", side, ptr, impl->device);
        return SP_ERR_INVALID_ARGUMENT;
    }
    status = pointer_attributes((const char *)ptr + bytes - 1, &last);
    if (status != SP_OK)
        return status;
    const char *device_first = first.devicePointer;
    const char *device_last = last.type == cudaMemoryTypeHost ? last.devicePointer : NULL;
    if (!device_first || device_last != device_first + (bytes - 1)) {
        sp_backend_fail("cuda copy_kernel: the %s, %zu bytes of pinned host memory at %p, is "
                        "not mapped for CUDA device %d in one piece (pinned without "
                        "cudaHostRegisterMapped?)", side, bytes, ptr, impl->device);
        return SP_ERR_UNSUPPORTED;
    }
    *out = device_first;
    return SP_OK;
}

sp_status sp_cuda_copy_kernel(void *opaque, void *dst, const void *src, size_t bytes,
                              sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q || ((!dst || !src) && bytes > 0)) {
        sp_backend_fail("cuda copy_kernel: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (bytes == 0)
        return SP_OK;
    sp_status status = sp_cuda_use_device(impl);
    const void *to = NULL, *from = NULL;
    if (status == SP_OK)
        status = kernel_address(impl, dst, bytes, "destination", &to);
    if (status == SP_OK)
        status = kernel_address(impl, src, bytes, "source", &from);
    if (status != SP_OK)
        return status;
    /* Up to two blocks per SM for large copies: enough to keep PCIe busy; small ones take
     * fewer (cuda_copy_kernel.cu). */
    return sp_cuda_copy_kernel_enqueue((void *)(uintptr_t)to, from, bytes, 2 * impl->sm_count,
                                       q->stream);
}
