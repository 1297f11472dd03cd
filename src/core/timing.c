/* Per-chunk timing of GPU operations. Waiting for them during the run would make the host
 * wait for each chunk and stall the enqueueing it exists to keep ahead, so a timed chunk's
 * events are read while the run goes only once its chunk has left its slot and its last
 * operation is complete (sp_timing_retired: reading then never waits), for the live counters
 * (stats.c: its busy times, and each window's copy sums once the window is read) once
 * someone reads them, and the flight recorder; the chunks left are read once the run has
 * drained. The run's makespan is
 * taken before those are read (sched.c, sp_sched_finish), so it is measured alike with and
 * without timing; that reading is the caller's time, not the run's.
 *
 * Every operation records an end event (beside its slot's ordering event, which the waits
 * use: ring.h, sp_ring_finished), but a start event only where its queue was idle when it was
 * enqueued: a busy queue starts it when the last of its dependencies ends, and those ends
 * are read here anyway. On an H200 a timing record costs the GPU 2-2.5 us wherever it is
 * recorded (bench/PERF.md, third session), so the end events alone cost about 3% of the
 * makespan at 8 MiB chunks, and under 0.1% once operations last milliseconds. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/flight.h"
#include "core/pipeline_state.h"
#include "core/stats.h"
#include "core/timing.h"

static uint64_t sp_flight_run(const sp_pipeline *p)
{
    return atomic_load_explicit(&p->stats.run, memory_order_relaxed);
}

/* ---- which chunks are timed ------------------------------------------------------------ */

/* SP_TIMELINE_SAMPLED's windows: the first (the ramp, which no other chunk shows), one
 * centred in every stride, and the last (the drain). A window holds consecutive chunks so
 * that, within it, every compute operation is known and the copies there can be measured
 * against them (timeline_windows.c). The first is depth + 2 long: the ring fills over depth
 * chunks, and the ramp's copies need their overlap partners in the window. The middle and
 * the last are shorter, and the middle ones sparse (5 chunks per 64), because each timed
 * chunk costs the run about 1/n of what the full timeline costs (bench/PERF.md, tenth
 * session): on simulated rings of depth 4-8 (test_sampled) these lengths keep hidden transfer
 * and efficiency within 2 points, where windows of depth + 2 every 64 chunks missed by up to
 * 6 on a deep ring. One per 64 rather than per 128: on the H200's transfer workload (128
 * chunks) a single middle window's hidden transfer spread by 1.7-2.1 points (rms over its
 * positions) and two windows' by 1.0 (bench/PERF.md, eleventh session). Each window holds
 * every queue of a stage twice; a run of at most the four
 * windows' chunks is timed whole. The windows are chosen by chunk number alone, never by
 * records: chunks may differ in size, and the figures weigh each by its own records. */
sp_sample_windows sp_timing_sample_windows(const sp_pipeline *p)
{
    size_t queues = 1;
    for (size_t s = 0; s < p->n_stages; s++)
        if ((size_t)p->stage_streams[s] > queues)
            queues = (size_t)p->stage_streams[s];
    size_t at_least = 2 * queues;
    sp_sample_windows w = {p->depth + 2, SP_TIMELINE_SAMPLE_WINDOW, SP_TIMELINE_SAMPLE_TAIL};
    if (w.first < SP_TIMELINE_SAMPLE_WINDOW)
        w.first = SP_TIMELINE_SAMPLE_WINDOW;
    if (w.first < at_least)
        w.first = at_least;
    if (w.middle < at_least)
        w.middle = at_least;
    if (w.last < at_least)
        w.last = at_least;
    return w;
}

int sp_timing_in_sample(size_t i, size_t n, const sp_sample_windows *w)
{
    size_t m = w->middle;
    if (n <= w->first + w->last + 2 * m || i < w->first || i >= n - w->last)
        return 1;
    size_t lo = w->first, span = n - w->first - w->last; /* the middle, at least 2m chunks */
    size_t stride = SP_TIMELINE_SAMPLE_STRIDE > 2 * m ? SP_TIMELINE_SAMPLE_STRIDE : 2 * m;
    if (span <= stride) {
        size_t first = lo + (span - m) / 2;
        return i >= first && i < first + m;
    }
    size_t offset = (stride - m) / 2; /* each stride's window in its middle */
    size_t k = (i - lo) / stride, first = lo + k * stride + offset;
    return first + m <= n - w->last && i >= first && i < first + m;
}

