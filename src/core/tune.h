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
/* The buffers a decoder of a compressed input (ring_decode.c) holds per slot beside the ring,
 * per unit of `unit_records` records of a chunk (one spare unit besides): bytes of pinned and
 * of device memory, its device scratch among them. */
typedef struct sp_tune_decoder {
    size_t unit_records, unit_pinned, unit_device;
} sp_tune_decoder;
/* For a compressed input of `n_records` decoded in the ring, whose chunk the config left to
 * the library: the ring to make for chunks of `want` records (whole units). Its slots are as
 * many as the run has chunks, at most the depth the library picked (never below 1), where the
 * config left the depth too, else p's depth: a short input does not hold a ring of slots it
 * never fills. Within the budget, with the decoder's buffers and, while the ring is made
 * anew, the old ring beside the new: else the largest chunk of whole units above p's that
 * fits at p's depth or fewer slots, else p's own ring (nothing to make). The chunk is never
 * below p's. sp_tune_rechunked records the change (from `from`) once the ring is made. */
sp_tune_settings sp_tune_ring_chunk(const sp_pipeline *p, size_t want, size_t n_records,
                                    const sp_tune_decoder *dec);
void sp_tune_rechunked(sp_pipeline *p, sp_tune_settings from, const char *reason);
/* The tuner's shape of p's slots: every buffer a slot holds (tuner.h). */
void sp_tune_shape_of(const sp_pipeline *p, sp_tune_shape *shape);
/* A change was applied: kept in the list (the first, then the most recent). */
void sp_tune_record(sp_pipeline *p, double now, sp_tune_settings from, sp_tune_settings to,
                    const char *reason);
/* The count and the last reason, for the stats. */
void sp_tune_last(const sp_pipeline *p, uint64_t *total, char *reason, size_t reason_size);

#endif
