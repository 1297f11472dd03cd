/* The live counters (stats_state.h): the writer calls the scheduler and streams make, and
 * the reader behind sp_pipeline_stats and sp_stream_stats.
 *
 * What a chunk pays, with no report asked for: taking its slot, one relaxed load + store
 * (chunks in flight); leaving it, three (in flight, records left, and in a turn that stages:
 * the records staged out); its input staged in, two (records, time); a turn's wait for the
 * slot, one. Relaxed loads and stores of one writer are plain moves on x86 and arm64: no
 * locked instruction, no fence. The clock: the scheduler read it around each wait already;
 * a turn that stages now reads it once before and once after its copies (one pair), which
 * a run with a report read anyway for its spans. */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/sized.h"
#include "core/stats.h"
#include "core/tune.h"

#define RELAXED memory_order_relaxed

/* One writer: a load and a store, not a locked read-modify-write. */
static inline void add64(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, RELAXED) + n, RELAXED);
}

static inline uint64_t ns_of(double seconds)
{
    return seconds > 0.0 ? (uint64_t)(seconds * 1e9) : 0;
}

static uint64_t now_ns(void) { return ns_of(sp_now()); }

/* ---- the writer ----------------------------------------------------------------------- */

void sp_stats_begin(sp_pipeline *p, uint64_t records)
{
    sp_stats_state *s = &p->stats;
    uint64_t seq = atomic_load_explicit(&s->seq, RELAXED);
    atomic_store_explicit(&s->seq, seq + 1, RELAXED); /* odd: a reader tries again */
    /* every store below releases, so that none is seen before the odd seq (once per run;
     * a fence would do it once, but TSan does not model fences) */
    _Atomic uint64_t *zero[] = {&s->t_end_ns, &s->staged_in, &s->left, &s->staged_out,
                                &s->stage_in_ns, &s->stage_out_ns, &s->wait_ns, &s->errors};
    for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
        atomic_store_explicit(zero[k], 0, memory_order_release);
    atomic_store_explicit(&s->chunks_in_flight, 0, memory_order_release);
    atomic_store_explicit(&s->batches_in_flight, 0, memory_order_release);
    atomic_store_explicit(&s->records_total, records, memory_order_release);
    atomic_store_explicit(&s->t_begin_ns, now_ns(), memory_order_release);
    atomic_store_explicit(&s->active, 1, memory_order_release);
    add64(&s->run, 1);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

void sp_stats_end(sp_pipeline *p, sp_status status)
{
    sp_stats_state *s = &p->stats;
    if (status != SP_OK)
        add64(&s->errors, 1);
    atomic_store_explicit(&s->chunks_in_flight, 0, RELAXED); /* drained: nothing is left */
    /* Not active first, then the clock: a reader that still saw it active read its clock
     * before this store, so before t_end, and elapsed_s never goes down (fill()). */
    atomic_store_explicit(&s->active, 0, memory_order_seq_cst);
    atomic_store_explicit(&s->t_end_ns, now_ns(), memory_order_release);
}

void sp_stats_submitted(sp_pipeline *p, uint64_t records) { add64(&p->stats.records_total, records); }

void sp_stats_batches(sp_pipeline *p, unsigned held)
{
    atomic_store_explicit(&p->stats.batches_in_flight, held, RELAXED);
}

void sp_stats_error(sp_pipeline *p) { add64(&p->stats.errors, 1); }

void sp_stats_occupied(sp_pipeline *p, unsigned n)
{
    _Atomic unsigned *c = &p->stats.chunks_in_flight;
    atomic_store_explicit(c, atomic_load_explicit(c, RELAXED) + n, RELAXED);
}

void sp_stats_vacated(sp_pipeline *p, uint64_t records)
{
    _Atomic unsigned *c = &p->stats.chunks_in_flight;
    unsigned n = atomic_load_explicit(c, RELAXED);
    atomic_store_explicit(c, n ? n - 1 : 0, RELAXED);
    if (records)
        add64(&p->stats.left, records);
}

void sp_stats_waited(sp_pipeline *p, double seconds) { add64(&p->stats.wait_ns, ns_of(seconds)); }

void sp_stats_staged(sp_pipeline *p, uint64_t in_records, uint64_t out_records,
                     double seconds)
{
    sp_stats_state *s = &p->stats;
    uint64_t ns = ns_of(seconds);
    if (in_records) {
        add64(&s->staged_in, in_records);
        add64(&s->stage_in_ns, ns);
    }
    if (out_records) {
        add64(&s->staged_out, out_records);
        add64(&s->stage_out_ns, ns);
    }
}

/* ---- the reader ----------------------------------------------------------------------- */

/* The counters of one run, read between two equal even values of seq (a run starting
 * meanwhile zeroed them: read again). Every load acquires, so that none of them moves past
 * the second read of seq (a fence would do it once, but TSan does not model fences); on
 * x86 these are plain loads, and only readers pay them. */
typedef struct counts {
    uint64_t run, t_begin_ns, t_end_ns, records_total, staged_in, left, staged_out;
    uint64_t stage_in_ns, stage_out_ns, wait_ns, errors;
    unsigned chunks, batches;
    int active;
} counts;

static void load_counts(const sp_stats_state *s, counts *c)
{
    for (;;) {
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        c->run = atomic_load_explicit(&s->run, memory_order_acquire);
        c->active = atomic_load_explicit(&s->active, memory_order_seq_cst);
        c->t_begin_ns = atomic_load_explicit(&s->t_begin_ns, memory_order_acquire);
        c->t_end_ns = atomic_load_explicit(&s->t_end_ns, memory_order_acquire);
        c->records_total = atomic_load_explicit(&s->records_total, memory_order_acquire);
        c->staged_in = atomic_load_explicit(&s->staged_in, memory_order_acquire);
        c->left = atomic_load_explicit(&s->left, memory_order_acquire);
        c->staged_out = atomic_load_explicit(&s->staged_out, memory_order_acquire);
        c->stage_in_ns = atomic_load_explicit(&s->stage_in_ns, memory_order_acquire);
        c->stage_out_ns = atomic_load_explicit(&s->stage_out_ns, memory_order_acquire);
        c->wait_ns = atomic_load_explicit(&s->wait_ns, memory_order_acquire);
        c->errors = atomic_load_explicit(&s->errors, memory_order_acquire);
        c->chunks = atomic_load_explicit(&s->chunks_in_flight, memory_order_acquire);
        c->batches = atomic_load_explicit(&s->batches_in_flight, memory_order_acquire);
        int ending = c->run && !c->active && c->t_end_ns == 0; /* sp_stats_end between its
                                                                   two stores: nanoseconds */
        if (!(seq & 1) && !ending && atomic_load_explicit(&s->seq, RELAXED) == seq)
            return;
    }
}

static void engine(sp_engine_stats *e, const char *name, sp_engine_kind kind, uint64_t records,
                   size_t record_bytes, int measured, uint64_t busy_ns)
{
    snprintf(e->name, sizeof e->name, "%s", name);
    e->kind = kind;
    e->busy_measured = measured;
    e->records = records;
    e->bytes = records * record_bytes;
    e->busy_s = measured ? (double)busy_ns * 1e-9 : 0.0;
}

static void engines(const sp_pipeline *p, const counts *c, sp_stats *st)
{
    size_t M = p->n_stages, n = 0;
    engine(&st->engines[n++], "stage-in", SP_ENGINE_STAGE_IN, c->staged_in, p->record_bytes[0],
           1, c->stage_in_ns);
    engine(&st->engines[n++], "h2d", SP_ENGINE_H2D, c->left, p->record_bytes[0], 0, 0);
    for (size_t s = 0; s < M; s++)
        engine(&st->engines[n++], p->stage_names[s], SP_ENGINE_COMPUTE, c->left,
               p->record_bytes[s], 0, 0);
    engine(&st->engines[n++], "d2h", SP_ENGINE_D2H, c->left, p->record_bytes[M], 0, 0);
    engine(&st->engines[n++], "stage-out", SP_ENGINE_STAGE_OUT, c->staged_out,
           p->record_bytes[M], 1, c->stage_out_ns);
    st->n_engines = n;
}

/* Memory the pipeline holds: fixed at its creation. */
static void memory(const sp_pipeline *p, sp_stats *st)
{
    st->pinned_bytes = (p->pinned_in_stride + p->pinned_out_stride) * p->depth;
    size_t device = 0;
    for (size_t s = 0; s <= p->n_stages; s++)
        device += p->device_buffer[s] ? p->device_stride[s] * p->depth : 0;
    for (size_t s = 0; s < p->n_stages; s++)
        device += p->scratch[s] ? p->scratch_stride[s] * p->depth : 0;
    st->device_bytes = device;
}

static void fill(const sp_pipeline *p, sp_stats *st)
{
    counts c;
    uint64_t now = now_ns(); /* before the counts: see sp_stats_end */
    load_counts(&p->stats, &c);
    memset(st, 0, sizeof *st);
    st->size = sizeof *st;
    memory(p, st);
    st->run = c.run;
    if (c.run == 0)
        return;
    st->active = c.active;
    uint64_t end = c.active ? now : c.t_end_ns;
    st->elapsed_s = end > c.t_begin_ns ? (double)(end - c.t_begin_ns) * 1e-9 : 0.0;
    st->records_total = c.records_total;
    st->bytes_total = c.records_total * p->record_bytes[0];
    st->records_done = c.left;
    st->bytes_done = c.left * p->record_bytes[0];
    st->chunks_in_flight = c.chunks;
    st->batches_in_flight = c.batches;
    st->wait_s = (double)c.wait_ns * 1e-9;
    st->errors = c.errors;
    engines(p, &c, st);
    sp_tune_last(p, &st->tune_changes, st->tune_reason, sizeof st->tune_reason);
}

sp_status sp_stats_read(const sp_pipeline *p, sp_stats *out)
{
    if (!p || !out)
        return SP_ERR_INVALID_ARGUMENT;
    size_t size;
    memcpy(&size, out, sizeof size);
    size = size ? size : SP_STATS_SIZE_0_7; /* 0: the first layout, for good */
    if (size < sizeof size)
        return SP_ERR_INVALID_ARGUMENT;
    sp_stats st;
    fill(p, &st);
    size_t n = size < sizeof st ? size : sizeof st;
    st.size = n;
    memcpy(out, &st, n);
    return SP_OK;
}

sp_status sp_pipeline_stats(const sp_pipeline *p, sp_stats *stats) { return sp_stats_read(p, stats); }