/* Fills the pool's ranks for a batch of `chunks`; SP_OK or no memory. */
static sp_status choose_timed(sp_batch *r)
{
    sp_timing_pool *t = &r->p->timing;
    size_t n = r->plan.chunks;
    if (n > t->rank_capacity) {
        size_t *grown = n <= SIZE_MAX / sizeof *grown ? realloc(t->rank, n * sizeof *grown)
                                                      : NULL;
        if (!grown)
            return sp_batch_fail(r, SP_ERR_OUT_OF_MEMORY, "no memory to choose timed chunks");
        t->rank = grown;
        t->rank_capacity = n;
    }
    int sampled = r->p->timeline_mode == SP_TIMELINE_SAMPLED;
    sp_sample_windows none = {0, 0, 0};
    t->windows = sampled ? sp_timing_sample_windows(r->p) : none;
    t->timed = 0;
    for (size_t i = 0; i < n; i++)
        t->rank[i] = !sampled || sp_timing_in_sample(i, n, &t->windows) ? t->timed++
                                                                         : SP_TIMING_UNTIMED;
    if (sampled && t->timed == n)
        t->windows = none; /* timed whole: a full timeline */
    return SP_OK;
}

int sp_timing_timed(const sp_batch *r, size_t i)
{
    return r->event_timing && r->p->timing.rank[i] != SP_TIMING_UNTIMED;
}

/* Events needed: a pair per GPU engine per timed chunk. */
static int events_needed(const sp_batch *r, size_t *n)
{
    size_t pairs;
    if (__builtin_mul_overflow(r->p->timing.timed, sp_gpu_engines(r->p), &pairs) ||
        __builtin_mul_overflow(pairs, (size_t)2, n))
        return 0;
    return 1;
}

/* Grows the events to n and the flags to n / 2 (one per pair). */
static sp_status grow_pool(sp_batch *r, size_t n)
{
    sp_pipeline *p = r->p;
    if (n <= p->timing.n)
        return SP_OK;
    unsigned char *flags = realloc(p->timing.inferred, n / 2);
    if (flags)
        p->timing.inferred = flags;
    sp_bevent **grown = flags ? realloc(p->timing.events, n * sizeof *grown) : NULL;
    if (!grown) {
        sp_backend_error_clear();
        return sp_batch_fail(r, SP_ERR_OUT_OF_MEMORY, "no memory for %zu timing events", n);
    }
    p->timing.events = grown;
    while (p->timing.n < n) {
        sp_status st = p->ctx->ops->event_create(p->ctx->impl, SP_EVENT_TIMING,
                                                 &p->timing.events[p->timing.n]);
        if (st != SP_OK)
            return sp_batch_fail(r, st, "creating timing events");
        p->timing.n++;
    }
    return SP_OK;
}


sp_status sp_timing_start(sp_batch *r)
{
    sp_pipeline *p = r->p;
    sp_status st = choose_timed(r);
    if (st != SP_OK)
        return st;
    p->timing.t0 = r->t0;
    p->timing.recording = p->flight != NULL;
    p->timing.recorded_below = 0;
    if (p->timeline_mode == SP_TIMELINE_CUPTI) { /* bench/PERF.md says what each costs */
        double t = sp_now();
        if (!p->ctx->ops->activity_start) {
            snprintf(r->activity_note, sizeof r->activity_note, "timeline CUPTI asked for: "
                     "events used: the %s backend has no activity records", p->ctx->ops->name);
        } else if (p->ctx->ops->activity_start(p->ctx->impl) == SP_OK) {
            r->activity_timing = 1;
            r->activity_start_s = sp_now() - t;
            return SP_OK;
        } else { /* held by another run, or no libcupti: events instead, and the report says */
            snprintf(r->activity_note, sizeof r->activity_note,
                     "timeline CUPTI asked for: events used: %s", sp_backend_error());
            sp_backend_error_clear();
        }
    }
    size_t n;
    if (!events_needed(r, &n)) {
        sp_backend_error_clear();
        return sp_batch_fail(r, SP_ERR_INVALID_ARGUMENT, "too many chunks to time");
    }
    st = grow_pool(r, n);
    if (st != SP_OK)
        return st;
    st = p->ctx->ops->event_record(p->ctx->impl, p->timing.base, p->h2d);
    if (st != SP_OK)
        return sp_batch_fail(r, st, "recording the timing base event");
    r->event_timing = 1;
    sp_stats_timing(p);
    return SP_OK;
}

static size_t pair_index(const sp_batch *r, size_t g, size_t i)
{
    return r->p->timing.rank[i] * sp_gpu_engines(r->p) + g;
}

sp_bevent *sp_timing_event(const sp_batch *r, size_t g, size_t i, int end)
{
    return r->p->timing.events[pair_index(r, g, i) * 2 + (end ? 1 : 0)];
}

