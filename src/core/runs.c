/* The run verbs: sp_pipeline_run and sp_pipeline_run_io, one batch each through the
 * scheduler, and sp_pipeline_run_feed, batches fed behind each other as a stream's are. Each
 * claims the pipeline, makes its batch and hands it to sched.c. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/report.h"
#include "core/ring_decode.h"
#include "core/runs.h"
#include "core/sched.h"
#include "core/sized.h"
#include "core/stats.h"
#include "core/timing.h"

static sp_status run_batch(sp_pipeline *p, const void *in, size_t n_records, void *out,
                           sp_report *report)
{
    sp_batch b;
    /* a run that does not start leaves no figures of an earlier one behind (sp_sched_finish
     * sets them for every run that started); a stream's batches leave them alone */
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0);
    if (report) /* the run's report gets a copy of the timeline only once the run succeeds
                   with records (sp_report_batch): until then there is none */
        sp_timing_invalidate(p);
    sp_status st = sp_batch_prepare(&b, p, in, n_records, out, sp_timing_asked(p, report));
    if (st != SP_OK || n_records == 0) {
        if (st == SP_OK && report)
            st = sp_report_batch(&b, report); /* no records: no timeline to keep */
        return st;
    }
    return sp_sched_run(&b, report);
}

sp_status sp_pipeline_run(sp_pipeline *p, const void *in, size_t n_records, void *out,
                          sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run");
    if (st != SP_OK)
        return st;
    st = run_batch(p, in, n_records, out, report);
    sp_pipeline_release(p);
    return st;
}

/* ---- sources and sinks ---------------------------------------------------------------- */

static sp_status check_ends(sp_pipeline *p, const sp_io *io)
{
    if ((io->in != NULL) == (io->read != NULL) || (io->out != NULL) == (io->write != NULL))
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: give %s",
                                (io->in != NULL) == (io->read != NULL)
                                    ? "one of io->read and io->in"
                                    : "one of io->write and io->out");
    if (io->in && io->out)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: io->in and "
                                "io->out are both memory: that is sp_pipeline_run");
    if ((io->in || io->out) && io->n_records == 0)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: memory at "
                                "an end (io->%s) needs n_records", io->in ? "in" : "out");
    return SP_OK;
}

static sp_status check_io(sp_pipeline *p, const sp_io *io)
{
    if (!io)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: io is NULL");
    sp_status st = check_ends(p, io);
    if (st != SP_OK)
        return st;
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

/* The batch of a source and sink: a known length is planned as a run's; an unknown one in
 * full chunks (not cut for a short run), counted as the source gives them. */
static sp_status io_batch(sp_pipeline *p, const sp_io *io, size_t record_base, int timing,
                          sp_batch *b)
{
    sp_status st = check_io(p, io);
    if (st == SP_OK)
        st = sp_batch_prepare(b, p, NULL, 0, NULL, timing && io->n_records != 0);
    if (st != SP_OK)
        return st;
    size_t planned = io->n_records ? io->n_records : p->chunk_capacity;
    sp_plan_run(planned, p->chunk_capacity, io->n_records ? p->chunk_chosen : 0, p->depth,
                p->widest_record, &b->plan);
    if (io->n_records == 0)
        b->plan.n_records = 0; /* the scheduler counts what the source gives */
    b->plan.in_bytes = io->n_records * p->record_bytes[0];
    b->plan.out_bytes = io->n_records * p->record_bytes[p->n_stages];
    b->io = io;
    b->record_base = record_base;
    b->end = io->n_records ? b->plan.chunks : SIZE_MAX;
    /* the host reads and writes every byte of a source and a sink, as staging does; memory
     * at an end goes as a run's */
    sp_status ends = sp_batch_io_ends(b, io->in, io->out);
    if (ends != SP_OK)
        return ends;
    return sp_ring_decode_begin(b); /* compressed blocks: maybe decompressed in the ring */
}

sp_status sp_pipeline_run_io_at(sp_pipeline *p, const sp_io *given, size_t first_record,
                                sp_report *report)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run_io");
    if (st != SP_OK)
        return st;
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0); /* as sp_pipeline_run, however it fails */
    if (report)
        sp_timing_invalidate(p);
    sp_io io; /* the library's layout of the caller's (sized: streampipe.h) */
    const char *why;
    st = given ? sp_sized_read(&io, sizeof io, given, SP_IO_SIZE_0_5, &why) : SP_OK;
    sp_batch b;
    if (st != SP_OK)
        st = sp_pipeline_fail(p, st, "sp_pipeline_run_io: io: %s", why);
    else if ((st = io_batch(p, given ? &io : NULL, first_record, sp_timing_asked(p, report),
                            &b)) == SP_OK)
    {
        st = sp_sched_run(&b, report); /* of a source of unknown length, the counts alone */
        sp_ring_decode_end(&b);
    }
    sp_pipeline_release(p);
    return st;
}

