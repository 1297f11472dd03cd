/* The scheduler: THE loop over the ring. Its callers (runs.c, stream.c) hand it batches; it
 * walks their chunks in order, and for each does the host's turn (wait for the slot's
 * previous chunk to leave, hand that one's output on, stage this one's input in: staging.c)
 * and then picks how to enqueue it: directly (submit_direct.c) or as part of a graph bundle
 * (submit_graph.c). It alone calls the submitters, and nothing calls it from below: what left
 * the ring is handed back to the caller in an sp_done_list (as libuv returns completions
 * from its pending queue), never pushed up through hooks.
 *
 * A run is one batch, after which every slot is retired. A stream feeds batch after batch
 * through the same turns without retiring between them. Each slot says what its chunk still
 * needs (ring_state.h), so a turn never has to know which batch the chunk before it came
 * from. The GPU thus holds up to K-1 chunks while the host copies, and no buffer is written
 * before its last reader is done. */
#ifndef SP_SCHED_H
#define SP_SCHED_H

#include "core/batch.h"

/* What a call handed back: a chunk of the caller's batch `owner` left the ring, or the
 * batch's input is all staged (its memory may be reused). Only batches with an owner are
 * listed. One call lists at most a bundle's chunks and one input, or K retired chunks. */
typedef enum sp_done_kind { SP_DONE_CHUNK, SP_DONE_INPUT } sp_done_kind;
typedef struct sp_done {
    void *owner;
    sp_done_kind kind;
} sp_done;
#define SP_DONE_MAX (2 * SP_MAX_DEPTH + 2)
typedef struct sp_done_list {
    size_t n;
    sp_done item[SP_DONE_MAX];
} sp_done_list;

/* A run: batch b (made by sp_batch_prepare) from an empty ring to every slot retired and
 * every queue drained; the report when asked for and the run succeeded. */
sp_status sp_sched_run(sp_batch *b, sp_report *report);

/* Drains every queue and settles the batch's status: a recorded failure wins over `st`;
 * sets the pipeline's last makespan, submit and wait times, reads a timed batch's events and
 * fills the report. Every run that started ends here (sp_sched_run, the serial run). */
sp_status sp_sched_finish(sp_batch *b, sp_status st, sp_report *report);

/* Batches fed behind each other (streams, sp_pipeline_run_feed). Reset: every slot free, no
 * failure. Start: b numbered from ring chunk `base` and record `record_base`, cut into the
 * pipeline's chunks (a short batch is not cut finer: the batches around it keep the ring
 * busy); nothing touched on failure. */
void sp_sched_reset(sp_pipeline *p);
sp_status sp_sched_start(sp_batch *b, sp_pipeline *p, const void *in, size_t n_records,
                         void *out, size_t base, size_t record_base, void *owner);
/* Feeds b's chunks until they are all in the ring (*fed = 1) or something left the ring
 * (listed in `done`, cleared at entry): call again after handling it. A failure is
 * returned (failure.h has it); then sp_sched_recover. Once *b->stop is set (a cancel), no
 * more chunks are fed: the batch ends at the next chunk boundary (b->stopped; b->end is then
 * one past the last chunk fed). */
sp_status sp_sched_feed(sp_batch *b, sp_done_list *done, int *fed);
/* The stream-ordered hand-off of the batch just fed: e recorded on the d2h queue after its
 * last chunk's copy (the queue runs in order), and the caller's native queue made to wait for
 * it on the device (backend.h, external_wait). */
sp_status sp_sched_hand_off(sp_pipeline *p, sp_bevent *e, void *native_queue);
/* Slots holding a chunk; the oldest one retired (waited for, its output handed on). */
unsigned sp_sched_busy(const sp_pipeline *p);
sp_status sp_sched_retire_oldest(sp_pipeline *p, sp_done_list *done);

/* What failed, as sp_sched_recover found it once every queue had drained: a chunk's failure
 * names its chunk (the earliest that failed); any other trusts no chunk in flight. */
typedef struct sp_sched_failure {
    int recorded;            /* the pipeline's failure record was set (else: `status` only) */
    int chunk_failed;        /* a stage, source or sink failed at `chunk` */
    size_t chunk;
    sp_status status;
    uint64_t cause;          /* the kept failure's sp_chunk_fail_cause, 0: none */
    char text[SP_ERROR_TEXT];
} sp_sched_failure;
/* After a failure (st: the status that showed it): drains every queue, says what failed,
 * hands on the output of the chunks before the failing one (listed in `done`, cleared at
 * entry), drops the rest, frees every slot and clears the failure so that the ring runs
 * again. */
void sp_sched_recover(sp_pipeline *p, sp_status st, sp_sched_failure *failure,
                      sp_done_list *done);

#endif
