/* What the pipelined and the serial run share: argument checks, the run's state, and the
 * report. */
#ifndef SP_RUN_H
#define SP_RUN_H

#include "core/pipeline.h"

/* Timeline engine numbering: stage-in, h2d, the stages, d2h, stage-out. GPU engine g
 * (events[] index: 0 = h2d .. M+1 = d2h) is timeline engine g + 1. */
#define SP_TL_STAGE_IN 0u
#define SP_TL_GPU(g) ((g) + 1u)
#define SP_TL_STAGE_OUT(p) ((p)->n_stages + 3u)

typedef struct sp_run {
    sp_pipeline *p;
    const char *in;
    char *out;
    sp_run_plan plan;
    int stage_in, stage_out; /* user memory is pageable: go through pinned staging */
    int timing;              /* a report was asked for: record per-chunk times */
    int event_timing;        /* GPU operations were bracketed by timing events */
    double t0;               /* host clock at the first enqueue */
    sp_status status;        /* the first failure */
} sp_run;

/* Checks the arguments and fills run->plan; SP_OK means the run may start. Nothing is
 * touched on failure. */
sp_status sp_run_prepare(sp_run *run, sp_pipeline *p, const void *in, size_t n_records,
                         void *out, int timing);
/* Records the first failure of the run (later ones are consequences) as "<what>: <backend
 * reason>" and returns it. */
sp_status sp_run_fail(sp_run *run, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Drains every queue and settles the run's status: a recorded failure wins over `st`. */
sp_status sp_run_finish(sp_run *run, sp_status st, sp_report *report);
/* Syncs every queue, so nothing of this run is in flight when it returns. */
sp_status sp_run_drain(sp_run *run);
/* Starts the timeline for a run with timing. */
sp_status sp_run_timeline_start(sp_run *run);
/* Per-chunk timing events (run_timing.c): makes sure the pool holds a start/end pair for
 * every GPU engine of every chunk and records the base event; the pair of engine g, chunk i;
 * and, after the drain, every pair read into the timeline. */
sp_status sp_run_timing_start(sp_run *run);
sp_bevent **sp_run_timing_event(const sp_run *run, size_t g, size_t i, int end);
sp_status sp_run_timing_collect(sp_run *run);
/* Fills the report after the run ended at host time t_end. */
void sp_run_report(const sp_run *run, double t_end, sp_report *report);

/* Profiler ranges around what the run enqueues ("h2d c12", "<stage> c12", "stage c12"),
 * when the backend has trace_push; without it nothing is formatted. */
void sp_run_trace_push(const sp_run *run, const char *what, size_t chunk);
void sp_run_trace_pop(const sp_run *run);

/* Chunk geometry. */
static inline size_t sp_chunk_first(const sp_run *r, size_t i) { return i * r->plan.chunk_records; }
static inline size_t sp_chunk_records(const sp_run *r, size_t i)
{
    size_t first = sp_chunk_first(r, i);
    size_t left = r->plan.n_records - first;
    return left < r->plan.chunk_records ? left : r->plan.chunk_records;
}

#endif
