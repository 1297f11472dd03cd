/* Direct submission of one chunk (submit_direct.c). */
#ifndef SP_SUBMIT_DIRECT_H
#define SP_SUBMIT_DIRECT_H

#include "core/batch.h"

/* Enqueues chunk i's h2d, stages and d2h behind their waits, after its host turn. A failure
 * is recorded (failure.h) and returned. */
sp_status sp_submit_chunk(sp_batch *b, size_t i);

#endif