void sp_timing_set_inferred(sp_batch *r, size_t g, size_t i, int inferred)
{
    r->p->timing.inferred[pair_index(r, g, i)] = (unsigned char)inferred;
}

static double end_of(const sp_batch *r, sp_op op)
{
    const sp_timeline *t = &r->p->timeline;
    return t->spans[SP_TL_GPU(op.g) * t->chunks + op.i].end;
}

/* The start of an operation that got no start event: the latest end of what it depended on
 * (submit_direct.c, op_start says why that is exact). The collect loop below has read every one of
 * them already: the previous operation on the queue and the WAR are earlier chunks, the RAW
 * is an earlier engine of the same chunk. */
static double inferred_start(const sp_batch *r, size_t g, size_t i)
{
    sp_op_deps deps;
    sp_ring_op_deps(r->p, g, i, &deps);
    double start = 0.0; /* the base event precedes every operation */
    if (deps.has_previous && end_of(r, deps.previous) > start)
        start = end_of(r, deps.previous);
    for (size_t k = 0; k < deps.n_waits; k++)
        if (end_of(r, deps.waits[k]) > start)
            start = end_of(r, deps.waits[k]);
    return start;
}

/* Chunk i's GPU spans into the timeline (and, when `record`, the flight recorder), their
 * lengths into busy[g]; a backend status when an event cannot be read, nothing failed. */
static sp_status collect_chunk(sp_batch *r, size_t i, int record, double *busy)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    sp_flight_span spans[SP_MAX_STAGES + 2];
    size_t G = sp_gpu_engines(p);
    for (size_t g = 0; g < G; g++) {
        int inferred = p->timing.inferred[pair_index(r, g, i)];
        double a = 0.0, z;
        sp_status st = ops->event_elapsed(p->ctx->impl, p->timing.base,
                                          sp_timing_event(r, g, i, 1), &z);
        if (st == SP_OK && !inferred)
            st = ops->event_elapsed(p->ctx->impl, p->timing.base,
                                    sp_timing_event(r, g, i, 0), &a);
        if (st != SP_OK)
            return st;
        if (inferred)
            a = inferred_start(r, g, i);
        sp_timeline_set(&p->timeline, SP_TL_GPU(g), i, a, z);
        busy[g] = z - a;
        spans[g] = (sp_flight_span){p->timing.t0 + a, p->timing.t0 + z, i + r->base,
                                    (uint32_t)SP_TL_GPU(g), (uint32_t)sp_flight_run(p)};
    }
    if (record)
        sp_flight_push(p->flight, spans, G);
    return SP_OK;
}

/* Timed chunk i (read into the timeline) to the live counters: its busy times, as an edge
 * chunk (every chunk before it or every chunk after it timed: the first or last window,
 * sp_timeline_edges) or a middle one; and when it ends a window (the next chunk untimed, or
 * none), the window's copy sums, from the timeline that holds the window whole by now
 * (chunks are read in order). */
static void to_stats(sp_batch *r, size_t i, const double *busy)
{
    sp_pipeline *p = r->p;
    const sp_timing_pool *t = &p->timing;
    size_t n = r->plan.chunks, rank = t->rank[i];
    int edge = rank == i || n - 1 - i == t->timed - 1 - rank;
    sp_stats_timed(p, edge, sp_timeline_chunk_records(&p->timeline, i), busy,
                   sp_gpu_engines(p));
    if (i + 1 < n && t->rank[i + 1] != SP_TIMING_UNTIMED)
        return;
    size_t a = i;
    while (a > 0 && t->rank[a - 1] != SP_TIMING_UNTIMED)
        a--;
    sp_window_sums sums;
    memset(&sums, 0, sizeof sums);
    sp_status st = sp_timeline_window_sums(&p->timeline, a, i, &sums);
    sp_stats_window(p, st == SP_OK ? &sums : NULL);
}

/* Chunk i read into the timeline, the live counters and, when `record`, the recorder. */
static sp_status read_chunk(sp_batch *r, size_t i, int record)
{
    double busy[SP_MAX_STAGES + 2];
    sp_status st = collect_chunk(r, i, record, busy);
    if (st == SP_OK)
        to_stats(r, i, busy);
    return st;
}

/* The timed chunks not read while the run went (sp_timing_retired), once it has drained. */
sp_status sp_timing_collect(sp_batch *r)
{
    sp_pipeline *p = r->p;
    for (size_t i = p->timing.recorded_below; i < r->plan.chunks; i++) {
        sp_status st = sp_timing_timed(r, i) ? read_chunk(r, i, p->timing.recording) : SP_OK;
        if (st != SP_OK)
            return sp_batch_fail(r, st, "chunk %zu: reading its timing events", i);
    }
    p->timing.recorded_below = r->plan.chunks;
    return SP_OK;
}

