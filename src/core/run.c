/* The per-chunk primitives of stream mode: chunk i in slot b = i mod K gets its h2d, every
 * stage and its d2h enqueued, each behind its RAW and WAR events (the rules are listed in
 * pipeline.h), and, in a timed run, an end event per operation and a start event only where
 * its queue is idle (op_start). The host's side (waiting for slots, staging) is engine.c's. */
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
    if (st == SP_OK && r->activity_timing) /* last: a failure above leaves nothing pushed */
        st = ops->activity_push(r->p->ctx->impl, sp_run_activity_id(r, g, i));
    return st;
}

/* After op_begin succeeded and the operation itself was enqueued (`enqueued`: its status):
 * the activity mark comes off whatever happened; then, if it was enqueued, records what
 * finished(g, i) will return, and in a timed run the end timing event first. */
static sp_status op_end(sp_run *r, size_t g, size_t i, sp_bqueue *q, sp_status enqueued)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    if (r->activity_timing)
        ops->activity_pop(r->p->ctx->impl);
    if (enqueued != SP_OK)
        return enqueued;
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

const char *sp_run_user_in(const sp_run *r, size_t i)
{
    return r->in + sp_chunk_first(r, i) * r->p->record_bytes[0];
}

char *sp_run_user_out(const sp_run *r, size_t i)
{
    return r->out + sp_chunk_first(r, i) * r->p->record_bytes[r->p->n_stages];
}

const void *sp_run_h2d_source(const sp_run *r, size_t i)
{
    return r->stage_in ? sp_staging_in(r->p, i) : sp_run_user_in(r, i);
}

void *sp_run_d2h_target(const sp_run *r, size_t i)
{
    return r->stage_out ? sp_staging_out(r->p, i) : sp_run_user_out(r, i);
}

sp_chunk sp_run_chunk(const sp_run *r, size_t s, size_t i, size_t b)
{
    const sp_pipeline *p = r->p;
    char *scratch = p->scratch[s - 1];
    return (sp_chunk){
        .index = i,
        .first_record = r->record_base + sp_chunk_first(r, i),
        .records = sp_chunk_records(r, i),
        .in = sp_device_slot(p, s - 1, b),
        .out = sp_device_slot(p, s, b),
        .stream = NULL,
        .scratch = scratch ? scratch + b * p->scratch_stride[s - 1] : NULL,
    };
}

static sp_status enqueue_h2d(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[0];
    const void *src = sp_run_h2d_source(r, i);
    sp_status st = op_begin(r, 0, i, p->h2d); /* WAR on boundary 0 */
    if (st == SP_OK)
        st = op_end(r, 0, i, p->h2d,
                    sp_run_enqueue_copy(r, 1, sp_device_slot(p, 0, b), src, bytes, p->h2d));
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
    sp_chunk chunk = sp_run_chunk(r, s, i, b);
    st = p->ctx->ops->launch(p->ctx->impl, q, sp_stage_trampoline, &p->calls[s - 1], &chunk);
    if (st != SP_OK) {
        (void)op_end(r, s, i, q, st); /* only takes the activity mark off */
        if (sp_pipeline_has_failed(p)) { /* the trampoline recorded the stage's own failure */
            sp_context_note_status(p->ctx, st); /* but a lost device must still be noted */
            r->status = r->status ? r->status : SP_ERR_STAGE_FAILED;
            return r->status;
        }
        return sp_run_fail(r, st, "chunk %zu: launching stage '%s'", i, p->stage_names[s - 1]);
    }
    st = op_end(r, s, i, q, SP_OK);
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
        st = op_end(r, M + 1, i, p->d2h,
                    sp_run_enqueue_copy(r, 0, dst, sp_device_slot(p, M, b), bytes, p->d2h));
    return st == SP_OK ? SP_OK : sp_run_fail(r, st, "chunk %zu: enqueueing its d2h copy", i);
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
