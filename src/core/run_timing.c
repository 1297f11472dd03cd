/* Per-chunk timing of GPU operations, all read once the run has drained. Reading them during
 * the run would make the host wait for each chunk and stall the enqueueing it exists to keep
 * ahead. The run's makespan is taken before they are read (run.c, sp_run_finish), so it is
 * measured alike with and without timing; the reading is the caller's time, not the run's.
 *
 * Every operation records an end event (beside its slot's ordering event, which the waits
 * use: run.c, finished), but a start event only where its queue was idle when it was
 * enqueued: a busy queue starts it when the last of its dependencies ends, and those ends
 * are read here anyway. On an H200 a timing record costs the GPU 2-2.5 us wherever it is
 * recorded (bench/PERF.md, third session), so the end events alone cost about 3% of the
 * makespan at 8 MiB chunks, and under 0.1% once operations last milliseconds. */
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

/* Grows the events to n and the flags to n / 2 (one per pair). */
static sp_status grow_pool(sp_run *r, size_t n)
{
    sp_pipeline *p = r->p;
    if (n <= p->timing_events_n)
        return SP_OK;
    unsigned char *flags = realloc(p->timing_inferred, n / 2);
    if (flags)
        p->timing_inferred = flags;
    sp_bevent **grown = flags ? realloc(p->timing_events, n * sizeof *grown) : NULL;
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

static size_t pair_index(const sp_run *r, size_t g, size_t i)
{
    return i * sp_gpu_engines(r->p) + g;
}

sp_bevent **sp_run_timing_event(const sp_run *r, size_t g, size_t i, int end)
{
    return &r->p->timing_events[pair_index(r, g, i) * 2 + (end ? 1 : 0)];
}

unsigned char *sp_run_timing_inferred(const sp_run *r, size_t g, size_t i)
{
    return &r->p->timing_inferred[pair_index(r, g, i)];
}

static double end_of(const sp_run *r, sp_op op)
{
    const sp_timeline *t = &r->p->timeline;
    return t->spans[SP_TL_GPU(op.g) * t->chunks + op.i].end;
}

/* The start of an operation that got no start event: the latest end of what it depended on
 * (run.c, op_start says why that is exact). The collect loop below has read every one of
 * them already: the previous operation on the queue and the WAR are earlier chunks, the RAW
 * is an earlier engine of the same chunk. */
static double inferred_start(const sp_run *r, size_t g, size_t i)
{
    sp_op_deps deps;
    sp_run_op_deps(r->p, g, i, &deps);
    double start = 0.0; /* the base event precedes every operation */
    if (deps.has_previous && end_of(r, deps.previous) > start)
        start = end_of(r, deps.previous);
    for (size_t k = 0; k < deps.n_waits; k++)
        if (end_of(r, deps.waits[k]) > start)
            start = end_of(r, deps.waits[k]);
    return start;
}

sp_status sp_run_timing_collect(sp_run *r)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    for (size_t i = 0; i < r->plan.chunks; i++)
        for (size_t g = 0; g < sp_gpu_engines(p); g++) {
            int inferred = *sp_run_timing_inferred(r, g, i);
            double a = 0.0, z;
            sp_status st = ops->event_elapsed(p->ctx->impl, p->timing_base,
                                              *sp_run_timing_event(r, g, i, 1), &z);
            if (st == SP_OK && !inferred)
                st = ops->event_elapsed(p->ctx->impl, p->timing_base,
                                        *sp_run_timing_event(r, g, i, 0), &a);
            if (st != SP_OK)
                return sp_run_fail(r, st, "chunk %zu: reading its timing events", i);
            if (inferred)
                a = inferred_start(r, g, i);
            sp_timeline_set(&p->timeline, SP_TL_GPU(g), i, a, z);
        }
    return SP_OK;
}
