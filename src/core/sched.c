/* The one loop (sched.h): host turns, feeding, retiring, draining, recovering. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/drain.h"
#include "core/pipeline.h"
#include "core/report.h"
#include "core/ring_decode.h"
#include "core/sched.h"
#include "core/staging.h"
#include "core/stats.h"
#include "core/submit_direct.h"
#include "core/submit_graph.h"
#include "core/timing.h"
#include "core/tune_run.h"

/* ---- the host's turn ------------------------------------------------------------------ */

static void hand_back(sp_done_list *done, void *owner, sp_done_kind kind)
{
    if (owner && done->n < SP_DONE_MAX)
        done->item[done->n++] = (sp_done){owner, kind};
}

static sp_status wait_to_leave(sp_batch *b, size_t i, const sp_slot *slot, int next_stages_in)
{
    sp_pipeline *p = b->p;
    double t = sp_now();
    sp_status st = p->ctx->ops->event_sync(p->ctx->impl,
                                           sp_ring_release_event(p, slot, next_stages_in));
    if (i < b->end) { /* the turns after the last chunk are the drain's, not submit's */
        double waited = sp_now() - t;
        b->wait_s += waited;
        sp_stats_waited(p, waited);
    }
    if (st != SP_OK)
        return sp_batch_fail(b, st, "chunk %zu: waiting for chunk %zu to leave its slot", i,
                             slot->chunk);
    return SP_OK;
}

/* The host's turn for chunk i: waits until the chunk in slot i mod K may leave, hands its
 * output on and stages chunk i's input in (staging.c). i may be past the batch, to retire
 * slots. `waited`: the caller has waited for the slot already (a bundle's turns). */
static sp_status host_turn(sp_batch *b, size_t i, int waited, sp_done_list *done)
{
    sp_pipeline *p = b->p;
    sp_slot *slot = &p->slots[i % p->depth];
    int takes = i >= b->base && i < b->end && !b->source_done;
    const sp_slot *leaving = slot->busy ? slot : NULL;
    sp_status st = SP_OK;
    if (leaving && !waited && (st = wait_to_leave(b, i, slot, takes && b->stage_in)) != SP_OK)
        return st;
    /* A chunk at or past the first failed one is not handed on: its output is not its
     * stages' (a stream would complete its batch with SP_OK). Waiting for it to leave has
     * waited for its stages, so a failure of its own is known by now. It keeps its slot for
     * sp_sched_recover, or the run's drain. */
    if (leaving && sp_failure_drops(&p->failure, leaving->chunk))
        return sp_failure_status(&p->failure);
    size_t got = 0;
    st = sp_staging_turn(b, i, leaving, takes, &got);
    if (leaving) {
        /* its timing events, when timed: the live counters' and the flight recorder's */
        sp_status read = sp_timing_retired(b, leaving->chunk);
        sp_tune_run_retired(p, leaving->chunk); /* a watched chunk's costs, once known */
        hand_back(done, leaving->owner, SP_DONE_CHUNK);
        sp_stats_vacated(p, st == SP_OK ? leaving->records : 0); /* its output went on */
        sp_ring_vacate(slot);
        st = st == SP_OK ? read : st;
    }
    if (takes && b->io)
        sp_ring_set_records(p, i, got); /* sp_chunk_records of a source's chunk */
    if (st == SP_OK && takes && b->stage_in && i + 1 == b->end)
        hand_back(done, b->owner, SP_DONE_INPUT);
    return st;
}

/* ---- feeding -------------------------------------------------------------------------- */

static sp_status feed_chunk(sp_batch *b, size_t i, sp_done_list *done)
{
    /* a tuned batch's host engine: the turn and the enqueueing, the wait for the slot aside */
    double t = b->tuned ? sp_now() : 0.0, waited = b->wait_s;
    sp_status st = host_turn(b, i, 0, done);
    if (st != SP_OK)
        return st;
    if (b->io && sp_chunk_records(b, i) == 0) {
        b->source_done = 1; /* the source ended exactly at a chunk's start */
        return SP_OK;
    }
    if (b->tuned)
        sp_tune_run_arm(b, i);
    if ((st = sp_submit_chunk(b, i)) != SP_OK)
        return st;
    sp_ring_occupy(b, i, NULL);
    sp_stats_occupied(b->p, 1);
    if (b->tuned)
        sp_tune_run_submitted(b, i, sp_now() - t - (b->wait_s - waited));
    if (b->io)
        b->plan.n_records = sp_chunk_first(b, i) + sp_chunk_records(b, i);
    b->next = i + 1;
    return SP_OK;
}

/* Waits once for the chunks leaving a bundle's slots when one event releases them all (they
 * were a bundle too): a graph's chunks cost one host wait, not G. */
static sp_status wait_bundle(sp_batch *b, size_t i, size_t G, int *waited)
{
    sp_pipeline *p = b->p;
    const sp_slot *first = &p->slots[i % p->depth];
    *waited = 0;
    if (!first->busy || !first->graph_release)
        return SP_OK;
    for (size_t k = 1; k < G; k++) {
        const sp_slot *s = &p->slots[(i + k) % p->depth];
        if (!s->busy || s->graph_release != first->graph_release)
            return SP_OK;
    }
    *waited = 1;
    return wait_to_leave(b, i, first, b->stage_in);
}