/* ---- while the run goes: the live counters and the flight recorder ---------------------- */

/* Reads the timed chunks up to `below` whose last operation is done, in order, into the
 * timeline, the live counters and the recorder; stops at the first that is not done (it
 * waits for the next call, or sp_timing_collect). A backend status when a question or a
 * read failed, as sp_timing_collect's would: nothing is read past it. An untimed chunk
 * costs the loop a step and nothing else. */
static sp_status read_up_to(sp_batch *r, size_t below, size_t *failed)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t G = sp_gpu_engines(p);
    for (size_t i = p->timing.recorded_below; i < below; i = ++p->timing.recorded_below) {
        if (!sp_timing_timed(r, i))
            continue;
        int complete = 1;
        *failed = i;
        sp_status st = ops->event_query ? ops->event_query(p->ctx->impl,
                                                           sp_timing_event(r, G - 1, i, 1),
                                                           &complete)
                                        : SP_OK;
        if (st == SP_OK && !complete)
            break;
        if (st == SP_OK)
            st = read_chunk(r, i, p->timing.recording);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

/* Read now only for someone: the flight recorder, or a reader of the live counters (a run
 * nobody watches reads its chunks after the drain, as before the live figures). */
static int read_while_running(const sp_batch *r)
{
    return r->event_timing && (r->p->timing.recording || sp_stats_watched(r->p));
}

sp_status sp_timing_retired(sp_batch *r, size_t chunk)
{
    size_t failed = 0;
    sp_status st = read_while_running(r) && chunk >= r->base
                       ? read_up_to(r, chunk - r->base + 1, &failed)
                       : SP_OK;
    if (st != SP_OK)
        return sp_batch_fail(r, st, "chunk %zu: reading its timing events", failed);
    return SP_OK;
}

void sp_timing_drained(sp_batch *r)
{
    size_t failed;
    /* a failed run's chunks that never ran cannot be read: the recorder keeps the rest */
    if (r->p->timing.recording && r->event_timing &&
        read_up_to(r, r->plan.chunks, &failed) != SP_OK)
        sp_backend_error_clear();
}

/* ---- activity records ----------------------------------------------------------------- */

uint64_t sp_timing_activity_id(const sp_batch *r, size_t g, size_t i)
{
    return (uint64_t)pair_index(r, g, i) + 1; /* 0 is no operation */
}

typedef struct activity_spans {
    const sp_batch *run;
    size_t n;       /* pairs */
    double *spans;  /* [2 * pair]: earliest start, latest end; start > end: none seen */
} activity_spans;

static void note_activity(void *user, uint64_t id, double start_s, double end_s)
{
    activity_spans *a = user;
    if (id == 0 || id > a->n)
        return; /* not one of this run's */
    double *span = &a->spans[2 * (id - 1)];
    if (start_s < span[0])
        span[0] = start_s;
    if (end_s > span[1])
        span[1] = end_s;
}

/* Every operation's span from its records; one that enqueued nothing the backend records (a
 * stage whose function launched no kernel) gets an empty span where it could have started. */
static void activity_to_timeline(sp_batch *r, const activity_spans *a)
{
    sp_pipeline *p = r->p;
    for (size_t i = 0; i < r->plan.chunks; i++)
        for (size_t g = 0; g < sp_gpu_engines(p); g++) {
            const double *span = &a->spans[2 * pair_index(r, g, i)];
            double start = span[0], end = span[1];
            if (start > end)
                start = end = inferred_start(r, g, i);
            sp_timeline_set(&p->timeline, SP_TL_GPU(g), i, start, end);
        }
}

sp_status sp_timing_activity_collect(sp_batch *r)
{
    sp_pipeline *p = r->p;
    size_t ends = 0; /* 2 per pair, as for events: the span's two ends */
    int sized = events_needed(r, &ends);
    double *spans = sized && ends ? malloc(ends * sizeof *spans) : NULL;
    activity_spans a = {r, spans ? ends / 2 : 0, spans}; /* n = 0: every record is ignored */
    for (size_t k = 0; k < a.n; k++) {
        spans[2 * k] = 1e300;
        spans[2 * k + 1] = -1e300;
    }
    /* always, even without spans: it also ends what activity_start began */
    double t = sp_now();
    sp_status st = p->ctx->ops->activity_collect(p->ctx->impl, note_activity, &a);
    r->activity_read_s = sp_now() - t;
    /* The run's work is done and drained whatever happened here: records that could not be
     * read leave spans inferred, which the report's note says, rather than fail the run. */
    if (st != SP_OK) {
        snprintf(r->activity_note, sizeof r->activity_note, "some CUPTI records were lost (%s): "
                 "their operations' spans are inferred", sp_backend_error());
        sp_backend_error_clear();
    }
    if (ends && !spans)
        return sp_batch_fail(r, SP_ERR_OUT_OF_MEMORY, "no memory for %zu activity spans", ends / 2);
    activity_to_timeline(r, &a);
    free(spans);
    return SP_OK;
}

/* ---- the timeline ------------------------------------------------------------------- */

static void name_engines(sp_batch *b)
{
    sp_pipeline *p = b->p;
    sp_timeline *t = &p->timeline;
    size_t M = p->n_stages;
    const sp_run_plan *plan = &b->plan;
    t->name[SP_TL_STAGE_IN] = "stage-in";
    t->kind[SP_TL_STAGE_IN] = SP_ENGINE_STAGE_IN;
    t->active[SP_TL_STAGE_IN] = b->stage_in;
    t->bytes[SP_TL_STAGE_IN] = plan->in_bytes;
    t->name[SP_TL_GPU(0)] = b->in_device ? "d2d in" : "h2d"; /* a device-resident end's */
    t->kind[SP_TL_GPU(0)] = SP_ENGINE_H2D;
    t->bytes[SP_TL_GPU(0)] = plan->in_bytes;
    for (size_t s = 1; s <= M; s++) {
        t->name[SP_TL_GPU(s)] = p->stage_names[s - 1];
        t->kind[SP_TL_GPU(s)] = SP_ENGINE_COMPUTE;
        t->streams[SP_TL_GPU(s)] = p->stage_streams[s - 1];
        t->bytes[SP_TL_GPU(s)] = plan->n_records * p->record_bytes[s - 1];
    }
    t->name[SP_TL_GPU(M + 1)] = b->out_device ? "d2d out" : "d2h";
    t->kind[SP_TL_GPU(M + 1)] = SP_ENGINE_D2H;
    t->bytes[SP_TL_GPU(M + 1)] = plan->out_bytes;
    for (size_t g = 0; g <= M + 1; g++)
        t->active[SP_TL_GPU(g)] = 1;
    t->name[SP_TL_STAGE_OUT(p)] = "stage-out";
    t->kind[SP_TL_STAGE_OUT(p)] = SP_ENGINE_STAGE_OUT;
    t->active[SP_TL_STAGE_OUT(p)] = b->stage_out;
    t->bytes[SP_TL_STAGE_OUT(p)] = plan->out_bytes;
    t->n_records = plan->n_records;
    t->chunk_records = plan->chunk_records;
    t->depth = p->depth;
}

sp_status sp_timing_timeline_start(sp_batch *b)
{
    sp_pipeline *p = b->p;
    if (sp_timeline_reset(&p->timeline, p->n_stages + 4, b->plan.chunks) != SP_OK)
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY,
                                "no memory for the timeline of %zu chunks", b->plan.chunks);
    name_engines(b);
    return SP_OK;
}

