/* Host copy under the copy engines. A pageable pipeline's host memory serves its staging
 * threads (a read and a write per staged byte) and the copy engines (one access per copied
 * byte) at the same time; each may reach its rate alone and the two together still fall
 * short. This part measures the pipeline's staging copy (its default thread count, its copy
 * routine, an input and an output copy together) and pinned copies both ways at once, each
 * alone and then at the same time.
 *
 * "At the same time" without a way to ask the engines how far they are: they get more work up
 * front than the staging copy's window needs, with a timing event after each copy, and the
 * staging copy then runs for a fixed window, its rounds timed on the host clock. The engines'
 * start event completes within microseconds of its enqueue (their queues are idle), so engine
 * times map onto host times; the staging rate counts only rounds that ended while the engines
 * ran, and the engines' rate only copies that ended inside the staging window.
 *
 * Buffers: each copy_bytes buffer is cut in halves. The engines use the first halves
 * (pinned[H2D] -> device[H2D], device[D2H] -> pinned[D2H]) and the staging copy the second
 * halves of the pinned ones (pageable[H2D] -> pinned[D2H], pinned[H2D] -> pageable[D2H]), so
 * nothing writes what another reads. */
#include <math.h>
#include <string.h>

#include "core/clock.h"
#include "probe/probe.h"
#include "core/staging_pool.h"

#define HALF_ALIGN ((size_t)32 << 10) /* halves are multiples: all staging rounds alike */
#define ROUNDS_PER_HALF 8 /* a staging round copies this share of a half, each way */
#define PIECES_PER_HALF 4 /* an engine copy alone moves this share of a half */
#define ALONE_PASSES 4    /* each alone measurement goes over its halves this many times */
#define MARKS 32          /* engine copies per direction beside the staging copy: a fixed
                             count, so that the backend calls of a probe are always the same */
#define MAX_ROUNDS 1024   /* staging rounds in one window */
#define ENGINE_MARGIN 1.5 /* work for this many windows at the engines' lone rate */
_Static_assert(ALONE_PASSES * PIECES_PER_HALF <= MARKS, "the copies alone need a mark each");

typedef struct under_dma {
    sp_staging_pool *pool;
    unsigned threads;
    size_t half;                  /* bytes of each buffer half */
    size_t piece;                 /* bytes of each engine copy: half / PIECES_PER_HALF alone,
                                     sized to the window beside the staging copy */
    double window_s;              /* how long the staging copy runs beside the engines */
    sp_bevent *mark[2][MARKS];    /* TIMING: after engine copy k of each direction */
    double mark_s[2][MARKS];      /* their times from the start event */
    double round_end[MAX_ROUNDS]; /* host clock at the end of each staging round */
} under_dma;

typedef sp_status (*under_dma_fn)(sp_probe *pr, under_dma *u, double fig[2]);

static size_t round_bytes(const under_dma *u) { return 2 * (u->half / ROUNDS_PER_HALF); }

/* Staging round k: one slice in and one out together, as the pipeline stages chunk i's input
 * and chunk i-K's output in one call. */
static void staging_round(sp_probe *pr, const under_dma *u, size_t k)
{
    size_t len = u->half / ROUNDS_PER_HALF, off = k % ROUNDS_PER_HALF * len;
    const sp_copy copies[2] = {
        {.dst = (char *)pr->pinned[PROBE_D2H] + u->half + off,
         .src = (char *)pr->pageable[PROBE_H2D] + off, .bytes = len},
        {.dst = (char *)pr->pageable[PROBE_D2H] + off,
         .src = (char *)pr->pinned[PROBE_H2D] + u->half + off, .bytes = len},
    };
    (void)sp_staging_pool_copy_many(u->pool, copies, 2); /* copies only: cannot fail */
}

/* fig: GB/s, and the seconds it took (the window of the measurement beside the engines). */
static sp_status staging_alone(sp_probe *pr, under_dma *u, double fig[2])
{
    size_t rounds = ALONE_PASSES * ROUNDS_PER_HALF;
    double t0 = sp_now();
    for (size_t k = 0; k < rounds; k++)
        staging_round(pr, u, k);
    fig[1] = sp_now() - t0;
    fig[0] = sp_gbps((double)(rounds * round_bytes(u)), fig[1]);
    return SP_OK;
}

/* n copies of u->piece bytes each way on the probe's two queues, released together by one
 * start event, each followed by its mark; they go round the halves. */
