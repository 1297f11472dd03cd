/* Device buffers and pinned host buffers. Both are allocated once per pipeline and reused:
 * cudaHostAlloc of 1 GiB takes about half a second (DESIGN.md section 6). */
#include <stdio.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

static sp_status bad_alloc_arguments(const char *what)
{
    sp_backend_fail("cuda %s: NULL output pointer or zero bytes", what);
    return SP_ERR_INVALID_ARGUMENT;
}

/* Replaces the generic reason with one that says how much was asked for and how much the
 * device had, which is what the user needs to choose a smaller chunk or depth. */
static void explain_device_oom(const sp_cuda_impl *impl, size_t bytes)
{
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    cudaError_t err = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (err != cudaSuccess) {
        (void)sp_cuda_absorb(err);
        sp_backend_fail("cudaMalloc of %zu bytes failed on CUDA device %d (%s): out of device "
                        "memory (cudaMemGetInfo failed too: %s)",
                        bytes, impl->device, impl->name, cudaGetErrorName(err));
        return;
    }
    sp_backend_fail("cudaMalloc of %zu bytes failed on CUDA device %d (%s): out of device "
                    "memory, %zu of %zu bytes free",
                    bytes, impl->device, impl->name, free_bytes, total_bytes);
}

sp_status sp_cuda_device_alloc(void *opaque, size_t bytes, void **out)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !out || bytes == 0)
        return bad_alloc_arguments("device_alloc");
    *out = NULL;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    void *ptr = NULL;
    status = SP_CUDA_CHECK(cudaMalloc(&ptr, bytes));
    if (status == SP_ERR_OUT_OF_DEVICE_MEMORY)
        explain_device_oom(impl, bytes);
    if (status == SP_OK)
        *out = ptr;
    return status;
}

/* cudaFree waits for the device to be idle; frees belong to teardown, never the hot path. */
void sp_cuda_device_free(void *opaque, void *ptr)
{
    sp_cuda_impl *impl = opaque;
    if (!ptr || !impl)
        return;
    if (sp_cuda_use_device(impl) == SP_OK)
        (void)SP_CUDA_CHECK(cudaFree(ptr));
}

/* Portable: the copy engines of every device treat it as pinned, not only this context's. */
sp_status sp_cuda_pinned_alloc(void *opaque, size_t bytes, void **out)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !out || bytes == 0)
        return bad_alloc_arguments("pinned_alloc");
    *out = NULL;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    void *ptr = NULL;
    char call[64];
    snprintf(call, sizeof call, "cudaHostAlloc(%zu bytes, Portable)", bytes);
    status = sp_cuda_check_pinned(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable), call,
                                  __FILE__, __LINE__);
    if (status == SP_OK)
        *out = ptr;
    return status;
}

void sp_cuda_pinned_free(void *opaque, void *ptr)
{
    sp_cuda_impl *impl = opaque;
    if (!ptr || !impl)
        return;
    if (sp_cuda_use_device(impl) == SP_OK)
        (void)SP_CUDA_CHECK(cudaFreeHost(ptr));
}
