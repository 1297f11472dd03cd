/* The pipeline's fields: what it was made with, its queues, events and the K-slot buffer
 * ring, and the sub-structs of the files that own them. Who writes what:
 *   pipeline.c        everything here, at create and destroy only; after create the shape,
 *                     queues, events and buffers are read-only, but for a deeper ring made
 *                     for a stream as it opens (sp_pipeline_deepen: claimed and idle) and
 *                     larger chunks (in as many slots as the run has chunks) for a
 *                     compressed input decoded in the ring (sp_pipeline_rechunk, from
 *                     ring_chunk.c: claimed and idle), and the count of the run's buffers
 *                     beside the ring (sp_pipeline_hold_run, from ring_decode.c)
 *   ring.c / ring.h   slots (ring_state.h): the per-chunk writes are ring.h's inline ones
 *   submit_graph.c    graph (graph_state.h)
 *   timing.c          timing (timing_state.h) and timeline
 *   failure.c         failure (failure.h)
 *   stats.c / stats.h stats, the live counters (stats_state.h), through calls from sched.c,
 *                     staging.c, stream.c, runs.c and timing.c (the GPU engines' timed
 *                     group: busy times and window sums, on the scheduler's thread); the
 *                     per-chunk writers are stats.h's inline ones
 *   tune.c            tune: the budget, the tuner, the changes made (tune_state.h); at
 *                     create it also sets chunk_capacity and depth within the budget
 *   tune_run.c        tune.watch, and tune.tuner while runs go (the scheduler's thread)
 *   pipeline_state.c  busy, holder, group_member, the last run's figures, error
 *
 * Buffers. Boundary 0 is the device input; boundary s (1..M) is stage s's device output. Slot
 * b = chunk mod K owns one buffer per boundary and one pinned staging buffer each way. The
 * dependency rules between them are ring.h's (sp_ring_op_deps) and docs/design.md's. */
#ifndef SP_PIPELINE_FIELDS_H
#define SP_PIPELINE_FIELDS_H

#include <stdatomic.h>

#include "core/context.h"
#include "core/error_box.h"
#include "core/failure.h"
#include "core/graph_state.h"
#include "core/ring_state.h"
#include "core/staging_pool.h"
#include "core/stats_state.h"
#include "core/timeline.h"
#include "core/timing_state.h"
#include "core/tune_state.h"

/* Passed to the stage trampoline: which pipeline, which stage. */
typedef struct sp_stage_call {
    struct sp_pipeline *pipeline;
    size_t index;
} sp_stage_call;

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
                                               has one (backend_call.c) */
    sp_graph_mode graph_mode;
    sp_timeline_mode timeline_mode;         /* how a run made with a report is timed */
    int keep_timeline;                      /* its report gets a copy of the timeline */

    /* queues: h2d, one per stage, d2h */
    sp_bqueue *h2d;
    sp_bqueue *stage_queue[SP_MAX_STAGES][SP_MAX_STAGE_STREAMS]; /* chunk i: [s][i % streams] */
    unsigned stage_streams[SP_MAX_STAGES];
    sp_bqueue *d2h;

    /* events for each GPU engine: index 0 = h2d, 1..M = stages, M+1 = d2h */
    sp_slot_events events[SP_MAX_STAGES + 2];

    /* the ring */
    char *device_buffer[SP_MAX_STAGES + 1]; /* K slots each, slot_stride[s] apart */
    size_t device_stride[SP_MAX_STAGES + 1];
    char *pinned_in, *pinned_out;
    size_t pinned_in_stride, pinned_out_stride;
    char *scratch[SP_MAX_STAGES];           /* per stage: a scratch_bytes workspace per slot */
    size_t scratch_stride[SP_MAX_STAGES];
    sp_staging_pool *pool;
    size_t run_pinned_bytes;                /* held beside the ring by the run going: its */
    size_t run_device_bytes;                /* compressed input's buffers (ring_decode.c) */
    _Atomic size_t held_pinned_bytes;       /* the ring's and the run's, for sp_stats from */
    _Atomic size_t held_device_bytes;       /* any thread (the ring may change: see above) */

    sp_slot slots[SP_MAX_DEPTH];
    sp_graph_state graph;
    sp_timing_pool timing;
    sp_timeline timeline;
    struct sp_flight *flight;               /* the flight recorder, NULL when off (flight.h) */
    sp_failure failure;
    sp_stats_state stats;
    sp_tune_state tune;

    /* 1 while a call that uses the pipeline's run state (a run, a stream, its destroy) is
     * under way: a second call fails at once rather than share the slots with the first */
    atomic_int busy;
    const char *_Atomic holder; /* the call that holds it ("sp_stream_open", ...) or NULL */
    atomic_int group_member;    /* made by a device group, which alone destroys it */

    /* the last run's figures: atomic, since the getters may be read from any thread while a
     * stream's engine thread works (a stream leaves them alone; runs set them) */
    _Atomic double last_submit_s;   /* sp_pipeline_last_submit_s */
    _Atomic double last_wait_s;     /* sp_pipeline_last_wait_s */
    _Atomic double last_makespan_s; /* sp_pipeline_last_makespan_s */

    sp_error_box error; /* sp_pipeline_last_error */
};

/* GPU engines in events[]: h2d, the stages, d2h. */
static inline size_t sp_gpu_engines(const struct sp_pipeline *p) { return p->n_stages + 2; }

/* The queue stage s (1-based) of chunk i runs on. */
static inline sp_bqueue *sp_stage_queue(const struct sp_pipeline *p, size_t s, size_t i)
{
    return p->stage_queue[s - 1][i % p->stage_streams[s - 1]];
}

/* The slot-b buffer at boundary s. */
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
