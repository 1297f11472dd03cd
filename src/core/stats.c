/* The live counters (stats_state.h): the writer calls the scheduler and streams make (those
 * of every chunk are stats.h's inline ones), and the reader behind sp_pipeline_stats and
 * sp_stream_stats.
 *
 * What a chunk pays, with no report asked for: taking its slot, one relaxed load + store
 * (chunks in flight); leaving it, three (in flight, records left, and in a turn that stages:
 * the records staged out); its input staged in, two (records, time); a turn's wait for the
 * slot, one. Relaxed loads and stores of one writer are plain moves on x86 and arm64: no
 * locked instruction, no fence. The clock: the scheduler read it around each wait already;
 * a turn that stages now reads it once before and once after its copies (one pair), which
 * a run with a report read anyway for its spans.
 *
 * A run with a report (timed with events) pays more, only for its timed chunks: timing.c
 * reads each one's events once the chunk has left its slot (complete by then: no wait) and
 * hands its GPU engines' busy times here, G + 4 release stores under tseq (plain moves on
 * x86); a window's last chunk also hands the window's copy sums, about a dozen more. An
 * untimed chunk pays nothing here. The reader applies the report's estimators (timeline.h:
 * sp_sampled_total, sp_window_sums_hidden) to these sums, for the records done so far. */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/sized.h"
#include "core/stats.h"
#include "core/timeline.h"
#include "core/tune.h"

#define RELAXED memory_order_relaxed

static uint64_t now_ns(void) { return sp_stats_ns(sp_now()); }

/* ---- the writer ----------------------------------------------------------------------- */

/* The timed group, at a run's start (inside seq odd, released as the rest). */
static void zero_timed(sp_stats_state *s)
{
    atomic_store_explicit(&s->timing, 0, memory_order_release);
    atomic_store_explicit(&s->timed_chunks, 0, memory_order_release);
    atomic_store_explicit(&s->windows, 0, memory_order_release);
    atomic_store_explicit(&s->sums_lost, 0, memory_order_release);
    atomic_store_explicit(&s->final_hidden, -1.0, memory_order_release);
    for (size_t k = 0; k < 2; k++) {
        atomic_store_explicit(&s->timed_records[k], 0, memory_order_release);
        for (size_t g = 0; g < SP_MAX_STAGES + 2; g++)
            atomic_store_explicit(&s->timed_s[k][g], 0.0, memory_order_release);
        for (size_t w = 0; w < SP_WINDOW_PARTS; w++) {
            atomic_store_explicit(&s->sums_records[k][w], 0, memory_order_release);
            for (size_t f = 0; f < 3; f++)
                atomic_store_explicit(&s->sums[k][w][f], 0.0, memory_order_release);
        }
    }
}

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
    zero_timed(s);
    atomic_store_explicit(&s->chunks_in_flight, 0, memory_order_release);
    atomic_store_explicit(&s->batches_in_flight, 0, memory_order_release);
    atomic_store_explicit(&s->records_total, records, memory_order_release);
    atomic_store_explicit(&s->t_begin_ns, now_ns(), memory_order_release);
    atomic_store_explicit(&s->active, 1, memory_order_release);
    sp_stats_add64(&s->run, 1);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

void sp_stats_end(sp_pipeline *p, sp_status status)
{
    sp_stats_state *s = &p->stats;
    if (status != SP_OK)
        sp_stats_add64(&s->errors, 1);
    atomic_store_explicit(&s->chunks_in_flight, 0, RELAXED); /* drained: nothing is left */
    /* Not active first, then the clock: a reader that still saw it active read its clock
     * before this store, so before t_end, and elapsed_s never goes down (fill()). */
    atomic_store_explicit(&s->active, 0, memory_order_seq_cst);
    atomic_store_explicit(&s->t_end_ns, now_ns(), memory_order_release);
}

void sp_stats_submitted(sp_pipeline *p, uint64_t records)
{
    sp_stats_add64(&p->stats.records_total, records);
}

void sp_stats_batches(sp_pipeline *p, unsigned held)
{
    atomic_store_explicit(&p->stats.batches_in_flight, held, RELAXED);
}

void sp_stats_error(sp_pipeline *p) { sp_stats_add64(&p->stats.errors, 1); }

void sp_stats_timing(sp_pipeline *p)
{
    atomic_store_explicit(&p->stats.timing, 1, memory_order_release);
}

void sp_stats_window(sp_pipeline *p, const sp_window_sums *sums)
{
    sp_stats_state *s = &p->stats;
    uint64_t q = sp_stats_tseq_open(s);
    if (!sums)
        atomic_store_explicit(&s->sums_lost, 1, memory_order_release);
    for (size_t k = 0; sums && k < 2; k++)
        for (size_t w = 0; w < SP_WINDOW_PARTS; w++) {
            const sp_copy_sums *c = &sums->part[k][w];
            if (c->records == 0 && c->whole == 0.0)
                continue; /* a window adds to one part: the others' stores are spared */
            sp_stats_addd(&s->sums[k][w][0], c->copy);
            sp_stats_addd(&s->sums[k][w][1], c->hidden);
            sp_stats_addd(&s->sums[k][w][2], c->whole);
            sp_stats_add64_release(&s->sums_records[k][w], c->records);
        }
    sp_stats_add64_release(&s->windows, 1);
    sp_stats_tseq_close(s, q);
}

void sp_stats_final_hidden(sp_pipeline *p, double hidden)
{
    sp_stats_state *s = &p->stats;
    uint64_t q = sp_stats_tseq_open(s);
    atomic_store_explicit(&s->final_hidden, hidden, memory_order_release);
    sp_stats_tseq_close(s, q);
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
    /* the timed group */
    int timing, sums_lost;
    uint64_t timed_chunks, timed_records[2], windows;
    double timed_s[2][SP_MAX_STAGES + 2], final_hidden;
    sp_window_sums sums;
} counts;

