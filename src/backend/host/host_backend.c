/* The HOST backend's table: the executable specification of backend.h. Each entry checks
 * its arguments and hands the work to the queue, event or memory module. */
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/host/host_event.h"
#include "backend/host/host_graph.h"
#include "backend/host/host_memory.h"
#include "backend/host/host_queue.h"

typedef struct host_backend {
    sp_live_list queues; /* live queues, destroyed at close */
    sp_live_list events; /* live events, destroyed at close */
    host_memory memory;
} host_backend;

static sp_status invalid(const char *reason)
{
    sp_backend_fail("host %s", reason);
    return SP_ERR_INVALID_ARGUMENT;
}

/* ---- lifetime ------------------------------------------------------------------------- */

static sp_status op_open(int device, void **impl)
{
    (void)device; /* one host, nothing to choose */
    if (!impl)
        return invalid("open: impl is NULL");
    host_backend *backend = calloc(1, sizeof *backend);
    if (!backend) {
        sp_backend_fail("host open: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    sp_status status = sp_live_list_init(&backend->queues);
    if (status != SP_OK)
        goto no_queues;
    status = sp_live_list_init(&backend->events);
    if (status != SP_OK)
        goto no_events;
    status = sp_host_memory_init(&backend->memory);
    if (status != SP_OK)
        goto no_memory;
    *impl = backend;
    return SP_OK;
no_memory:
    sp_live_list_destroy(&backend->events);
no_events:
    sp_live_list_destroy(&backend->queues);
no_queues:
    free(backend);
    return status;
}

static void op_close(void *impl)
{
    host_backend *backend = impl;
    if (!backend)
        return;
    /* Queues first: draining them runs the operations that still reference events and
     * memory. */
    sp_host_queue_destroy_all(&backend->queues);
    sp_host_event_destroy_all(&backend->events);
    sp_host_memory_release_all(&backend->memory);
    sp_live_list_destroy(&backend->events);
    sp_live_list_destroy(&backend->queues);
    free(backend);
}

/* ---- queues --------------------------------------------------------------------------- */

static sp_status op_queue_create(void *impl, const char *name, int priority, sp_bqueue **out)
{
    (void)name;     /* only the fault backend looks at names */
    (void)priority; /* one worker per queue; the OS schedules them */
    if (!out)
        return invalid("queue_create: out is NULL");
    *out = NULL;
    host_backend *backend = impl;
    return sp_host_queue_create(&backend->queues, out);
}

static void op_queue_destroy(void *impl, sp_bqueue *queue)
{
    (void)impl;
    sp_host_queue_destroy(queue);
}

static sp_status op_queue_sync(void *impl, sp_bqueue *queue)
{
    (void)impl;
    if (!queue)
        return invalid("queue_sync: queue is NULL");
    sp_bgraph *graph = sp_host_queue_capture(queue);
    if (graph) { /* the recorded work never runs: waiting for it would hang */
        sp_host_graph_break(graph, "the queue was synchronized during the capture");
        sp_backend_fail("host queue_sync: not allowed while the queue is capturing a graph");
        return SP_ERR_UNSUPPORTED;
    }
    return sp_host_queue_sync(queue);
}

/* A worker always gets through its operations (a failing stage returns; a wait waits only
 * for records enqueued before it, which other workers get through), so this always ends
 * with the queue idle. Work recorded into a capture is not the queue's: not waited for. */
static sp_status op_queue_drain(void *impl, sp_bqueue *queue)
{
    (void)impl;
    if (!queue)
        return invalid("queue_drain: queue is NULL");
    return sp_host_queue_sync(queue);
}

static sp_status op_queue_delay(void *impl, sp_bqueue *queue, unsigned usec)
{
    (void)impl;
    if (!queue)
        return invalid("queue_delay: queue is NULL");
    host_op op = {.kind = HOST_OP_DELAY, .u.delay_us = usec};
    return sp_host_queue_push(queue, &op);
}

/* ---- events --------------------------------------------------------------------------- */

static sp_status op_event_create(void *impl, unsigned flags, sp_bevent **out)
{
    if (!out)
        return invalid("event_create: out is NULL");
    *out = NULL;
    host_backend *backend = impl;
    return sp_host_event_create(&backend->events, flags, out);
}

static void op_event_destroy(void *impl, sp_bevent *event)
{
    (void)impl;
    sp_host_event_destroy(event);
}

/* During a capture, event records and waits are the capture's forks and joins
 * (host_graph.c): nothing is pushed. */
static sp_status op_event_record(void *impl, sp_bevent *event, sp_bqueue *queue)
{
    (void)impl;
    if (!event || !queue)
        return invalid("event_record: event or queue is NULL");
    sp_bgraph *graph = sp_host_queue_capture(queue);
    if (graph)
        return sp_host_graph_record(graph, queue, event);
    /* The generation is taken with the slot reserved, so a full FIFO cannot leave behind a
     * generation that no operation will ever complete. */
    host_op *op = sp_host_queue_begin_push(queue);
    if (!op)
        return SP_ERR_OUT_OF_MEMORY;
    op->kind = HOST_OP_RECORD;
    op->u.mark.event = event;
    op->u.mark.generation = sp_host_event_begin_record(event);
    sp_host_queue_end_push(queue);
    return SP_OK;
}

static sp_status op_queue_wait(void *impl, sp_bqueue *queue, sp_bevent *event)
{
    (void)impl;
    if (!event || !queue)
        return invalid("queue_wait: event or queue is NULL");
    sp_bgraph *mine = sp_host_queue_capture(queue), *its = sp_host_event_recorded_in(event);
    if (mine || its)
        return sp_host_graph_wait(queue, event, mine, its);
    host_op *op = sp_host_queue_begin_push(queue);
    if (!op)
        return SP_ERR_OUT_OF_MEMORY;
    op->kind = HOST_OP_WAIT;
    op->u.mark.event = event;
    op->u.mark.generation = sp_host_event_capture(event);
    sp_host_queue_end_push(queue);
    return SP_OK;
}

/* An event recorded in a capture under way stands for work that has not been launched, as
 * on CUDA: asking after it is an error and breaks the capture. */
static sp_status refuse_captured(sp_bevent *event, const char *what)
{
    sp_bgraph *graph = sp_host_event_recorded_in(event);
    if (!graph)
        return SP_OK;
    sp_host_graph_break(graph, "an event recorded in the capture was waited for by the host");
    sp_backend_fail("host %s: the event was recorded in a capture under way", what);
    return SP_ERR_UNSUPPORTED;
}

static sp_status op_event_sync(void *impl, sp_bevent *event)
{
    (void)impl;
    if (!event)
        return invalid("event_sync: event is NULL");
    sp_status st = refuse_captured(event, "event_sync");
    if (st != SP_OK)
        return st;
    sp_host_event_sync(event);
    return SP_OK;
}

static sp_status op_event_query(void *impl, sp_bevent *event, int *complete)
{
    (void)impl;
    if (!event || !complete)
        return invalid("event_query: event or complete is NULL");
    sp_status st = refuse_captured(event, "event_query");
    if (st != SP_OK)
        return st;
    *complete = sp_host_event_query(event);
    return SP_OK;
}

static sp_status op_event_elapsed(void *impl, sp_bevent *from, sp_bevent *to,
                                    double *seconds)
{
    (void)impl;
    if (!from || !to || !seconds)
        return invalid("event_elapsed: from, to or seconds is NULL");
    return sp_host_event_elapsed(from, to, seconds);
}

/* ---- memory --------------------------------------------------------------------------- */

static sp_status op_device_alloc(void *impl, size_t bytes, void **out)
{
    if (!out)
        return invalid("device_alloc: out is NULL");
    *out = NULL;
    host_backend *backend = impl;
    return sp_host_memory_device_alloc(&backend->memory, bytes, out);
}

static void op_device_free(void *impl, void *ptr)
{
    host_backend *backend = impl;
    sp_host_memory_device_free(&backend->memory, ptr);
}

static sp_status op_pinned_alloc(void *impl, size_t bytes, void **out)
{
    if (!out)
        return invalid("pinned_alloc: out is NULL");
    *out = NULL;
    host_backend *backend = impl;
    return sp_host_memory_pinned_alloc(&backend->memory, bytes, out);
}

static void op_pinned_free(void *impl, void *ptr)
{
    host_backend *backend = impl;
    sp_host_memory_pinned_free(&backend->memory, ptr);
}

static sp_status op_host_register(void *impl, void *ptr, size_t bytes)
{
    host_backend *backend = impl;
    return sp_host_memory_register(&backend->memory, ptr, bytes);
}

static sp_status op_host_unregister(void *impl, void *ptr)
{
    host_backend *backend = impl;
    return sp_host_memory_unregister(&backend->memory, ptr);
}

static sp_status op_is_pinned(void *impl, const void *ptr, size_t bytes, int *pinned)
{
    if (!pinned)
        return invalid("is_pinned: pinned is NULL");
    host_backend *backend = impl;
    *pinned = sp_host_memory_is_pinned(&backend->memory, ptr, bytes);
    return SP_OK;
}

/* ---- work ----------------------------------------------------------------------------- */

/* Host and "device" memory are the same memory here, so both directions are a memcpy. */
static sp_status enqueue_copy(const char *what, void *dst, const void *src, size_t bytes,
                              int to_device, sp_bqueue *queue)
{
    if (!queue || (bytes > 0 && (!dst || !src))) {
        sp_backend_fail("host %s: queue, dst or src is NULL", what);
        return SP_ERR_INVALID_ARGUMENT;
    }
    host_op op = {.kind = HOST_OP_COPY, .u.copy = {dst, src, bytes, to_device}};
    return sp_host_queue_push(queue, &op);
}

static sp_status op_copy_h2d(void *impl, void *dst, const void *src, size_t bytes,
                             sp_bqueue *queue)
{
    (void)impl;
    return enqueue_copy("copy_h2d", dst, src, bytes, 1, queue);
}

static sp_status op_copy_d2h(void *impl, void *dst, const void *src, size_t bytes,
                             sp_bqueue *queue)
{
    (void)impl;
    return enqueue_copy("copy_d2h", dst, src, bytes, 0, queue);
}

static sp_status op_memory_kind(void *impl, const void *ptr, size_t bytes, sp_mem_kind *kind)
{
    host_backend *backend = impl;
    if (!kind)
        return invalid("memory_kind: kind is NULL");
    *kind = sp_host_memory_kind(&backend->memory, ptr, bytes);
    return SP_OK;
}

/* Device to device: a memcpy on the queue, as the other copies (to_device 1: a graph's
 * rebase moves it as an h2d; the core replays no device-resident ends). */
static sp_status op_copy_d2d(void *impl, void *dst, const void *src, size_t bytes,
                             sp_bqueue *queue)
{
    (void)impl;
    return enqueue_copy("copy_d2d", dst, src, bytes, 1, queue);
}

/* The same memcpy as the engines' copies, so that the core's kernel-copy path runs in every
 * HOST test. to_device -1: like CUDA, which cannot point a replayed kernel at other memory,
 * graph_rebase does not move these copies. */
static sp_status op_copy_kernel(void *impl, void *dst, const void *src, size_t bytes,
                                sp_bqueue *queue)
{
    /* As on CUDA, where a kernel can reach pinned host memory only: the host side must be
     * pinned (the other side is device memory, which the pinned ranges never hold). */
    host_backend *backend = impl;
    if (bytes > 0 && dst && src && !sp_host_memory_is_pinned(&backend->memory, dst, bytes) &&
        !sp_host_memory_is_pinned(&backend->memory, src, bytes)) {
        sp_backend_fail("host copy_kernel: neither %p nor %p is pinned host memory", dst, src);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return enqueue_copy("copy_kernel", dst, src, bytes, -1, queue);
}

static sp_status op_launch(void *impl, sp_bqueue *queue, sp_launch_fn fn, void *arg,
                           const sp_chunk *chunk)
{
    (void)impl;
    if (!queue || !fn || !chunk)
        return invalid("launch: queue, fn or chunk is NULL");
    host_op op = {.kind = HOST_OP_LAUNCH, .u.launch = {fn, arg, *chunk}};
    op.u.launch.chunk.stream = NULL; /* HOST has no native stream handle */
    return sp_host_queue_push(queue, &op);
}

/* ---- graphs --------------------------------------------------------------------------- */

static sp_status op_capture_begin(void *impl, sp_bqueue *queue)
{
    (void)impl;
    if (!queue)
        return invalid("capture_begin: queue is NULL");
    return sp_host_graph_capture_begin(queue);
}

static sp_status op_capture_end(void *impl, sp_bqueue *queue, sp_bgraph **out)
{
    (void)impl;
    if (!queue || !out)
        return invalid("capture_end: queue or out is NULL");
    *out = NULL;
    return sp_host_graph_capture_end(queue, out);
}

static sp_status op_graph_rebase(void *impl, sp_bgraph *graph, int to_device,
                                 const void *old_base, const void *new_base, size_t bytes)
{
    (void)impl;
    if (!graph || !old_base || !new_base)
        return invalid("graph_rebase: graph or a base is NULL");
    return sp_host_graph_rebase(graph, to_device, old_base, new_base, bytes);
}

static sp_status op_graph_launch(void *impl, sp_bgraph *graph, sp_bqueue *queue)
{
    (void)impl;
    if (!graph || !queue)
        return invalid("graph_launch: graph or queue is NULL");
    return sp_host_graph_launch(graph, queue);
}

static void op_graph_destroy(void *impl, sp_bgraph *graph)
{
    (void)impl;
    sp_host_graph_destroy(graph);
}

static const sp_backend_ops host_ops = {
    .abi = SP_BACKEND_ABI,
    .name = "host",
    .kind = SP_BACKEND_HOST,
    .open = op_open,
    .close = op_close,
    .queue_create = op_queue_create,
    .queue_destroy = op_queue_destroy,
    .queue_sync = op_queue_sync,
    .queue_drain = op_queue_drain,
    .queue_delay = op_queue_delay,
    .event_create = op_event_create,
    .event_destroy = op_event_destroy,
    .event_record = op_event_record,
    .queue_wait = op_queue_wait,
    .event_sync = op_event_sync,
    .event_elapsed = op_event_elapsed,
    .event_query = op_event_query,
    .device_alloc = op_device_alloc,
    .device_free = op_device_free,
    .pinned_alloc = op_pinned_alloc,
    .pinned_free = op_pinned_free,
    .host_register = op_host_register,
    .host_unregister = op_host_unregister,
    .is_pinned = op_is_pinned,
    .copy_h2d = op_copy_h2d,
    .copy_d2h = op_copy_d2h,
    .memory_kind = op_memory_kind,
    .copy_d2d = op_copy_d2d,
    .copy_kernel = op_copy_kernel,
    .launch = op_launch,
    .capture_begin = op_capture_begin,
    .capture_end = op_capture_end,
    .graph_rebase = op_graph_rebase,
    .graph_launch = op_graph_launch,
    .graph_destroy = op_graph_destroy,
};

const sp_backend_ops *sp_backend_host_ops(void) { return &host_ops; }

void sp_backend_host_memory_held(void *impl, size_t held[2], size_t peak[2])
{
    sp_host_memory_held(&((host_backend *)impl)->memory, held, peak);
}
