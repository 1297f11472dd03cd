/* Events: the dependencies between queues, and the per-chunk timings of the report.
 * CUDA's semantics match the backend contract directly: a wait is on the record made before
 * it, and waiting on (or synchronizing with) a never-recorded event returns at once. */
#include <stdlib.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

static sp_status null_argument(const char *what)
{
    sp_backend_fail("cuda %s: NULL argument", what);
    return SP_ERR_INVALID_ARGUMENT;
}

/* Ordering-only events skip the timestamp, which makes record and wait cheaper. */
static cudaError_t create_native_event(unsigned flags, cudaEvent_t *event)
{
    if (flags & SP_EVENT_TIMING)
        return cudaEventCreate(event);
    return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
}

sp_status sp_cuda_event_create(void *opaque, unsigned flags, sp_bevent **out)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !out)
        return null_argument("event_create");
    *out = NULL;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    sp_bevent *e = calloc(1, sizeof *e);
    if (!e) {
        sp_backend_fail("out of host memory for an event");
        return SP_ERR_OUT_OF_MEMORY;
    }
    status = sp_cuda_check(create_native_event(flags, &e->event),
                           (flags & SP_EVENT_TIMING) ? "cudaEventCreate"
                                                     : "cudaEventCreateWithFlags(DisableTiming)",
                           __FILE__, __LINE__);
    if (status != SP_OK) {
        free(e);
        return status;
    }
    *out = e;
    return SP_OK;
}

void sp_cuda_event_destroy(void *opaque, sp_bevent *e)
{
    sp_cuda_impl *impl = opaque;
    if (!e)
        return;
    if (impl && sp_cuda_use_device(impl) == SP_OK)
        (void)SP_CUDA_CHECK(cudaEventDestroy(e->event));
    free(e);
}

sp_status sp_cuda_event_record(void *opaque, sp_bevent *e, sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !e || !q)
        return null_argument("event_record");
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaEventRecord(e->event, q->stream));
}

sp_status sp_cuda_queue_wait(void *opaque, sp_bqueue *q, sp_bevent *e)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q || !e)
        return null_argument("queue_wait");
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaStreamWaitEvent(q->stream, e->event, 0));
}

sp_status sp_cuda_external_wait(void *opaque, void *native_queue, sp_bevent *e)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !native_queue || !e)
        return null_argument("external_wait");
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)native_queue, e->event, 0));
}

sp_status sp_cuda_event_sync(void *opaque, sp_bevent *e)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !e)
        return null_argument("event_sync");
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaEventSynchronize(e->event));
}

/* cudaErrorNotReady is the one failure that is an answer: the event's work is still queued.
 * It is not a sticky error, so there is nothing to consume. */
sp_status sp_cuda_event_query(void *opaque, sp_bevent *e, int *complete)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !e || !complete)
        return null_argument("event_query");
    *complete = 0;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    cudaError_t err = cudaEventQuery(e->event);
    if (err == cudaErrorNotReady)
        return SP_OK;
    status = sp_cuda_check(err, "cudaEventQuery", __FILE__, __LINE__);
    *complete = status == SP_OK;
    return status;
}

sp_status sp_cuda_event_elapsed(void *opaque, sp_bevent *from, sp_bevent *to, double *seconds)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !from || !to || !seconds)
        return null_argument("event_elapsed");
    *seconds = 0.0;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    float ms = 0.0f;
    status = SP_CUDA_CHECK(cudaEventElapsedTime(&ms, from->event, to->event));
    if (status == SP_OK)
        *seconds = (double)ms / 1000.0;
    return status;
}
