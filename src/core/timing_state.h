/* The timing events of the per-operation timeline. Written only by timing.c (created and
 * freed by pipeline.c): a start/end pair per GPU engine per chunk, all read after the run,
 * so that timing never makes the host wait during a run. The pool grows to the longest
 * timed run. A start event is recorded only where it cannot be inferred from ends
 * (submit_direct.c, op_start); inferred[pair] says it was not. */
#ifndef SP_TIMING_STATE_H
#define SP_TIMING_STATE_H

#include <stddef.h>

#include "backend/backend.h"

typedef struct sp_timing_pool {
    sp_bevent *base;
    sp_bevent **events;
    size_t n;
    unsigned char *inferred; /* n / 2 flags */
} sp_timing_pool;

#endif
