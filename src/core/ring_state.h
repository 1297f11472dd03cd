/* What the ring remembers of the chunk in each slot until it leaves. Written only by the
 * ring's code (ring.c, and the per-chunk writers inline in ring.h); read by the scheduler
 * (sched.c) and the host copies (staging.c). */
#ifndef SP_RING_STATE_H
#define SP_RING_STATE_H

#include <stddef.h>

#include "backend/backend.h"

typedef struct sp_slot {
    int busy;                 /* a chunk holds the slot */
    size_t chunk;             /* its index in the ring's numbering (slot = chunk mod K) */
    sp_bevent *graph_release; /* its bundle's event when it ran in a graph replay */
    char *out;                /* user memory its output is copied to; NULL: none */
    int sink;                 /* its output goes to the batch's sink instead */
    size_t first_record;      /* its first record, counted from the run's or stream's start */
    size_t records;
    void *owner;              /* the caller's batch it belongs to (a stream's; NULL in a run) */
    int input_staged;         /* its input went through pinned staging */
} sp_slot;

#endif
