/* Direct submission: chunk i in slot b = i mod K gets its h2d, every stage and its d2h
 * enqueued, each behind its RAW and WAR events (ring.h lists the rules), and, in a timed
 * batch, an end event per operation and a start event only where its queue is idle
 * (op_start). It only enqueues: the host's side of the chunk (waiting for its slot, staging)
 * is the scheduler's, before it calls sp_submit_chunk. */
#include <stdint.h>
#include <string.h>

#include "core/backend_call.h"
#include "core/ring_decode.h"
#include "core/stage_call.h"
#include "core/submit_direct.h"
#include "core/timing.h"
#include "core/tune_run.h"

/* Whether something `d` lists is unfinished now: *running for an operation that has timing
 * events, *blind for one that has none (a sampled run's chunk outside its windows), whose
 * end will not be known. Asks the chunk's own end event where there is one (a slot's done
 * event may hold a later chunk's record), else the slot's done event, which at this moment
 * still holds the chunk's record or a later one (the chunk had left its slot then: done).
 * Stops once the answer is settled: in a run the GPU limits, the previous operation on the
 * queue is usually still running, so one question does it. */
static sp_status deps_running(const sp_batch *r, const sp_op_deps *d, int *running, int *blind)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    sp_op ask[3];
    size_t n = 0;
    if (d->has_previous)
        ask[n++] = d->previous;
    for (size_t k = 0; k < d->n_waits; k++)
        ask[n++] = d->waits[k];
    *running = *blind = 0;
    sp_status st = SP_OK;
    for (size_t k = 0; st == SP_OK && !*blind && k < n; k++) {
        int timed = sp_timing_timed(r, ask[k].i), complete = 1;
        if (timed && *running)
            continue; /* one running with events settles the timed ones; ask the others */
        sp_bevent *e = timed ? sp_timing_event(r, ask[k].g, ask[k].i, 1)
                             : sp_ring_finished(r->p, ask[k].g, ask[k].i);
        st = ops->event_query(r->p->ctx->impl, e, &complete);
        if (!complete)
            *(timed ? running : blind) = 1;
    }
    return st;
}

/* The start of timed operation (g, i). Its queue starts it once (a) the previous operation
 * on the queue has finished, (b) everything it waits for has finished and (c) it has been
 * enqueued. When (a) or (b) is still pending as it is enqueued, (c) does not bind, and the
 * start is the latest of those ends, which are read after the run anyway: timing.c
 * infers it, exactly up to the time between the question and the enqueue (for a CUDA stage,
 * the host time its function takes to enqueue its kernels), and the engine is spared an
 * event record. Only an operation that may start at once, its queue
 * idle, gets a start event; so does every one when the backend cannot tell (no
 * event_query). Host waits and staging do not change this: they only delay (c). */
static sp_status op_start(sp_batch *r, size_t g, size_t i, sp_bqueue *q, const sp_op_deps *d)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    int running = 0, blind = 0;
    sp_status st = ops->event_query ? deps_running(r, d, &running, &blind) : SP_OK;
    running = running && !blind; /* an untimed dependency still running: its end is unknown */
    sp_timing_set_inferred(r, g, i, running);
    if (st == SP_OK && !running)
        st = ops->event_record(r->p->ctx->impl, sp_timing_event(r, g, i, 0), q);
    return st;
}

/* Enqueues the waits of (g, i) (sp_ring_op_deps) and, in a timed run, its start. */
static sp_status op_begin(sp_batch *r, size_t g, size_t i, sp_bqueue *q)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    sp_op_deps deps;
    sp_ring_op_deps(r->p, g, i, &deps);
    sp_status st = SP_OK;
    for (size_t k = 0; st == SP_OK && k < deps.n_waits; k++)
        st = ops->queue_wait(r->p->ctx->impl, q, sp_ring_finished(r->p, deps.waits[k].g, deps.waits[k].i));
    if (st == SP_OK && sp_timing_timed(r, i))
        st = op_start(r, g, i, q, &deps);
    /* after the waits: when it starts */
    sp_bevent *watch = r->tuned ? sp_tune_run_event(r, g, i, 0) : NULL;
    if (st == SP_OK && watch)
        st = ops->event_record(r->p->ctx->impl, watch, q);
    if (st == SP_OK && r->activity_timing) /* last: a failure above leaves nothing pushed */
        st = ops->activity_push(r->p->ctx->impl, sp_timing_activity_id(r, g, i));
    return st;
}

/* After op_begin succeeded and the operation itself was enqueued (`enqueued`: its status):
 * the activity mark comes off whatever happened; then, if it was enqueued, records what
 * finished(g, i) will return, and in a timed run the end timing event first. */
