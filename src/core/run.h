/* The run module's shared declarations. Who owns what:
 *   run.c         the per-chunk primitives: dependency rules, one chunk's copies and stages
 *   engine.c      the one engine: host turns over the ring's slots, runs, sources and sinks,
 *                 and the batches of streams (stream.c holds the stream object and thread)
 *   run_graph.c   graph mode (its state in the pipeline's graph_* fields)
 *   run_timing.c  per-chunk timing events (the pipeline's timing_* fields)
 *   run_serial.c  the serial baseline
 *   run_common.c  argument checks, failures, the drain and the report
 * Each file includes only this header (and pipeline.h through it): the includes form a DAG. */
#ifndef SP_RUN_H
#define SP_RUN_H

#include "core/pipeline.h"

/* Timeline engine numbering: stage-in, h2d, the stages, d2h, stage-out. GPU engine g
 * (events[] index: 0 = h2d .. M+1 = d2h) is timeline engine g + 1. */
#define SP_TL_STAGE_IN 0u
#define SP_TL_GPU(g) ((g) + 1u)
#define SP_TL_STAGE_OUT(p) ((p)->n_stages + 3u)

/* What a stream wants to hear from the engine about its batches (stream.c). */
typedef struct sp_engine_hooks {
    void *owner;
    void (*retired)(void *owner, void *batch);    /* a chunk of batch left its slot */
    void (*input_read)(void *owner, void *batch); /* batch's input is all staged */
} sp_engine_hooks;

typedef struct sp_run {
    sp_pipeline *p;
    const char *in;
    char *out;
    const sp_io *io;         /* a source and sink instead of in and out (run_io) */
    sp_run_plan plan;
    size_t base;             /* the engine's index of this batch's chunk 0: chunk i of the
                                engine is chunk i - base of the batch, in slot i mod K */
    size_t end;              /* one past the batch's last chunk (base + chunks once known) */
    size_t record_base;      /* records before this batch in its stream (first_record) */
    const sp_engine_hooks *hooks; /* streams: who hears of retired chunks; NULL in a run */
    void *batch;             /* streams: the batch, for the hooks */
    int source_done;         /* run_io: the source has ended */
    int stage_in, stage_out; /* user memory is pageable: go through pinned staging */
    int timing;              /* a report was asked for: record per-chunk times */
    int event_timing;        /* GPU operations were timed by events (run_timing.c) */
    int activity_timing;     /* ... or by the backend's activity records (run_timing.c) */
    double activity_start_s, activity_read_s; /* what starting and reading them took */
    char activity_note[200]; /* why they were asked for and not used, or are incomplete */
    double t0;               /* host clock at the first enqueue */
    double t_submitted;      /* host clock when the last chunk had been enqueued */
    double wait_s;           /* of that, host time spent waiting for slots to come free */
    size_t graph_end;        /* chunks [base, graph_end) ran as graph replays (run_graph.c) */
    int replayed;            /* a graph was launched (a stream's batch may start with stream
                                chunks, so graph_end > base does not say it) */
    int group_copies;        /* graph mode: one copy per direction for a whole group */
    char graph_note[200];    /* graph mode's line for the report's notes; "" when none */
    sp_status status;        /* the first failure */
} sp_run;

/* Checks the arguments and fills run->plan; SP_OK means the run may start. Nothing is
 * touched on failure. */
sp_status sp_run_prepare(sp_run *run, sp_pipeline *p, const void *in, size_t n_records,
                         void *out, int timing);
/* The checks of in, out and their sizes alone, with the reason in why: for a stream's submit,
 * which may not write the pipeline's error text while its engine thread runs. */
sp_status sp_run_check_buffers(const sp_pipeline *p, const void *in, size_t n_records,
                               const void *out, char *why, size_t why_size);
/* Records the first failure of the run (later ones are consequences) as "<what>: <backend
 * reason>" and returns it. */
