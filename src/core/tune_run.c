/* The tuner while a run goes (tune_run.h): the watch on chunks' costs, and the re-picks. */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/tune.h"
#include "core/tune_run.h"

/* Watched chunk i's entry in the watch: watched chunks take the two in turn, so that an
 * entry is re-recorded 2 * SP_TUNE_WATCH_EVERY chunks after it was recorded, when its chunk
 * has long left its slot (which takes K <= SP_MAX_DEPTH chunks) and so is complete. */
_Static_assert(2 * SP_TUNE_WATCH_EVERY >= SP_MAX_DEPTH && SP_TUNE_WATCH_SLOTS == 2,
               "a watch entry must outlive its chunk's slot");
static size_t entry_of(size_t i) { return (i / SP_TUNE_WATCH_EVERY) % SP_TUNE_WATCH_SLOTS; }
static int watched(size_t i) { return i % SP_TUNE_WATCH_EVERY == 0; }

void sp_tune_run_release(sp_pipeline *p)
{
    sp_tune_watch *w = &p->tune.watch;
    for (int end = 0; end < 2; end++)
        for (size_t g = 0; g < SP_MAX_STAGES + 2; g++)
            for (size_t v = 0; v < SP_TUNE_WATCH_SLOTS; v++)
                if (w->event[end][g][v]) {
                    p->ctx->ops->event_destroy(p->ctx->impl, w->event[end][g][v]);
                    w->event[end][g][v] = NULL;
                }
    w->entries = w->engines = 0;
}

/* The watch's events, made at the first tuned batch (the engines are fixed from create
 * on); 0 when the backend could not make them: the batch is then not tuned. */
static int make_events(sp_pipeline *p)
{
    sp_tune_watch *w = &p->tune.watch;
    size_t entries = SP_TUNE_WATCH_SLOTS, engines = sp_gpu_engines(p);
    if (w->entries)
        return w->entries == entries && w->engines == engines;
    for (int end = 0; end < 2; end++)
        for (size_t g = 0; g < engines; g++)
            for (size_t v = 0; v < entries; v++)
                if (p->ctx->ops->event_create(p->ctx->impl, SP_EVENT_TIMING,
                                              &w->event[end][g][v]) != SP_OK) {
                    sp_backend_error_clear(); /* not a failure of the run: it goes untuned */
                    sp_tune_run_release(p);
                    return 0;
                }
    w->entries = entries;
    w->engines = engines;
    return 1;
}

/* tune_run.h lists what is not tuned, and why. */
static int tunable(const sp_batch *b)
{
    const sp_pipeline *p = b->p;
    const sp_backend_ops *ops = p->ctx->ops;
    int budget = p->tune.max_pinned || p->tune.max_device;
    return p->tune.chunk_auto && budget && b->plan.chunk_records > 0 && !b->timing &&
           !b->graphs && !b->decode && ops->event_query && ops->event_elapsed;
}

void sp_tune_run_begin(sp_batch *b)
{
    b->tuned = tunable(b) && make_events(b->p);
    if (!b->tuned)
        return;
    size_t want = sp_tuner_next_chunk(&b->p->tune.tuner);
    if (b->plan.chunk_records < want) {
        /* the plan cut a short run's chunks to overlap its few: its chunks stay the plan's,
         * and the tuner's pick, untouched, stands for the runs after it */
        b->tuned = 0;
        return;
    }
    if (want < b->plan.chunk_records && want > 0) {
        sp_batch_resegment(b, b->base, want); /* the tuner's standing pick, not a change */
        b->chunk_by_tuner = 1;
    }
}

/* Records still to come from chunk i on; 0 when unknown (a source of unknown length). */
static size_t remaining(const sp_batch *b, size_t i)
{
    size_t n = b->io ? b->io->n_records : b->plan.n_records, first = sp_chunk_first(b, i);
    return n > first ? n - first : 0;
}