static sp_status feed_bundle(sp_batch *b, size_t i, sp_done_list *done)
{
    sp_pipeline *p = b->p;
    size_t G = sp_graph_bundle(p);
    int waited = 0;
    sp_status st = wait_bundle(b, i, G, &waited);
    for (size_t k = 0; st == SP_OK && k < G; k++)
        st = host_turn(b, i + k, waited, done);
    if (st != SP_OK)
        return st;
    int bundle_done = 0;
    st = sp_submit_graph(b, i, &bundle_done);
    if (bundle_done) {
        for (size_t k = 0; k < G; k++)
            sp_ring_occupy(b, i + k, sp_graph_done_event(p, i));
        sp_stats_occupied(p, (unsigned)G);
        b->next = i + G;
    }
    return st == SP_GRAPH_FALLBACK ? SP_OK : st; /* graphs off: the rest goes directly */
}

/* The batch is in the ring: a source's length is known now. */
static void fed_all(sp_batch *b)
{
    if (b->io) {
        b->end = b->next;
        b->plan.chunks = b->next - b->base;
    }
    if (b->graphs)
        sp_graph_note(b);
}

sp_status sp_sched_feed(sp_batch *b, sp_done_list *done, int *fed)
{
    sp_pipeline *p = b->p;
    done->n = 0;
    *fed = 0;
    while (b->next < b->end && !b->source_done) {
        if (sp_pipeline_has_failed(p))
            return sp_failure_status(&p->failure); /* stop submitting; the caller drains */
        if (b->stop && atomic_load(b->stop)) {
            b->stopped = 1; /* cancelled: what is in the ring finishes, nothing more goes in */
            b->end = b->next;
            break;
        }
        size_t i = b->next;
        if (b->tuned)
            sp_tune_run_boundary(b, i); /* its chunk size may change from here on */
        sp_status st = b->graphs && sp_graph_fits(b, i) ? feed_bundle(b, i, done)
                                                        : feed_chunk(b, i, done);
        if (st != SP_OK)
            return st;
        if (done->n > 0)
            return SP_OK; /* hand it back first; the caller calls again */
    }
    fed_all(b);
    *fed = 1;
    return sp_pipeline_has_failed(p) ? sp_failure_status(&p->failure) : SP_OK;
}

/* ---- retiring ------------------------------------------------------------------------- */

/* The turns after the batch's last chunk: every slot's chunk waited for and handed on, in
 * chunk order. */
