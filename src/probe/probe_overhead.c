/* What one enqueued operation costs: many of a kind are enqueued back to back on one queue
 * and the queue is synchronized; the wall time over their number is the cost per operation
 * (the larger of the host's enqueue cost and the device's per-operation time). These are
 * the costs a report adds (a timing record per operation) and a pipeline pays per chunk and
 * engine (waits, a launch, a copy), or, in graph mode, per chunk (a graph launch and, on
 * pinned memory, an update of its copies). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "probe/probe.h"

#define SMALL_COPY_BYTES 4096

typedef enum op_kind { OP_ORDERING_RECORD, OP_TIMING_RECORD, OP_WAIT, OP_LAUNCH, OP_COPY } op_kind;

typedef struct op_batch {
    op_kind kind;
    void *device, *pinned; /* SMALL_COPY_BYTES each, for OP_LAUNCH and OP_COPY */
} op_batch;

static sp_status noop_stage(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    (void)arg;
    return SP_OK;
}

/* CUDA launches a real kernel (the 1 us delay kernel, the shortest one the table offers);
 * HOST runs a stage that does nothing on the queue's worker. */
static int launch_is_kernel(const sp_probe *pr)
{
    return pr->ctx->kind == SP_BACKEND_CUDA && pr->ops->queue_delay != NULL;
}

static sp_status enqueue_one(sp_probe *pr, const op_batch *b, sp_bqueue *q)
{
    const sp_backend_ops *ops = pr->ops;
    sp_chunk chunk = {.records = 1, .in = b->device, .out = b->device};
    switch (b->kind) {
    case OP_ORDERING_RECORD: return ops->event_record(pr->impl, pr->ordering, q);
    case OP_TIMING_RECORD: return ops->event_record(pr->impl, pr->start[PROBE_H2D], q);
    case OP_WAIT: return ops->queue_wait(pr->impl, q, pr->ordering);
    case OP_LAUNCH:
        return launch_is_kernel(pr) ? ops->queue_delay(pr->impl, q, 1)
                                    : ops->launch(pr->impl, q, noop_stage, NULL, &chunk);
    default: return ops->copy_h2d(pr->impl, b->device, b->pinned, SMALL_COPY_BYTES, q);
    }
}

static sp_status measure_batch(sp_probe *pr, const void *arg, double *seconds)
{
    const op_batch *b = arg;
    sp_bqueue *q = pr->queue[PROBE_H2D];
    sp_status st = SP_OK;
    double t0 = sp_now();
    for (unsigned i = 0; st == SP_OK && i < pr->cfg.overhead_ops; i++)
        st = enqueue_one(pr, b, q);
    if (st == SP_OK)
        st = pr->ops->queue_sync(pr->impl, q);
    *seconds = (sp_now() - t0) / (double)pr->cfg.overhead_ops;
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "timing per-operation costs");
}

/* Waits are on an event that completed long ago: the cost of the wait itself. */
static sp_status complete_the_ordering_event(sp_probe *pr)
{
    sp_bqueue *other = pr->queue[PROBE_D2H];
    sp_status st = pr->ops->event_record(pr->impl, pr->ordering, other);
    if (st == SP_OK)
        st = pr->ops->event_sync(pr->impl, pr->ordering);
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "recording an event");
}

static sp_status measure_all(sp_probe *pr, op_batch *b, sp_probe_result *out)
{
    double *figures[] = {&out->event_record_us, &out->timing_record_us, &out->queue_wait_us,
                         &out->launch_us, &out->small_copy_us};
    static const op_kind kinds[] = {OP_ORDERING_RECORD, OP_TIMING_RECORD, OP_WAIT, OP_LAUNCH,
                                    OP_COPY};
    sp_status st = complete_the_ordering_event(pr);
    for (size_t i = 0; st == SP_OK && i < sizeof kinds / sizeof kinds[0]; i++) {
        double seconds = 0.0;
        b->kind = kinds[i];
        st = sp_probe_repeat(pr, measure_batch, b, &seconds);
        *figures[i] = seconds * 1e6;
    }
    return st;
}

/* ---- graphs: what graph mode pays per chunk instead ------------------------------------- */

#define ENQUEUE_TIMED 64u

typedef struct graph_batch {
    sp_bgraph *graph;
    void *device;
    char *pinned; /* 2 x SMALL_COPY_BYTES: the copies are pointed at either half in turn */
    int update;   /* 1: time the update of the copies, 0: time the launches */
    double enqueue_s; /* launches: the last repeat's host time per launch, before the sync */
} graph_batch;