static void load_timed(const sp_stats_state *s, counts *c)
{
    c->timing = atomic_load_explicit(&s->timing, memory_order_acquire);
    c->timed_chunks = atomic_load_explicit(&s->timed_chunks, memory_order_acquire);
    c->windows = atomic_load_explicit(&s->windows, memory_order_acquire);
    c->sums_lost = atomic_load_explicit(&s->sums_lost, memory_order_acquire);
    c->final_hidden = atomic_load_explicit(&s->final_hidden, memory_order_acquire);
    for (size_t k = 0; k < 2; k++) {
        c->timed_records[k] = atomic_load_explicit(&s->timed_records[k], memory_order_acquire);
        for (size_t g = 0; g < SP_MAX_STAGES + 2; g++)
            c->timed_s[k][g] = atomic_load_explicit(&s->timed_s[k][g], memory_order_acquire);
        for (size_t w = 0; w < SP_WINDOW_PARTS; w++) {
            sp_copy_sums *x = &c->sums.part[k][w];
            x->copy = atomic_load_explicit(&s->sums[k][w][0], memory_order_acquire);
            x->hidden = atomic_load_explicit(&s->sums[k][w][1], memory_order_acquire);
            x->whole = atomic_load_explicit(&s->sums[k][w][2], memory_order_acquire);
            x->records = (size_t)atomic_load_explicit(&s->sums_records[k][w],
                                                      memory_order_acquire);
        }
    }
}

static void load_counts(const sp_stats_state *s, counts *c)
{
    for (;;) {
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        uint64_t tseq = atomic_load_explicit(&s->tseq, memory_order_acquire);
        load_timed(s, c);
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
        if (!(seq & 1) && !(tseq & 1) && !ending &&
            atomic_load_explicit(&s->seq, RELAXED) == seq &&
            atomic_load_explicit(&s->tseq, RELAXED) == tseq)
            return;
    }
}

static void engine(sp_engine_stats *e, const char *name, sp_engine_kind kind, uint64_t records,
                   size_t record_bytes, int measured, double busy_s)
{
    snprintf(e->name, sizeof e->name, "%s", name);
    e->kind = kind;
    e->busy_measured = measured;
    e->records = records;
    e->bytes = records * record_bytes;
    e->busy_s = measured ? busy_s : 0.0;
}

/* GPU engine g's busy seconds over the records done so far, from its timed chunks: the
 * report's extrapolation (timeline.h, sp_sampled_total) with the records done for the run's. */
static double gpu_busy(const counts *c, size_t g)
{
    return sp_sampled_total(c->timed_s[0][g], c->timed_s[1][g], (size_t)c->timed_records[0],
                            (size_t)c->timed_records[1], (size_t)c->left);
}

static void engines(const sp_pipeline *p, const counts *c, sp_stats *st)
{
    size_t M = p->n_stages, n = 0;
    int t = c->timing;
    engine(&st->engines[n++], "stage-in", SP_ENGINE_STAGE_IN, c->staged_in, p->record_bytes[0],
           1, (double)c->stage_in_ns * 1e-9);
    engine(&st->engines[n++], "h2d", SP_ENGINE_H2D, c->left, p->record_bytes[0], t,
           gpu_busy(c, 0));
    for (size_t s = 0; s < M; s++)
        engine(&st->engines[n++], p->stage_names[s], SP_ENGINE_COMPUTE, c->left,
               p->record_bytes[s], t, gpu_busy(c, s + 1));
    engine(&st->engines[n++], "d2h", SP_ENGINE_D2H, c->left, p->record_bytes[M], t,
           gpu_busy(c, M + 1));
    engine(&st->engines[n++], "stage-out", SP_ENGINE_STAGE_OUT, c->staged_out,
           p->record_bytes[M], 1, (double)c->stage_out_ns * 1e-9);
    st->n_engines = n;
}

/* Hidden transfer over the windows timed so far, by the report's estimator for a run of the
 * records done; once the run's report is made, the report's (replayed where the windows'
 * estimate was not used: the run's last figure is the report's); -1 while unknown (no
 * timing, no window complete yet, or one lost). */
static double hidden_so_far(const counts *c)
{
    if (c->timing && c->final_hidden >= 0.0)
        return c->final_hidden;
    if (!c->timing || c->windows == 0 || c->sums_lost)
        return -1.0;
    return sp_window_sums_hidden(&c->sums, (size_t)c->left);
}

/* Memory the pipeline holds: its ring (made at create, anew for a stream or a compressed
 * input) and a run's buffers beside it; pipeline.c counts both (note_held). */
static void memory(const sp_pipeline *p, sp_stats *st)
{
    st->pinned_bytes = atomic_load(&p->held_pinned_bytes);
    st->device_bytes = atomic_load(&p->held_device_bytes);
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
    st->hidden_transfer = -1.0;
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
    st->hidden_transfer = hidden_so_far(&c);
    st->timed_chunks = c.timed_chunks;
    sp_tune_last(p, &st->tune_changes, st->tune_reason, sizeof st->tune_reason);
}

/* The reader's one write (stats_state.h, `watched`): a load first, so that readers in a
 * tight loop leave the line shared. The pipeline is the caller's, never a const object. */
static void mark_watched(const sp_pipeline *p)
{
    _Atomic int *w = (_Atomic int *)&p->stats.watched;
    if (!atomic_load_explicit(w, RELAXED))
        atomic_store_explicit(w, 1, RELAXED);
}

sp_status sp_stats_read(const sp_pipeline *p, sp_stats *out)
{
    if (!p || !out)
        return SP_ERR_INVALID_ARGUMENT;
    mark_watched(p);
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
