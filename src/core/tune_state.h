/* What the library chose for chunk size and depth, and the changes it made (sp_tune_change).
 * Written by tune.c (at create, and from the scheduler's thread) and, for the tuner and the
 * watch while a run goes, by tune_run.c on the scheduler's thread; read by the getters
 * (sp_pipeline_tune_changes, the stats) from any thread, under `lock`: changes are rare. */
#ifndef SP_TUNE_STATE_H
#define SP_TUNE_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/tuner.h"
#include "streampipe.h"

/* What the re-picks while a run goes see of chunks (tune_run.c writes it, on the scheduler's
 * thread): a start and an end timing event for each GPU engine of every watched chunk, in
 * two sets that watched chunks take in turn, so that a chunk's events are read at a later
 * host turn once complete, never waited for, before a chunk re-records them. */
#define SP_TUNE_WATCH_SLOTS 2
typedef struct sp_tune_watch {
    sp_bevent *event[2][SP_MAX_STAGES + 2][SP_TUNE_WATCH_SLOTS]; /* [end][engine][entry] */
    size_t entries;               /* entries whose events exist (2 once made), 0: none */
    size_t engines;               /* GPU engines they were made for */
    int armed[SP_TUNE_WATCH_SLOTS];   /* the entry's chunk is being enqueued with events */
    int pending[SP_TUNE_WATCH_SLOTS]; /* enqueued, not read yet */
    int left[SP_TUNE_WATCH_SLOTS];    /* ... and it has left its slot: read once complete */
    size_t chunk[SP_TUNE_WATCH_SLOTS];
    size_t records[SP_TUNE_WATCH_SLOTS];
    double host_s[SP_TUNE_WATCH_SLOTS]; /* the host's turn for it, waits aside */
    unsigned fresh;               /* chunks observed since the last decision */
} sp_tune_watch;

typedef struct sp_tune_state {
    int chunk_auto, depth_auto;   /* the config left them at 0: the library's to change */
    unsigned depth_picked;        /* the library's depth (at create, a stream's deeper one):
                                     a short compressed run's ring may have fewer slots
                                     (sp_tune_ring_chunk), a later run's gets them back */
    size_t max_pinned, max_device;/* the budget, 0: none */
    sp_tuner tuner;               /* the scheduler's thread's alone: made by tune.c at create,
                                     then fed and asked by tune_run.c while runs go */
    sp_tune_watch watch;          /* tune_run.c's */
    pthread_mutex_t lock;         /* guards what follows */
    int lock_made;
    uint64_t total;               /* changes made */
    size_t kept;                  /* entries of `change` in use */
    sp_tune_change change[SP_TUNE_CHANGES_KEPT]; /* the first, then the last ones in a ring */
} sp_tune_state;

#endif