static sp_status retire_all(sp_batch *b, sp_done_list *done)
{
    sp_pipeline *p = b->p;
    for (size_t i = b->end; i < b->end + p->depth; i++) {
        if (sp_pipeline_has_failed(p))
            return sp_failure_status(&p->failure);
        sp_status st = host_turn(b, i, 0, done);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

unsigned sp_sched_busy(const sp_pipeline *p) { return sp_ring_busy(p); }

sp_status sp_sched_hand_off(sp_pipeline *p, sp_bevent *e, void *native_queue)
{
    const sp_backend_ops *ops = p->ctx->ops;
    sp_status st = ops->event_record(p->ctx->impl, e, p->d2h);
    if (st == SP_OK)
        st = ops->external_wait(p->ctx->impl, native_queue, e);
    if (st != SP_OK)
        sp_pipeline_fail_work(p, st, "handing a batch's output to its consumer stream");
    return st;
}

/* A batch that only retires: no chunks of its own. */
static sp_batch retiring(sp_pipeline *p)
{
    sp_batch b;
    memset(&b, 0, sizeof b);
    b.p = p;
    return b;
}

sp_status sp_sched_retire_oldest(sp_pipeline *p, sp_done_list *done)
{
    done->n = 0;
    int slot = sp_ring_oldest(p);
    if (slot < 0)
        return SP_OK;
    sp_batch b = retiring(p);
    sp_status st = host_turn(&b, p->slots[slot].chunk + p->depth, 0, done);
    if (st == SP_OK && sp_pipeline_has_failed(p))
        st = sp_failure_status(&p->failure);
    return st;
}

void sp_sched_recover(sp_pipeline *p, sp_status st, sp_sched_failure *f, sp_done_list *done)
{
    done->n = 0;
    sp_batch b = retiring(p);
    (void)sp_drain_all(p, &b); /* a queue that cannot be waited for loses the context */
    /* read after the drain: a chunk before the first failed one may have failed meanwhile */
    int lost = atomic_load(&p->ctx->lost);
    size_t intact_below = sp_failure_lost_from(&p->failure);
    sp_status recorded = sp_failure_status(&p->failure);
    f->recorded = sp_pipeline_has_failed(p);
    f->status = f->recorded && recorded != SP_OK ? recorded : st;
    f->chunk_failed = f->recorded && f->status == SP_ERR_STAGE_FAILED;
    f->chunk = intact_below;
    f->cause = sp_failure_cause(&p->failure);
    /* the recorded failure's own text; a failed enqueue that returned its status (recorded
     * no failure) left its reason as the pipeline's last error */
    sp_failure_copy_text(&p->failure, f->text, sizeof f->text);
    if (f->text[0] == '\0')
        sp_pipeline_error_copy(p, f->text, sizeof f->text);
    for (int k = sp_ring_oldest(p); k >= 0; k = sp_ring_oldest(p)) {
        sp_slot *slot = &p->slots[k];
        if (!lost && slot->chunk < intact_below) /* finished before the failure: hand it on */
            (void)host_turn(&b, slot->chunk + p->depth, 0, done);
        if (slot->busy) /* not handed on: it leaves without counting as done */
            sp_stats_vacated(p, 0);
        sp_ring_vacate(slot); /* handed on, or of a failed or cancelled batch: nothing to hand on */
    }
    sp_failure_reset(&p->failure);
}

/* ---- batches fed behind each other ---------------------------------------------------- */

void sp_sched_reset(sp_pipeline *p)
{
    sp_ring_reset(p);
    sp_tune_run_reset(p);
    sp_failure_reset(&p->failure);
}

/* The ring's pinned input slots, where b reads a chunk into them and a rechunk for a run
 * decompressed in the ring left them out (sp_pipeline_rechunk). */
static sp_status input_slots(sp_batch *b)
{
    return b->stage_in && !sp_ring_decode_covers(b) ? sp_pipeline_stage_input(b->p) : SP_OK;
}

/* Whether b's full chunks go as graph bundles, and if so from where. */
static void choose_submission(sp_batch *b)
{
    b->graphs = sp_graph_wanted(b);
    if (b->graphs)
        sp_graph_begin(b);
}

sp_status sp_sched_start(sp_batch *b, sp_pipeline *p, const void *in, size_t n_records,
                         void *out, size_t base, size_t record_base, void *owner)
{
    sp_status st = sp_batch_prepare(b, p, in, n_records, out, 0);
    if (st != SP_OK)
        return st;
    sp_plan_run(n_records, p->chunk_capacity, 0, p->depth, p->widest_record, &b->plan);
    b->base = b->next = base;
    b->end = base + b->plan.chunks;
    b->record_base = record_base;
    b->owner = owner;
    b->t0 = sp_now();
    if (n_records > 0 && (st = input_slots(b)) != SP_OK)
        return st;
    if (n_records > 0) {
        choose_submission(b);
        sp_tune_run_begin(b);
    }
    return SP_OK;
}

/* ---- a run ---------------------------------------------------------------------------- */

sp_status sp_sched_finish(sp_batch *b, sp_status st, sp_report *report)
{
    sp_pipeline *p = b->p;
    sp_status drained = sp_drain_all(p, b);
    double t_end = sp_now();
    /* the makespan is taken here, before a timed batch reads its events, for every run mode
     * (serial and graph runs end here too): with or without a report it is the same span */
    sp_pipeline_set_last_figures(p, t_end - b->t0,
                                 b->t_submitted > 0.0 ? b->t_submitted - b->t0 : 0.0,
                                 b->wait_s);
    if (sp_pipeline_has_failed(p))
        st = sp_failure_status(&p->failure); /* a stage that failed on a worker, or the first
                                                backend error */
    else if (st == SP_OK)
        st = drained;
    if (st != SP_OK && atomic_load(&p->ctx->lost))
        st = SP_ERR_DEVICE_LOST; /* whatever failed first, nothing will work on this context */
    if (b->activity_timing) { /* failed or not: it ends the backend's recording too */
        sp_status read = sp_timing_activity_collect(b);
        st = st == SP_OK ? read : st;
    }
    if (st == SP_OK && b->event_timing)
        st = sp_timing_collect(b); /* after t_end: reading the events is not the run's */
    else
        sp_timing_drained(b); /* a failed run's last chunks, for the flight recorder */
    if (st == SP_OK && report)
        st = sp_report_batch(b, report);
    sp_stats_end(p, st);
    return st;
}

/* Every chunk of the batch fed, then every slot retired. */
static sp_status feed_and_retire(sp_batch *b)
{
    sp_done_list done; /* a run's batch has no owner: nothing is listed */
    sp_status st = b->timing && !b->graphs ? sp_timing_start(b) : SP_OK;
    for (int fed = 0; st == SP_OK && !fed;)
        st = sp_sched_feed(b, &done, &fed);
    b->t_submitted = sp_now();
    return st == SP_OK ? retire_all(b, &done) : st;
}

sp_status sp_sched_run(sp_batch *b, sp_report *report)
{
    sp_status st = input_slots(b);
    if (st != SP_OK)
        return st;
    choose_submission(b); /* graph mode measures no per-operation times */
    sp_tune_run_begin(b);
    st = b->timing ? sp_timing_timeline_start(b) : SP_OK;
    if (st != SP_OK)
        return st;
    sp_sched_reset(b->p);
    sp_stats_begin(b->p, b->plan.n_records);
    b->next = b->base;
    b->t0 = sp_now();
    st = feed_and_retire(b);
    return sp_sched_finish(b, st, report);
}
