/* The pipeline: queues, events and the K-slot buffer ring, plus the per-run failure state.
 *
 * Buffers. Boundary 0 is the device input; boundary s (1..M) is stage s's device output. Slot
 * b = chunk mod K owns one buffer per boundary and one pinned staging buffer each way.
 *
 * Dependencies, for chunk i in slot b (enforced in run.c):
 *   RAW  stage s waits for the writer of boundary s-1 (h2d or stage s-1) of chunk i;
 *        d2h waits for the writer of boundary M.
 *   WAR  the writer of boundary s waits for the reader of boundary s (stage s+1, or d2h for
 *        boundary M) to finish chunk i-K.
 *   host the host writes pinned_in[b] only after h2d(i-K) completed, and reads pinned_out[b]
 *        only after d2h(i) completed; d2h(i) is enqueued only after the host has copied
 *        chunk i-K out of pinned_out[b] (both happen in the host's turn for chunk i).
 */
#ifndef SP_PIPELINE_H
#define SP_PIPELINE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "core/context.h"
#include "core/plan.h"
#include "core/staging_pool.h"
#include "core/timeline.h"

/* Passed to the stage trampoline: which pipeline, which stage. */
typedef struct sp_stage_call {
    struct sp_pipeline *pipeline;
    size_t index;
} sp_stage_call;

/* What the ring remembers of the chunk in one slot until it leaves (engine.c): what to wait
 * for, and where its output goes from pinned staging. Kept across the batches of a stream. */
typedef struct sp_slot {
    int busy;                 /* a chunk holds the slot */
    size_t chunk;             /* its index in the engine's numbering (slot = chunk mod K) */
    sp_bevent *graph_release; /* its group's event when it ran in a graph replay */
    char *out;                /* user memory its output is copied to; NULL: none */
    int sink;                 /* its output goes to the run's sink instead */
    size_t first_record;      /* its first record, counted from the run's or stream's start */
    size_t records;
    void *batch;              /* the stream batch it belongs to (NULL in a run) */
    int input_staged;         /* its input went through pinned staging */
} sp_slot;

/* Events of one GPU engine. */
typedef struct sp_slot_events {
    sp_bevent *done[SP_MAX_DEPTH]; /* recorded after the engine's operation for slot b */
} sp_slot_events;

struct sp_pipeline {
    sp_context *ctx;
    size_t in_record_bytes;
    size_t n_stages;
    sp_stage stages[SP_MAX_STAGES];
    char stage_names[SP_MAX_STAGES][32];
    sp_stage_call calls[SP_MAX_STAGES];

    size_t record_bytes[SP_MAX_STAGES + 1]; /* bytes per record at each boundary */
    size_t widest_record;
    size_t chunk_capacity;                  /* records per slot buffer */
    int chunk_chosen;                       /* config left chunk_records at 0 */
    unsigned depth;
    int priority;
    size_t copy_piece_bytes;                /* 0: each copy whole */
    int copy_by_kernel;                     /* copies by the backend's copy_kernel when it
                                               has one (run.c, sp_run_enqueue_copy) */

    /* queues: h2d, one per stage, d2h */
    sp_bqueue *h2d;
    sp_bqueue *stage_queue[SP_MAX_STAGES][SP_MAX_STAGE_STREAMS]; /* chunk i: [s][i % streams] */
    unsigned stage_streams[SP_MAX_STAGES];
    sp_bqueue *d2h;

    /* events for each GPU engine: index 0 = h2d, 1..M = stages, M+1 = d2h */
    sp_slot_events events[SP_MAX_STAGES + 2];
    /* Timing: a start/end pair per GPU engine per chunk, all read after the run, so timing
     * never makes the host wait during a run. The pool grows to the longest timed run. A
     * start event is recorded only where it cannot be inferred from ends (run.c, op_start);
     * timing_inferred[pair] says it was not. */
    sp_bevent *timing_base;
    sp_bevent **timing_events;
    size_t timing_events_n;
    unsigned char *timing_inferred; /* timing_events_n / 2 flags */

