/* The fault backend: forwards every call to an inner backend, counting status-returning
 * calls so the Nth can fail, and enqueueing delays on chosen queues before each queued
 * operation so that a missing dependency shows up as a wrong answer every time. */
#include <stdlib.h>
#include <string.h>

#include "backend/fault/fault_backend.h"
#include "backend/fault/fault_state.h"
#include "backend/live_list.h"

/* A wrapped queue. The core sees it as an sp_bqueue; the inner backend's sp_bqueue is a
 * different struct under the same name, so wrappers are converted by hand below. */
typedef struct fault_queue {
    sp_live_link link; /* membership in the backend's live-queue list */
    sp_bqueue *inner;
    char *name; /* matched against the delay_queue prefix on every operation */
} fault_queue;

typedef struct fault_backend {
    const sp_backend_ops *inner;
    void *inner_impl; /* owned: closed by our close */
    fault_state state;
    sp_live_list queues; /* wrappers not yet destroyed, released at close */
} fault_backend;

static fault_queue *as_fault_queue(sp_bqueue *queue) { return (fault_queue *)(void *)queue; }
static sp_bqueue *as_bqueue(fault_queue *queue) { return (sp_bqueue *)(void *)queue; }

/* The inner queue; NULL passes through so the inner backend reports the bad argument. */
static sp_bqueue *inner_queue(sp_bqueue *queue)
{
    return queue ? as_fault_queue(queue)->inner : NULL;
}

/* Counts a call that enqueues on `queue` and puts the configured delay in front of it. */
static sp_status before_enqueue(fault_backend *fault, sp_bqueue *queue, const char *op)
{
    sp_status status = sp_fault_state_count_call(&fault->state, op);
    if (status != SP_OK || !queue || !fault->inner->queue_delay)
        return status;
    fault_queue *wrapped = as_fault_queue(queue);
    unsigned delay = sp_fault_state_next_delay(&fault->state, wrapped->name);
    if (delay == 0)
        return SP_OK;
    status = fault->inner->queue_delay(fault->inner_impl, wrapped->inner, delay);
    if (status == SP_OK)
        sp_fault_state_count_delay(&fault->state);
    return status;
}

/* ---- lifetime ------------------------------------------------------------------------- */

static sp_status fault_open(int device, void **impl)
{
    (void)device;
    (void)impl;
    sp_backend_fail("fault backend: open it with sp_fault_open around another backend");
    return SP_ERR_UNSUPPORTED;
}

static void destroy_wrapper(fault_backend *fault, fault_queue *wrapped)
{
    sp_live_list_remove(&fault->queues, &wrapped->link);
    fault->inner->queue_destroy(fault->inner_impl, wrapped->inner);
    free(wrapped->name);
    free(wrapped);
    sp_fault_state_count_live(&fault->state, -1);
}

static void fault_close(void *impl)
{
    fault_backend *fault = impl;
    if (!fault)
        return;
    sp_live_link *link;
    while ((link = sp_live_list_any(&fault->queues)) != NULL)
        destroy_wrapper(fault, SP_CONTAINER_OF(link, fault_queue, link));
    fault->inner->close(fault->inner_impl);
    sp_live_list_destroy(&fault->queues);
    sp_fault_state_destroy(&fault->state);
    free(fault);
}

/* ---- queues --------------------------------------------------------------------------- */

static fault_queue *new_wrapper(const char *name)
{
    if (!name)
        name = "";
    size_t bytes = strlen(name) + 1;
    fault_queue *wrapped = calloc(1, sizeof *wrapped);
    char *copy = malloc(bytes);
    if (!wrapped || !copy) {
        free(wrapped);
        free(copy);
        sp_backend_fail("fault queue_create: out of memory");
        return NULL;
    }
    memcpy(copy, name, bytes);
    wrapped->name = copy;
    return wrapped;
}

