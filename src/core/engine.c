/* The one engine. One host thread walks the chunks in order; chunk i goes into slot
 * b = i mod K, which the chunk before it there (i-K, of this batch or an earlier one) must
 * leave first. The host's turn for chunk i:
 *   1. waits until that chunk may leave (its d2h done; only its h2d when there is no output
 *      to hand on and chunk i's input must be staged; its group's event after a graph replay);
 *   2. hands that chunk's output on, from pinned_out[b] to the user's pageable memory or to
 *      the sink, while chunk i's input enters pinned_in[b] from pageable memory or from the
 *      source: both in one parallel copy on the staging threads, since the host's memory,
 *      not a thread, limits pageable runs (bench/PERF.md);
 * then run.c enqueues chunk i's h2d, stages and d2h. The GPU thus holds up to K-1 chunks
 * while the host copies, and no buffer is written before its last reader is done.
 *
 * A run (sp_pipeline_run, sp_pipeline_run_io) is one batch, after which every slot is
 * retired. A stream (stream.c) feeds batch after batch through the same turns without
 * retiring between them, and is told of each chunk that leaves its slot. Each slot's
 * sp_slot says what its chunk still needs, so a turn never has to know which batch the
 * chunk before it came from. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/sized.h"
#include "core/run.h"
#include "core/run_at.h"

/* ---- slots -------------------------------------------------------------------------------- */

/* What the host waits for before the chunk in `slot` may leave, when the next chunk will (or
 * will not) stage its input into the slot. A chunk whose output goes nowhere from staging
 * and that no stream waits on needs only its h2d to be done before pinned_in may be
 * overwritten; every other waits for its d2h, which also keeps at most K chunks queued, so
 * that a failure stops a run within K chunks. */
static sp_bevent *release_event(const sp_pipeline *p, const sp_slot *slot, int next_stages_in)
{
    size_t b = slot->chunk % p->depth;
    if (slot->graph_release)
        return slot->graph_release;
    if (next_stages_in && !slot->out && !slot->sink && !slot->batch)
        return p->events[0].done[b];
    return p->events[p->n_stages + 1].done[b];
}

void sp_run_occupy(sp_run *r, size_t i, sp_bevent *graph_release)
{
    sp_pipeline *p = r->p;
    sp_slot *slot = &p->slots[i % p->depth];
    slot->busy = 1;
    slot->chunk = i;
    slot->graph_release = graph_release;
    slot->out = r->stage_out && !r->io ? sp_run_user_out(r, i) : NULL;
    slot->sink = r->io != NULL;
    slot->first_record = r->record_base + sp_chunk_first(r, i);
    slot->records = sp_chunk_records(r, i);
    slot->batch = r->batch;
    slot->input_staged = r->stage_in;
}

void sp_engine_reset(sp_pipeline *p)
{
    memset(p->slots, 0, sizeof p->slots);
    sp_pipeline_reset_failure(p);
}

unsigned sp_engine_busy_slots(const sp_pipeline *p)
{
    unsigned n = 0;
    for (unsigned b = 0; b < p->depth; b++)
        n += p->slots[b].busy != 0;
    return n;
}

/* ---- sources and sinks ---------------------------------------------------------------------- */

/* A source or sink failed: the run's first failure, without a backend's text (it is the
 * user's function), and the chunks from this one on are lost. Positional ones fail on the
 * staging threads, several at once: everything here is under the failure lock. */