static sp_status measure_graph(sp_probe *pr, const void *arg, double *seconds)
{
    graph_batch *g = (graph_batch *)(uintptr_t)arg; /* sp_probe_repeat passes it as const */
    sp_bqueue *q = pr->queue[PROBE_H2D];
    sp_status st = SP_OK;
    double t0 = sp_now();
    /* The host's part is timed over the first launches only: once the device's queue of
     * pending work is full, an enqueue waits for the device and measures it instead. */
    unsigned host_part = pr->cfg.overhead_ops < ENQUEUE_TIMED ? pr->cfg.overhead_ops
                                                              : ENQUEUE_TIMED;
    for (unsigned i = 0; st == SP_OK && i < pr->cfg.overhead_ops; i++) {
        if (i == host_part)
            g->enqueue_s = (sp_now() - t0) / (double)host_part;
        if (!g->update) {
            st = pr->ops->graph_launch(pr->impl, g->graph, q);
            continue;
        }
        /* named by where they were captured (the first half), moved to either half */
        char *to = g->pinned + ((i + 1) % 2) * SMALL_COPY_BYTES;
        st = pr->ops->graph_rebase(pr->impl, g->graph, 1, g->pinned, to, SMALL_COPY_BYTES);
        if (st == SP_OK)
            st = pr->ops->graph_rebase(pr->impl, g->graph, 0, g->pinned, to, SMALL_COPY_BYTES);
    }
    if (host_part == pr->cfg.overhead_ops)
        g->enqueue_s = (sp_now() - t0) / (double)host_part;
    if (st == SP_OK && !g->update)
        st = pr->ops->queue_sync(pr->impl, q);
    *seconds = (sp_now() - t0) / (double)pr->cfg.overhead_ops;
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "timing graph launches");
}

/* Captures h2d, an empty launch and d2h of 4 KiB on the h2d queue. */
static sp_status capture_graph(sp_probe *pr, graph_batch *g)
{
    const sp_backend_ops *ops = pr->ops;
    sp_bqueue *q = pr->queue[PROBE_H2D];
    sp_chunk chunk = {.records = 1, .in = g->device, .out = g->device};
    sp_status st = ops->capture_begin(pr->impl, q);
    if (st != SP_OK)
        return sp_probe_fail(pr, st, "beginning a capture");
    st = ops->copy_h2d(pr->impl, g->device, g->pinned, SMALL_COPY_BYTES, q);
    if (st == SP_OK)
        st = launch_is_kernel(pr) ? ops->queue_delay(pr->impl, q, 1)
                                  : ops->launch(pr->impl, q, noop_stage, NULL, &chunk);
    if (st == SP_OK)
        st = ops->copy_d2h(pr->impl, g->pinned, g->device, SMALL_COPY_BYTES, q);
    sp_status ended = ops->capture_end(pr->impl, q, &g->graph);
    if (st == SP_OK)
        st = ended;
    else if (ended == SP_OK) {
        ops->graph_destroy(pr->impl, g->graph);
        g->graph = NULL;
    }
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "capturing a graph");
}

static sp_status measure_graphs(sp_probe *pr, void *device, sp_probe_result *out)
{
    if (!pr->ops->capture_begin)
        return SP_OK; /* the figures stay 0 */
    graph_batch g = {NULL, device, NULL, 0, 0.0};
    sp_status st = pr->ops->pinned_alloc(pr->impl, 2 * SMALL_COPY_BYTES, (void **)&g.pinned);
    if (st != SP_OK)
        return sp_probe_fail(pr, st, "allocating 8 KiB of pinned memory");
    memset(g.pinned, 0xC3, 2 * SMALL_COPY_BYTES);
    st = capture_graph(pr, &g);
    double seconds = 0.0;
    if (st == SP_OK && (st = sp_probe_repeat(pr, measure_graph, &g, &seconds)) == SP_OK) {
        out->graph_launch_us = seconds * 1e6;
        out->graph_enqueue_us = g.enqueue_s * 1e6;
        g.update = 1;
        st = sp_probe_repeat(pr, measure_graph, &g, &seconds);
        out->graph_update_us = seconds * 1e6;
    }
    (void)pr->ops->queue_sync(pr->impl, pr->queue[PROBE_H2D]); /* the graph's memory idle */
    if (g.graph)
        pr->ops->graph_destroy(pr->impl, g.graph);
    pr->ops->pinned_free(pr->impl, g.pinned);
    return st;
}

sp_status sp_probe_overheads(sp_probe *pr, sp_probe_result *out)
{
    op_batch b = {OP_ORDERING_RECORD, NULL, NULL};
    sp_status st = pr->ops->device_alloc(pr->impl, SMALL_COPY_BYTES, &b.device);
    if (st == SP_OK)
        st = pr->ops->pinned_alloc(pr->impl, SMALL_COPY_BYTES, &b.pinned);
    if (st != SP_OK)
        st = sp_probe_fail(pr, st, "allocating 4 KiB buffers");
    if (st == SP_OK) {
        memset(b.pinned, 0xC3, SMALL_COPY_BYTES);
        snprintf(out->launch_what, sizeof out->launch_what, "%s",
                 launch_is_kernel(pr) ? "1 us delay kernel" : "no-op stage");
        st = measure_all(pr, &b, out);
    }
    if (st == SP_OK)
        st = measure_graphs(pr, b.device, out);
    sp_status synced = pr->ops->queue_sync(pr->impl, pr->queue[PROBE_H2D]); /* buffers idle */
    if (st == SP_OK && synced != SP_OK)
        st = sp_probe_fail(pr, synced, "waiting for its queue");
    pr->ops->pinned_free(pr->impl, b.pinned);
    pr->ops->device_free(pr->impl, b.device);
    return st;
}
