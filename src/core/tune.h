/* The engine's side of tuning (tuner.h is the pure decision): the pipeline's budget and its
 * starting chunk and depth at create, and the list of changes. */
#ifndef SP_TUNE_H
#define SP_TUNE_H

#include "core/pipeline_state.h"

/* At create, after the shape is copied: the budget read from the config, and chunk_capacity
 * and depth cut to it where the config left them at 0. SP_ERR_INVALID_ARGUMENT (the context's
 * text says why) when nothing fits: not one record at depth 1, or the user's own settings. */
sp_status sp_tune_setup(sp_pipeline *p, const sp_pipeline_config *cfg);
void sp_tune_release(sp_pipeline *p);
/* The depth a stream opening on p should have: SP_STREAM_DEPTH, or as deep as the budget lets
 * it, when the config left the depth to the library and the pipeline is not in graph mode;
 * else p's own. sp_tune_deepened records the change (from `from` to p->depth) once made. */
unsigned sp_tune_stream_depth(const sp_pipeline *p);
void sp_tune_deepened(sp_pipeline *p, unsigned from);
/* For a compressed input decoded in the ring (ring_decode.c), whose chunk the config left to
 * the library: the largest chunk of whole units of `unit_records` records, at most `want`,
 * that the budget holds at p's depth, with the decoder's buffers of `unit_held_bytes` a unit
 * per slot (pinned, and as much device memory) and, while the ring is made anew, the old ring
 * beside the new one; p's chunk when none larger fits; `want` without a budget.
 * sp_tune_rechunked records the change (from `from` to p's chunk) once the ring is made. */
size_t sp_tune_ring_chunk(const sp_pipeline *p, size_t want, size_t unit_records,
                          size_t unit_held_bytes);
void sp_tune_rechunked(sp_pipeline *p, size_t from, const char *reason);
/* The tuner's shape of p's slots: every buffer a slot holds (tuner.h). */
void sp_tune_shape_of(const sp_pipeline *p, sp_tune_shape *shape);
/* A change was applied: kept in the list (the first, then the most recent). */
void sp_tune_record(sp_pipeline *p, double now, sp_tune_settings from, sp_tune_settings to,
                    const char *reason);
/* The count and the last reason, for the stats. */
void sp_tune_last(const sp_pipeline *p, uint64_t *total, char *reason, size_t reason_size);

#endif
