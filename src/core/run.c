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
 * (run_timing.c); an operation gets a start event only when its queue is idle (op_start). */
#include <stdint.h>
#include <string.h>

#include "core/clock.h"
#include "core/run.h"

/* The event that says GPU engine g has finished chunk j, for waits: the done event of its
 * slot, which at the time of the callers' waits holds chunk j's record. Timed runs wait on it
 * too, not on the chunk's end timing event, because CUDA documents waits on events without
 * timing as the cheapest. That costs a timed run a second record per operation, which on
 * the H200 costs nothing measurable: a record without timing adds 0.02 us to a chain of
 * kernels, a timing record 2 us (bench/event_cost.cu; bench/PERF.md, third session). */
static sp_bevent *finished(const sp_run *r, size_t g, size_t j)
{
    return r->p->events[g].done[j % r->p->depth];
}

/* Engine g finished chunk i-K, the previous user of chunk i's slot; NULL when i < K. */
static sp_bevent *finished_previous(const sp_run *r, size_t g, size_t i)
{
    return i >= r->p->depth ? finished(r, g, i - r->p->depth) : NULL;
}

void sp_run_op_deps(const sp_pipeline *p, size_t g, size_t i, sp_op_deps *d)
{
    size_t M = p->n_stages;
    /* a stage on several queues runs chunk i on the queue of chunk i - streams */
    size_t apart = g >= 1 && g <= M ? p->stage_streams[g - 1] : 1;
    d->has_previous = i >= apart;
    d->previous = (sp_op){g, d->has_previous ? i - apart : 0};
    d->n_waits = 0;
    /* RAW: the writer of the boundary it reads (h2d reads host memory, no event) */
    if (g > 0)
        d->waits[d->n_waits++] = (sp_op){g - 1, i};
    /* WAR: the reader of the boundary it writes, done with chunk i-K (stage 1, or d2h when
     * there is no stage, reads boundary 0); d2h writes host memory, settled by the host */
    if (g <= M && i >= p->depth)
        d->waits[d->n_waits++] = (sp_op){g + 1, i - p->depth};
}

/* Whether something `d` lists is unfinished now. Stops at the first: in a run the GPU
 * limits, the previous operation on the queue is usually still running, so one question
 * settles it. */
static sp_status deps_running(const sp_run *r, const sp_op_deps *d, int *running)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    sp_op ask[3];
    size_t n = 0;
    if (d->has_previous)
        ask[n++] = d->previous;
    for (size_t k = 0; k < d->n_waits; k++)
        ask[n++] = d->waits[k];
    *running = 0;
    sp_status st = SP_OK;
    for (size_t k = 0; st == SP_OK && !*running && k < n; k++) {
        int complete = 1;
        /* the chunk's own end event: a slot's done event may hold a later chunk's record */
        st = ops->event_query(r->p->ctx->impl, *sp_run_timing_event(r, ask[k].g, ask[k].i, 1),
                              &complete);
        *running = !complete;
    }
    return st;
}

/* The start of timed operation (g, i). Its queue starts it once (a) the previous operation
 * on the queue has finished, (b) everything it waits for has finished and (c) it has been
 * enqueued. When (a) or (b) is still pending as it is enqueued, (c) does not bind, and the
 * start is the latest of those ends, which are read after the run anyway: run_timing.c
 * infers it, exactly up to the time between the question and the enqueue (for a CUDA stage,
 * the host time its function takes to enqueue its kernels), and the engine is spared an
 * event record. Only an operation that may start at once, its queue
 * idle, gets a start event; so does every one when the backend cannot tell (no
 * event_query). Host waits and staging do not change this: they only delay (c). */
static sp_status op_start(sp_run *r, size_t g, size_t i, sp_bqueue *q, const sp_op_deps *d)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    int running = 0;
    sp_status st = ops->event_query ? deps_running(r, d, &running) : SP_OK;
    *sp_run_timing_inferred(r, g, i) = (unsigned char)running;
    if (st == SP_OK && !running)
        st = ops->event_record(r->p->ctx->impl, *sp_run_timing_event(r, g, i, 0), q);
    return st;
}

/* Enqueues the waits of (g, i) (sp_run_op_deps) and, in a timed run, its start. */
static sp_status op_begin(sp_run *r, size_t g, size_t i, sp_bqueue *q)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    sp_op_deps deps;
    sp_run_op_deps(r->p, g, i, &deps);
    sp_status st = SP_OK;
    for (size_t k = 0; st == SP_OK && k < deps.n_waits; k++)
        st = ops->queue_wait(r->p->ctx->impl, q, finished(r, deps.waits[k].g, deps.waits[k].i));
    if (st == SP_OK && r->event_timing)
        st = op_start(r, g, i, q, &deps);
    return st;
}