static sp_status io_fail(sp_run *r, size_t chunk, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static sp_status io_fail(sp_run *r, size_t chunk, const char *fmt, ...)
{
    sp_pipeline *p = r->p;
    pthread_mutex_lock(&p->failure_lock);
    if (!atomic_load(&p->failed)) {
        va_list ap;
        va_start(ap, fmt);
        sp_pipeline_vfail_run(p, SP_ERR_STAGE_FAILED, fmt, ap);
        va_end(ap);
        p->failure_status = SP_ERR_STAGE_FAILED;
        atomic_store(&p->fail_chunk, chunk);
        atomic_store(&p->failed, 1);
    }
    if (r->status == SP_OK)
        r->status = SP_ERR_STAGE_FAILED;
    pthread_mutex_unlock(&p->failure_lock);
    return SP_ERR_STAGE_FAILED;
}

/* A positional source or sink's share of one chunk, as a staging pool job. */
typedef struct io_piece {
    sp_run *run;
    size_t chunk;
    char *pinned;       /* the slot's staging buffer */
    size_t first;       /* the chunk's first record */
    size_t record_bytes;
} io_piece;

static sp_status read_piece(void *arg, size_t offset, size_t len)
{
    const io_piece *c = arg;
    const sp_io *io = c->run->io;
    size_t first = c->first + offset / c->record_bytes, want = len / c->record_bytes, got = 0;
    sp_status st = io->read(c->pinned + offset, first, want, &got, io->read_user);
    if (st != SP_OK)
        return io_fail(c->run, c->chunk, "the source failed reading records %zu..%zu: it "
                       "returned %s (%s)", first, first + want - 1, sp_status_name(st),
                       sp_status_message(st));
    if (got != want)
        return io_fail(c->run, c->chunk, "the positional source gave %zu of the %zu records "
                       "from %zu it was asked for", got, want, first);
    return SP_OK;
}

static sp_status write_piece(void *arg, size_t offset, size_t len)
{
    const io_piece *c = arg;
    const sp_io *io = c->run->io;
    size_t first = c->first + offset / c->record_bytes, records = len / c->record_bytes;
    sp_status st = io->write(c->pinned + offset, first, records, io->write_user);
    if (st != SP_OK)
        return io_fail(c->run, c->chunk, "the sink failed writing records %zu..%zu: it "
                       "returned %s (%s)", first, first + records - 1, sp_status_name(st),
                       sp_status_message(st));
    return SP_OK;
}

/* Records chunk i should hold: a full chunk, or what is left of a known length. */
static size_t io_wanted(const sp_run *r, size_t i)
{
    size_t first = sp_chunk_first(r, i);
    if (r->io->n_records == 0)
        return r->plan.chunk_records;
    size_t left = r->io->n_records - first;
    return left < r->plan.chunk_records ? left : r->plan.chunk_records;
}

/* A sequential source fills chunk i, calling it again after short reads; *got is what came. */
static sp_status read_sequential(sp_run *r, size_t i, size_t *got)
{
    const sp_io *io = r->io;
    /* the source numbers records as the sink and the stages do: from the run's record_base */
    size_t want = io_wanted(r, i), rb = r->p->record_bytes[0];
    size_t first = r->record_base + sp_chunk_first(r, i);
    char *dst = sp_staging_in(r->p, i);
    *got = 0;
    while (*got < want) {
        size_t n = 0;
        sp_status st = io->read(dst + *got * rb, first + *got, want - *got, &n, io->read_user);
        if (st != SP_OK)
            return io_fail(r, i, "the source failed reading from record %zu: it returned %s "
                           "(%s)", first + *got, sp_status_name(st), sp_status_message(st));
        if (n > want - *got)
            return io_fail(r, i, "the source gave %zu records where at most %zu were asked "
                           "for", n, want - *got);
        if (n == 0)
            break;
        *got += n;
    }
    if (*got < want && io->n_records != 0)
        return io_fail(r, i, "the source ended at record %zu of the %zu it was to give",
                       first + *got, io->n_records);
    if (*got < want)
        r->source_done = 1;
    return SP_OK;
}

static sp_status write_sequential(sp_run *r, const sp_slot *slot)
{
    const sp_io *io = r->io;
    sp_status st = io->write(sp_staging_out(r->p, slot->chunk), slot->first_record,
                             slot->records, io->write_user);
    if (st != SP_OK)
        return io_fail(r, slot->chunk, "the sink failed writing records %zu..%zu: it returned "
                       "%s (%s)", slot->first_record, slot->first_record + slot->records - 1,
                       sp_status_name(st), sp_status_message(st));
    return SP_OK;
}

/* ---- the host's turn ------------------------------------------------------------------------- */

static sp_status wait_to_leave(sp_run *r, size_t i, const sp_slot *slot, int next_stages_in)
{
    sp_pipeline *p = r->p;
    double t = sp_now();
    sp_status st = p->ctx->ops->event_sync(p->ctx->impl, release_event(p, slot, next_stages_in));
    if (i < r->end) /* the turns after the last chunk are the drain's, not submit's */
        r->wait_s += sp_now() - t;
    if (st != SP_OK)
        return sp_run_fail(r, st, "chunk %zu: waiting for chunk %zu to leave its slot", i,
                           slot->chunk);
    return SP_OK;
}

/* The parallel part of a turn: the leaving chunk's output out, chunk i's input in. */
static sp_status stage_together(sp_run *r, size_t i, const sp_slot *leaving, int takes,
                                io_piece pieces[2])
{
    sp_pipeline *p = r->p;
    size_t M = p->n_stages;
    int positional = r->io && r->io->positional;
    sp_copy copies[2];
    size_t n = 0;
    if (leaving && leaving->out)
        copies[n++] = (sp_copy){.dst = leaving->out, .src = sp_staging_out(p, leaving->chunk),
                                .bytes = leaving->records * p->record_bytes[M]};
    if (leaving && leaving->sink && positional) {
        pieces[0] = (io_piece){r, leaving->chunk, sp_staging_out(p, leaving->chunk),
                               leaving->first_record, p->record_bytes[M]};
        copies[n++] = (sp_copy){.bytes = leaving->records * p->record_bytes[M],
                                .fn = write_piece, .arg = &pieces[0],
                                .unit = p->record_bytes[M]};
    }
    if (takes && r->stage_in && !r->io)
        copies[n++] = (sp_copy){.dst = sp_staging_in(p, i), .src = sp_run_user_in(r, i),
                                .bytes = sp_chunk_records(r, i) * p->record_bytes[0]};
    if (takes && positional) {
        pieces[1] = (io_piece){r, i, sp_staging_in(p, i), r->record_base + sp_chunk_first(r, i),
                               p->record_bytes[0]};
        copies[n++] = (sp_copy){.bytes = io_wanted(r, i) * p->record_bytes[0],
                                .fn = read_piece, .arg = &pieces[1],
                                .unit = p->record_bytes[0]};
    }
    return n ? sp_staging_pool_copy_many(p->pool, copies, n) : SP_OK;
}

/* A timed run's host spans of the turn, by the run's own chunk numbers. */
static void note_spans(sp_run *r, size_t i, const sp_slot *leaving, int takes, double t,
                       double t_end)
{
    sp_pipeline *p = r->p;
    if (leaving && (leaving->out || leaving->sink))
        sp_timeline_set(&p->timeline, SP_TL_STAGE_OUT(p), leaving->chunk - r->base, t, t_end);
    if (takes && r->stage_in)
        sp_timeline_set(&p->timeline, SP_TL_STAGE_IN, i - r->base, t, t_end);
}

/* The leaving chunk is gone: its slot is free, and a stream hears of it. */
static void leave(sp_run *r, sp_slot *slot)
{
    slot->busy = 0;
    if (r->hooks && slot->batch)
        r->hooks->retired(r->hooks->owner, slot->batch);
}

sp_status sp_run_host_turn(sp_run *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_slot *slot = &p->slots[i % p->depth];
    int takes = i >= r->base && i < r->end && !r->source_done;
    sp_status st = SP_OK;
    const sp_slot *leaving = slot->busy ? slot : NULL;
    if (leaving && (st = wait_to_leave(r, i, slot, takes && r->stage_in)) != SP_OK)
        return st;
    /* A chunk at or past the first failed one is not handed on: its output is not its
     * stages' (a stream would complete its batch with SP_OK). Waiting for it to leave has
     * waited for its stages, so a failure of its own is known by now. It keeps its slot
     * for sp_engine_recover, or the run's drain. */
    if (leaving && sp_pipeline_has_failed(p) && leaving->chunk >= atomic_load(&p->fail_chunk))
        return p->failure_status;
    int staging = (leaving && (leaving->out || leaving->sink)) || (takes && r->stage_in);
    if (staging)
        sp_run_trace_push(r, "stage", i);
    io_piece pieces[2];
    double t = r->timing ? sp_now() - r->t0 : 0.0; /* the clock only where spans are kept */
    st = stage_together(r, i, leaving, takes, pieces);
    if (st == SP_OK && leaving && leaving->sink && !r->io->positional)
        st = write_sequential(r, leaving);
    size_t got = takes && r->io ? io_wanted(r, i) : 0;
    if (st == SP_OK && takes && r->io && !r->io->positional)
        st = read_sequential(r, i, &got);
    if (staging)
        sp_run_trace_pop(r);
    if (r->timing)
        note_spans(r, i, leaving, takes, t, sp_now() - r->t0);
    if (leaving)
        leave(r, slot);
    if (takes && r->io)
        slot->records = got; /* sp_chunk_records of a source's chunk */
    if (st == SP_OK && takes && r->hooks && r->stage_in && i + 1 == r->end)
        r->hooks->input_read(r->hooks->owner, r->batch);
    return st;
}

sp_status sp_run_stream_range(sp_run *r, size_t from, size_t to)
{
    sp_pipeline *p = r->p;
    for (size_t i = from; i < to; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED; /* stop submitting; the caller drains */
        sp_status st = sp_run_host_turn(r, i);
        if (st == SP_OK)
            st = sp_run_enqueue_chunk(r, i);
        if (st != SP_OK)
            return st;
        sp_run_occupy(r, i, NULL);
    }
    return SP_OK;
}

/* The turns after the batch's last chunk: every slot's chunk waited for and handed on, in
 * chunk order. */
static sp_status retire_all(sp_run *r)
{
    sp_pipeline *p = r->p;
    for (size_t i = r->end; i < r->end + p->depth; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED;
        sp_status st = sp_run_host_turn(r, i);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

/* A source's chunks: each read in its host turn, until the source ends. */
static sp_status io_chunks(sp_run *r)
{
    sp_pipeline *p = r->p;
    size_t i = r->base;
    for (; i < r->end && !r->source_done; i++) {
        if (sp_pipeline_has_failed(p))
            return SP_ERR_STAGE_FAILED;
        sp_status st = sp_run_host_turn(r, i);
        if (st != SP_OK)
            return st;
        if (p->slots[i % p->depth].records == 0)
            break; /* the source ended exactly at a chunk's start */
        if ((st = sp_run_enqueue_chunk(r, i)) != SP_OK)
            return st;
        sp_run_occupy(r, i, NULL);
        r->plan.n_records = sp_chunk_first(r, i) + sp_chunk_records(r, i);
    }
    r->end = i;
    r->plan.chunks = i - r->base;
    return SP_OK;
}

/* ---- runs --------------------------------------------------------------------------------- */

sp_status sp_run_finish(sp_run *r, sp_status st, sp_report *report)
{
    sp_pipeline *p = r->p;
    sp_status drained = sp_run_drain(r);
    double t_end = sp_now();
    /* the makespan is taken here, before a timed run reads its events, for every run mode
     * (serial and graph runs end here too): with or without a report it is the same span */
    sp_pipeline_set_last_figures(p, t_end - r->t0,
                                 r->t_submitted > 0.0 ? r->t_submitted - r->t0 : 0.0,
                                 r->wait_s);
    if (sp_pipeline_has_failed(p))
        st = p->failure_status; /* a stage that failed on a worker, or the first backend error */
    else if (st == SP_OK)
        st = drained;
    if (st != SP_OK && atomic_load(&p->ctx->lost))
        st = SP_ERR_DEVICE_LOST; /* whatever failed first, nothing will work on this context */
    if (r->activity_timing) { /* failed or not: it ends the backend's recording too */
        sp_status read = sp_run_activity_collect(r);
        st = st == SP_OK ? read : st;
    }
    if (st == SP_OK && r->event_timing)
        st = sp_run_timing_collect(r); /* after t_end: reading the events is not the run's */
    if (st == SP_OK && report)
        sp_run_report(r, report);
    return st;
}

/* The chunks of a run's one batch, then every slot retired. */
static sp_status run_batch_and_retire(sp_run *r, int graphs)
{
    sp_status st = r->timing && !graphs ? sp_run_timing_start(r) : SP_OK;
    if (st == SP_OK)
        st = r->io ? io_chunks(r)
                   : graphs ? sp_run_graph_chunks(r) : sp_run_stream_range(r, r->base, r->end);
    r->t_submitted = sp_now();
    return st == SP_OK ? retire_all(r) : st;
}

static sp_status run_pipelined(sp_pipeline *p, const void *in, size_t n_records, void *out,
                               size_t record_base, sp_report *report)
{
    sp_run r;
    /* a run that does not start leaves no figures of an earlier one behind (sp_run_finish
     * sets them for every run that started); a stream's batches leave them alone */
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0);
    sp_status st = sp_run_prepare(&r, p, in, n_records, out, report != NULL);
    r.record_base = record_base;
    if (st != SP_OK || n_records == 0) {
        if (st == SP_OK && report)
            sp_run_report(&r, report);
        return st;
    }
    int graphs = sp_run_graph_wanted(&r); /* graph mode measures no per-operation times */
    if (r.timing && (st = sp_run_timeline_start(&r)) != SP_OK)
        return st;
    sp_engine_reset(p);
    r.t0 = sp_now();
    st = run_batch_and_retire(&r, graphs);
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
    st = run_pipelined(p, in, n_records, out, 0, report);
    sp_pipeline_release(p);
    return st;
}

static sp_status check_io(sp_pipeline *p, const sp_io *io)
{
    if (!io || !io->read || !io->write)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: %s is NULL",
                                !io ? "io" : !io->read ? "io->read" : "io->write");
    if (io->positional && io->n_records == 0)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: a positional "
                                "source needs n_records (0 means 'until it ends', which only "
                                "a sequential source can say)");
    int overflow = 0;
    (void)sp_mul_size(io->n_records, p->widest_record, &overflow);
    if (overflow)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: n_records "
                                "(%zu) x record size overflows size_t", io->n_records);
    return SP_OK;
}

