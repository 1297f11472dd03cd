/* Calling a stage's function for one chunk, through the backend's launch. */
#ifndef SP_STAGE_CALL_H
#define SP_STAGE_CALL_H

#include "core/pipeline_fields.h"

/* Marks the calling thread as capturing p's graph (NULL: no longer). */
void sp_pipeline_set_capturing(const struct sp_pipeline *p);

/* The function every stage launch runs: calls the user's function for this backend unless
 * the work has already failed at or before the chunk, and records a failure with the stage
 * name and chunk (failure.h, rule 3). */
sp_status sp_stage_trampoline(const sp_chunk *chunk, void *arg);

#endif