static sp_status fault_queue_create(void *impl, const char *name, int priority,
                                    sp_bqueue **out)
{
    fault_backend *fault = impl;
    if (out)
        *out = NULL; /* an injected failure leaves *out as a real one does */
    sp_status status = sp_fault_state_count_call(&fault->state, "queue_create");
    if (status != SP_OK)
        return status;
    if (!out) {
        sp_backend_fail("fault queue_create: out is NULL");
        return SP_ERR_INVALID_ARGUMENT;
    }
    fault_queue *wrapped = new_wrapper(name);
    if (!wrapped)
        return SP_ERR_OUT_OF_MEMORY;
    status = fault->inner->queue_create(fault->inner_impl, name, priority, &wrapped->inner);
    if (status != SP_OK) {
        free(wrapped->name);
        free(wrapped);
        return status;
    }
    sp_live_list_add(&fault->queues, &wrapped->link);
    sp_fault_state_count_live(&fault->state, +1);
    *out = as_bqueue(wrapped);
    return SP_OK;
}

static void fault_queue_destroy(void *impl, sp_bqueue *queue)
{
    if (queue)
        destroy_wrapper(impl, as_fault_queue(queue));
}

static sp_status fault_queue_sync(void *impl, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "queue_sync");
    if (status != SP_OK)
        return status;
    return fault->inner->queue_sync(fault->inner_impl, inner_queue(queue));
}

/* Not counted, and failed only when fail_op names it: it stands for the wrapped backend
 * really waiting, which an injected queue_sync failure does not stop it from doing. */
static sp_status fault_queue_drain(void *impl, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_named_failure(&fault->state, "queue_drain");
    if (status != SP_OK)
        return status;
    if (fault->inner->queue_drain)
        return fault->inner->queue_drain(fault->inner_impl, inner_queue(queue));
    return fault->inner->queue_sync(fault->inner_impl, inner_queue(queue));
}

static sp_status fault_queue_delay(void *impl, sp_bqueue *queue, unsigned usec)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "queue_delay");
    if (status != SP_OK)
        return status;
    if (!fault->inner->queue_delay) {
        sp_backend_fail("fault queue_delay: the %s backend has no queue_delay",
                        fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->queue_delay(fault->inner_impl, inner_queue(queue), usec);
}

/* ---- events --------------------------------------------------------------------------- */

static sp_status fault_event_create(void *impl, unsigned flags, sp_bevent **out)
{
    fault_backend *fault = impl;
    if (out)
        *out = NULL; /* an injected failure leaves *out as a real one does */
    sp_status status = sp_fault_state_count_call(&fault->state, "event_create");
    if (status != SP_OK)
        return status;
    status = fault->inner->event_create(fault->inner_impl, flags, out);
    if (status == SP_OK)
        sp_fault_state_count_live(&fault->state, +1);
    return status;
}

static void fault_event_destroy(void *impl, sp_bevent *event)
{
    fault_backend *fault = impl;
    if (!event)
        return;
    fault->inner->event_destroy(fault->inner_impl, event);
    sp_fault_state_count_live(&fault->state, -1);
}

static sp_status fault_event_record(void *impl, sp_bevent *event, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "event_record");
    if (status != SP_OK)
        return status;
    return fault->inner->event_record(fault->inner_impl, event, inner_queue(queue));
}

static sp_status fault_queue_wait(void *impl, sp_bqueue *queue, sp_bevent *event)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "queue_wait");
    if (status != SP_OK)
        return status;
    return fault->inner->queue_wait(fault->inner_impl, inner_queue(queue), event);
}

static sp_status fault_event_sync(void *impl, sp_bevent *event)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "event_sync");
    if (status != SP_OK)
        return status;
    return fault->inner->event_sync(fault->inner_impl, event);
}

static sp_status fault_event_elapsed(void *impl, sp_bevent *from, sp_bevent *to,
                                     double *seconds)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "event_elapsed");
    if (status != SP_OK)
        return status;
    return fault->inner->event_elapsed(fault->inner_impl, from, to, seconds);
}

/* Counted and failable like every call. An inner backend without event_query answers
 * "complete", which makes the core record the start event, as it would without the entry. */
static sp_status fault_event_query(void *impl, sp_bevent *event, int *complete)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "event_query");
    if (status != SP_OK)
        return status;
    if (!fault->inner->event_query) {
        if (!event || !complete) {
            sp_backend_fail("fault event_query: event or complete is NULL");
            return SP_ERR_INVALID_ARGUMENT;
        }
        *complete = 1;
        return SP_OK;
    }
    return fault->inner->event_query(fault->inner_impl, event, complete);
}

/* ---- memory --------------------------------------------------------------------------- */

