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
/* Chunk i of batch b was enqueued: its slot holds it (release: its graph bundle's event, or
 * NULL when it was submitted directly). */
void sp_ring_occupy(const sp_batch *b, size_t i, sp_bevent *graph_release);
/* The slot's chunk has left; a source's chunk i holds `records` (known once it is read). */
void sp_ring_vacate(sp_slot *slot);
void sp_ring_set_records(sp_pipeline *p, size_t i, size_t records);
/* Slots holding a chunk; the slot of the oldest of them, or -1. */
unsigned sp_ring_busy(const sp_pipeline *p);
int sp_ring_oldest(const sp_pipeline *p);
/* What the host waits for before the chunk in `slot` may leave, when the next chunk will (or
 * will not) stage its input into the slot. */
sp_bevent *sp_ring_release_event(const sp_pipeline *p, const sp_slot *slot, int next_stages_in);

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
void sp_ring_op_deps(const sp_pipeline *p, size_t g, size_t i, sp_op_deps *deps);
/* The event that says GPU engine g has finished chunk j (its slot's done event, which at the
 * time of the waits holds chunk j's record). */
sp_bevent *sp_ring_finished(const sp_pipeline *p, size_t g, size_t j);

/* Chunk i of batch b in the user's arrays; the host memory its h2d reads and its d2h writes
 * (the user's, or the slot's pinned staging buffer); what stage s (1-based) sees of it in
 * slot `slot` (i mod K; the serial run uses slot 0). */
const char *sp_ring_user_in(const sp_batch *b, size_t i);
char *sp_ring_user_out(const sp_batch *b, size_t i);
const void *sp_ring_h2d_source(const sp_batch *b, size_t i);
void *sp_ring_d2h_target(const sp_batch *b, size_t i);
sp_chunk sp_ring_stage_chunk(const sp_batch *b, size_t s, size_t i, size_t slot);

#endif
