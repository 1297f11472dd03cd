/* The chunk of a run whose compressed input is decompressed inside the ring (ring_decode.c):
 * whole blocks, and, where the config left the chunk to the library, as many as a GPU's
 * batched decompressor wants (plan.h, SP_RING_DECODE_BLOCKS): the ring is made anew with
 * larger slots once the run's source is known to go through the ring, within the budget, and
 * the change is listed with its reason (sp_pipeline_tune_changes). The larger slots stay for
 * the pipeline's later runs. Not for a chunk the config gave, nor in graph mode. */
#ifndef SP_RING_CHUNK_H
#define SP_RING_CHUNK_H

#include "core/batch.h"

/* b cut into chunks of `chunk` records rounded down to whole units of `unit_records` (at
 * least one unit). */
void sp_ring_chunk_set(sp_batch *b, size_t chunk, size_t unit_records);
/* For a batch whose chunks go through the ring, in units of `unit_records` records for which
 * the decoder holds `unit_held_bytes` a slot in pinned and in device memory: with a chunk
 * the library chooses, the ring grown to sp_plan_ring_decode_chunk's (the budget wins) and b
 * cut into chunks of it, not cut shorter for a short run (b->chunk_by_decode); a failure to
 * grow leaves the ring as it was (the pipeline's text says why). Writes into note "" or why
 * the chunks hold fewer than SP_RING_DECODE_BLOCKS units. 1 when b's chunk changed. */
int sp_ring_chunk_pick(sp_batch *b, size_t unit_records, size_t unit_held_bytes, char *note,
                       size_t note_size);

#endif
