/* The live counters' writer (stats_state.h says who calls it from where) and their reader
 * (sp_pipeline_stats; sp_stream_stats goes through it). Each writer call is a few relaxed
 * loads and stores: what a chunk pays is listed in stats.c; those of every chunk are inline
 * here. */
#ifndef SP_STATS_H
#define SP_STATS_H

#include <stdint.h>

#include "core/pipeline_state.h"

/* A run or stream begins (counters zeroed, the run numbered, the clock started) with
 * `records` planned (0: not known yet), or ends: a run whose status is not SP_OK counts one
 * error (a stream passes SP_OK: its failed batches were counted one by one). */
void sp_stats_begin(sp_pipeline *p, uint64_t records);
void sp_stats_end(sp_pipeline *p, sp_status status);
/* A stream: records submitted; held batches now; one of its batches failed. */
void sp_stats_submitted(sp_pipeline *p, uint64_t records);
void sp_stats_batches(sp_pipeline *p, unsigned held);
void sp_stats_error(sp_pipeline *p);

/* The writers every chunk calls are static inline, below: a few relaxed loads and stores
 * each, read here by include rather than a file entered per chunk (issue 22; the check is
 * tests/core/test_chunk_path.c). They are stats' code all the same: nothing else writes the
 * counters. */

/* One writer: a load and a store, not a locked read-modify-write. */
static inline void sp_stats_add64(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline uint64_t sp_stats_ns(double seconds)
{
    return seconds > 0.0 ? (uint64_t)(seconds * 1e9) : 0;
}

/* The scheduler: n chunks took slots; one left its slot (records whose output went on:
 * 0 for a chunk dropped by a failure); the host turn waited `seconds` for a slot. */
static inline void sp_stats_occupied(sp_pipeline *p, unsigned n)
{
    _Atomic unsigned *c = &p->stats.chunks_in_flight;
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline void sp_stats_vacated(sp_pipeline *p, uint64_t records)
{
    _Atomic unsigned *c = &p->stats.chunks_in_flight;
    unsigned n = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, n ? n - 1 : 0, memory_order_relaxed);
    if (records)
        sp_stats_add64(&p->stats.left, records);
}

/* One writer: a load and a store of a double, or of a count, released (see sp_stats_begin,
 * tseq). */
static inline void sp_stats_addd(_Atomic double *c, double x)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + x,
                          memory_order_release);
}

static inline void sp_stats_add64_release(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_release);
}

/* tseq odd, then the stores (each released, so none is seen before the odd tseq), then even:
 * a reader that saw any of them sees tseq moved and reads again (stats.c, load_counts). */
static inline uint64_t sp_stats_tseq_open(sp_stats_state *s)
{
    uint64_t q = atomic_load_explicit(&s->tseq, memory_order_relaxed);
    atomic_store_explicit(&s->tseq, q + 1, memory_order_relaxed);
    return q;
}

static inline void sp_stats_tseq_close(sp_stats_state *s, uint64_t q)
{
    atomic_store_explicit(&s->tseq, q + 2, memory_order_release);
}

static inline void sp_stats_waited(sp_pipeline *p, double seconds)
{
    sp_stats_add64(&p->stats.wait_ns, sp_stats_ns(seconds));
}

/* A host turn's staging: records copied in and out, in `seconds` of the turn's clock. */
static inline void sp_stats_staged(sp_pipeline *p, uint64_t in_records, uint64_t out_records,
                                   double seconds)
{
    sp_stats_state *s = &p->stats;
    uint64_t ns = sp_stats_ns(seconds);
    if (in_records) {
        sp_stats_add64(&s->staged_in, in_records);
        sp_stats_add64(&s->stage_in_ns, ns);
    }
    if (out_records) {
        sp_stats_add64(&s->staged_out, out_records);
        sp_stats_add64(&s->stage_out_ns, ns);
    }
}

/* timing.c, on the scheduler's thread: this run times chunks with events; a timed chunk's
 * events were read: its records, whether it is an edge chunk (in the first or last window)
 * and each GPU engine's busy seconds busy[0 .. gpu_engines); a window's copy sums are
 * complete (NULL: they could not be made, hidden transfer is then unknown for the run).
 * A few relaxed stores each, the second per timed chunk, the third per window. */
void sp_stats_timing(sp_pipeline *p);
static inline void sp_stats_timed(sp_pipeline *p, int edge, uint64_t records,
                                  const double *busy, size_t gpu_engines)
{
    sp_stats_state *s = &p->stats;
    size_t k = edge ? 0 : 1;
    uint64_t q = sp_stats_tseq_open(s);
    for (size_t g = 0; g < gpu_engines && g < SP_MAX_STAGES + 2; g++)
        sp_stats_addd(&s->timed_s[k][g], busy[g]);
    sp_stats_add64_release(&s->timed_records[k], records);
    sp_stats_add64_release(&s->timed_chunks, 1);
    sp_stats_tseq_close(s, q);
}

void sp_stats_window(sp_pipeline *p, const sp_window_sums *sums);
/* report.c, on the scheduler's thread, as the run's report is made: its hidden transfer,
 * which the readers give from then on (the window sums cannot replay untimed chunks). */
void sp_stats_final_hidden(sp_pipeline *p, double hidden);

/* 1 once any thread has read the pipeline's counters (sp_stats_read): timing.c then reads
 * timed chunks while runs go, for the GPU figures; until then only after each drain. */
static inline int sp_stats_watched(const sp_pipeline *p)
{
    return atomic_load_explicit(&p->stats.watched, memory_order_relaxed);
}

/* The reader: the counters as the caller's sp_stats (sized: its size says how much to
 * write). SP_ERR_INVALID_ARGUMENT for NULL or a size smaller than the size field. */
sp_status sp_stats_read(const sp_pipeline *p, sp_stats *out);

#endif