sp_status sp_run_fail(sp_run *run, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Drains every queue and settles the run's status: a recorded failure wins over `st`. Sets
 * the pipeline's last makespan, submit and wait times; every run that started ends here. */
sp_status sp_run_finish(sp_run *run, sp_status st, sp_report *report);
/* Syncs every queue, so nothing of this run is in flight when it returns. */
sp_status sp_run_drain(sp_run *run);
/* Syncs q before memory its work uses is handed back or reused. When the sync fails, records
 * that as the run's failure ("<what>: <reason>") and waits with the backend's queue_drain (or a
 * second sync); if that fails too, q may still be running, and the context is made lost
 * (SP_ERR_DEVICE_LOST becomes the run's status). Returns the sync's status. */
sp_status sp_run_settle_queue(sp_run *run, sp_bqueue *q, const char *what);
/* Starts the timeline for a run with timing. */
sp_status sp_run_timeline_start(sp_run *run);
/* Operation (g, i): GPU engine g's work on chunk i. */
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
/* The dependency rules of pipeline.h for operation (g, i) (run.c): the run enqueues exactly
 * these waits, and timing infers starts from exactly these ends. */
void sp_run_op_deps(const sp_pipeline *p, size_t g, size_t i, sp_op_deps *deps);

/* Per-chunk timing events (run_timing.c): makes sure the pool holds a start/end pair and a
 * "start inferred" flag for every GPU engine of every chunk and records the base event; the
 * events of engine g, chunk i, and its flag; and, after the drain, every end and every start
 * that was recorded read into the timeline, with the other starts inferred from ends. */
sp_status sp_run_timing_start(sp_run *run);
sp_bevent **sp_run_timing_event(const sp_run *run, size_t g, size_t i, int end);
unsigned char *sp_run_timing_inferred(const sp_run *run, size_t g, size_t i);
sp_status sp_run_timing_collect(sp_run *run);
/* The same from the backend's activity records, when SP_TIMELINE_SOURCE=cupti chose them and
 * the backend has them (run_timing.c decides in sp_run_timing_start): the id of engine g's
 * operation on chunk i, and after the drain every span read into the timeline. Called after
 * every run whose timing began this way, failed or not. */
uint64_t sp_run_activity_id(const sp_run *run, size_t g, size_t i);
sp_status sp_run_activity_collect(sp_run *run);
/* The host's turn for chunk i (engine.c): waits until the chunk in slot i mod K may leave,
 * hands its output on (copied out of pinned staging, or to the sink), and stages chunk i's
 * input in (pageable memory, or the source). i may be past the batch, to retire slots. */
sp_status sp_run_host_turn(sp_run *run, size_t i);
/* Stream mode for chunks [from, to) of the batch, each after its host turn. */
sp_status sp_run_stream_range(sp_run *run, size_t from, size_t to);
/* Chunk i was enqueued: its slot now holds it (release: the group's event for a graph
 * replay, NULL for stream mode). */
void sp_run_occupy(sp_run *run, size_t i, sp_bevent *graph_release);
/* Enqueues chunk i's h2d, stages and d2h in stream mode (after its host turn) (run.c). */
sp_status sp_run_enqueue_chunk(sp_run *run, size_t i);
/* What stage s (1-based) sees of chunk i, in slot b (i mod K; the serial run uses slot 0). */
sp_chunk sp_run_chunk(const sp_run *run, size_t s, size_t i, size_t b);
/* Chunk i in the user's input and output arrays. */
const char *sp_run_user_in(const sp_run *run, size_t i);
char *sp_run_user_out(const sp_run *run, size_t i);
/* One copy on q, whole or in pieces of the pipeline's copy_piece_bytes. */
sp_status sp_run_enqueue_copy(sp_run *run, int to_device, void *dst, const void *src,
                              size_t bytes, sp_bqueue *q);
/* The host memory chunk i's h2d reads and its d2h writes: the user's or the slot's pinned
 * staging buffer. */
const void *sp_run_h2d_source(const sp_run *run, size_t i);
void *sp_run_d2h_target(const sp_run *run, size_t i);

/* Graph mode (run_graph.c). Whether this run replays graphs (else r->graph_note may say why
 * not; when it does, the run's per-operation timing is turned off, since replays have none)
 * and the batch's chunks themselves: groups of full chunks as replays, the rest in stream
 * mode. */
int sp_run_graph_wanted(sp_run *run);
sp_status sp_run_graph_chunks(sp_run *run);

/* The engine for streams (engine.c). One batch of a stream. */
typedef struct sp_engine_batch {
    const void *in;
    void *out;
    size_t n_records;
    size_t base, record_base;
    sp_engine_hooks hooks;
    void *batch;
} sp_engine_batch;
/* Every slot free and the failure state clear: a stream starts. */
void sp_engine_reset(sp_pipeline *p);
/* Feeds the batch's chunks into the ring (retiring older chunks as their slots come round);
 * says how many chunks it made, whether either side went through staging and whether any
 * chunk was replayed from a graph. */
sp_status sp_engine_run_batch(sp_pipeline *p, const sp_engine_batch *job, size_t *chunks,
                              int *staged_in, int *staged_out, int *replayed);
/* Slots holding a chunk; and the oldest of them retired (waited for, its output handed on). */
unsigned sp_engine_busy_slots(const sp_pipeline *p);
sp_status sp_engine_retire_oldest(sp_pipeline *p, const sp_engine_hooks *hooks);
/* What failed, as sp_engine_recover found it once every queue had drained: a stage
 * failure names its chunk (the earliest that failed); any other trusts no chunk in flight. */
typedef struct sp_engine_failure {
    int recorded;            /* the pipeline's failure state was set (else: `status` only) */
    int stage_chunk;         /* a stage failed at `chunk` */
    size_t chunk;
    sp_status status;
    char text[SP_ERROR_TEXT]; /* the pipeline's error text */
} sp_engine_failure;
/* After a failure (st: the status that showed it): drains every queue, says what failed,
 * hands on the output of the chunks before the failing one, drops the rest, frees every
 * slot and clears the failure so that the ring runs again. */
void sp_engine_recover(sp_pipeline *p, const sp_engine_hooks *hooks, sp_status st,
                       sp_engine_failure *failure);
/* The report's figures that are the pipeline's (depth, chunk, threads, pinned bytes). */
void sp_engine_fill_report(const sp_pipeline *p, sp_report *report);
/* What batches fed through the ring add up to (streams, sp_pipeline_run_feed), and the report
 * they make: those counts, the pipeline's figures and the makespan; no per-operation timings,
 * so no engines. The caller writes the notes. */
typedef struct sp_batch_totals {
    size_t records, chunks, batches;
    int staged_in, staged_out, replayed;
} sp_batch_totals;
void sp_engine_batches_report(const sp_pipeline *p, const sp_batch_totals *totals,
                              double makespan_s, sp_report *report);

/* Fills the report from the run and the times sp_run_finish kept in the pipeline. */
void sp_run_report(const sp_run *run, sp_report *report);

/* Profiler ranges around what the run enqueues ("h2d c12", "<stage> c12", "stage c12"),
 * when the backend has trace_push; without it nothing is formatted. */
void sp_run_trace_push(const sp_run *run, const char *what, size_t chunk);
void sp_run_trace_pop(const sp_run *run);

/* Chunk geometry: chunk i's first record within its batch (a chunk is full but for the
 * batch's last), and its records. A source's chunk holds what was read into its slot. */
static inline size_t sp_chunk_first(const sp_run *r, size_t i)
{
    return (i - r->base) * r->plan.chunk_records;
}
static inline size_t sp_chunk_records(const sp_run *r, size_t i)
{
    if (r->io)
        return r->p->slots[i % r->p->depth].records;
    size_t first = sp_chunk_first(r, i);
    size_t left = r->plan.n_records - first;
    return left < r->plan.chunk_records ? left : r->plan.chunk_records;
}

#endif
