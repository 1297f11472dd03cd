/* Running a stage for one chunk: the stage's function enqueues its kernels on the queue's
 * stream from the calling thread; launch errors are caught right after it returns. */
#include <stdio.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

/* An error left over from code outside the library (non-sticky, so harmless to the device)
 * must not be blamed on this stage; a sticky one means the device is already gone. */
static sp_status clear_stale_error(const sp_bqueue *q)
{
    cudaError_t stale = cudaGetLastError();
    if (!sp_cuda_is_sticky(stale))
        return SP_OK;
    char call[96];
    snprintf(call, sizeof call, "device check before the stage launch on queue '%s'", q->name);
    return sp_cuda_check(stale, call, __FILE__, __LINE__);
}

sp_status sp_cuda_launch(void *opaque, sp_bqueue *q, sp_launch_fn fn, void *arg,
                         const sp_chunk *chunk)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q || !fn || !chunk) {
        sp_backend_fail("cuda launch: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    /* Kernels launch on the current device and fail if the stream belongs to another. */
    sp_status status = sp_cuda_use_device(impl);
    if (status == SP_OK)
        status = clear_stale_error(q);
    if (status != SP_OK)
        return status;

    sp_chunk native = *chunk;
    native.stream = (void *)q->stream;
    sp_status fn_status = fn(&native, arg);
    cudaError_t launch_err = cudaGetLastError();

    /* The stage's own failure (and its reason) wins, unless the device was lost meanwhile:
     * that is the more important news and every later call will report it anyway. */
    if (fn_status != SP_OK && !sp_cuda_is_sticky(launch_err)) {
        (void)sp_cuda_absorb(launch_err);
        return fn_status;
    }
    if (launch_err == cudaSuccess)
        return SP_OK;
    char call[96];
    snprintf(call, sizeof call, "stage launch on queue '%s' (chunk %zu)", q->name,
             chunk->index);
    return sp_cuda_check(launch_err, call, __FILE__, __LINE__);
}
