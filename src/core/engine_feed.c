/* Runs fed batch by batch through one ring that does not drain between them: sp_group's
 * units of an array run (src/group/). A run per unit would fill and drain the ring each time,
 * which costs about two chunk-times of lost overlap per unit (a third of a 4-chunk unit);
 * fed as batches, as a stream's are, the ring stays full from the first unit to the last. */
#include <stdatomic.h>
#include <stdio.h>

#include "core/clock.h"
#include "core/context.h"
#include "core/run.h"
#include "core/run_at.h"

static void no_batch_events(void *owner, void *batch)
{
    (void)owner;
    (void)batch;
}

/* Every batch next() gives, then every slot retired; the first failure stops both. */
static sp_status feed_all(sp_pipeline *p, sp_feed_next_fn next, void *user,
                          const sp_engine_hooks *hooks, sp_batch_totals *t)
{
    sp_feed_batch b;
    size_t base = 0;
    sp_status st = SP_OK;
    while (st == SP_OK && next(user, &b)) {
        sp_engine_batch job = {.in = b.in, .out = b.out, .n_records = b.n_records,
                               .base = base, .record_base = b.first_record, .hooks = *hooks};
        size_t chunks = 0;
        int in = 0, out = 0, replayed = 0;
        st = sp_engine_run_batch(p, &job, &chunks, &in, &out, &replayed);
        base += chunks;
        t->records += b.n_records;
        t->chunks += chunks;
        t->batches++;
        t->staged_in |= in;
        t->staged_out |= out;
        t->replayed |= replayed;
    }
    while (st == SP_OK && sp_engine_busy_slots(p) > 0)
        st = sp_engine_retire_oldest(p, hooks);
    return st;
}

static void feed_report(const sp_pipeline *p, const sp_batch_totals *t, double makespan_s,
                        sp_report *report)
{
    sp_engine_batches_report(p, t, makespan_s, report);
    snprintf(report->notes, sizeof report->notes, "%zu batches through one ring without "
             "draining between them: no per-operation timings", t->batches);
}

sp_status sp_pipeline_run_feed(sp_pipeline *p, sp_feed_next_fn next, void *user,
                               sp_report *report)
{
    if (!p || !next)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_run_feed");
    if (st != SP_OK)
        return st;
    sp_engine_hooks hooks = {NULL, no_batch_events, no_batch_events};
    sp_batch_totals totals = {0};
    sp_pipeline_set_last_figures(p, 0.0, 0.0, 0.0);
    sp_engine_reset(p);
    double t0 = sp_now();
    st = feed_all(p, next, user, &hooks, &totals);
    if (st != SP_OK) {
        sp_engine_failure f;
        sp_engine_recover(p, &hooks, st, &f); /* every queue drained; the text stays */
        st = f.status;
        if (atomic_load(&p->ctx->lost))
            st = SP_ERR_DEVICE_LOST; /* whatever failed first, as sp_run_finish says */
    }
    double makespan_s = sp_now() - t0;
    sp_pipeline_set_last_figures(p, makespan_s, 0.0, 0.0);
    if (st == SP_OK && report)
        feed_report(p, &totals, makespan_s, report);
    sp_pipeline_release(p);
    return st;
}