static sp_status enqueue_engines(sp_probe *pr, under_dma *u, size_t n)
{
    const sp_backend_ops *ops = pr->ops;
    void *impl = pr->impl;
    sp_bqueue *up = pr->queue[PROBE_H2D], *down = pr->queue[PROBE_D2H];
    char *pinned_up = pr->pinned[PROBE_H2D], *pinned_down = pr->pinned[PROBE_D2H];
    char *device_up = pr->device[PROBE_H2D], *device_down = pr->device[PROBE_D2H];
    size_t len = u->piece, slices = u->half / len;
    sp_status st = ops->event_record(impl, pr->start[PROBE_H2D], up);
    if (st == SP_OK)
        st = ops->queue_wait(impl, down, pr->start[PROBE_H2D]);
    for (size_t k = 0; st == SP_OK && k < n; k++) {
        size_t off = k % slices * len;
        st = ops->copy_h2d(impl, device_up + off, pinned_up + off, len, up);
        if (st == SP_OK)
            st = ops->event_record(impl, u->mark[PROBE_H2D][k], up);
        if (st == SP_OK)
            st = ops->copy_d2h(impl, pinned_down + off, device_down + off, len, down);
        if (st == SP_OK)
            st = ops->event_record(impl, u->mark[PROBE_D2H][k], down);
    }
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "enqueueing copies both ways");
}

/* Waits for the last copy each way, then reads marks [first, n) of both directions. */
static sp_status read_marks(sp_probe *pr, under_dma *u, size_t first, size_t n)
{
    const sp_backend_ops *ops = pr->ops;
    sp_status st = SP_OK;
    for (int d = 0; st == SP_OK && d < 2; d++)
        st = ops->event_sync(pr->impl, u->mark[d][n - 1]);
    for (int d = 0; d < 2; d++)
        for (size_t k = first; st == SP_OK && k < n; k++)
            st = ops->event_elapsed(pr->impl, pr->start[PROBE_H2D], u->mark[d][k],
                                    &u->mark_s[d][k]);
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "timing copies both ways");
}

/* fig: h2d + d2h GB/s, and the faster direction's GB/s (to size the work beside the staging
 * copy). Each direction's time runs from the common start to its last copy's end. */
static sp_status engines_alone(sp_probe *pr, under_dma *u, double fig[2])
{
    size_t n = ALONE_PASSES * PIECES_PER_HALF;
    u->piece = u->half / PIECES_PER_HALF;
    sp_status st = enqueue_engines(pr, u, n);
    if (st == SP_OK)
        st = read_marks(pr, u, n - 1, n);
    if (st != SP_OK)
        return st;
    double bytes = (double)(n * u->piece);
    double up = sp_gbps(bytes, u->mark_s[PROBE_H2D][n - 1]);
    double down = sp_gbps(bytes, u->mark_s[PROBE_D2H][n - 1]);
    fig[0] = up + down;
    fig[1] = fmax(up, down);
    return SP_OK;
}

/* Copies big enough that MARKS of them outlast the window at the engines' lone rate with a
 * margin (beside the staging copy they only slow down); from half / 32 (whole KiB, as half
 * is whole 32 KiB) to half. If they end early all the same, the window is cut there. */
static size_t piece_for_window(const under_dma *u, double lone_gbps)
{
    double want = ENGINE_MARGIN * lone_gbps * 1e9 * u->window_s / MARKS;
    size_t least = u->half / 32;
    if (!(want < (double)u->half)) /* NaN too */
        return u->half;
    if (!(want > (double)least))
        return least;
    return (size_t)want / 1024 * 1024; /* >= least, a whole KiB too */
}

/* Staging rounds until the window has passed (at least one); returns how many. */
static size_t staging_for_window(sp_probe *pr, under_dma *u, double t0)
{
    size_t rounds = 0;
    double now;
    do {
        staging_round(pr, u, rounds);
        now = sp_now();
        u->round_end[rounds++] = now;
    } while (now - t0 < u->window_s && rounds < MAX_ROUNDS);
    return rounds;
}

/* GB/s of direction d's copies that ended inside [a, b] (engine time), from the first mark in
 * it to the last; over all n copies when fewer than two marks fall inside. */
static double marks_rate(const under_dma *u, int d, size_t n, double a, double b)
{
    const double *at = u->mark_s[d];
    size_t first = 0, last = n - 1;
    while (first < n && at[first] < a)
        first++;
    while (last > 0 && at[last] > b)
        last--;
    double piece = (double)u->piece;
    if (first < last)
        return sp_gbps((double)(last - first) * piece, at[last] - at[first]);
    return sp_gbps((double)n * piece, at[n - 1]);
}

