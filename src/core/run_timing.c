/* Per-chunk timing of GPU operations: a start and an end event around each operation, all
 * read once the run has drained. Reading them during the run would make the host wait for
 * each chunk and stall the enqueueing it exists to keep ahead. */
#include <stdlib.h>

#include "core/run.h"

/* Events needed: a pair per GPU engine per chunk. */
static size_t events_needed(const sp_run *r, size_t *n)
{
    size_t pairs;
    if (__builtin_mul_overflow(r->plan.chunks, sp_gpu_engines(r->p), &pairs) ||
        __builtin_mul_overflow(pairs, (size_t)2, n))
        return 0;
    return 1;
}

static sp_status grow_pool(sp_run *r, size_t n)
{
    sp_pipeline *p = r->p;
    if (n <= p->timing_events_n)
        return SP_OK;
    sp_bevent **grown = realloc(p->timing_events, n * sizeof *grown);
    if (!grown) {
        sp_backend_error_clear();
        return sp_run_fail(r, SP_ERR_OUT_OF_MEMORY, "no memory for %zu timing events", n);
    }
    p->timing_events = grown;
    while (p->timing_events_n < n) {
        sp_status st = p->ctx->ops->event_create(p->ctx->impl, SP_EVENT_TIMING,
                                                 &p->timing_events[p->timing_events_n]);
        if (st != SP_OK)
            return sp_run_fail(r, st, "creating timing events");
        p->timing_events_n++;
    }
    return SP_OK;
}

sp_status sp_run_timing_start(sp_run *r)
{
    sp_pipeline *p = r->p;
    size_t n;
    if (!events_needed(r, &n)) {
        sp_backend_error_clear();
        return sp_run_fail(r, SP_ERR_INVALID_ARGUMENT, "too many chunks to time");
    }
    sp_status st = grow_pool(r, n);
    if (st != SP_OK)
        return st;
    st = p->ctx->ops->event_record(p->ctx->impl, p->timing_base, p->h2d);
    if (st != SP_OK)
        return sp_run_fail(r, st, "recording the timing base event");
    r->event_timing = 1;
    return SP_OK;
}

sp_bevent **sp_run_timing_event(const sp_run *r, size_t g, size_t i, int end)
{
    return &r->p->timing_events[(i * sp_gpu_engines(r->p) + g) * 2 + (end ? 1 : 0)];
}

sp_status sp_run_timing_collect(sp_run *r)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    for (size_t i = 0; i < r->plan.chunks; i++)
        for (size_t g = 0; g < sp_gpu_engines(p); g++) {
            double a, z;
            sp_status st = ops->event_elapsed(p->ctx->impl, p->timing_base,
                                              *sp_run_timing_event(r, g, i, 0), &a);
            if (st == SP_OK)
                st = ops->event_elapsed(p->ctx->impl, p->timing_base,
                                        *sp_run_timing_event(r, g, i, 1), &z);
            if (st != SP_OK)
                return sp_run_fail(r, st, "chunk %zu: reading its timing events", i);
            sp_timeline_set(&p->timeline, SP_TL_GPU(g), i, a, z);
        }
    return SP_OK;
}
