/* What a range of memory is (backend.h, memory_kind): device or managed memory of this
 * context's device or of another, or host memory, pinned or not. Both ends are asked: a range
 * that begins in device memory and ends in host memory is neither. */
#include <stdint.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

/* One byte's attributes; pageable memory reads as cudaMemoryTypeUnregistered (drivers before
 * CUDA 11 said cudaErrorInvalidValue, which means the same here). */
static sp_status byte_attributes(const char *byte, struct cudaPointerAttributes *attr)
{
    cudaError_t err = cudaPointerGetAttributes(attr, byte);
    if (err == cudaErrorInvalidValue) {
        (void)sp_cuda_absorb(err);
        attr->type = cudaMemoryTypeUnregistered;
        return SP_OK;
    }
    return SP_CUDA_CHECK(err);
}

static int on_device(const struct cudaPointerAttributes *a)
{
    return a->type == cudaMemoryTypeDevice || a->type == cudaMemoryTypeManaged;
}

sp_status sp_cuda_memory_kind(void *opaque, const void *ptr, size_t bytes, sp_mem_kind *kind)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !ptr || !kind || (uintptr_t)ptr > UINTPTR_MAX - (bytes ? bytes : 1)) {
        sp_backend_fail("cuda memory_kind: NULL argument or a range that wraps");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    struct cudaPointerAttributes first, last;
    if (status == SP_OK)
        status = byte_attributes(ptr, &first);
    if (status == SP_OK)
        status = byte_attributes((const char *)ptr + (bytes ? bytes - 1 : 0), &last);
    if (status != SP_OK)
        return status;
    if (on_device(&first) != on_device(&last) ||
        (on_device(&first) && first.device != last.device)) {
        *kind = SP_MEM_MIXED;
        return SP_OK;
    }
    if (on_device(&first)) {
        *kind = first.device == impl->device ? SP_MEM_DEVICE : SP_MEM_OTHER_DEVICE;
        return SP_OK;
    }
    int pinned = 0; /* host memory: pinned throughout, piece by piece (cuda_register.c) */
    status = sp_cuda_is_pinned(impl, ptr, bytes, &pinned);
    *kind = pinned ? SP_MEM_PINNED : SP_MEM_PAGEABLE;
    return status;
}
