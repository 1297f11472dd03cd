/* The host's copies of the scheduler's turns (staging.c). */
#ifndef SP_STAGING_H
#define SP_STAGING_H

#include "core/ring.h"

/* The host's part of chunk i's turn, once `leaving` (the slot's chunk, or NULL) may leave:
 * its output handed on and, when `takes`, chunk i's input staged; *got: the records a source
 * gave for chunk i (a sequential one may end early: b->source_done). A source's or sink's
 * failure is chunk i's (failure.h) and returns SP_ERR_STAGE_FAILED. */
sp_status sp_staging_turn(sp_batch *b, size_t i, const sp_slot *leaving, int takes,
                          size_t *got);
/* Records chunk i of a source should hold: a full chunk, or what is left of a known length. */
size_t sp_staging_wanted(const sp_batch *b, size_t i);

#endif
