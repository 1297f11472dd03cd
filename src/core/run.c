/* The pipelined run. One host thread (the caller) walks the chunks in order; for chunk i in
 * slot b = i mod K it
 *   1. takes its turn on the host: waits until chunk i-K has left slot b, then copies chunk
 *      i-K's output out of pinned_out[b] and chunk i's input into pinned_in[b] together, on
 *      all staging threads (pageable memory only);
 *   2. enqueues h2d(i), every stage and d2h(i), each behind its RAW and WAR events.
 * So the GPU holds up to K-1 chunks while the host copies, and no buffer is written before
 * its previous reader is done (the rules are listed in pipeline.h). Both directions are
 * staged in one parallel copy because the host's memory, not a thread, is what limits
 * pageable runs (bench/PERF.md). Timings, when asked for, are read after the run
 * (run_timing.c). */
#include <stdint.h>
#include <string.h>

#include "core/clock.h"
#include "core/run.h"

/* The event that says GPU engine g has finished chunk j: in a timed run, the chunk's own end
 * timing event (so timing costs one extra event per operation, not two); otherwise the done
 * event of its slot, which at the time of the callers' waits holds chunk j's record. */
static sp_bevent *finished(const sp_run *r, size_t g, size_t j)
{
    if (r->event_timing)
        return *sp_run_timing_event(r, g, j, 1);
    return r->p->events[g].done[j % r->p->depth];
}

/* Engine g finished chunk i-K, the previous user of chunk i's slot; NULL when i < K. */
static sp_bevent *finished_previous(const sp_run *r, size_t g, size_t i)
{
    return i >= r->p->depth ? finished(r, g, i - r->p->depth) : NULL;
}

/* Wait for `wait_a` and `wait_b` (either may be NULL), then the start timing event. */
static sp_status op_begin(sp_run *r, size_t g, size_t i, sp_bqueue *q, sp_bevent *wait_a,
                          sp_bevent *wait_b)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    void *impl = r->p->ctx->impl;
    sp_status st = SP_OK;
    if (wait_a)
        st = ops->queue_wait(impl, q, wait_a);
    if (st == SP_OK && wait_b)
        st = ops->queue_wait(impl, q, wait_b);
    if (st == SP_OK && r->event_timing)
        st = ops->event_record(impl, *sp_run_timing_event(r, g, i, 0), q);
    return st;
}

/* Records what finished(g, i) will return. */
static sp_status op_end(sp_run *r, size_t g, size_t i, sp_bqueue *q)
{
    return r->p->ctx->ops->event_record(r->p->ctx->impl, finished(r, g, i), q);
}

/* One copy, enqueued whole or in pieces of copy_piece_bytes. */
static sp_status enqueue_copy(sp_run *r, int to_device, void *dst, const void *src,
                              size_t bytes, sp_bqueue *q)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    size_t piece = r->p->copy_piece_bytes ? r->p->copy_piece_bytes : bytes;
    sp_status st = SP_OK;
    for (size_t off = 0; st == SP_OK && off < bytes; off += piece) {
        size_t len = bytes - off < piece ? bytes - off : piece;
        st = to_device ? ops->copy_h2d(r->p->ctx->impl, (char *)dst + off,
                                       (const char *)src + off, len, q)
                       : ops->copy_d2h(r->p->ctx->impl, (char *)dst + off,
                                       (const char *)src + off, len, q);
    }
    return st;
}

static sp_status enqueue_h2d(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[0];
    const void *src = r->stage_in ? p->pinned_in + b * p->pinned_in_stride
                                  : r->in + sp_chunk_first(r, i) * p->record_bytes[0];
    /* WAR: boundary 0 is read by stage 1, or by d2h when there is no stage */
    sp_status st = op_begin(r, 0, i, p->h2d, finished_previous(r, 1, i), NULL);
    if (st == SP_OK)
        st = enqueue_copy(r, 1, sp_device_slot(p, 0, b), src, bytes, p->h2d);
    if (st == SP_OK)
        st = op_end(r, 0, i, p->h2d);
    return st == SP_OK ? SP_OK : sp_run_fail(r, st, "chunk %zu: enqueueing its h2d copy", i);
}