static sp_status fault_device_alloc(void *impl, size_t bytes, void **out)
{
    fault_backend *fault = impl;
    if (out)
        *out = NULL; /* an injected failure leaves *out as a real one does */
    sp_status status = sp_fault_state_count_call(&fault->state, "device_alloc");
    if (status != SP_OK)
        return status;
    status = fault->inner->device_alloc(fault->inner_impl, bytes, out);
    if (status == SP_OK)
        sp_fault_state_count_live(&fault->state, +1);
    return status;
}

static void fault_device_free(void *impl, void *ptr)
{
    fault_backend *fault = impl;
    if (!ptr)
        return;
    fault->inner->device_free(fault->inner_impl, ptr);
    sp_fault_state_count_live(&fault->state, -1);
}

static sp_status fault_pinned_alloc(void *impl, size_t bytes, void **out)
{
    fault_backend *fault = impl;
    if (out)
        *out = NULL; /* an injected failure leaves *out as a real one does */
    sp_status status = sp_fault_state_count_call(&fault->state, "pinned_alloc");
    if (status != SP_OK)
        return status;
    status = fault->inner->pinned_alloc(fault->inner_impl, bytes, out);
    if (status == SP_OK)
        sp_fault_state_count_live(&fault->state, +1);
    return status;
}

static void fault_pinned_free(void *impl, void *ptr)
{
    fault_backend *fault = impl;
    if (!ptr)
        return;
    fault->inner->pinned_free(fault->inner_impl, ptr);
    sp_fault_state_count_live(&fault->state, -1);
}

static sp_status fault_host_register(void *impl, void *ptr, size_t bytes)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "host_register");
    if (status != SP_OK)
        return status;
    status = fault->inner->host_register(fault->inner_impl, ptr, bytes);
    if (status == SP_OK)
        sp_fault_state_count_live(&fault->state, +1);
    return status;
}

static sp_status fault_host_unregister(void *impl, void *ptr)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "host_unregister");
    if (status != SP_OK)
        return status;
    status = fault->inner->host_unregister(fault->inner_impl, ptr);
    if (status == SP_OK)
        sp_fault_state_count_live(&fault->state, -1);
    return status;
}

static sp_status fault_is_pinned(void *impl, const void *ptr, size_t bytes, int *pinned)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "is_pinned");
    if (status != SP_OK)
        return status;
    return fault->inner->is_pinned(fault->inner_impl, ptr, bytes, pinned);
}

/* Counted and failable like is_pinned; without the inner backend's, every range is host
 * memory (what the core assumes of a backend that cannot tell). */
static sp_status fault_memory_kind(void *impl, const void *ptr, size_t bytes, sp_mem_kind *kind)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "memory_kind");
    if (status != SP_OK)
        return status;
    if (!fault->inner->memory_kind) {
        int pinned = 0;
        status = fault->inner->is_pinned(fault->inner_impl, ptr, bytes, &pinned);
        *kind = pinned ? SP_MEM_PINNED : SP_MEM_PAGEABLE;
        return status;
    }
    return fault->inner->memory_kind(fault->inner_impl, ptr, bytes, kind);
}

/* ---- work ----------------------------------------------------------------------------- */

static sp_status fault_copy_h2d(void *impl, void *dst, const void *src, size_t bytes,
                                sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "copy_h2d");
    if (status != SP_OK)
        return status;
    return fault->inner->copy_h2d(fault->inner_impl, dst, src, bytes, inner_queue(queue));
}

static sp_status fault_copy_d2h(void *impl, void *dst, const void *src, size_t bytes,
                                sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "copy_d2h");
    if (status != SP_OK)
        return status;
    return fault->inner->copy_d2h(fault->inner_impl, dst, src, bytes, inner_queue(queue));
}