static sp_status run_io(sp_pipeline *p, const sp_io *io, size_t record_base, sp_report *report)
{
    sp_status st = check_io(p, io);
    sp_run r;
    /* the plan of a known length; an unknown one is planned as it is read */
    size_t planned = io && io->n_records ? io->n_records : p->chunk_capacity;
    if (st == SP_OK)
        st = sp_run_prepare(&r, p, NULL, 0, NULL, report != NULL && io->n_records != 0);
    if (st != SP_OK)
        return st;
    sp_plan_run(planned, p->chunk_capacity, io && io->n_records ? p->chunk_chosen : 0, p->depth,
                p->widest_record, &r.plan); /* no length: full chunks, not cut for a short run */
    if (io && io->n_records == 0)
        r.plan.n_records = 0; /* io_chunks counts what the source gives */
    r.plan.in_bytes = io->n_records * p->record_bytes[0];
    r.plan.out_bytes = io->n_records * p->record_bytes[p->n_stages];
    r.io = io;
    r.record_base = record_base;
    r.stage_in = r.stage_out = 1; /* the host reads and writes every byte, as staging does */
    r.end = io->n_records ? r.plan.chunks : SIZE_MAX;
    if (r.timing && (st = sp_run_timeline_start(&r)) != SP_OK)
        return st;
    sp_engine_reset(p);
    r.t0 = sp_now();
    st = run_batch_and_retire(&r, 0);
    return sp_run_finish(&r, st, report); /* of a source of unknown length, the counts alone */
}

