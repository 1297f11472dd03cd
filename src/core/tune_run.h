/* The tuner while a run goes: a batch whose chunk size the config left to the library has it
 * re-picked at chunk boundaries from what its chunks cost, within the slots made at create
 * (tune.c cut them to the budget; they are not re-made, so memory never grows), each change
 * listed with its reason (sp_tune_record). Called by the scheduler (sched.c) and, for the
 * watched chunks' events, by the direct submitter; calls only tune.c, tuner.c and the
 * backend.
 *
 * What a chunk cost: each GPU engine's seconds from a start to an end timing event around its
 * operation (every SP_TUNE_WATCH_EVERY-th chunk), read only once complete at a later host
 * turn (event_query, never a wait), and the host's turn for it (staging and enqueueing,
 * waits for slots aside) on the host clock.
 *
 * Not tuned, keeping the create-time pick: a pipeline without a budget (max_pinned_bytes,
 * max_device_bytes: 0). Its pick is the planner's, within 1% of the best fixed settings
 * tried on the bulk workloads, and a re-pick can only make chunks smaller than it (the
 * slots are not re-made), so watching cost more than it could win: one chunk in 16 watched
 * left the H200's seed workload 1.4% slower (bench/PERF.md, eleventh session). Nor a batch
 * timed for a report (its timeline is made
 * for the chunks planned at its start), one replayed as graphs (they are captured for one
 * chunk size), a compressed input decompressed in the ring (its chunks are whole blocks),
 * and any batch on a backend without event_query or event_elapsed. A stream's batches are
 * tuned as a run's (stream.c takes each batch's count of chunks once it is fed). */
#ifndef SP_TUNE_RUN_H
#define SP_TUNE_RUN_H

#include "core/batch.h"

/* One chunk in this many is watched: its events cost the GPU about 2 us per operation, and
 * one chunk in 4 (then 16) left the seed workload 1.8% (1.4%) slower than before the tuner
 * ran at all (bench/PERF.md, eleventh session). */
#define SP_TUNE_WATCH_EVERY 64

/* Whether b is tuned (b->tuned), decided once its submission is chosen; a tuned batch
 * starts at the tuner's chunk when its plan did not cut it shorter. */
void sp_tune_run_begin(sp_batch *b);
/* Before chunk i (the next to feed) of a tuned batch: the tuner asked when a chunk was
 * observed since the last time, and a new size applied from chunk i on. */
void sp_tune_run_boundary(sp_batch *b, size_t i);
/* Chunk i is about to be enqueued / was enqueued (its host turn took host_s). The callers
 * ask these four only of a tuned batch (b->tuned; each returns at once for another), so that
 * an untuned chunk's path does not enter this file. */
void sp_tune_run_arm(sp_batch *b, size_t i);
void sp_tune_run_submitted(sp_batch *b, size_t i, double host_s);
/* The watch event of GPU engine g around chunk i's operation (end: after it); NULL when
 * chunk i is not watched. */
sp_bevent *sp_tune_run_event(const sp_batch *b, size_t g, size_t i, int end);
/* Chunk `chunk` left its slot: watched chunks whose events are complete are observed. Asked
 * on every chunk's path, so the question whether anything is watched at all (no batch of the
 * pipeline was tuned yet: no watch entries) is read here, by include (issue 22). */
void sp_tune_run_observe(sp_pipeline *p, size_t chunk);
static inline void sp_tune_run_retired(sp_pipeline *p, size_t chunk)
{
    if (p->tune.watch.entries)
        sp_tune_run_observe(p, chunk);
}
/* Every slot free (a run starts): nothing pending. Destroy: the events freed. */
void sp_tune_run_reset(sp_pipeline *p);
void sp_tune_run_release(sp_pipeline *p);

#endif