/* Counted, failable and delayed like the other copies; unsupported without the inner one. */
static sp_status fault_copy_d2d(void *impl, void *dst, const void *src, size_t bytes,
                                sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "copy_d2d");
    if (status != SP_OK)
        return status;
    if (!fault->inner->copy_d2d) {
        sp_backend_fail("fault copy_d2d: the wrapped %s backend has no device copies",
                        fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->copy_d2d(fault->inner_impl, dst, src, bytes, inner_queue(queue));
}

/* Counted and failable; unsupported without the inner backend's. The event is the inner's. */
static sp_status fault_external_wait(void *impl, void *native_queue, sp_bevent *e)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "external_wait");
    if (status != SP_OK)
        return status;
    if (!fault->inner->external_wait) {
        sp_backend_fail("fault external_wait: the wrapped %s backend has no native queues",
                        fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->external_wait(fault->inner_impl, native_queue, e);
}

/* Counted, failable and delayed like the engines' copies. Offered whatever the inner backend
 * has (the table is const): without an inner copy_kernel the call fails as unsupported. */
static sp_status fault_copy_kernel(void *impl, void *dst, const void *src, size_t bytes,
                                   sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "copy_kernel");
    if (status != SP_OK)
        return status;
    if (!fault->inner->copy_kernel) {
        sp_backend_fail("fault copy_kernel: the wrapped %s backend has no copy kernel",
                        fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->copy_kernel(fault->inner_impl, dst, src, bytes, inner_queue(queue));
}

static sp_status fault_launch(void *impl, sp_bqueue *queue, sp_launch_fn fn, void *arg,
                              const sp_chunk *chunk)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "launch");
    if (status != SP_OK)
        return status;
    return fault->inner->launch(fault->inner_impl, inner_queue(queue), fn, arg, chunk);
}

/* ---- graphs: counted and failable like the rest; the inner graph is used as it is -------- */

static sp_status no_graphs(const char *op)
{
    sp_backend_fail("fault %s: the wrapped backend has no graphs", op);
    return SP_ERR_UNSUPPORTED;
}

static sp_status fault_capture_begin(void *impl, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "capture_begin");
    if (status != SP_OK)
        return status;
    if (!fault->inner->capture_begin)
        return no_graphs("capture_begin");
    return fault->inner->capture_begin(fault->inner_impl, inner_queue(queue));
}

static sp_status fault_capture_end(void *impl, sp_bqueue *queue, sp_bgraph **out)
{
    fault_backend *fault = impl;
    if (!fault->inner->capture_end)
        return no_graphs("capture_end");
    /* The capture is ended even when this call is made to fail: so is a real failure. */
    sp_bgraph *graph = NULL;
    sp_status inner = fault->inner->capture_end(fault->inner_impl, inner_queue(queue), &graph);
    sp_status status = sp_fault_state_count_call(&fault->state, "capture_end");
    if (status != SP_OK || inner != SP_OK) {
        if (inner == SP_OK)
            fault->inner->graph_destroy(fault->inner_impl, graph);
        if (out)
            *out = NULL;
        return status != SP_OK ? status : inner;
    }
    *out = graph;
    return SP_OK;
}

static sp_status fault_graph_rebase(void *impl, sp_bgraph *graph, int to_device,
                                    const void *old_base, const void *new_base, size_t bytes)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "graph_rebase");
    if (status != SP_OK)
        return status;
    if (!fault->inner->graph_rebase)
        return no_graphs("graph_rebase");
    return fault->inner->graph_rebase(fault->inner_impl, graph, to_device, old_base, new_base,
                                      bytes);
}

static sp_status fault_graph_launch(void *impl, sp_bgraph *graph, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "graph_launch");
    if (status != SP_OK)
        return status;
    if (!fault->inner->graph_launch)
        return no_graphs("graph_launch");
    return fault->inner->graph_launch(fault->inner_impl, graph, inner_queue(queue));
}

static void fault_graph_destroy(void *impl, sp_bgraph *graph)
{
    fault_backend *fault = impl;
    if (fault->inner->graph_destroy)
        fault->inner->graph_destroy(fault->inner_impl, graph);
}

/* ---- profiler names: forwarded, never counted (they cannot fail) ------------------------ */

/* Counted and failable; unsupported without the inner backend's (HOST has none: the core
 * then decodes with a launch, which the fault backend delays as any). */
