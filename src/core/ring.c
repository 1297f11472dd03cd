/* The slots, what they hold, and the dependency rules of ring.h. */
#include <string.h>

#include "core/ring.h"

void sp_ring_reset(sp_pipeline *p) { memset(p->slots, 0, sizeof p->slots); }

void sp_ring_occupy(const sp_batch *b, size_t i, sp_bevent *graph_release)
{
    sp_pipeline *p = b->p;
    sp_slot *slot = &p->slots[i % p->depth];
    slot->busy = 1;
    slot->chunk = i;
    slot->graph_release = graph_release;
    slot->out = b->stage_out && !sp_batch_has_sink(b) ? sp_ring_user_out(b, i) : NULL;
    slot->sink = sp_batch_has_sink(b);
    slot->first_record = b->record_base + sp_chunk_first(b, i);
    slot->records = sp_chunk_records(b, i);
    slot->owner = b->owner;
    slot->input_staged = b->stage_in;
}

void sp_ring_vacate(sp_slot *slot) { slot->busy = 0; }

void sp_ring_set_records(sp_pipeline *p, size_t i, size_t records)
{
    p->slots[i % p->depth].records = records;
}

unsigned sp_ring_busy(const sp_pipeline *p)
{
    unsigned n = 0;
    for (unsigned b = 0; b < p->depth; b++)
        n += p->slots[b].busy != 0;
    return n;
}

int sp_ring_oldest(const sp_pipeline *p)
{
    int best = -1;
    for (unsigned b = 0; b < p->depth; b++)
        if (p->slots[b].busy && (best < 0 || p->slots[b].chunk < p->slots[best].chunk))
            best = (int)b;
    return best;
}

/* A chunk whose output goes nowhere from staging and that no caller waits on needs only its
 * h2d to be done before pinned_in may be overwritten; every other waits for its d2h, which
 * also keeps at most K chunks queued, so that a failure stops a run within K chunks. */
sp_bevent *sp_ring_release_event(const sp_pipeline *p, const sp_slot *slot, int next_stages_in)
{
    size_t b = slot->chunk % p->depth;
    if (slot->graph_release)
        return slot->graph_release;
    if (next_stages_in && !slot->out && !slot->sink && !slot->owner)
        return p->events[0].done[b];
    return p->events[p->n_stages + 1].done[b];
}

void sp_ring_op_deps(const sp_pipeline *p, size_t g, size_t i, sp_op_deps *d)
{
    size_t M = p->n_stages;
    /* a stage on several queues runs chunk i on the queue of chunk i - streams */
    size_t apart = g >= 1 && g <= M ? p->stage_streams[g - 1] : 1;
    d->has_previous = i >= apart;
    d->previous = (sp_op){g, d->has_previous ? i - apart : 0};
    d->n_waits = 0;
    /* RAW: the writer of the boundary it reads (h2d reads host memory, no event) */
    if (g > 0)
        d->waits[d->n_waits++] = (sp_op){g - 1, i};
    /* WAR: the reader of the boundary it writes, done with chunk i-K (stage 1, or d2h when
     * there is no stage, reads boundary 0); d2h writes host memory, settled by the host */
    if (g <= M && i >= p->depth)
        d->waits[d->n_waits++] = (sp_op){g + 1, i - p->depth};
}

/* Timed runs wait on it too, not on the chunk's end timing event, because CUDA documents
 * waits on events without timing as the cheapest; the second record that costs a timed run
 * is not measurable on the H200 (bench/PERF.md, third session). */
sp_bevent *sp_ring_finished(const sp_pipeline *p, size_t g, size_t j)
{
    return p->events[g].done[j % p->depth];
}

const char *sp_ring_user_in(const sp_batch *b, size_t i)
{
    return b->in + sp_chunk_first(b, i) * b->p->record_bytes[0];
}

char *sp_ring_user_out(const sp_batch *b, size_t i)
{
    return b->out + sp_chunk_first(b, i) * b->p->record_bytes[b->p->n_stages];
}

const void *sp_ring_h2d_source(const sp_batch *b, size_t i)
{
    return b->stage_in ? sp_staging_in(b->p, i) : sp_ring_user_in(b, i);
}

void *sp_ring_d2h_target(const sp_batch *b, size_t i)
{
    return b->stage_out ? sp_staging_out(b->p, i) : sp_ring_user_out(b, i);
}

sp_chunk sp_ring_stage_chunk(const sp_batch *b, size_t s, size_t i, size_t slot)
{
    const sp_pipeline *p = b->p;
    char *scratch = p->scratch[s - 1];
    return (sp_chunk){
        .index = i,
        .first_record = b->record_base + sp_chunk_first(b, i),
        .records = sp_chunk_records(b, i),
        .in = sp_device_slot(p, s - 1, slot),
        .out = sp_device_slot(p, s, slot),
        .stream = NULL,
        .scratch = scratch ? scratch + slot * p->scratch_stride[s - 1] : NULL,
    };
}
