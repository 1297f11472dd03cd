/* Queues are non-blocking CUDA streams: they never wait for, or make wait, the legacy default
 * stream, which other code in the process may be using. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cuda_delay.h"
#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

/* CUDA priorities run from `least` (0) down to `greatest` (e.g. -5); a number outside is
 * clamped by CUDA too, but clamping here keeps the behaviour independent of the driver. */
static int clamp_priority(const sp_cuda_impl *impl, int priority)
{
    if (priority > impl->priority_least)
        return impl->priority_least;
    if (priority < impl->priority_greatest)
        return impl->priority_greatest;
    return priority;
}

sp_status sp_cuda_queue_create(void *opaque, const char *name, int priority, sp_bqueue **out)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !out) {
        sp_backend_fail("cuda queue_create: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    sp_bqueue *q = calloc(1, sizeof *q);
    if (!q) {
        sp_backend_fail("out of host memory for queue '%s'", name ? name : "");
        return SP_ERR_OUT_OF_MEMORY;
    }
    snprintf(q->name, sizeof q->name, "%s", name ? name : "");
    status = SP_CUDA_CHECK(cudaStreamCreateWithPriority(&q->stream, cudaStreamNonBlocking,
                                                        clamp_priority(impl, priority)));
    if (status != SP_OK) {
        free(q);
        return status;
    }
    sp_cuda_name_stream(q->stream, q->name);
    *out = q;
    return SP_OK;
}

/* cudaStreamDestroy returns at once; work still queued completes before the stream's
 * resources go, so no synchronization is needed here. */
void sp_cuda_queue_destroy(void *opaque, sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!q)
        return;
    if (impl && sp_cuda_use_device(impl) == SP_OK)
        (void)SP_CUDA_CHECK(cudaStreamDestroy(q->stream));
    free(q);
}

sp_status sp_cuda_queue_sync(void *opaque, sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q) {
        sp_backend_fail("cuda queue_sync: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaStreamSynchronize(q->stream));
}

sp_status sp_cuda_queue_delay(void *opaque, sp_bqueue *q, unsigned usec)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q) {
        sp_backend_fail("cuda queue_delay: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    /* A kernel must be launched with its stream's device current. */
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return sp_cuda_delay_enqueue(usec, q->stream);
}