/* Records what finished(g, i) will return, and in a timed run the end timing event first. */
static sp_status op_end(sp_run *r, size_t g, size_t i, sp_bqueue *q)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    sp_status st = SP_OK;
    if (r->event_timing)
        st = ops->event_record(r->p->ctx->impl, *sp_run_timing_event(r, g, i, 1), q);
    return st == SP_OK ? ops->event_record(r->p->ctx->impl, finished(r, g, i), q) : st;
}

sp_status sp_run_enqueue_copy(sp_run *r, int to_device, void *dst, const void *src,
                              size_t bytes, sp_bqueue *q)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    size_t piece = r->p->copy_piece_bytes ? r->p->copy_piece_bytes : bytes;
    /* A kernel on q itself, when asked for: the copy engines serve one busy queue until it is
     * empty, so a copy there waits behind another pipeline's (bench/PERF.md). */
    int by_kernel = r->p->copy_by_kernel && ops->copy_kernel;
    sp_status st = SP_OK;
    for (size_t off = 0; st == SP_OK && off < bytes; off += piece) {
        size_t len = bytes - off < piece ? bytes - off : piece;
        char *to = (char *)dst + off;
        const char *from = (const char *)src + off;
        if (by_kernel)
            st = ops->copy_kernel(r->p->ctx->impl, to, from, len, q);
        else
            st = to_device ? ops->copy_h2d(r->p->ctx->impl, to, from, len, q)
                           : ops->copy_d2h(r->p->ctx->impl, to, from, len, q);
    }
    return st;
}

/* Chunk i in the user's input and output, and its slot's staging buffers. */
static const char *user_in(const sp_run *r, size_t i)
{
    return r->in + sp_chunk_first(r, i) * r->p->record_bytes[0];
}

static char *user_out(const sp_run *r, size_t i)
{
    return r->out + sp_chunk_first(r, i) * r->p->record_bytes[r->p->n_stages];
}

static char *staging_in(const sp_run *r, size_t i)
{
    return r->p->pinned_in + (i % r->p->depth) * r->p->pinned_in_stride;
}

static char *staging_out(const sp_run *r, size_t i)
{
    return r->p->pinned_out + (i % r->p->depth) * r->p->pinned_out_stride;
}

const void *sp_run_h2d_source(const sp_run *r, size_t i)
{
    return r->stage_in ? staging_in(r, i) : user_in(r, i);
}

void *sp_run_d2h_target(const sp_run *r, size_t i)
{
    return r->stage_out ? staging_out(r, i) : user_out(r, i);
}

static sp_status enqueue_h2d(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[0];
    const void *src = sp_run_h2d_source(r, i);
    sp_status st = op_begin(r, 0, i, p->h2d); /* WAR on boundary 0 */
    if (st == SP_OK)
        st = sp_run_enqueue_copy(r, 1, sp_device_slot(p, 0, b), src, bytes, p->h2d);
    if (st == SP_OK)
        st = op_end(r, 0, i, p->h2d);
    return st == SP_OK ? SP_OK : sp_run_fail(r, st, "chunk %zu: enqueueing its h2d copy", i);
}

static sp_status enqueue_stage(sp_run *r, size_t s, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    sp_bqueue *q = sp_stage_queue(p, s, i);
    sp_status st = op_begin(r, s, i, q); /* RAW on boundary s-1, WAR on boundary s */
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
    void *dst = sp_run_d2h_target(r, i);
    /* RAW on boundary M; the WAR on pinned_out[b] was settled by the host's turn */
    sp_status st = op_begin(r, M + 1, i, p->d2h);
    if (st == SP_OK)
        st = sp_run_enqueue_copy(r, 0, dst, sp_device_slot(p, M, b), bytes, p->d2h);
    if (st == SP_OK)
        st = op_end(r, M + 1, i, p->d2h);
    return st == SP_OK ? SP_OK : sp_run_fail(r, st, "chunk %zu: enqueueing its d2h copy", i);
}

/* The event the host must see complete before chunk i may take slot b from chunk i-K: the
 * d2h when there is output to copy out, else the h2d that read pinned_in[b]. With nothing to
 * stage the GPU's events alone would keep the slots safe, but the host still waits for
 * d2h(i-K), so a run never has more than K chunks queued: a failure stops the run within K
 * chunks, and the device's queues never hold a whole run that another pipeline's work must
 * share them with. (That alone did not let another pipeline's copies through: the copy
 * engines serve one busy queue until it is empty. Latency-critical pipelines copy by kernel
 * instead: copy_by_kernel, bench/PERF.md, latency under load.) */
static sp_bevent *slot_release_event(const sp_run *r, size_t i)
{
    if (i >= r->p->depth && i - r->p->depth < r->graph_end)
        return sp_run_graph_release(r, i - r->p->depth);
    if (r->stage_in && !r->stage_out)
        return finished_previous(r, 0, i);
    return finished_previous(r, r->p->n_stages + 1, i);
}

/* The host's part of moving slot b on: chunk `out_chunk`'s output (if any; SIZE_MAX = none)
 * leaves pinned_out[b] while chunk `in_chunk`'s input (SIZE_MAX = none) enters pinned_in[b]. */