/* fig: staging GB/s while the engines run, and the engines' h2d + d2h GB/s meanwhile. */
static sp_status both_at_once(sp_probe *pr, under_dma *u, double fig[2])
{
    size_t n = MARKS;
    double t_enqueue = sp_now();
    sp_status st = enqueue_engines(pr, u, n);
    if (st != SP_OK)
        return st;
    double t0 = sp_now();
    size_t rounds = staging_for_window(pr, u, t0);
    st = read_marks(pr, u, 0, n);
    if (st != SP_OK)
        return st;
    /* rounds that ended after the engines stopped ran partly alone: left out (the first
     * one began under them in any case) */
    double engines_end =
        t_enqueue + fmin(u->mark_s[PROBE_H2D][n - 1], u->mark_s[PROBE_D2H][n - 1]);
    size_t inside = 1;
    while (inside < rounds && u->round_end[inside] <= engines_end)
        inside++;
    double t1 = u->round_end[inside - 1];
    fig[0] = sp_gbps((double)(inside * round_bytes(u)), t1 - t0);
    fig[1] = marks_rate(u, PROBE_H2D, n, t0 - t_enqueue, t1 - t_enqueue) +
             marks_rate(u, PROBE_D2H, n, t0 - t_enqueue, t1 - t_enqueue);
    return SP_OK;
}

/* One warm-up, then cfg.repeats runs of fn; the median of each of its two figures. */
static sp_status repeat_pair(sp_probe *pr, under_dma *u, under_dma_fn fn, double median[2])
{
    double first[SP_PROBE_MAX_REPEATS], second[SP_PROBE_MAX_REPEATS];
    for (unsigned r = 0; r <= pr->cfg.repeats; r++) {
        double fig[2] = {0.0, 0.0};
        sp_status st = fn(pr, u, fig);
        if (st != SP_OK)
            return st;
        if (r > 0) {
            first[r - 1] = fig[0];
            second[r - 1] = fig[1];
        }
    }
    median[0] = sp_probe_median(first, pr->cfg.repeats);
    median[1] = sp_probe_median(second, pr->cfg.repeats);
    return SP_OK;
}

/* Alone first: the staging copy's time sets the window, the engines' rate their work. */
static sp_status measure(sp_probe *pr, under_dma *u, sp_probe_result *out)
{
    double fig[2];
    sp_status st = repeat_pair(pr, u, staging_alone, fig);
    if (st != SP_OK)
        return st;
    out->staging_alone_gbps = fig[0];
    u->window_s = fig[1];
    if ((st = repeat_pair(pr, u, engines_alone, fig)) != SP_OK)
        return st;
    out->dma_alone_gbps = fig[0];
    double lone_gbps = fig[1];
    u->piece = piece_for_window(u, lone_gbps);
    if ((st = repeat_pair(pr, u, both_at_once, fig)) != SP_OK)
        return st;
    out->staging_under_dma_gbps = fig[0];
    out->dma_under_staging_gbps = fig[1];
    out->under_dma_threads = u->threads;
    return SP_OK;
}

static sp_status make_marks(sp_probe *pr, under_dma *u)
{
    sp_status st = SP_OK;
    for (int d = 0; d < 2; d++)
        for (size_t k = 0; st == SP_OK && k < MARKS; k++)
            st = pr->ops->event_create(pr->impl, SP_EVENT_TIMING, &u->mark[d][k]);
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "creating its copy marks");
}

/* Events may go with copies still in flight (a failed enqueue): the backends allow it, and
 * release() waits for the queues before the buffers go. */
static void free_marks(sp_probe *pr, under_dma *u)
{
    for (int d = 0; d < 2; d++)
        for (size_t k = 0; k < MARKS; k++)
            if (u->mark[d][k])
                pr->ops->event_destroy(pr->impl, u->mark[d][k]);
}

sp_status sp_probe_host_under_dma(sp_probe *pr, sp_probe_result *out)
{
    under_dma u;
    memset(&u, 0, sizeof u);
    u.half = pr->cfg.copy_bytes / 2 / HALF_ALIGN * HALF_ALIGN; /* >= HALF_ALIGN */
    u.threads = sp_staging_pool_default_threads(); /* what a pipeline gets by default */
    if (u.threads > pr->cfg.max_threads)
        u.threads = pr->cfg.max_threads;
    if (sp_staging_pool_create(u.threads, &u.pool) != SP_OK)
        return sp_context_fail(pr->ctx, SP_ERR_OUT_OF_MEMORY,
                               "probe: starting %u copy threads failed", u.threads);
    sp_status st = make_marks(pr, &u);
    if (st == SP_OK)
        st = measure(pr, &u, out);
    free_marks(pr, &u);
    sp_staging_pool_destroy(u.pool);
    return st;
}