sp_status sp_pipeline_run_io(sp_pipeline *p, const sp_io *io, sp_report *report)
{
    return sp_pipeline_run_io_at(p, io, 0, report);
}

/* ---- batches fed behind each other ---------------------------------------------------- */

/* One batch next() gave, fed into the ring behind the ones before it. */
static sp_status feed_one(sp_pipeline *p, const sp_feed_batch *fb, size_t base,
                          sp_batch_totals *t, size_t *chunks)
{
    sp_batch b;
    sp_done_list done; /* the batches have no owner: nothing is listed */
    *chunks = 0;
    sp_status st = sp_sched_start(&b, p, fb->in, fb->n_records, fb->out, base,
                                  fb->first_record, NULL);
    for (int fed = 0; st == SP_OK && !fed;)
        st = sp_sched_feed(&b, &done, &fed);
    *chunks = b.plan.chunks;
    sp_stats_submitted(p, fb->n_records);
    t->records += fb->n_records;
    t->chunks += b.plan.chunks;
    t->batches++;
    t->staged_in |= fb->n_records && b.stage_in;
    t->staged_out |= fb->n_records && b.stage_out;
    t->replayed |= b.replayed;
    t->pcie_bytes += st == SP_OK ? sp_report_pcie_bytes(&b) : 0;
    return st;
}

/* Every batch next() gives, then every slot retired; the first failure stops both. */
static sp_status feed_all(sp_pipeline *p, sp_feed_next_fn next, void *user,
                          sp_batch_totals *t)
{
    sp_feed_batch fb;
    sp_done_list done;
    size_t base = 0, chunks = 0;
    sp_status st = SP_OK;
    while (st == SP_OK && next(user, &fb)) {
        st = feed_one(p, &fb, base, t, &chunks);
        base += chunks;
    }
    while (st == SP_OK && sp_sched_busy(p) > 0)
        st = sp_sched_retire_oldest(p, &done);
    return st;
}

sp_status sp_pipeline_run_feed(sp_pipeline *p, sp_feed_next_fn next, void *user,
                               sp_report *report)
{
    if (!p || !next)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run_feed");
    if (st != SP_OK)
        return st;
    sp_batch_totals totals = {0};
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0);
    sp_sched_reset(p);
    sp_stats_begin(p, 0); /* the records are counted as next() gives them */
    double t0 = sp_now();
    st = feed_all(p, next, user, &totals);
    if (st != SP_OK) {
        sp_sched_failure f;
        sp_done_list done;
        sp_sched_recover(p, st, &f, &done); /* every queue drained; the text stays */
        st = f.status;
        if (atomic_load(&p->ctx->lost))
            st = SP_ERR_DEVICE_LOST; /* whatever failed first, as sp_sched_finish says */
    }
    double makespan_s = sp_now() - t0;
    sp_stats_end(p, st);
    sp_pipeline_set_last_figures(p, makespan_s, 0.0, 0.0);
    if (st == SP_OK && report) {
        sp_report_batches(p, &totals, makespan_s, report);
        snprintf(report->notes, sizeof report->notes, "%zu batches through one ring without "
                 "draining between them: no per-operation timings", totals.batches);
    }
    sp_pipeline_release(p);
    return st;
}
