/* The --live panel (live.h): a thread that samples the watch 5 times a second and redraws
 * four lines on stderr in place (ANSI cursor moves), erased when the command stops, so the
 * screen keeps only the final report. Only on a terminal: cli_live_start checks. Unasked
 * for, it keeps quiet until the runs have gone on LIVE_AUTO_AFTER_S; from its first draw on,
 * the command's progress line keeps quiet (the `shown` flag), and the panel's first lines
 * go over that line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "live_view.h"
#include "stats.h"

#define PANEL_LINES 4
#define REDRAW_S 0.2 /* the issue asks for at least 4 redraws a second */

struct live_view {
    live_watch *watch;
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop, with `wake` */
    pthread_cond_t wake;
    int stop;
    int drawn;            /* lines of the panel on screen */
    live_sample prev;
    double after_s;       /* the panel waits until the runs have gone on this long */
    double since;         /* host clock when the first run seen began; < 0: none yet */
    atomic_int *shown;    /* set at the first draw (at the start for after_s 0) */
};

/* Bytes per second of engine k between two samples of one run, else over the run so far. */
static double engine_rate(const live_sample *prev, const live_sample *cur, size_t k)
{
    const sp_engine_stats *e = &cur->now.engines[k];
    if (prev->now.run == cur->now.run && cur->t > prev->t && k < prev->now.n_engines)
        return (double)(e->bytes - prev->now.engines[k].bytes) / (cur->t - prev->t);
    return cur->now.elapsed_s > 0 ? (double)e->bytes / cur->now.elapsed_s : 0.0;
}

/* A fraction of the interval: d(value) / d(t), or value / elapsed for a new run. */
static double share(const live_sample *prev, const live_sample *cur, double was, double now)
{
    if (prev->now.run == cur->now.run && cur->t > prev->t)
        return (now - was) / (cur->t - prev->t);
    return cur->now.elapsed_s > 0 ? now / cur->now.elapsed_s : 0.0;
}

static void progress_line(const live_sample *s, char *line, size_t size)
{
    const sp_stats *n = &s->now;
    /* the command's plan and all its runs' records, or (no plan: bench) the run's own */
    uint64_t planned = s->planned_records ? s->planned_records : n->records_total;
    uint64_t done = s->planned_records ? s->records_before + s->total.records_done
                                       : n->records_done;
    double rate = n->elapsed_s > 0 ? (double)n->records_done / n->elapsed_s : 0.0;
    int used = snprintf(line, size, "streampipe%s%s: ", s->label[0] ? " " : "", s->label);
    if (planned)
        used += snprintf(line + used, size - (size_t)used, "%5.1f%% %llu of %llu records",
                         100.0 * (double)done / (double)planned, (unsigned long long)done,
                         (unsigned long long)planned);
    else
        used += snprintf(line + used, size - (size_t)used, "%llu records",
                         (unsigned long long)done);
    used += snprintf(line + used, size - (size_t)used, ", %.2f GB/s in, %.1f s",
                     cli_gbps((double)n->bytes_done, n->elapsed_s), n->elapsed_s);
    if (planned && rate > 0 && done <= planned)
        snprintf(line + used, size - (size_t)used, ", ETA %.1f s",
                 (double)(planned - done) / rate);
}

static int is_staging(const sp_engine_stats *e)
{
    return e->kind == SP_ENGINE_STAGE_IN || e->kind == SP_ENGINE_STAGE_OUT;
}

/* Each engine's rate; a GPU engine whose busy time is measured (a run with a report: from
 * its sampled chunks) also its busy share of the interval, "(87%)". */
static void rates_line(const live_sample *prev, const live_sample *cur, char *line, size_t size)
{
    int used = snprintf(line, size, "  GB/s:");
    for (size_t k = 0; k < cur->now.n_engines && (size_t)used < size; k++) {
        const sp_engine_stats *e = &cur->now.engines[k];
        if (e->records == 0 && is_staging(e)) /* a staging engine this run does not use */
            continue;
        used += snprintf(line + used, size - (size_t)used, " %s %.2f", e->name,
                         engine_rate(prev, cur, k) * 1e-9);
        if (!is_staging(e) && e->busy_measured && (size_t)used < size) {
            double was = k < prev->now.n_engines ? prev->now.engines[k].busy_s : 0.0;
            double f = share(prev, cur, was, e->busy_s);
            used += snprintf(line + used, size - (size_t)used, " (%.0f%%)",
                             100.0 * (f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f));
        }
    }
}

/* The engine with the most busy time in the interval, or the slot wait: the host staging
 * engines are measured, the GPU engines only in a run with a report (estimated from its
 * sampled chunks); unmeasured, the device shows as the time the host turn waited for a
 * slot (measured, they say which of its engines it is). Then the hidden transfer so far,
 * when known. */