void sp_tune_run_boundary(sp_batch *b, size_t i)
{
    if (!b->tuned)
        return;
    sp_pipeline *p = b->p;
    sp_tuner *t = &p->tune.tuner;
    sp_tune_decision d = {.verdict = SP_TUNE_KEEP};
    double now = sp_now();
    if (p->tune.watch.fresh) { /* nothing new seen: the answer would be the same */
        p->tune.watch.fresh = 0;
        sp_tuner_decide(t, now, remaining(b, i), &d);
        if (d.verdict == SP_TUNE_CHANGE)
            sp_tuner_applied(t, d.to, now);
    }
    size_t want = sp_tuner_next_chunk(t);
    if (want == 0 || want > p->chunk_capacity || want == b->plan.chunk_records)
        return;
    char why[160];
    if (d.verdict != SP_TUNE_KEEP)
        snprintf(why, sizeof why, "%s", d.reason);
    else if (t->probe_left > 0)
        snprintf(why, sizeof why, "probing %zu-record chunks (a probe under way)", want);
    else
        snprintf(why, sizeof why, "the probe is over: back to the chosen %zu-record chunks",
                 want);
    sp_tune_settings from = {b->plan.chunk_records, p->depth}, to = {want, p->depth};
    sp_batch_resegment(b, i, want);
    b->chunk_by_tuner = 2;
    sp_tune_record(p, now, from, to, why);
}

void sp_tune_run_arm(sp_batch *b, size_t i)
{
    if (!b->tuned)
        return;
    if (!watched(i))
        return;
    sp_tune_watch *w = &b->p->tune.watch;
    size_t v = entry_of(i);
    w->pending[v] = w->left[v] = 0; /* the watched chunk before last, if unread: dropped */
    w->armed[v] = 1;
    w->chunk[v] = i;
}

sp_bevent *sp_tune_run_event(const sp_batch *b, size_t g, size_t i, int end)
{
    if (!b->tuned)
        return NULL;
    const sp_tune_watch *w = &b->p->tune.watch;
    size_t v = entry_of(i);
    if (!w->armed[v] || w->chunk[v] != i || g >= w->engines)
        return NULL;
    return w->event[end ? 1 : 0][g][v];
}

void sp_tune_run_submitted(sp_batch *b, size_t i, double host_s)
{
    if (!b->tuned)
        return;
    sp_tune_watch *w = &b->p->tune.watch;
    size_t v = entry_of(i);
    if (!w->armed[v] || w->chunk[v] != i)
        return;
    w->armed[v] = 0;
    w->pending[v] = 1;
    w->records[v] = sp_chunk_records(b, i);
    w->host_s[v] = host_s > 0.0 ? host_s : 0.0;
}

/* Entry v's chunk, observed if its last operation (d2h, which waits for all the others) is
 * done; else left for a later turn. */
static void observe_if_done(sp_pipeline *p, size_t v)
{
    const sp_backend_ops *ops = p->ctx->ops;
    sp_tune_watch *w = &p->tune.watch;
    size_t last = w->engines - 1;
    int complete = 0;
    if (ops->event_query(p->ctx->impl, w->event[1][last][v], &complete) != SP_OK) {
        sp_backend_error_clear(); /* a lost device shows in the run's own calls */
        w->pending[v] = 0;
        return;
    }
    if (!complete)
        return;
    w->pending[v] = 0;
    sp_tune_obs o = {.records = w->records[v], .now = sp_now()};
    for (size_t g = 0; g <= last; g++) {
        double s = 0.0;
        if (ops->event_elapsed(p->ctx->impl, w->event[0][g][v], w->event[1][g][v], &s) !=
            SP_OK) {
            sp_backend_error_clear();
            return;
        }
        sp_tune_engine e = g == 0 ? SP_TUNE_H2D : g == last ? SP_TUNE_D2H : SP_TUNE_COMPUTE;
        o.seconds[e] += s > 0.0 ? s : 0.0;
    }
    o.seconds[SP_TUNE_HOST] = w->host_s[v];
    sp_tuner_observe(&p->tune.tuner, &o);
    w->fresh++;
}

void sp_tune_run_observe(sp_pipeline *p, size_t chunk)
{
    sp_tune_watch *w = &p->tune.watch;
    size_t v = entry_of(chunk);
    if (w->pending[v] && w->chunk[v] == chunk)
        w->left[v] = 1;
    for (size_t k = 0; k < w->entries; k++)
        if (w->pending[k] && w->left[k])
            observe_if_done(p, k);
}

void sp_tune_run_reset(sp_pipeline *p)
{
    sp_tune_watch *w = &p->tune.watch;
    memset(w->armed, 0, sizeof w->armed);
    memset(w->pending, 0, sizeof w->pending);
    memset(w->left, 0, sizeof w->left);
    w->fresh = 0;
}