void sp_timing_invalidate(sp_pipeline *p)
{
    p->timeline.complete = 0;
    p->timing.recording = 0; /* until sp_timing_start: a serial run keeps none */
}

void sp_timing_complete(sp_pipeline *p, double makespan_s)
{
    p->timeline.makespan_s = makespan_s;
    p->timeline.complete = 1;
}

void sp_timing_span(sp_pipeline *p, size_t engine, size_t i, double start, double end)
{
    sp_timeline_set(&p->timeline, engine, i, start, end);
    if (p->timing.recording) { /* host spans are known at once: kept as they happen */
        sp_flight_span s = {p->timing.t0 + start, p->timing.t0 + end, i, (uint32_t)engine,
                            (uint32_t)sp_flight_run(p)};
        sp_flight_push(p->flight, &s, 1);
    }
}

void sp_timing_chunk(sp_batch *b, size_t i)
{
    sp_timeline_set_records(&b->p->timeline, i - b->base, sp_chunk_records(b, i));
}

sp_sample_windows sp_timing_windows(const sp_pipeline *p) { return p->timing.windows; }

void sp_timing_serial_queues(sp_pipeline *p)
{
    for (size_t s = 1; s <= p->n_stages; s++)
        p->timeline.streams[SP_TL_GPU(s)] = 1; /* every chunk on the stage's first queue */
}
