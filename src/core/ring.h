/* The ring: K slots, chunk i in slot i mod K, and the rules that make reusing them safe.
 *
 * Dependencies, for chunk i in slot b (the waits submit_direct.c enqueues, and timing.c
 * infers starts from, are exactly sp_ring_op_deps'):
 *   RAW  stage s waits for the writer of boundary s-1 (h2d or stage s-1) of chunk i;
 *        d2h waits for the writer of boundary M.
 *   WAR  the writer of boundary s waits for the reader of boundary s (stage s+1, or d2h for
 *        boundary M) to finish chunk i-K.
 *   host the host writes pinned_in[b] only after h2d(i-K) completed, and reads pinned_out[b]
 *        only after d2h(i) completed; d2h(i) is enqueued only after the host has copied
 *        chunk i-K out of pinned_out[b] (both happen in the host's turn for chunk i: sched.c,
 *        which waits for sp_ring_release_event). */
#ifndef SP_RING_H
#define SP_RING_H

#include "core/batch.h"

/* Every slot free: a run or a stream starts. */
void sp_ring_reset(sp_pipeline *p);
/* Slots holding a chunk; the slot of the oldest of them, or -1 (once per run, and in
 * recovery: not a chunk's path). */
unsigned sp_ring_busy(const sp_pipeline *p);
int sp_ring_oldest(const sp_pipeline *p);

/* What follows is the ring's per-chunk bookkeeping, on every chunk's path: static inline, so
 * that it is read here, by include, rather than a file entered per chunk (issue 22; the
 * check is tests/core/test_chunk_path.c). Its writes to the slots are still the ring's, made
 * nowhere else. */

/* Chunk i of batch b in the user's arrays. */
static inline const char *sp_ring_user_in(const sp_batch *b, size_t i)
{
    return b->in + sp_chunk_first(b, i) * b->p->record_bytes[0];
}
static inline char *sp_ring_user_out(const sp_batch *b, size_t i)
{
    return b->out + sp_chunk_first(b, i) * b->p->record_bytes[b->p->n_stages];
}

/* Chunk i of batch b was enqueued: its slot holds it (release: its graph bundle's event, or
 * NULL when it was submitted directly). */
static inline void sp_ring_occupy(const sp_batch *b, size_t i, sp_bevent *graph_release)
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

/* The slot's chunk has left; a source's chunk i holds `records` (known once it is read). */
static inline void sp_ring_vacate(sp_slot *slot) { slot->busy = 0; }
static inline void sp_ring_set_records(sp_pipeline *p, size_t i, size_t records)
{
    p->slots[i % p->depth].records = records;
}

/* What the host waits for before the chunk in `slot` may leave, when the next chunk will (or
 * will not) stage its input into the slot. A chunk whose output goes nowhere from staging
 * and that no caller waits on needs only its h2d to be done before pinned_in may be
 * overwritten; every other waits for its d2h, which also keeps at most K chunks queued, so
 * that a failure stops a run within K chunks. */
static inline sp_bevent *sp_ring_release_event(const sp_pipeline *p, const sp_slot *slot,
                                               int next_stages_in)
{
    size_t b = slot->chunk % p->depth;
    if (slot->graph_release)
        return slot->graph_release;
    if (next_stages_in && !slot->out && !slot->sink && !slot->owner)
        return p->events[0].done[b];
    return p->events[p->n_stages + 1].done[b];
}

/* Operation (g, i): GPU engine g's work on chunk i (g: 0 = h2d, 1..M = stages, M+1 = d2h). */
typedef struct sp_op {
    size_t g, i;
} sp_op;
/* What an operation needs before its queue can start it, besides being enqueued: the
 * previous operation on its queue, and the operations whose ends it waits for (RAW, WAR). */
typedef struct sp_op_deps {
    int has_previous; /* 0 for the first operation on its queue */
    sp_op previous;
    size_t n_waits;
    sp_op waits[2];
} sp_op_deps;
static inline void sp_ring_op_deps(const sp_pipeline *p, size_t g, size_t i, sp_op_deps *d)
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

/* The event that says GPU engine g has finished chunk j (its slot's done event, which at the
 * time of the waits holds chunk j's record). Timed runs wait on it too, not on the chunk's
 * end timing event, because CUDA documents waits on events without timing as the cheapest;
 * the second record that costs a timed run is not measurable on the H200 (bench/PERF.md,
 * third session). */
static inline sp_bevent *sp_ring_finished(const sp_pipeline *p, size_t g, size_t j)
{
    return p->events[g].done[j % p->depth];
}

/* The host memory chunk i's h2d reads and its d2h writes (the user's, or the slot's pinned
 * staging buffer); what stage s (1-based) sees of it in slot `slot` (i mod K; the serial run
 * uses slot 0). */
static inline const void *sp_ring_h2d_source(const sp_batch *b, size_t i)
{
    return b->stage_in ? sp_staging_in(b->p, i) : sp_ring_user_in(b, i);
}
static inline void *sp_ring_d2h_target(const sp_batch *b, size_t i)
{
    return b->stage_out ? sp_staging_out(b->p, i) : sp_ring_user_out(b, i);
}
static inline sp_chunk sp_ring_stage_chunk(const sp_batch *b, size_t s, size_t i, size_t slot)
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

#endif
