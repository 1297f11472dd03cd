/* Copy rates: each direction from pinned and from pageable memory, both directions at once,
 * and pinned H2D by chunk size. Device time from timing events, so host-side enqueue cost is
 * not counted except where it holds the copy up (pageable copies are staged by the driver). */
#include "core/clock.h"
#include "probe/probe.h"

typedef struct one_way {
    int direction;
    int pinned;
} one_way;

static sp_status measure_one_way(sp_probe *pr, const void *arg, double *seconds)
{
    const one_way *w = arg;
    int d = w->direction;
    void *host = w->pinned ? pr->pinned[d] : pr->pageable[d];
    void *dst = d == PROBE_H2D ? pr->device[d] : host;
    const void *src = d == PROBE_H2D ? host : pr->device[d];
    return sp_probe_timed_copies(pr, d, dst, src, pr->cfg.copy_bytes, pr->cfg.copy_bytes,
                                 seconds);
}

/* Both directions released by one start event: each direction's time runs from that start
 * to its own end. */
static sp_status both_ways_once(sp_probe *pr, double *up_s, double *down_s)
{
    const sp_backend_ops *ops = pr->ops;
    void *impl = pr->impl;
    size_t bytes = pr->cfg.copy_bytes;
    sp_bqueue *up = pr->queue[PROBE_H2D], *down = pr->queue[PROBE_D2H];
    sp_status st = ops->event_record(impl, pr->start[PROBE_H2D], up);
    if (st == SP_OK)
        st = ops->queue_wait(impl, down, pr->start[PROBE_H2D]);
    if (st == SP_OK)
        st = ops->copy_h2d(impl, pr->device[PROBE_H2D], pr->pinned[PROBE_H2D], bytes, up);
    if (st == SP_OK)
        st = ops->copy_d2h(impl, pr->pinned[PROBE_D2H], pr->device[PROBE_D2H], bytes, down);
    for (int d = 0; d < 2 && st == SP_OK; d++)
        st = ops->event_record(impl, pr->end[d], pr->queue[d]);
    for (int d = 0; d < 2 && st == SP_OK; d++)
        st = ops->event_sync(impl, pr->end[d]);
    if (st == SP_OK)
        st = ops->event_elapsed(impl, pr->start[PROBE_H2D], pr->end[PROBE_H2D], up_s);
    if (st == SP_OK)
        st = ops->event_elapsed(impl, pr->start[PROBE_H2D], pr->end[PROBE_D2H], down_s);
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "timing copies both ways at once");
}

static sp_status both_ways(sp_probe *pr, sp_probe_result *out)
{
    double up[SP_PROBE_MAX_REPEATS], down[SP_PROBE_MAX_REPEATS];
    for (unsigned r = 0; r <= pr->cfg.repeats; r++) {
        double u = 0.0, d = 0.0;
        sp_status st = both_ways_once(pr, &u, &d);
        if (st != SP_OK)
            return st;
        if (r > 0) { /* after the warm-up */
            up[r - 1] = u;
            down[r - 1] = d;
        }
    }
    double bytes = (double)pr->cfg.copy_bytes;
    out->both_h2d_gbps = sp_gbps(bytes, sp_probe_median(up, pr->cfg.repeats));
    out->both_d2h_gbps = sp_gbps(bytes, sp_probe_median(down, pr->cfg.repeats));
    return SP_OK;
}

sp_status sp_probe_copy_rates(sp_probe *pr, sp_probe_result *out)
{
    static const one_way kinds[4] = {
        {PROBE_H2D, 1}, {PROBE_D2H, 1}, {PROBE_H2D, 0}, {PROBE_D2H, 0}};
    double *rates[4] = {&out->h2d_pinned_gbps, &out->d2h_pinned_gbps, &out->h2d_pageable_gbps,
                        &out->d2h_pageable_gbps};
    for (int i = 0; i < 4; i++) {
        double seconds = 0.0;
        sp_status st = sp_probe_repeat(pr, measure_one_way, &kinds[i], &seconds);
        if (st != SP_OK)
            return st;
        *rates[i] = sp_gbps((double)pr->cfg.copy_bytes, seconds);
    }
    return both_ways(pr, out);
}

/* Back-to-back pinned H2D copies of one size, as a pipeline with that chunk makes them: the
 * per-copy overhead shows as a lower rate for small chunks. */
static sp_status measure_chunk(sp_probe *pr, const void *arg, double *seconds)
{
    size_t piece = *(const size_t *)arg;
    size_t bytes = pr->cfg.copy_bytes / piece * piece;
    return sp_probe_timed_copies(pr, PROBE_H2D, pr->device[PROBE_H2D], pr->pinned[PROBE_H2D],
                                 bytes, piece, seconds);
}

sp_status sp_probe_chunk_sizes(sp_probe *pr, sp_probe_result *out)
{
    size_t piece = pr->cfg.min_chunk_bytes;
    size_t last = pr->cfg.max_chunk_bytes < pr->cfg.copy_bytes ? pr->cfg.max_chunk_bytes
                                                               : pr->cfg.copy_bytes;
    for (; piece <= last && out->n_chunk_sizes < SP_PROBE_MAX_CHUNK_SIZES; piece *= 4) {
        double seconds = 0.0;
        sp_status st = sp_probe_repeat(pr, measure_chunk, &piece, &seconds);
        if (st != SP_OK)
            return st;
        sp_probe_chunk_rate *rate = &out->chunk[out->n_chunk_sizes++];
        rate->bytes = piece;
        rate->h2d_gbps = sp_gbps((double)(pr->cfg.copy_bytes / piece * piece), seconds);
        if (piece > last / 4)
            break; /* the next step would pass `last` (and might overflow) */
    }
    return SP_OK;
}
