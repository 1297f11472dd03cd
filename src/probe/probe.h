/* The probe's private parts: its resources, and the measuring helpers its parts share.
 * probe.c owns the run; probe_copy.c, probe_host.c, probe_under_dma.c and probe_overhead.c
 * measure. */
#ifndef SP_PROBE_PRIVATE_H
#define SP_PROBE_PRIVATE_H

#include "core/context.h"
#include "streampipe_probe.h"

enum { PROBE_H2D = 0, PROBE_D2H = 1 };

typedef struct sp_probe {
    sp_context *ctx;
    const sp_backend_ops *ops;
    void *impl;
    sp_probe_config cfg;      /* every field resolved */
    sp_bqueue *queue[2];      /* one per copy direction */
    sp_bevent *start[2], *end[2]; /* TIMING events, one pair per direction */
    sp_bevent *ordering;      /* a SYNC event */
    /* copy_bytes each, when a part needs them: random data in pinned[H2D] and pageable[H2D],
     * targets in the others. */
    void *device[2], *pinned[2], *pageable[2];
    double samples[SP_PROBE_MAX_REPEATS];
} sp_probe;

/* Records the failure as the context's error ("probe: <what>: <backend reason>"). */
sp_status sp_probe_fail(sp_probe *pr, sp_status status, const char *what);

/* Median of n values (n >= 1); reorders them. */
double sp_probe_median(double *values, size_t n);

/* Device time of copying `bytes` in pieces of `piece` bytes back to back on the direction's
 * queue, from its start event to its end event. */
sp_status sp_probe_timed_copies(sp_probe *pr, int direction, void *dst, const void *src,
                                size_t bytes, size_t piece, double *seconds);

/* One measurement of `seconds`; arg is the part's own. */
typedef sp_status (*sp_probe_measure_fn)(sp_probe *pr, const void *arg, double *seconds);
/* One untimed warm-up of fn, then cfg.repeats timed ones; *median is their median. */
sp_status sp_probe_repeat(sp_probe *pr, sp_probe_measure_fn fn, const void *arg,
                          double *median);

/* The parts. Each fills its figures of *out. */
sp_status sp_probe_copy_rates(sp_probe *pr, sp_probe_result *out);
sp_status sp_probe_chunk_sizes(sp_probe *pr, sp_probe_result *out);
sp_status sp_probe_pinning(sp_probe *pr, sp_probe_result *out);
sp_status sp_probe_host_copy(sp_probe *pr, sp_probe_result *out);
sp_status sp_probe_host_under_dma(sp_probe *pr, sp_probe_result *out);
sp_status sp_probe_overheads(sp_probe *pr, sp_probe_result *out);

#endif