sp_status sp_pipeline_run_io_at(sp_pipeline *p, const sp_io *given, size_t first_record,
                                sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run_io");
    if (st != SP_OK)
        return st;
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0); /* as run_pipelined, however it fails */
    sp_io io; /* the library's layout of the caller's (sized: streampipe.h) */
    const char *why;
    st = given ? sp_sized_read(&io, sizeof io, given, SP_IO_SIZE_0_5, &why) : SP_OK;
    if (st != SP_OK)
        st = sp_pipeline_fail(p, st, "sp_pipeline_run_io: io: %s", why);
    else
        st = run_io(p, given ? &io : NULL, first_record, report);
    sp_pipeline_release(p);
    return st;
}

sp_status sp_pipeline_run_io(sp_pipeline *p, const sp_io *io, sp_report *report)
{
    return sp_pipeline_run_io_at(p, io, 0, report);
}

/* ---- streams ------------------------------------------------------------------------------ */

sp_status sp_engine_run_batch(sp_pipeline *p, const sp_engine_batch *job, size_t *chunks,
                              int *staged_in, int *staged_out, int *replayed)
{
    sp_run r;
    *chunks = 0;
    *staged_in = *staged_out = *replayed = 0;
    sp_status st = sp_run_prepare(&r, p, job->in, job->n_records, job->out, 0);
    if (st != SP_OK)
        return st;
    /* a stream's chunks are the pipeline's: a short batch is not cut finer, since the ring
     * is kept busy by the batches around it */
    sp_plan_run(job->n_records, p->chunk_capacity, 0, p->depth, p->widest_record, &r.plan);
    r.base = job->base;
    r.end = job->base + r.plan.chunks;
    r.record_base = job->record_base;
    r.hooks = &job->hooks;
    r.batch = job->batch;
    *chunks = r.plan.chunks;
    *staged_in = job->n_records && r.stage_in;
    *staged_out = job->n_records && r.stage_out;
    if (job->n_records == 0)
        return SP_OK;
    r.t0 = sp_now();
    st = sp_run_graph_wanted(&r) ? sp_run_graph_chunks(&r)
                                 : sp_run_stream_range(&r, r.base, r.end);
    *replayed = r.replayed;
    if (st == SP_OK && sp_pipeline_has_failed(p))
        st = p->failure_status; /* a HOST stage failing on its worker */
    return st;
}

