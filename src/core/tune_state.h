/* What the library chose for chunk size and depth, and the changes it made (sp_tune_change).
 * Written only by tune.c (at create, and from the scheduler's thread); read by the getters
 * (sp_pipeline_tune_changes, the stats) from any thread, under `lock`: changes are rare. */
#ifndef SP_TUNE_STATE_H
#define SP_TUNE_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "core/tuner.h"
#include "streampipe.h"

typedef struct sp_tune_state {
    int chunk_auto, depth_auto;   /* the config left them at 0: the library's to change */
    size_t max_pinned, max_device;/* the budget, 0: none */
    sp_tuner tuner;               /* the scheduler's thread's alone */
    pthread_mutex_t lock;         /* guards what follows */
    int lock_made;
    uint64_t total;               /* changes made */
    size_t kept;                  /* entries of `change` in use */
    sp_tune_change change[SP_TUNE_CHANGES_KEPT]; /* the first, then the last ones in a ring */
} sp_tune_state;

#endif