static sp_status fault_decompress_prepare(void *impl, int format, size_t max_units,
                                          size_t max_unit_bytes, size_t max_total_bytes,
                                          size_t *temp_bytes)
{
    fault_backend *fault = impl;
    sp_status status = sp_fault_state_count_call(&fault->state, "decompress_prepare");
    if (status != SP_OK)
        return status;
    if (!fault->inner->decompress_prepare) {
        sp_backend_fail("fault decompress_prepare: the wrapped %s backend has no "
                        "decompression", fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->decompress_prepare(fault->inner_impl, format, max_units,
                                            max_unit_bytes, max_total_bytes, temp_bytes);
}

/* Counted, failable and delayed like a copy. */
static sp_status fault_decompress(void *impl, const sp_decompress_args *args, sp_bqueue *queue)
{
    fault_backend *fault = impl;
    sp_status status = before_enqueue(fault, queue, "decompress");
    if (status != SP_OK)
        return status;
    if (!fault->inner->decompress) {
        sp_backend_fail("fault decompress: the wrapped %s backend has no decompression",
                        fault->inner->name);
        return SP_ERR_UNSUPPORTED;
    }
    return fault->inner->decompress(fault->inner_impl, args, inner_queue(queue));
}

static void fault_trace_push(void *impl, const char *label)
{
    fault_backend *fault = impl;
    if (fault->inner->trace_push)
        fault->inner->trace_push(fault->inner_impl, label);
}

static void fault_trace_pop(void *impl)
{
    fault_backend *fault = impl;
    if (fault->inner->trace_pop)
        fault->inner->trace_pop(fault->inner_impl);
}

static const sp_backend_ops fault_ops = {
    .abi = SP_BACKEND_ABI,
    .name = "fault",
    .kind = SP_BACKEND_HOST, /* unused: the core reports the inner backend's kind */
    .open = fault_open,
    .close = fault_close,
    .queue_create = fault_queue_create,
    .queue_destroy = fault_queue_destroy,
    .queue_sync = fault_queue_sync,
    .queue_drain = fault_queue_drain,
    .queue_delay = fault_queue_delay,
    .event_create = fault_event_create,
    .event_destroy = fault_event_destroy,
    .event_record = fault_event_record,
    .queue_wait = fault_queue_wait,
    .event_sync = fault_event_sync,
    .event_elapsed = fault_event_elapsed,
    .event_query = fault_event_query,
    .device_alloc = fault_device_alloc,
    .device_free = fault_device_free,
    .pinned_alloc = fault_pinned_alloc,
    .pinned_free = fault_pinned_free,
    .host_register = fault_host_register,
    .host_unregister = fault_host_unregister,
    .is_pinned = fault_is_pinned,
    .copy_h2d = fault_copy_h2d,
    .copy_d2h = fault_copy_d2h,
    .copy_kernel = fault_copy_kernel,
    .launch = fault_launch,
    .trace_push = fault_trace_push,
    .trace_pop = fault_trace_pop,
    .capture_begin = fault_capture_begin,
    .capture_end = fault_capture_end,
    .graph_rebase = fault_graph_rebase,
    .graph_launch = fault_graph_launch,
    .graph_destroy = fault_graph_destroy,
    .memory_kind = fault_memory_kind,
    .copy_d2d = fault_copy_d2d,
    .external_wait = fault_external_wait,
    .decompress_prepare = fault_decompress_prepare,
    .decompress = fault_decompress,
};

const sp_backend_ops *sp_backend_fault_ops(void) { return &fault_ops; }

/* ---- the fault-only entry points (fault_backend.h) ------------------------------------ */

sp_status sp_fault_open(const sp_backend_ops *inner, void *inner_impl,
                        const sp_fault_config *cfg, void **impl)
{
    if (!inner || !inner_impl || !impl) {
        sp_backend_fail("sp_fault_open: inner, inner_impl or impl is NULL");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *impl = NULL;
    fault_backend *fault = calloc(1, sizeof *fault);
    if (!fault) {
        sp_backend_fail("sp_fault_open: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    sp_status status = sp_fault_state_init(&fault->state, cfg);
    if (status == SP_OK) {
        status = sp_live_list_init(&fault->queues);
        if (status != SP_OK)
            sp_fault_state_destroy(&fault->state);
    }
    if (status != SP_OK) {
        free(fault); /* inner stays the caller's on failure */
        return status;
    }
    fault->inner = inner;
    fault->inner_impl = inner_impl;
    *impl = fault;
    return SP_OK;
}

void sp_fault_configure(void *impl, const sp_fault_config *cfg)
{
    fault_backend *fault = impl;
    /* On failure the reason is set and delays are off; the API has no status to return. */
    (void)sp_fault_state_configure(&fault->state, cfg);
}

void sp_fault_stats_read(void *impl, sp_fault_stats *out)
{
    fault_backend *fault = impl;
    sp_fault_state_read(&fault->state, out);
}