/* A run that only retires: no batch of its own. */
static sp_run retiring_run(sp_pipeline *p, const sp_engine_hooks *hooks)
{
    sp_run r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.hooks = hooks;
    return r;
}

/* The busy slot holding the oldest chunk, or -1. */
static int oldest_slot(const sp_pipeline *p)
{
    int best = -1;
    for (unsigned b = 0; b < p->depth; b++)
        if (p->slots[b].busy && (best < 0 || p->slots[b].chunk < p->slots[best].chunk))
            best = (int)b;
    return best;
}

sp_status sp_engine_retire_oldest(sp_pipeline *p, const sp_engine_hooks *hooks)
{
    int b = oldest_slot(p);
    if (b < 0)
        return SP_OK;
    sp_run r = retiring_run(p, hooks);
    sp_status st = sp_run_host_turn(&r, p->slots[b].chunk + p->depth);
    if (st == SP_OK && sp_pipeline_has_failed(p))
        st = p->failure_status;
    return st;
}

void sp_engine_recover(sp_pipeline *p, const sp_engine_hooks *hooks, sp_status st,
                       sp_engine_failure *failure)
{
    sp_run r = retiring_run(p, hooks);
    (void)sp_run_drain(&r); /* a queue that cannot be waited for loses the context */
    /* read after the drain: a chunk before the first failed one may have failed meanwhile */
    int lost = atomic_load(&p->ctx->lost);
    size_t intact_below = atomic_load(&p->fail_chunk);
    failure->recorded = sp_pipeline_has_failed(p);
    failure->status = failure->recorded && p->failure_status != SP_OK ? p->failure_status : st;
    failure->stage_chunk = failure->recorded && failure->status == SP_ERR_STAGE_FAILED;
    failure->chunk = intact_below;
    /* the recorded failure's own text; a failed enqueue that returned its status (recorded
     * no failure) left its reason as the pipeline's last error */
    pthread_mutex_lock(&p->failure_lock); /* a lost context's HOST workers may still fail */
    snprintf(failure->text, sizeof failure->text, "%s", p->failure_text);
    pthread_mutex_unlock(&p->failure_lock);
    if (failure->text[0] == '\0')
        sp_pipeline_error_copy(p, failure->text, sizeof failure->text);
    for (int b = oldest_slot(p); b >= 0; b = oldest_slot(p)) {
        sp_slot *slot = &p->slots[b];
        if (!lost && slot->chunk < intact_below) /* finished before the failure: hand it on */
            (void)sp_run_host_turn(&r, slot->chunk + p->depth);
        slot->busy = 0; /* handed on, or of a failed or cancelled batch: nothing to hand on */
    }
    sp_pipeline_reset_failure(p);
}

void sp_engine_fill_report(const sp_pipeline *p, sp_report *report)
{
    report->depth = p->depth;
    report->chunk_records = p->chunk_capacity;
    report->staging_threads = sp_staging_pool_threads(p->pool);
    report->pinned_bytes = (p->pinned_in_stride + p->pinned_out_stride) * p->depth;
    report->slot_records = p->chunk_capacity;
}

void sp_engine_batches_report(const sp_pipeline *p, const sp_batch_totals *t, double makespan_s,
                              sp_report *report)
{
    memset(report, 0, sizeof *report);
    sp_engine_fill_report(p, report);
    report->records = t->records;
    report->chunks = t->chunks;
    report->batches = t->batches;
    report->staged_in = t->staged_in;
    report->staged_out = t->staged_out;
    report->graph = t->replayed;
    report->makespan_s = makespan_s;
}
