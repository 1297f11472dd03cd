/* The watch of live.h: which pipeline runs now and what the command's earlier runs did. */
#include <stdio.h>
#include <string.h>

#include "live.h"
#include "stats.h"

void live_watch_init(live_watch *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
}

void live_watch_destroy(live_watch *w) { pthread_mutex_destroy(&w->lock); }

/* The totals' entry for an engine name (a new one at the end; the last one when full). */
static live_engine_total *engine_total(live_totals *t, const sp_engine_stats *e)
{
    for (size_t k = 0; k < t->n_engines; k++)
        if (strcmp(t->engines[k].name, e->name) == 0)
            return &t->engines[k];
    if (t->n_engines == LIVE_MAX_ENGINES)
        return &t->engines[LIVE_MAX_ENGINES - 1];
    live_engine_total *n = &t->engines[t->n_engines++];
    snprintf(n->name, sizeof n->name, "%s", e->name);
    n->busy_measured = e->busy_measured;
    return n;
}

static void add_stats(live_totals *t, const sp_stats *s)
{
    t->records_done += s->records_done;
    t->errors += s->errors;
    t->wait_s += s->wait_s;
    for (size_t k = 0; k < s->n_engines; k++) {
        live_engine_total *e = engine_total(t, &s->engines[k]);
        e->records += s->engines[k].records;
        e->bytes += s->engines[k].bytes;
        e->busy_s += s->engines[k].busy_s;
        e->busy_measured |= s->engines[k].busy_measured; /* a GPU engine: a run with a report */
    }
}

/* Under lock: a GPU engine's busy time is an estimate that may step down a little within a
 * run (a newly timed chunk moves the mean), but what is served as a counter only grows: each
 * engine's total is held at the most served so far. */
static void hold_busy(live_watch *w, live_totals *t)
{
    for (size_t k = 0; k < t->n_engines && k < LIVE_MAX_ENGINES; k++) {
        if (t->engines[k].busy_s < w->busy_served[k])
            t->engines[k].busy_s = w->busy_served[k];
        w->busy_served[k] = t->engines[k].busy_s;
    }
}

/* Under lock: the watched pipeline's counters, zeroed when its run is counted already. */
static int read_watched(live_watch *w, sp_stats *s)
{
    *s = (sp_stats)SP_STATS_INIT;
    if (!w->p || sp_pipeline_stats(w->p, s) != SP_OK)
        return 0;
    if (s->run == 0 || s->run == w->counted_run) {
        size_t pinned = s->pinned_bytes, device = s->device_bytes;
        *s = (sp_stats)SP_STATS_INIT; /* nothing new: a run of ours not begun yet */
        s->pinned_bytes = pinned;
        s->device_bytes = device;
    }
    return 1;
}

void live_watch_set(live_watch *w, const sp_pipeline *p, const char *label)
{
    sp_stats s = SP_STATS_INIT;
    pthread_mutex_lock(&w->lock);
    w->p = p;
    snprintf(w->label, sizeof w->label, "%s", label ? label : "");
    /* its runs before now are not this command's to count (or are folded already) */
    w->counted_run = p && sp_pipeline_stats(p, &s) == SP_OK ? s.run : 0;
    pthread_mutex_unlock(&w->lock);
}

void live_watch_fold(live_watch *w)
{
    sp_stats s;
    pthread_mutex_lock(&w->lock);
    if (read_watched(w, &s) && s.run != 0) {
        add_stats(&w->done, &s);
        w->done.runs++;
        w->counted_run = s.run;
    }
    pthread_mutex_unlock(&w->lock);
}

void live_watch_sample(live_watch *w, live_sample *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&w->lock);
    out->have = read_watched(w, &out->now);
    out->total = w->done;
    add_stats(&out->total, &out->now);
    hold_busy(w, &out->total);
    snprintf(out->label, sizeof out->label, "%s", w->label);
    out->planned_records = w->planned_records;
    out->records_before = w->records_before;
    pthread_mutex_unlock(&w->lock);
    out->t = cli_now_s();
}
