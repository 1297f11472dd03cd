/* Making and freeing a pipeline (pipeline.c): every queue, event and buffer is made once, at
 * create, and reused by every run. The fields are pipeline_fields.h's; what may be done with
 * them after create, pipeline_state.h's and the owners' headers. */
#ifndef SP_PIPELINE_H
#define SP_PIPELINE_H

#include "core/pipeline_state.h"

/* A deeper ring of `depth` slots, same chunk, for a stream about to open (the caller holds the
 * pipeline, which is idle): the buffers are made anew (the old ones freed once the new exist)
 * and the slots' events added. SP_OK with nothing done when `depth` is not deeper, or in graph
 * mode (its depth follows its groups); on failure the ring stays as it was and the pipeline's
 * text says why. */
sp_status sp_pipeline_deepen(sp_pipeline *p, unsigned depth);
/* The same for chunks of `chunk` records (not fewer than now) in `depth` slots (fewer, or
 * more, than now), for a run whose compressed input is decompressed in the ring
 * (ring_decode.c): SP_OK with nothing done when the ring is that already, for a smaller
 * chunk, or in graph mode (its graphs hold the ring's buffers). The new ring has no pinned
 * input staging: the decompression stages its compressed blocks in buffers of its own, and
 * the input's slots at these chunks (1.3 GB pinned for a 4 GiB file on the H100, pinned
 * by every `streampipe run` of one) would go unused; a batch that stages input makes them
 * (sp_pipeline_stage_input). */
sp_status sp_pipeline_rechunk(sp_pipeline *p, size_t chunk, unsigned depth);
/* The ring's pinned input staging made, where a rechunk left it out: called (claimed and
 * idle) by every batch that stages its input through the pinned slots. */
sp_status sp_pipeline_stage_input(sp_pipeline *p);
/* Bytes the ring's buffers hold: pinned, and device (stage scratch included). */
void sp_pipeline_ring_bytes(const sp_pipeline *p, size_t *pinned, size_t *device);
/* Bytes a run holds beside the ring while it goes (ring_decode.c's buffers; 0, 0 once freed):
 * counted in what the pipeline holds (sp_stats, the report), the one count of it. */
void sp_pipeline_hold_run(sp_pipeline *p, size_t pinned, size_t device);

#endif
