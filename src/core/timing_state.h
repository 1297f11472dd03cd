/* The timing events of the per-operation timeline. Written only by timing.c (created and
 * freed by pipeline.c): a start/end pair per GPU engine per chunk, read once the chunk has
 * left its slot and its last operation is complete (for the live counters), or after the
 * run, so that timing never makes the host wait during a run. The pool grows to the longest
 * timed run. A start event is recorded only where it cannot be inferred from ends
 * (submit_direct.c, op_start); inferred[pair] says it was not. */
#ifndef SP_TIMING_STATE_H
#define SP_TIMING_STATE_H

#include <stddef.h>

#include "backend/backend.h"

/* SP_TIMELINE_SAMPLED's windows' lengths in chunks (timing.c, sp_timing_sample_windows) */
typedef struct sp_sample_windows {
    size_t first, middle, last;
} sp_sample_windows;

typedef struct sp_timing_pool {
    sp_bevent *base;
    sp_bevent **events;
    size_t n;
    unsigned char *inferred; /* n / 2 flags */
    /* which chunks of the run being timed have events (SP_TIMELINE_SAMPLED: the windows'):
     * rank[i] is chunk i's place among them, SP_TIMING_UNTIMED for one without */
    size_t *rank;
    size_t rank_capacity;
    size_t timed;            /* chunks with events in that run */
    sp_sample_windows windows; /* the sampled windows; first 0: every chunk timed */
    /* the flight recorder's side (flight.h): the run's start on the host clock, whether
     * this run's spans go to it, and the chunks read into it while the run went on */
    double t0;
    int recording;
    size_t recorded_below;
} sp_timing_pool;

#define SP_TIMING_UNTIMED ((size_t)-1)

#endif
