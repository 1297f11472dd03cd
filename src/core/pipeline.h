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
/* The same for larger chunks of `chunk` records, same depth, for a run whose compressed
 * input is decompressed in the ring (ring_decode.c): SP_OK with nothing done when `chunk` is
 * not larger, or in graph mode (its graphs hold the ring's buffers). */
sp_status sp_pipeline_rechunk(sp_pipeline *p, size_t chunk);

#endif