static sp_status enqueue_stage(sp_run *r, size_t s, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    sp_bqueue *q = sp_stage_queue(p, s, i);
    /* RAW: boundary s-1 written by engine s-1; WAR: boundary s read by engine s+1 */
    sp_status st = op_begin(r, s, i, q, finished(r, s - 1, i), finished_previous(r, s + 1, i));
    if (st != SP_OK)
        return sp_run_fail(r, st, "chunk %zu: enqueueing the waits of stage '%s'", i,
                           p->stage_names[s - 1]);
    sp_chunk chunk = {i, sp_chunk_first(r, i), sp_chunk_records(r, i),
                      sp_device_slot(p, s - 1, b), sp_device_slot(p, s, b), NULL};
    st = p->ctx->ops->launch(p->ctx->impl, q, sp_stage_trampoline, &p->calls[s - 1], &chunk);
    if (st != SP_OK) {
        if (sp_pipeline_has_failed(p)) { /* the trampoline recorded the stage's own failure */
            sp_context_note_status(p->ctx, st); /* but a lost device must still be noted */
            r->status = r->status ? r->status : SP_ERR_STAGE_FAILED;
            return r->status;
        }
        return sp_run_fail(r, st, "chunk %zu: launching stage '%s'", i, p->stage_names[s - 1]);
    }
    st = op_end(r, s, i, q);
    return st == SP_OK ? SP_OK
                       : sp_run_fail(r, st, "chunk %zu: recording the events of stage '%s'", i,
                                     p->stage_names[s - 1]);
}

static sp_status enqueue_d2h(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth, M = p->n_stages;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[M];
    void *dst = r->stage_out ? p->pinned_out + b * p->pinned_out_stride
                             : r->out + sp_chunk_first(r, i) * p->record_bytes[M];
    /* RAW on boundary M; the WAR on pinned_out[b] was settled by the host's turn */
    sp_status st = op_begin(r, M + 1, i, p->d2h, finished(r, M, i), NULL);
    if (st == SP_OK)
        st = enqueue_copy(r, 0, dst, sp_device_slot(p, M, b), bytes, p->d2h);
    if (st == SP_OK)
        st = op_end(r, M + 1, i, p->d2h);
    return st == SP_OK ? SP_OK : sp_run_fail(r, st, "chunk %zu: enqueueing its d2h copy", i);
}

/* The event the host must see complete before chunk i may take slot b from chunk i-K: the
 * d2h when there is output to copy out, else the h2d that read pinned_in[b], else nothing. */
static sp_bevent *slot_release_event(const sp_run *r, size_t i)
{
    if (r->stage_out)
        return finished_previous(r, r->p->n_stages + 1, i);
    return r->stage_in ? finished_previous(r, 0, i) : NULL;
}

/* The host's part of moving slot b on: chunk `out_chunk`'s output (if any; SIZE_MAX = none)
 * leaves pinned_out[b] while chunk `in_chunk`'s input (SIZE_MAX = none) enters pinned_in[b]. */
static void stage_copies(sp_run *r, size_t out_chunk, size_t in_chunk)
{
    sp_pipeline *p = r->p;
    size_t M = p->n_stages;
    sp_copy copies[2];
    size_t n = 0;
    if (r->stage_out && out_chunk != SIZE_MAX) {
        size_t b = out_chunk % p->depth;
        copies[n++] = (sp_copy){r->out + sp_chunk_first(r, out_chunk) * p->record_bytes[M],
                                p->pinned_out + b * p->pinned_out_stride,
                                sp_chunk_records(r, out_chunk) * p->record_bytes[M]};
    }
    if (r->stage_in && in_chunk != SIZE_MAX) {
        size_t b = in_chunk % p->depth;
        copies[n++] = (sp_copy){p->pinned_in + b * p->pinned_in_stride,
                                r->in + sp_chunk_first(r, in_chunk) * p->record_bytes[0],
                                sp_chunk_records(r, in_chunk) * p->record_bytes[0]};
    }
    if (n == 0)
        return;
    sp_run_trace_push(r, "stage", in_chunk != SIZE_MAX ? in_chunk : out_chunk);
    double t = sp_now() - r->t0;
    sp_staging_pool_copy_many(p->pool, copies, n);
    double t_end = sp_now() - r->t0;
    sp_run_trace_pop(r);
    if (!r->timing)
        return;
    if (r->stage_out && out_chunk != SIZE_MAX)
        sp_timeline_set(&p->timeline, SP_TL_STAGE_OUT(p), out_chunk, t, t_end);
    if (r->stage_in && in_chunk != SIZE_MAX)
        sp_timeline_set(&p->timeline, SP_TL_STAGE_IN, in_chunk, t, t_end);
}

