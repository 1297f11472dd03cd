/* The host's copies of a turn: the output of the chunk leaving a slot handed on (from pinned
 * staging to the user's pageable memory, or to the sink) while the next chunk's input enters
 * pinned staging (from pageable memory, or the source), both in one parallel copy on the
 * staging threads, since the host's memory, not a thread, limits pageable runs
 * (bench/PERF.md). Positional sources and sinks are called on the staging threads, several
 * at once; sequential ones on the scheduler's thread, in record order. */
#include <stdio.h>
#include <string.h>

#include "core/backend_call.h"
#include "core/clock.h"
#include "core/ring_decode.h"
#include "core/staging.h"
#include "core/stats.h"
#include "core/timing.h"

/* ---- sources and sinks ---------------------------------------------------------------------- */

/* A positional source or sink's share of one chunk, as a staging pool job. */
typedef struct io_piece {
    sp_batch *run;
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
        return sp_batch_fail_chunk(c->run, c->chunk, "the source failed reading records %zu..%zu: it "
                       "returned %s (%s)", first, first + want - 1, sp_status_name(st),
                       sp_status_message(st));
    if (got != want)
        return sp_batch_fail_chunk(c->run, c->chunk, "the positional source gave %zu of the %zu records "
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
        return sp_batch_fail_chunk(c->run, c->chunk, "the sink failed writing records %zu..%zu: it "
                       "returned %s (%s)", first, first + records - 1, sp_status_name(st),
                       sp_status_message(st));
    return SP_OK;
}

/* Records chunk i should hold: a full chunk, or what is left of a known length; a batch of
 * memory (no run_io), its planned count. */
size_t sp_staging_wanted(const sp_batch *r, size_t i)
{
    if (!r->io)
        return sp_chunk_records(r, i);
    size_t first = sp_chunk_first(r, i);
    if (r->io->n_records == 0)
        return r->plan.chunk_records;
    size_t left = r->io->n_records - first;
    return left < r->plan.chunk_records ? left : r->plan.chunk_records;
}

/* A sequential source fills chunk i, calling it again after short reads; *got is what came. */
static sp_status read_sequential(sp_batch *r, size_t i, size_t *got)
{
    const sp_io *io = r->io;
    /* the source numbers records as the sink and the stages do: from the run's record_base */
    size_t want = sp_staging_wanted(r, i), rb = r->p->record_bytes[0];
    size_t first = r->record_base + sp_chunk_first(r, i);
    char *dst = sp_staging_in(r->p, i);
    *got = 0;
    while (*got < want) {
        size_t n = 0;
        sp_status st = io->read(dst + *got * rb, first + *got, want - *got, &n, io->read_user);
        if (st != SP_OK)
            return sp_batch_fail_chunk(r, i, "the source failed reading from record %zu: it returned %s "
                           "(%s)", first + *got, sp_status_name(st), sp_status_message(st));
        if (n > want - *got)
            return sp_batch_fail_chunk(r, i, "the source gave %zu records where at most %zu were asked "
                           "for", n, want - *got);
        if (n == 0)
            break;
        *got += n;
    }
    if (*got < want && io->n_records != 0)
        return sp_batch_fail_chunk(r, i, "the source ended at record %zu of the %zu it was to give",
                       first + *got, io->n_records);
    if (*got < want)
        r->source_done = 1;
    return SP_OK;
}

static sp_status write_sequential(sp_batch *r, const sp_slot *slot)
{
    const sp_io *io = r->io;
    sp_status st = io->write(sp_staging_out(r->p, slot->chunk), slot->first_record,
                             slot->records, io->write_user);
    if (st != SP_OK)
        return sp_batch_fail_chunk(r, slot->chunk, "the sink failed writing records %zu..%zu: it returned "
                       "%s (%s)", slot->first_record, slot->first_record + slot->records - 1,
                       sp_status_name(st), sp_status_message(st));
    return SP_OK;
}

/* The parallel part of a turn: the leaving chunk's output out, chunk i's input in. */
static sp_status stage_together(sp_batch *r, size_t i, const sp_slot *leaving, int takes,
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
    /* a run_io's slot is told its records after this turn: its count is the wanted one */
    if (takes && r->stage_in && !sp_batch_has_source(r))
        copies[n++] = (sp_copy){.dst = sp_staging_in(p, i), .src = sp_ring_user_in(r, i),
                                .bytes = sp_staging_wanted(r, i) * p->record_bytes[0]};
    if (takes && positional && sp_batch_has_source(r) &&
        sp_ring_decode_plan(r, i, sp_staging_wanted(r, i))) {
        copies[n++] = sp_ring_decode_fetch(r, i); /* its compressed blocks, as they are */
    } else if (takes && positional && sp_batch_has_source(r)) {
        if (!p->pinned_in) /* sp_ring_decode_covers said no chunk would come here */
            return sp_batch_fail_chunk(r, i, "chunk %zu cannot go through the ring, and the "
                                       "ring has no input staging for it", i);
        pieces[1] = (io_piece){r, i, sp_staging_in(p, i), r->record_base + sp_chunk_first(r, i),
                               p->record_bytes[0]};
        copies[n++] = (sp_copy){.bytes = sp_staging_wanted(r, i) * p->record_bytes[0],
                                .fn = read_piece, .arg = &pieces[1],
                                .unit = p->record_bytes[0]};
    }
    return n ? sp_staging_pool_copy_many(p->pool, copies, n) : SP_OK;
}

/* A timed batch's host spans of the turn, by the batch's own chunk numbers. */
static void note_spans(sp_batch *r, size_t i, const sp_slot *leaving, int takes, double t,
                       double t_end)
{
    sp_pipeline *p = r->p;
    if (leaving && (leaving->out || leaving->sink))
        sp_timing_span(p, SP_TL_STAGE_OUT(p), leaving->chunk - r->base, t, t_end);
    if (takes && r->stage_in)
        sp_timing_span(p, SP_TL_STAGE_IN, i - r->base, t, t_end);
}

/* The live counters: records staged in and handed on by this turn, and its time. */
static void count_staged(sp_batch *r, size_t i, const sp_slot *leaving, int takes, size_t got,
                         double seconds)
{
    uint64_t in = takes && r->stage_in ? (r->io ? got : sp_chunk_records(r, i)) : 0;
    uint64_t out = leaving && (leaving->out || leaving->sink) ? leaving->records : 0;
    sp_stats_staged(r->p, in, out, seconds);
}

sp_status sp_staging_turn(sp_batch *r, size_t i, const sp_slot *leaving, int takes,
                          size_t *got)
{
    sp_pipeline *p = r->p;
    int staging = (leaving && (leaving->out || leaving->sink)) || (takes && r->stage_in);
    if (staging)
        sp_call_trace_push(p, "stage", i);
    io_piece pieces[2];
    /* one clock pair per turn that stages: the live counters' busy time, and a timed
     * batch's spans */
    double t = staging || r->timing ? sp_now() : 0.0;
    sp_status st = stage_together(r, i, leaving, takes, pieces);
    if (st == SP_OK && leaving && leaving->sink && !r->io->positional)
        st = write_sequential(r, leaving);
    *got = takes && r->io ? sp_staging_wanted(r, i) : 0;
    if (st == SP_OK && takes && sp_batch_has_source(r) && !r->io->positional)
        st = read_sequential(r, i, got);
    if (staging)
        sp_call_trace_pop(p);
    double t_end = staging || r->timing ? sp_now() : 0.0;
    if (staging && st == SP_OK)
        count_staged(r, i, leaving, takes, *got, t_end - t);
    if (r->timing)
        note_spans(r, i, leaving, takes, t - r->t0, t_end - r->t0);
    return st;
}