    /* the ring */
    char *device_buffer[SP_MAX_STAGES + 1]; /* K slots each, slot_stride[s] apart */
    size_t device_stride[SP_MAX_STAGES + 1];
    char *pinned_in, *pinned_out;
    size_t pinned_in_stride, pinned_out_stride;

    sp_staging_pool *pool;
    sp_timeline timeline;

    sp_slot slots[SP_MAX_DEPTH];            /* engine.c */
    char *scratch[SP_MAX_STAGES];           /* per stage: a scratch_bytes workspace per slot */
    size_t scratch_stride[SP_MAX_STAGES];

    /* graph mode (run_graph.c): per slot, a queue and a fork/join event for capturing its
     * chunk; per group of slots (at its first slot), a "group free" event and a graph. Made on
     * first use; the graphs fit one chunk size and one choice of staging, and are made again
     * when a run needs another */
    sp_graph_mode graph_mode;
    sp_bqueue *graph_queue[SP_MAX_DEPTH];
    sp_bevent *graph_join[SP_MAX_DEPTH];
    sp_bevent *graph_done[SP_MAX_DEPTH];
    sp_bgraph *graph[SP_MAX_DEPTH];
    const void *graph_in_base[SP_MAX_DEPTH]; /* host memory each slot's copies point at now */
    void *graph_out_base[SP_MAX_DEPTH];
    const void *graph_captured_in[SP_MAX_DEPTH]; /* and pointed at when captured: what a */
    void *graph_captured_out[SP_MAX_DEPTH];      /* rebase names them by (backend.h) */
    size_t graph_capture_chunk[SP_MAX_DEPTH]; /* the chunk index it was captured with */
    int graph_checked[SP_MAX_DEPTH];          /* compared with stream mode already */
    size_t graph_chunk_records;               /* the chunk size the graphs were made for */
    int graph_stage_in, graph_stage_out;      /* and their staging */
    char *graph_check_buffer;                 /* what a new graph's check compares with */
    size_t graph_check_bytes;
    int graph_off;                            /* a failure turned graph mode off for good */
    char graph_why[160];                      /* why, for the report's notes */

    /* 1 while a call that uses the pipeline's run state (a run, its destroy) is under way:
     * a second call fails at once rather than share the slots with the first */
    atomic_int busy;
    const char *_Atomic holder; /* the call that holds it ("sp_stream_open", ...) or NULL */
    atomic_int group_member;    /* made by a device group, which alone destroys it */

    /* the first failure of the current run; `failed` is read by stage workers, which skip
     * chunks from fail_chunk on (the earlier ones, of earlier batches of a stream, finish) */
    atomic_int failed;
    atomic_size_t fail_chunk;
    pthread_mutex_t failure_lock;
    sp_status failure_status;
    char failure_text[SP_ERROR_TEXT]; /* its text, which a refused call cannot overwrite */

    /* the last run's figures: atomic, since the getters may be read from any thread while a
     * stream's engine thread works (a stream leaves them alone; runs set them) */
    _Atomic double last_submit_s;   /* sp_pipeline_last_submit_s */
    _Atomic double last_wait_s;     /* sp_pipeline_last_wait_s */
    _Atomic double last_makespan_s; /* sp_pipeline_last_makespan_s */

    /* error_lock orders the writers of error (a stream's engine thread, the user's calls) and
     * the library's readers (sp_pipeline_error_copy); sp_pipeline_last_error hands out the
     * text itself, whose threads the header names */
    pthread_mutex_t error_lock;
    char error[SP_ERROR_TEXT];
};

/* Copies the pipeline's error text into buf (n bytes), under its lock. */
void sp_pipeline_error_copy(struct sp_pipeline *p, char *buf, size_t n);
/* Sets the three sp_pipeline_last_* figures at once (a run's end, or 0 when it did not
 * start). */
