/* What the probe's parts share: failures, medians, rates, timed device copies, and the
 * ceiling that sp_probe_copy_seconds works out from the figures. */
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

sp_status sp_probe_fail(sp_probe *pr, sp_status status, const char *what)
{
    return sp_context_fail(pr->ctx, status, "probe: %s: %s", what, sp_backend_error());
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sp_probe_median(double *values, size_t n)
{
    qsort(values, n, sizeof *values, by_value);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}


sp_status sp_probe_repeat(sp_probe *pr, sp_probe_measure_fn fn, const void *arg,
                          double *median)
{
    for (unsigned r = 0; r <= pr->cfg.repeats; r++) {
        double seconds = 0.0;
        sp_status st = fn(pr, arg, &seconds);
        if (st != SP_OK)
            return st;
        if (r > 0) /* the first run pays for first touches and lazy setup */
            pr->samples[r - 1] = seconds;
    }
    *median = sp_probe_median(pr->samples, pr->cfg.repeats);
    return SP_OK;
}

sp_status sp_probe_timed_copies(sp_probe *pr, int direction, void *dst, const void *src,
                                size_t bytes, size_t piece, double *seconds)
{
    const sp_backend_ops *ops = pr->ops;
    sp_bqueue *q = pr->queue[direction];
    sp_status (*copy)(void *, void *, const void *, size_t, sp_bqueue *) =
        direction == PROBE_H2D ? ops->copy_h2d : ops->copy_d2h;
    sp_status st = ops->event_record(pr->impl, pr->start[direction], q);
    for (size_t off = 0; st == SP_OK && off < bytes; off += piece)
        st = copy(pr->impl, (char *)dst + off, (const char *)src + off,
                  bytes - off < piece ? bytes - off : piece, q);
    if (st == SP_OK)
        st = ops->event_record(pr->impl, pr->end[direction], q);
    if (st == SP_OK)
        st = ops->event_sync(pr->impl, pr->end[direction]);
    if (st == SP_OK)
        st = ops->event_elapsed(pr->impl, pr->start[direction], pr->end[direction], seconds);
    return st == SP_OK ? SP_OK
                       : sp_probe_fail(pr, st, direction == PROBE_H2D ? "timing h2d copies"
                                                                      : "timing d2h copies");
}

double sp_probe_copy_seconds(const sp_probe_result *r, size_t bytes_in, size_t bytes_out)
{
    if (!r)
        return 0.0;
    double in = (double)bytes_in, out = (double)bytes_out;
    double up = r->h2d_pinned_gbps * 1e9, down = r->d2h_pinned_gbps * 1e9;
    double both_up = r->both_h2d_gbps * 1e9, both_down = r->both_d2h_gbps * 1e9;
    if ((in > 0.0 && !(up > 0.0)) || (out > 0.0 && !(down > 0.0)))
        return 0.0;
    if (in == 0.0 || out == 0.0)
        return in / (up > 0.0 ? up : 1.0) + out / (down > 0.0 ? down : 1.0);
    if (!(both_up > 0.0) || !(both_down > 0.0))
        return in / up + out / down; /* no figures for overlap: one after the other */
    double t_in = in / both_up, t_out = out / both_down;
    if (t_in <= t_out) /* input done first; the rest of the output then goes alone */
        return t_in + (out - t_in * both_down) / down;
    return t_out + (in - t_out * both_up) / up;
}