/* Frees slot i mod K from chunk i-K (if any) and stages chunk i's input into it; `i` may
 * be past the last chunk, to retire the final K chunks. */
static sp_status host_turn(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_bevent *release = slot_release_event(r, i);
    if (release) {
        sp_status st = p->ctx->ops->event_sync(p->ctx->impl, release);
        if (st != SP_OK)
            return sp_run_fail(r, st, "chunk %zu: waiting for chunk %zu to leave its slot", i,
                               i - p->depth);
    }
    size_t out_chunk = i >= p->depth ? i - p->depth : SIZE_MAX;
    size_t in_chunk = i < r->plan.chunks ? i : SIZE_MAX;
    stage_copies(r, out_chunk, in_chunk);
    return SP_OK;
}

static sp_status submit_chunk(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_status st = host_turn(r, i);
    if (st == SP_OK) {
        sp_run_trace_push(r, "h2d", i);
        st = enqueue_h2d(r, i);
        sp_run_trace_pop(r);
    }
    for (size_t s = 1; st == SP_OK && s <= p->n_stages; s++) {
        sp_run_trace_push(r, p->stage_names[s - 1], i);
        st = enqueue_stage(r, s, i);
        sp_run_trace_pop(r);
    }
    if (st == SP_OK) {
        sp_run_trace_push(r, "d2h", i);
        st = enqueue_d2h(r, i);
        sp_run_trace_pop(r);
    }
    return st;
}

static sp_status run_chunks(sp_run *r)
{
    sp_pipeline *p = r->p;
    size_t n = r->plan.chunks;
    if (r->timing) {
        sp_status st = sp_run_timing_start(r);
        if (st != SP_OK)
            return st;
    }
    for (size_t i = 0; i < n; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED; /* stop submitting; the caller drains */
        sp_status st = submit_chunk(r, i);
        if (st != SP_OK)
            return st;
    }
    /* the last K chunks still hold their slots: turns for chunks n..n+K-1 release them */
    for (size_t i = n > p->depth ? n : p->depth; i < n + p->depth; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED;
        sp_status st = host_turn(r, i);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

sp_status sp_run_finish(sp_run *r, sp_status st, sp_report *report)
{
    sp_pipeline *p = r->p;
    sp_status drained = sp_run_drain(r);
    double t_end = sp_now();
    if (sp_pipeline_has_failed(p))
        st = p->failure_status; /* a stage that failed on a worker, or the first backend error */
    else if (st == SP_OK)
        st = drained;
    if (st != SP_OK && atomic_load(&p->ctx->lost))
        st = SP_ERR_DEVICE_LOST; /* whatever failed first, nothing will work on this context */
    if (st == SP_OK && r->event_timing)
        st = sp_run_timing_collect(r); /* after t_end: reading the events is not the run's */
    if (st == SP_OK && report)
        sp_run_report(r, t_end, report);
    return st;
}

sp_status sp_pipeline_run(sp_pipeline *p, const void *in, size_t n_records, void *out,
                          sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_run r;
    sp_status st = sp_run_prepare(&r, p, in, n_records, out, report != NULL);
    if (st != SP_OK || n_records == 0) {
        if (st == SP_OK && report)
            sp_run_report(&r, 0.0, report);
        return st;
    }
    if (r.timing && (st = sp_run_timeline_start(&r)) != SP_OK)
        return st;
    sp_pipeline_reset_failure(p);
    r.t0 = sp_now();
    st = run_chunks(&r);
    return sp_run_finish(&r, st, report);
}