static void stage_copies(sp_run *r, size_t out_chunk, size_t in_chunk)
{
    sp_pipeline *p = r->p;
    size_t M = p->n_stages;
    sp_copy copies[2];
    size_t n = 0;
    if (r->stage_out && out_chunk != SIZE_MAX)
        copies[n++] = (sp_copy){user_out(r, out_chunk), staging_out(r, out_chunk),
                                sp_chunk_records(r, out_chunk) * p->record_bytes[M]};
    if (r->stage_in && in_chunk != SIZE_MAX)
        copies[n++] = (sp_copy){staging_in(r, in_chunk), user_in(r, in_chunk),
                                sp_chunk_records(r, in_chunk) * p->record_bytes[0]};
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

sp_status sp_run_host_turn(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_bevent *release = slot_release_event(r, i);
    if (release) {
        double t = sp_now();
        sp_status st = p->ctx->ops->event_sync(p->ctx->impl, release);
        if (i < r->plan.chunks) /* the turns after the last chunk are the drain's, not submit's */
            r->wait_s += sp_now() - t;
        if (st != SP_OK)
            return sp_run_fail(r, st, "chunk %zu: waiting for chunk %zu to leave its slot", i,
                               i - p->depth);
    }
    sp_run_stage_turn(r, i);
    return SP_OK;
}

void sp_run_stage_turn(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t out_chunk = i >= p->depth ? i - p->depth : SIZE_MAX;
    size_t in_chunk = i < r->plan.chunks ? i : SIZE_MAX;
    stage_copies(r, out_chunk, in_chunk);
}

sp_status sp_run_enqueue_chunk(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_run_trace_push(r, "h2d", i);
    sp_status st = enqueue_h2d(r, i);
    sp_run_trace_pop(r);
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

sp_status sp_run_stream_chunks(sp_run *r, size_t first)
{
    sp_pipeline *p = r->p;
    size_t n = r->plan.chunks;
    for (size_t i = first; i < n; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED; /* stop submitting; the caller drains */
        sp_status st = sp_run_host_turn(r, i);
        if (st == SP_OK)
            st = sp_run_enqueue_chunk(r, i);
        if (st != SP_OK)
            return st;
    }
    r->t_submitted = sp_now();
    /* the last K chunks still hold their slots: turns for chunks n..n+K-1 release them */
    for (size_t i = n > p->depth ? n : p->depth; i < n + p->depth; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED;
        sp_status st = sp_run_host_turn(r, i);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

static sp_status run_chunks(sp_run *r)
{
    if (r->timing) {
        sp_status st = sp_run_timing_start(r);
        if (st != SP_OK)
            return st;
    }
    return sp_run_stream_chunks(r, 0);
}

sp_status sp_run_finish(sp_run *r, sp_status st, sp_report *report)
{
    sp_pipeline *p = r->p;
    sp_status drained = sp_run_drain(r);
    double t_end = sp_now();
    /* the makespan is taken here, before a timed run reads its events, for every run mode
     * (serial and graph runs end here too): with or without a report it is the same span */
    p->last_makespan_s = t_end - r->t0;
    p->last_submit_s = r->t_submitted > 0.0 ? r->t_submitted - r->t0 : 0.0;
    p->last_wait_s = r->wait_s;
    if (sp_pipeline_has_failed(p))
        st = p->failure_status; /* a stage that failed on a worker, or the first backend error */
    else if (st == SP_OK)
        st = drained;
    if (st != SP_OK && atomic_load(&p->ctx->lost))
        st = SP_ERR_DEVICE_LOST; /* whatever failed first, nothing will work on this context */
    if (st == SP_OK && r->event_timing)
        st = sp_run_timing_collect(r); /* after t_end: reading the events is not the run's */
    if (st == SP_OK && report)
        sp_run_report(r, report);
    return st;
}

static sp_status run_pipelined(sp_pipeline *p, const void *in, size_t n_records, void *out,
                               sp_report *report)
{
    sp_run r;
    sp_status st = sp_run_prepare(&r, p, in, n_records, out, report != NULL);
    if (st != SP_OK || n_records == 0) {
        if (st == SP_OK && report)
            sp_run_report(&r, report);
        return st;
    }
    int graphs = sp_run_graph_wanted(&r); /* graph mode measures no per-operation times */
    if (r.timing && (st = sp_run_timeline_start(&r)) != SP_OK)
        return st;
    sp_pipeline_reset_failure(p);
    r.t0 = sp_now();
    st = graphs ? sp_run_graph_chunks(&r) : run_chunks(&r);
    return sp_run_finish(&r, st, report);
}

sp_status sp_pipeline_run(sp_pipeline *p, const void *in, size_t n_records, void *out,
                          sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run");
    if (st != SP_OK)
        return st;
    st = run_pipelined(p, in, n_records, out, report);
    sp_pipeline_release(p);
    return st;
}
