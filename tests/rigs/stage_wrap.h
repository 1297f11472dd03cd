/*
 * One stage around another, for the rigs and tests that watch, hold back or fail a stage's
 * calls without writing the stage again: `before` runs first on every call, on the thread
 * that calls the stage, with `arg`; SP_OK hands the chunk on to the inner stage's function
 * for this backend, any other status is the call's own.
 */
#ifndef SP_TEST_STAGE_WRAP_H
#define SP_TEST_STAGE_WRAP_H

#include "streampipe.h"

typedef struct stage_wrap {
    sp_stage inner;
    sp_status (*before)(const sp_chunk *c, void *arg);
    void *arg;
} stage_wrap;

/* The sp_stage for w: inner's, with its host and CUDA functions replaced by w's (a function
 * inner lacks stays NULL) and user = w. w must outlive the pipeline. */
sp_stage stage_wrap_desc(stage_wrap *w);

#endif /* SP_TEST_STAGE_WRAP_H */
