/* The chunk of a run decompressed inside the ring (ring_chunk.h). */
#include <stdio.h>

#include "core/pipeline.h"
#include "core/ring_chunk.h"
#include "core/tune.h"

void sp_ring_chunk_set(sp_batch *b, size_t chunk, size_t unit_records)
{
    size_t c = chunk < unit_records ? unit_records : chunk - chunk % unit_records;
    b->plan.chunk_records = c;
    b->plan.chunks = (b->plan.n_records + c - 1) / c;
    b->end = b->base + b->plan.chunks;
}

/* Why chunks of the ring's `chunk` hold fewer units than wanted (`want`, `fit`: the budget's
 * share of it), for the note. */
static const char *short_why(const sp_pipeline *p, size_t want, size_t fit, size_t chunk,
                             size_t per)
{
    if (!p->chunk_chosen)
        return "chunk_records given";
    if (p->graph_mode != SP_GRAPH_OFF)
        return "graph mode";
    if (fit < want)
        return "the memory budget";
    if (chunk < fit)
        return "the ring did not grow (last error)";
    return want / per < SP_RING_DECODE_BLOCKS ? "512 MiB at the widest boundary" : "";
}

/* The ring made anew as `to` (larger chunks, or slots as many as the run's chunks), the
 * change listed with its reason. */
static void grow(sp_pipeline *p, sp_tune_settings to, size_t want, size_t per, size_t n_records)
{
    sp_tune_settings from = {p->chunk_capacity, p->depth};
    if ((to.chunk == from.chunk && to.depth == from.depth) ||
        sp_pipeline_rechunk(p, to.chunk, to.depth) != SP_OK ||
        (p->chunk_capacity == from.chunk && p->depth == from.depth))
        return;
    char why[200], slots[64] = "";
    if (to.depth != from.depth)
        snprintf(slots, sizeof slots, "; %u slots, one a chunk of the run", to.depth);
    snprintf(why, sizeof why, "compressed input decompressed in the ring: %zu blocks a chunk "
             "(batched GPU decompression wants %u)%s%s", to.chunk / per, SP_RING_DECODE_BLOCKS,
             to.chunk < want ? ", all the budget holds"
             : to.chunk >= n_records ? ", the whole input" : "", slots);
    sp_tune_rechunked(p, from, why);
}

int sp_ring_chunk_pick(sp_batch *b, const sp_tune_decoder *dec, char *note, size_t note_size)
{
    sp_pipeline *p = b->p;
    size_t per = dec->unit_records, n = b->plan.n_records, was = b->plan.chunk_records;
    size_t want = sp_plan_ring_decode_chunk(per, n, p->widest_record), fit = want;
    note[0] = '\0';
    if (p->chunk_chosen && p->graph_mode == SP_GRAPH_OFF) {
        sp_tune_settings to = sp_tune_ring_chunk(p, want, n, dec);
        fit = to.chunk < want ? to.chunk : want;
        grow(p, to, want, per, n);
        sp_ring_chunk_set(b, want < p->chunk_capacity ? want : p->chunk_capacity, per);
        b->chunk_by_decode = 1;
    }
    sp_ring_chunk_note(b, per, want, fit, note, note_size);
    return b->plan.chunk_records != was;
}

void sp_ring_chunk_note(const sp_batch *b, size_t per, size_t want, size_t fit, char *note,
                        size_t note_size)
{
    size_t chunk = b->plan.chunk_records;
    note[0] = '\0';
    if (chunk / per < SP_RING_DECODE_BLOCKS && chunk < b->plan.n_records)
        snprintf(note, note_size, "; %zu blocks a chunk, not %u: %s", chunk / per,
                 SP_RING_DECODE_BLOCKS, short_why(b->p, want, fit, chunk, per));
}