static void bottleneck_line(const live_sample *prev, const live_sample *cur, char *line,
                            size_t size)
{
    const sp_stats *n = &cur->now, *p = &prev->now;
    int gpu = n->n_engines > 1 && n->engines[1].busy_measured; /* measured: no stand-in */
    const char *what = gpu ? "none" : "slot wait (the device's engines)";
    double best = gpu ? 0.0 : share(prev, cur, p->wait_s, n->wait_s);
    for (size_t k = 0; k < n->n_engines; k++) {
        if (!n->engines[k].busy_measured)
            continue;
        double was = k < p->n_engines ? p->engines[k].busy_s : 0.0;
        double f = share(prev, cur, was, n->engines[k].busy_s);
        if (f > best) {
            best = f;
            what = n->engines[k].name;
        }
    }
    int used = snprintf(line, size, "  bottleneck: %s, %.0f%% of the time%s", what,
                        100.0 * (best > 1.0 ? 1.0 : best),
                        gpu ? "" : " (GPU engines' busy time not measured)");
    if (n->hidden_transfer >= 0.0 && (size_t)used < size)
        snprintf(line + used, size - (size_t)used, "; hidden so far %.1f%%",
                 100.0 * n->hidden_transfer);
}

static void memory_line(const live_sample *s, char *line, size_t size)
{
    const sp_stats *n = &s->now;
    int used = snprintf(line, size, "  in flight: %u chunks", n->chunks_in_flight);
    if (n->batches_in_flight)
        used += snprintf(line + used, size - (size_t)used, ", %u batches",
                         n->batches_in_flight);
    snprintf(line + used, size - (size_t)used, "; held: %.1f MiB pinned, %.1f MiB device%s",
             (double)n->pinned_bytes / (1 << 20), (double)n->device_bytes / (1 << 20),
             s->total.errors ? "; FAILED runs" : "");
}

static void draw(struct live_view *v, const live_sample *cur)
{
    char lines[PANEL_LINES][240];
    progress_line(cur, lines[0], sizeof lines[0]);
    rates_line(&v->prev, cur, lines[1], sizeof lines[1]);
    bottleneck_line(&v->prev, cur, lines[2], sizeof lines[2]);
    memory_line(cur, lines[3], sizeof lines[3]);
    if (v->drawn)
        fprintf(stderr, "\033[%dA", v->drawn); /* back to the panel's first line */
    for (int k = 0; k < PANEL_LINES; k++)
        fprintf(stderr, "\r%.*s\033[K\n", 200, lines[k]);
    v->drawn = PANEL_LINES;
    fflush(stderr);
}

/* Waits REDRAW_S or until stopped; 1 when stopped. */
static int nap(struct live_view *v)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += (long)(REDRAW_S * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&v->lock);
    if (!v->stop)
        pthread_cond_timedwait(&v->wake, &v->lock, &t);
    int stop = v->stop;
    pthread_mutex_unlock(&v->lock);
    return stop;
}

static void *view_main(void *arg)
{
    struct live_view *v = arg;
    live_watch_sample(v->watch, &v->prev);
    while (!nap(v)) {
        live_sample cur;
        live_watch_sample(v->watch, &cur);
        if (cur.have && cur.now.run != 0 && v->since < 0)
            v->since = cur.t - cur.now.elapsed_s;
        if (cur.have && cur.now.run != 0 && cur.t - v->since >= v->after_s) {
            atomic_store(v->shown, 1); /* before the draw: the progress line stops first */
            draw(v, &cur);
        }
        v->prev = cur;
    }
    if (v->drawn) /* erase it: the screen keeps the report */
        fprintf(stderr, "\033[%dA\r\033[J", v->drawn);
    fflush(stderr);
    return NULL;
}

struct live_view *live_view_start(live_watch *watch, double after_s, atomic_int *shown)
{
    struct live_view *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->watch = watch;
    v->after_s = after_s;
    v->since = -1.0;
    v->shown = shown;
    pthread_mutex_init(&v->lock, NULL);
    pthread_cond_init(&v->wake, NULL);
    if (pthread_create(&v->thread, NULL, view_main, v) != 0) {
        pthread_cond_destroy(&v->wake);
        pthread_mutex_destroy(&v->lock);
        free(v);
        return NULL;
    }
    if (after_s <= 0) /* asked for: the panel, not the progress line, shows the runs */
        atomic_store(shown, 1);
    return v;
}

void live_view_stop(struct live_view *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->lock);
    v->stop = 1;
    pthread_cond_signal(&v->wake);
    pthread_mutex_unlock(&v->lock);
    pthread_join(v->thread, NULL);
    pthread_cond_destroy(&v->wake);
    pthread_mutex_destroy(&v->lock);
    free(v);
}
