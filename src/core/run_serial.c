/* The textbook way, kept for baselines: per chunk, a copy straight from the user's memory,
 * each stage, a copy straight back, waiting for each before the next. Nothing overlaps, no
 * staging, slot 0 only. On CUDA an async copy from pageable memory that is waited for right
 * away costs what cudaMemcpy costs. */
#include "core/clock.h"
#include "core/report.h"
#include "core/ring.h"
#include "core/sched.h"
#include "core/stage_call.h"
#include "core/stats.h"
#include "core/timing.h"

/* Runs one step and waits for its queue; records its host-clock span. */
static sp_status timed_sync(sp_batch *r, sp_bqueue *q, size_t engine, size_t i, double start)
{
    sp_pipeline *p = r->p;
    sp_status st = p->ctx->ops->queue_sync(p->ctx->impl, q);
    if (st == SP_OK && r->timing)
        sp_timing_span(p, engine, i, start - r->t0, sp_now() - r->t0);
    return st;
}

static sp_status serial_stage(sp_batch *r, size_t s, size_t i)
{
    sp_pipeline *p = r->p;
    sp_chunk chunk = sp_ring_stage_chunk(r, s, i, 0);
    double t = sp_now();
    sp_bqueue *q = p->stage_queue[s - 1][0];
    sp_status st = p->ctx->ops->launch(p->ctx->impl, q, sp_stage_trampoline, &p->calls[s - 1],
                                       &chunk);
    if (st == SP_OK)
        st = timed_sync(r, q, SP_TL_GPU(s), i, t);
    if (st != SP_OK && !sp_pipeline_has_failed(p))
        return sp_batch_fail(r, st, "chunk %zu: stage '%s'", i, p->stage_names[s - 1]);
    return sp_pipeline_has_failed(p) ? SP_ERR_STAGE_FAILED : st;
}

static sp_status serial_chunk(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t M = p->n_stages, n = sp_chunk_records(r, i);
    double t = sp_now();
    /* no staging (sp_pipeline_run_serial): the chunk's h2d source is the user's memory */
    /* the engines' own copies (no pieces, no kernel): the baseline (copy_by_kernel says) */
    sp_status st = (r->in_device ? ops->copy_d2d : ops->copy_h2d)(
        p->ctx->impl, sp_device_slot(p, 0, 0), sp_ring_h2d_source(r, i),
        n * p->record_bytes[0], p->h2d);
    if (st == SP_OK)
        st = timed_sync(r, p->h2d, SP_TL_GPU(0), i, t);
    if (st != SP_OK)
        return sp_batch_fail(r, st, "chunk %zu: h2d copy", i);
    for (size_t s = 1; s <= M; s++)
        if ((st = serial_stage(r, s, i)) != SP_OK)
            return st;
    t = sp_now();
    st = (r->out_device ? ops->copy_d2d : ops->copy_d2h)(p->ctx->impl, sp_ring_d2h_target(r, i),
                                                         sp_device_slot(p, M, 0),
                                                         n * p->record_bytes[M], p->d2h);
    if (st == SP_OK)
        st = timed_sync(r, p->d2h, SP_TL_GPU(M + 1), i, t);
    return st == SP_OK ? SP_OK : sp_batch_fail(r, st, "chunk %zu: d2h copy", i);
}

static sp_status run_serial(sp_pipeline *p, const void *in, size_t n_records, void *out,
                            sp_report *report)
{
    sp_batch r;
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0); /* as sp_pipeline_run (runs.c) */
    if (report)
        sp_timing_invalidate(p);
    sp_status st = sp_batch_prepare(&r, p, in, n_records, out, sp_timing_asked(p, report));
    r.stage_in = r.stage_out = 0; /* straight from and to the user's memory */
    if (st != SP_OK || n_records == 0) {
        if (st == SP_OK && report)
            st = sp_report_batch(&r, report); /* no records: no timeline to keep */
        return st;
    }
    if (r.timing && (st = sp_timing_timeline_start(&r)) != SP_OK)
        return st;
    if (r.timing)
        sp_timing_serial_queues(p);
    sp_failure_reset(&p->failure);
    sp_stats_begin(p, n_records);
    r.t0 = sp_now();
    for (size_t i = 0; i < r.plan.chunks && st == SP_OK; i++) {
        sp_stats_occupied(p, 1); /* one chunk at a time, in slot 0 */
        st = serial_chunk(&r, i);
        r.next = i + 1; /* its copies ran: the report's pcie_bytes counts it */
        sp_stats_vacated(p, st == SP_OK ? sp_chunk_records(&r, i) : 0);
    }
    return sp_sched_finish(&r, st, report);
}

sp_status sp_pipeline_run_serial(sp_pipeline *p, const void *in, size_t n_records, void *out,
                                 sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run_serial");
    if (st != SP_OK)
        return st;
    st = run_serial(p, in, n_records, out, report);
    sp_pipeline_release(p);
    return st;
}
