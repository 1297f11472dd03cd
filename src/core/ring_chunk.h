/* The chunk of a run whose compressed input is decompressed inside the ring (ring_decode.c):
 * whole blocks, and, where the config left the chunk to the library, as many as a GPU's
 * batched decompressor wants (plan.h, SP_RING_DECODE_BLOCKS): the ring is made anew with
 * larger slots once the run's source is known to go through the ring, within the budget, and
 * the change is listed with its reason (sp_pipeline_tune_changes). The larger slots stay for
 * the pipeline's later runs; a short input's ring has only as many slots as it has chunks (a
 * later compressed run's re-pick gives the library's depth back; other runs keep the ring as
 * it is). Not for a chunk the config gave, nor
 * in graph mode. */
#ifndef SP_RING_CHUNK_H
#define SP_RING_CHUNK_H

#include "core/batch.h"
#include "core/tune.h"

/* b cut into chunks of `chunk` records rounded down to whole units of `unit_records` (at
 * least one unit). */
void sp_ring_chunk_set(sp_batch *b, size_t chunk, size_t unit_records);
/* For a batch whose chunks go through the ring, in units of dec->unit_records records for
 * which the decoder holds dec's bytes a slot: with a chunk the library chooses, the ring made
 * anew for sp_plan_ring_decode_chunk's chunk, in as many slots as the run has chunks where
 * the library chose the depth too (sp_tune_ring_chunk; the budget wins), and b cut into
 * chunks of it, not cut shorter for a short run (b->chunk_by_decode); a failure to make it
 * leaves the ring as it was (the pipeline's text says why). Writes the note (below). 1 when
 * b's chunk changed. */
int sp_ring_chunk_pick(sp_batch *b, const sp_tune_decoder *dec, char *note, size_t note_size);
/* Into note "" or why b's chunks hold fewer than SP_RING_DECODE_BLOCKS units of `per`
 * records: `want` the chunk wanted, `fit` what the budget held of it. */
void sp_ring_chunk_note(const sp_batch *b, size_t per, size_t want, size_t fit, char *note,
                        size_t note_size);

#endif