void sp_pipeline_set_last_figures(struct sp_pipeline *p, double makespan_s, double submit_s,
                                  double wait_s);

/* Destroys the graph-mode objects (pipeline.c calls it on destroy). */
void sp_pipeline_graph_release(struct sp_pipeline *p);

/* GPU engines in events[]: h2d, the stages, d2h. */
static inline size_t sp_gpu_engines(const struct sp_pipeline *p) { return p->n_stages + 2; }

/* Records the failure (first one wins) as the pipeline's and the context's error. */
sp_status sp_pipeline_fail(struct sp_pipeline *p, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The same with a va_list, for other printf-style failure calls. */
sp_status sp_pipeline_vfail(struct sp_pipeline *p, sp_status status, const char *fmt,
                            va_list ap);
/* The current run's failure (under failure_lock): the last error, as sp_pipeline_fail, and
 * the run's failure_text, which recovery reads. */
sp_status sp_pipeline_fail_run(struct sp_pipeline *p, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
sp_status sp_pipeline_vfail_run(struct sp_pipeline *p, sp_status status, const char *fmt,
                                va_list ap);
/* Like sp_pipeline_fail with the backend's reason appended: "<what>: <backend text>". */
sp_status sp_pipeline_backend_fail(struct sp_pipeline *p, sp_status status, const char *what);
void sp_pipeline_reset_failure(struct sp_pipeline *p);
/* Claims p for `call` ("sp_pipeline_run", ...) on this thread, or fails at once with
 * SP_ERR_INVALID_ARGUMENT, the reason in the context's text, touching nothing else, when
 * another call holds it. sp_pipeline_release gives it back. */
sp_status sp_pipeline_claim(struct sp_pipeline *p, const char *call);
void sp_pipeline_release(struct sp_pipeline *p);
/* Why this thread's last sp_pipeline_claim was refused; "" when it succeeded since. */
const char *sp_pipeline_claim_refusal(void);
/* Marks p as a device group's member (1), which sp_pipeline_destroy refuses, or frees it of
 * that (0) before the group destroys it. */
void sp_pipeline_set_group_member(struct sp_pipeline *p, int member);
int sp_pipeline_has_failed(struct sp_pipeline *p);

/* Reads the caller's config (sized: streampipe.h) into c and checks its stages' reserved
 * words (config_read.c); fails, with the context's error, when either is refused. */
sp_status sp_pipeline_config_read(sp_context *ctx, const sp_pipeline_config *given,
                                  sp_pipeline_config *c);

/* Marks the calling thread as capturing p's graph (NULL: no longer); see stage_call.c. */
void sp_pipeline_set_capturing(const struct sp_pipeline *p);

/* The function every stage launch runs: calls the user's function for this backend unless
 * the run has already failed, and records a failure with the stage name and chunk. */
sp_status sp_stage_trampoline(const sp_chunk *chunk, void *arg);

/* The queue stage s (1-based) of chunk i runs on. */
static inline sp_bqueue *sp_stage_queue(const struct sp_pipeline *p, size_t s, size_t i)
{
    return p->stage_queue[s - 1][i % p->stage_streams[s - 1]];
}

/* The slot-b buffers at boundary s and in pinned staging. */
static inline void *sp_device_slot(const struct sp_pipeline *p, size_t s, size_t b)
{
    return p->device_buffer[s] + b * p->device_stride[s];
}

/* Chunk i's slot's pinned staging buffers (slot i mod K). */
static inline char *sp_staging_in(const struct sp_pipeline *p, size_t i)
{
    return p->pinned_in + (i % p->depth) * p->pinned_in_stride;
}
static inline char *sp_staging_out(const struct sp_pipeline *p, size_t i)
{
    return p->pinned_out + (i % p->depth) * p->pinned_out_stride;
}

#endif