static sp_status op_end(sp_batch *r, size_t g, size_t i, sp_bqueue *q, sp_status enqueued)
{
    const sp_backend_ops *ops = r->p->ctx->ops;
    if (r->activity_timing)
        ops->activity_pop(r->p->ctx->impl);
    if (enqueued != SP_OK)
        return enqueued;
    sp_status st = SP_OK;
    if (sp_timing_timed(r, i))
        st = ops->event_record(r->p->ctx->impl, sp_timing_event(r, g, i, 1), q);
    sp_bevent *watch = r->tuned ? sp_tune_run_event(r, g, i, 1) : NULL;
    if (st == SP_OK && watch)
        st = ops->event_record(r->p->ctx->impl, watch, q);
    return st == SP_OK ? ops->event_record(r->p->ctx->impl, sp_ring_finished(r->p, g, i), q) : st;
}

static sp_status enqueue_h2d(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[0];
    const void *src = sp_ring_h2d_source(r, i);
    void *dst = sp_device_slot(p, 0, b);
    /* a chunk decompressed in the ring: its compressed blocks instead (ring_decode.h) */
    if (r->decode)
        (void)sp_ring_decode_h2d(r, i, &dst, &src, &bytes);
    sp_status st = op_begin(r, 0, i, p->h2d); /* WAR on boundary 0 */
    if (st == SP_OK)
        st = op_end(r, 0, i, p->h2d,
                    sp_call_copy_end(p, 1, r->in_device, dst, src, bytes, p->h2d));
    return st == SP_OK ? SP_OK : sp_batch_fail(r, st, "chunk %zu: enqueueing its h2d copy", i);
}

static sp_status enqueue_stage(sp_batch *r, size_t s, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    sp_bqueue *q = sp_stage_queue(p, s, i);
    sp_status st = op_begin(r, s, i, q); /* RAW on boundary s-1, WAR on boundary s */
    if (st != SP_OK)
        return sp_batch_fail(r, st, "chunk %zu: enqueueing the waits of stage '%s'", i,
                           p->stage_names[s - 1]);
    if (s == 1 && r->decode && (st = sp_ring_decode_enqueue(r, i, q)) != SP_OK) {
        (void)op_end(r, s, i, q, st);
        return st;
    }
    sp_chunk chunk = sp_ring_stage_chunk(r, s, i, b);
    st = p->ctx->ops->launch(p->ctx->impl, q, sp_stage_trampoline, &p->calls[s - 1], &chunk);
    if (st != SP_OK) {
        (void)op_end(r, s, i, q, st); /* only takes the activity mark off */
        if (sp_pipeline_has_failed(p)) { /* the trampoline recorded the stage's own failure */
            sp_context_note_status(p->ctx, st); /* but a lost device must still be noted */
            r->status = r->status ? r->status : SP_ERR_STAGE_FAILED;
            return r->status;
        }
        return sp_batch_fail(r, st, "chunk %zu: launching stage '%s'", i, p->stage_names[s - 1]);
    }
    st = op_end(r, s, i, q, SP_OK);
    return st == SP_OK ? SP_OK
                       : sp_batch_fail(r, st, "chunk %zu: recording the events of stage '%s'", i,
                                     p->stage_names[s - 1]);
}

static sp_status enqueue_d2h(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth, M = p->n_stages;
    size_t bytes = sp_chunk_records(r, i) * p->record_bytes[M];
    void *dst = sp_ring_d2h_target(r, i);
    /* RAW on boundary M; the WAR on pinned_out[b] was settled by the host's turn */
    sp_status st = op_begin(r, M + 1, i, p->d2h);
    if (st == SP_OK)
        st = op_end(r, M + 1, i, p->d2h,
                    sp_call_copy_end(p, 0, r->out_device, dst, sp_device_slot(p, M, b), bytes,
                                     p->d2h));
    return st == SP_OK ? SP_OK : sp_batch_fail(r, st, "chunk %zu: enqueueing its d2h copy", i);
}

sp_status sp_submit_chunk(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    if (r->timing)
        sp_timing_chunk(r, i);
    sp_call_trace_push(p, "h2d", i);
    sp_status st = enqueue_h2d(r, i);
    sp_call_trace_pop(p);
    for (size_t s = 1; st == SP_OK && s <= p->n_stages; s++) {
        sp_call_trace_push(p, p->stage_names[s - 1], i);
        st = enqueue_stage(r, s, i);
        sp_call_trace_pop(p);
    }
    if (st == SP_OK) {
        sp_call_trace_push(p, "d2h", i);
        st = enqueue_d2h(r, i);
        sp_call_trace_pop(p);
    }
    return st;
}
