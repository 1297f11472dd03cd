/* Draining queues (drain.h). */
#include <stdio.h>

#include "core/drain.h"

/* The work can no longer be shown stopped: its copies may still read the input and write
 * the output, into memory the caller is about to get back. Nothing the library says about
 * that memory holds any more, so the context is lost; the failure's text keeps the first
 * failure and says why it turned into this one (failure.h, rule 1). */
static void lose_context(sp_pipeline *p, sp_batch *b, const char *what)
{
    char reason[256];
    snprintf(reason, sizeof reason, "%s", sp_backend_error());
    sp_pipeline_fail_lost(p, "%s: waiting again failed too (%s), so this run's work may still "
                          "read its input and write its output until the pipeline is "
                          "destroyed; the context is lost", what, reason);
    if (b)
        b->status = SP_ERR_DEVICE_LOST;
}

sp_status sp_drain_queue(sp_pipeline *p, sp_batch *b, sp_bqueue *q, const char *what)
{
    const sp_backend_ops *ops = p->ctx->ops;
    sp_status st = ops->queue_sync(p->ctx->impl, q);
    if (st == SP_OK)
        return SP_OK;
    sp_pipeline_fail_work(p, st, "%s", what);
    if (b && b->status == SP_OK)
        b->status = st;
    /* A failed sync does not prove the queue idle, and the memory its work uses is about to
     * be handed back: wait the way the backend always can, or else ask once more. */
    sp_status idle = ops->queue_drain ? ops->queue_drain(p->ctx->impl, q)
                                      : ops->queue_sync(p->ctx->impl, q);
    if (idle != SP_OK)
        lose_context(p, b, what);
    return st;
}

sp_status sp_drain_all(sp_pipeline *p, sp_batch *b)
{
    sp_status first = SP_OK;
    sp_bqueue *queues[SP_MAX_STAGES * SP_MAX_STAGE_STREAMS + 2 + SP_MAX_DEPTH];
    size_t n = 0;
    queues[n++] = p->h2d;
    for (size_t s = 0; s < p->n_stages; s++)
        for (unsigned k = 0; k < p->stage_streams[s]; k++)
            queues[n++] = p->stage_queue[s][k];
    queues[n++] = p->d2h;
    for (unsigned k = 0; k < p->depth; k++)
        if (p->graph.queue[k])
            queues[n++] = p->graph.queue[k];
    for (size_t i = 0; i < n; i++) {
        sp_status st = sp_drain_queue(p, b, queues[i], "draining a queue");
        if (first == SP_OK)
            first = st;
    }
    return first;
}
