/* Argument checks, failure recording, draining and the report, shared by both run modes. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/run.h"

/* The byte counts of n records in and out, and whether in and out are usable; the reason in
 * why. Touches nothing, so a stream's submit can call it beside a running engine. */
static sp_status check_buffers(const sp_pipeline *p, const void *in, size_t n, const void *out,
                               char *why, size_t why_size, size_t *in_bytes, size_t *out_bytes)
{
    int overflow = 0;
    *in_bytes = sp_mul_size(n, p->record_bytes[0], &overflow);
    if (!overflow)
        *out_bytes = sp_mul_size(n, p->record_bytes[p->n_stages], &overflow);
    if (overflow) {
        snprintf(why, why_size, "n_records (%zu) x record size overflows size_t", n);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (n == 0)
        return SP_OK;
    if (!in || !out) {
        snprintf(why, why_size, "%s is NULL with n_records = %zu", !in ? "in" : "out", n);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if ((uintptr_t)in > UINTPTR_MAX - *in_bytes || (uintptr_t)out > UINTPTR_MAX - *out_bytes) {
        snprintf(why, why_size, "buffer end overflows the address space");
        return SP_ERR_INVALID_ARGUMENT;
    }
    int exact_in_place = in == out && *in_bytes == *out_bytes &&
                         p->record_bytes[0] == p->record_bytes[p->n_stages];
    if (!exact_in_place && sp_ranges_overlap(in, *in_bytes, out, *out_bytes)) {
        snprintf(why, why_size,
                 "in [%p, +%zu) and out [%p, +%zu) overlap; only exact in-place (in == out "
                 "with equal record sizes) is allowed",
                 in, *in_bytes, out, *out_bytes);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return SP_OK;
}

sp_status sp_run_check_buffers(const sp_pipeline *p, const void *in, size_t n_records,
                               const void *out, char *why, size_t why_size)
{
    size_t in_bytes, out_bytes;
    why[0] = '\0';
    return check_buffers(p, in, n_records, out, why, why_size, &in_bytes, &out_bytes);
}

/* Whether the copy engines can use the user's memory directly. */
static sp_status detect_pinned(sp_run *run, size_t in_bytes, size_t out_bytes)
{
    sp_pipeline *p = run->p;
    int in_pinned = 0, out_pinned = 0;
    sp_status st = p->ctx->ops->is_pinned(p->ctx->impl, run->in, in_bytes, &in_pinned);
    if (st == SP_OK)
        st = p->ctx->ops->is_pinned(p->ctx->impl, run->out, out_bytes, &out_pinned);
    if (st != SP_OK)
        return sp_pipeline_backend_fail(p, st, "asking whether memory is pinned");
    run->stage_in = !in_pinned;
    run->stage_out = !out_pinned;
    return SP_OK;
}

sp_status sp_run_prepare(sp_run *run, sp_pipeline *p, const void *in, size_t n, void *out,
                         int timing)
{
    memset(run, 0, sizeof *run);
    run->p = p;
    run->in = in;
    run->out = out;
    run->timing = timing;
    /* a run that does not start leaves no timeline of an earlier one behind: the trace writers describe the last run made with a report, and that
     * one has none until it succeeds with records (sp_run_report), whether it is rejected
     * here, fails once started, runs in graph mode or has no records */
    if (timing)
        p->timeline.complete = 0;
    if (atomic_load(&p->ctx->lost)) /* not via the context's text: another thread may write it */
        return sp_pipeline_fail(p, SP_ERR_DEVICE_LOST,
                                "the device context was lost earlier; destroy and recreate it");
    sp_plan_run(n, p->chunk_capacity, p->chunk_chosen, p->depth, p->widest_record, &run->plan);
    run->end = run->plan.chunks;
    if (n == 0)
        return SP_OK;
    char why[256];
    sp_status st = check_buffers(p, in, n, out, why, sizeof why, &run->plan.in_bytes,
                                 &run->plan.out_bytes);
    if (st != SP_OK)
        return sp_pipeline_fail(p, st, "%s", why);
    return detect_pinned(run, run->plan.in_bytes, run->plan.out_bytes);
}

sp_status sp_run_fail(sp_run *run, sp_status status, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sp_pipeline *p = run->p;
    pthread_mutex_lock(&p->failure_lock);
    if (!atomic_load(&p->failed)) {
        p->failure_status = status;
        sp_pipeline_fail_run(p, status, "%s: %s", what, sp_backend_error());
        atomic_store(&p->fail_chunk, 0); /* a backend failure: trust no chunk in flight */
        atomic_store(&p->failed, 1);
    } else {
        sp_context_note_status(p->ctx, status);
    }
    pthread_mutex_unlock(&p->failure_lock);
    if (run->status == SP_OK)
        run->status = status;
    return status;
}

/* The run can no longer show that q's work has stopped: its copies may still read the run's
 * input and write its output, into memory the caller is about to get back. Nothing the
 * library says about that memory holds any more, so the context is lost; the text keeps the
 * first failure and says why it turned into this one. */
static void lose_context(sp_run *run, const char *what)
{
    sp_pipeline *p = run->p;
    char first[SP_ERROR_TEXT];
    char reason[256];
    snprintf(reason, sizeof reason, "%s", sp_backend_error());
    pthread_mutex_lock(&p->failure_lock);
    snprintf(first, sizeof first, "%s", p->failure_text);
    p->failure_status = SP_ERR_DEVICE_LOST;
    sp_pipeline_fail_run(p, SP_ERR_DEVICE_LOST,
                         "%s; then %s: waiting again failed too (%s), so this run's work may "
                         "still read its input and write its output until the pipeline is "
                         "destroyed; the context is lost",
                         first, what, reason);
    atomic_store(&p->failed, 1);
    pthread_mutex_unlock(&p->failure_lock);
    run->status = SP_ERR_DEVICE_LOST;
}

sp_status sp_run_settle_queue(sp_run *run, sp_bqueue *q, const char *what)
{
    sp_pipeline *p = run->p;
    const sp_backend_ops *ops = p->ctx->ops;
    sp_status st = ops->queue_sync(p->ctx->impl, q);
    if (st == SP_OK)
        return SP_OK;
    sp_run_fail(run, st, "%s", what);
    /* A failed sync does not prove the queue idle, and the memory its work uses is about to
     * be handed back: wait the way the backend always can, or else ask once more. */
    sp_status idle = ops->queue_drain ? ops->queue_drain(p->ctx->impl, q)
                                      : ops->queue_sync(p->ctx->impl, q);
    if (idle != SP_OK)
        lose_context(run, what);
    return st;
}

sp_status sp_run_drain(sp_run *run)
{
    sp_pipeline *p = run->p;
    sp_status first = SP_OK;
    sp_bqueue *queues[SP_MAX_STAGES * SP_MAX_STAGE_STREAMS + 2 + SP_MAX_DEPTH];
    size_t n = 0;
    queues[n++] = p->h2d;
    for (size_t s = 0; s < p->n_stages; s++)
        for (unsigned k = 0; k < p->stage_streams[s]; k++)
            queues[n++] = p->stage_queue[s][k];
    queues[n++] = p->d2h;
    sp_bqueue *const *graph_queues = p->graph_queue;
    for (unsigned b = 0; b < p->depth; b++)
        if (graph_queues[b])
            queues[n++] = graph_queues[b];
    for (size_t i = 0; i < n; i++) { /* every queue, even after a failure: nothing may be left */
        sp_status st = sp_run_settle_queue(run, queues[i], "draining a queue");
        if (first == SP_OK)
            first = st;
    }
    return first;
}

static void name_engines(sp_run *run)
{
    sp_pipeline *p = run->p;
    sp_timeline *t = &p->timeline;
    size_t M = p->n_stages;
    const sp_run_plan *plan = &run->plan;
    t->name[SP_TL_STAGE_IN] = "stage-in";
    t->kind[SP_TL_STAGE_IN] = SP_ENGINE_STAGE_IN;
    t->active[SP_TL_STAGE_IN] = run->stage_in;
    t->bytes[SP_TL_STAGE_IN] = plan->in_bytes;
    t->name[SP_TL_GPU(0)] = "h2d";
    t->kind[SP_TL_GPU(0)] = SP_ENGINE_H2D;
    t->bytes[SP_TL_GPU(0)] = plan->in_bytes;
    for (size_t s = 1; s <= M; s++) {
        t->name[SP_TL_GPU(s)] = p->stage_names[s - 1];
        t->kind[SP_TL_GPU(s)] = SP_ENGINE_COMPUTE;
        t->streams[SP_TL_GPU(s)] = p->stage_streams[s - 1];
        t->bytes[SP_TL_GPU(s)] = plan->n_records * p->record_bytes[s - 1];
    }
    t->name[SP_TL_GPU(M + 1)] = "d2h";
    t->kind[SP_TL_GPU(M + 1)] = SP_ENGINE_D2H;
    t->bytes[SP_TL_GPU(M + 1)] = plan->out_bytes;
    for (size_t g = 0; g <= M + 1; g++)
        t->active[SP_TL_GPU(g)] = 1;
    t->name[SP_TL_STAGE_OUT(p)] = "stage-out";
    t->kind[SP_TL_STAGE_OUT(p)] = SP_ENGINE_STAGE_OUT;
    t->active[SP_TL_STAGE_OUT(p)] = run->stage_out;
    t->bytes[SP_TL_STAGE_OUT(p)] = plan->out_bytes;
    t->n_records = plan->n_records;
    t->chunk_records = plan->chunk_records;
}

sp_status sp_run_timeline_start(sp_run *run)
{
    sp_pipeline *p = run->p;
    if (sp_timeline_reset(&p->timeline, p->n_stages + 4, run->plan.chunks) != SP_OK)
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY,
                                "no memory for the timeline of %zu chunks", run->plan.chunks);
    name_engines(run);
    return SP_OK;
}

void sp_run_report(const sp_run *run, sp_report *report)
{
    const sp_pipeline *p = run->p;
    memset(report, 0, sizeof *report);
    report->records = run->plan.n_records;
    report->chunks = run->plan.chunks;
    report->chunk_records = run->plan.chunk_records;
    report->depth = p->depth;
    report->staging_threads = sp_staging_pool_threads(p->pool);
    report->staged_in = run->stage_in;
    report->staged_out = run->stage_out;
    report->makespan_s = p->last_makespan_s; /* sp_run_finish's, or 0: no run started */
    if (run->timing && run->plan.chunks) {
        sp_timeline_figures(&p->timeline, report);
        run->p->timeline.makespan_s = report->makespan_s;
        run->p->timeline.complete = 1; /* a run that succeeded: the trace writers may use it */
    }
    report->graph = run->graph_end > run->base;
    report->batches = run->plan.n_records > 0;
    report->pinned_bytes = (p->pinned_in_stride + p->pinned_out_stride) * p->depth;
    report->slot_records = p->chunk_capacity;
    report->submit_s = p->last_submit_s;
    report->wait_s = p->last_wait_s;
    if (p->chunk_chosen && run->plan.chunk_records < p->chunk_capacity)
        snprintf(report->notes, sizeof report->notes,
                 "chunk cut from %zu to %zu records so that the short run has chunks to overlap",
                 p->chunk_capacity, run->plan.chunk_records);
    if (run->graph_note[0] != '\0') {
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used, "%s%s", used ? "; " : "",
                 run->graph_note);
    }
    if (run->activity_timing) { /* SP_TIMELINE_SOURCE=cupti */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used,
                 "%sGPU times from the backend's activity records (CUPTI), not events: "
                 "starting them took %.3f ms of the run, reading them %.3f ms after it",
                 used ? "; " : "", 1e3 * run->activity_start_s, 1e3 * run->activity_read_s);
    }
    if (run->activity_note[0] != '\0') { /* never a silent fallback */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used, "%s%s", used ? "; " : "",
                 run->activity_note);
    }
    if (p->copy_by_kernel && !p->ctx->ops->copy_kernel) { /* never a silent fallback */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used,
                 "%scopies by the copy engines: the %s backend has no copy kernel",
                 used ? "; " : "", p->ctx->ops->name);
    }
}

void sp_run_trace_push(const sp_run *run, const char *what, size_t chunk)
{
    const sp_context *ctx = run->p->ctx;
    if (!ctx->ops->trace_push)
        return; /* the common case: not even the label is formatted */
    char label[64]; /* a stage name (31 characters at most) and the chunk number */
    snprintf(label, sizeof label, "%s c%zu", what, chunk);
    ctx->ops->trace_push(ctx->impl, label);
}

void sp_run_trace_pop(const sp_run *run)
{
    const sp_context *ctx = run->p->ctx;
    if (ctx->ops->trace_pop)
        ctx->ops->trace_pop(ctx->impl);
}
