#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/timeline.h"

sp_status sp_timeline_reset(sp_timeline *t, size_t engines, size_t chunks)
{
    size_t n, bytes;
    /* n spans' bytes must not wrap either: a short block taken as n spans would be filled
     * past its end below, and by every later run that fits in the recorded capacity */
    if (__builtin_mul_overflow(engines, chunks, &n) ||
        __builtin_mul_overflow(n, sizeof *t->spans, &bytes))
        return SP_ERR_OUT_OF_MEMORY;
    if (chunks > t->records_capacity) {
        size_t *grown = chunks <= SIZE_MAX / sizeof *grown
                            ? realloc(t->records, chunks * sizeof *grown) : NULL;
        if (!grown)
            return SP_ERR_OUT_OF_MEMORY;
        t->records = grown;
        t->records_capacity = chunks;
    }
    if (chunks)
        memset(t->records, 0, chunks * sizeof *t->records);
    if (n > t->capacity) {
        sp_span *grown = realloc(t->spans, bytes);
        if (!grown)
            return SP_ERR_OUT_OF_MEMORY;
        t->spans = grown;
        t->capacity = n;
    }
    t->engines = engines;
    t->chunks = chunks;
    for (size_t i = 0; i < n; i++)
        t->spans[i] = (sp_span){0.0, -1.0};
    memset(t->bytes, 0, sizeof t->bytes);
    memset(t->active, 0, sizeof t->active);
    memset(t->streams, 0, sizeof t->streams);
    t->complete = 0;
    return SP_OK;
}

void sp_timeline_free(sp_timeline *t)
{
    free(t->spans);
    free(t->records);
    memset(t, 0, sizeof *t);
}

sp_status sp_timeline_copy(sp_timeline *copy, const sp_timeline *src)
{
    sp_status st = sp_timeline_reset(copy, src->engines, src->chunks);
    if (st != SP_OK)
        return st;
    sp_span *spans = copy->spans;
    size_t *records = copy->records, capacity = copy->capacity;
    size_t records_capacity = copy->records_capacity;
    *copy = *src; /* the engines' facts, then its own arrays back */
    copy->spans = spans;
    copy->records = records;
    copy->capacity = capacity;
    copy->records_capacity = records_capacity;
    memcpy(spans, src->spans, src->engines * src->chunks * sizeof *spans);
    if (src->chunks)
        memcpy(records, src->records, src->chunks * sizeof *records);
    return SP_OK;
}

static int is_host_staging(sp_engine_kind k)
{
    return k == SP_ENGINE_STAGE_IN || k == SP_ENGINE_STAGE_OUT;
}

/* Appends engine e's recorded spans to out; returns the new count. */
static size_t collect_spans(const sp_timeline *t, size_t e, sp_span *out, size_t n)
{
    for (size_t c = 0; c < t->chunks; c++) {
        sp_span s = t->spans[e * t->chunks + c];
        if (s.end >= s.start)
            out[n++] = s;
    }
    return n;
}

/* Union of the spans of every active engine whose kind `want` accepts, as sorted disjoint
 * spans in `out` (room for engines x chunks); returns how many. */
static size_t merge_spans(const sp_timeline *t, int (*want)(sp_engine_kind), sp_span *out)
{
    size_t n = 0;
    for (size_t e = 0; e < t->engines; e++)
        if (t->active[e] && want(t->kind[e]))
            n = collect_spans(t, e, out, n);
    return sp_spans_merge(out, n);
}

static double total_length(const sp_span *spans, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += spans[i].end - spans[i].start;
    return sum;
}

/* Seconds during which the host was staging in either direction: both directions are
 * copied together by one pool, so their union, not their sum, is the host's busy time. */
static double host_staging_time(const sp_timeline *t)
{
    sp_span *merged = malloc((t->engines * t->chunks + 1) * sizeof *merged);
    if (!merged)
        return 0.0;
    double busy = total_length(merged, merge_spans(t, is_host_staging, merged));
    free(merged);
    return busy;
}

/* A stage on several streams runs chunks side by side: its busy time is the time it had
 * any chunk running (the union of its spans), not the sum. */
static double engine_union(const sp_timeline *t, size_t e)
{
    sp_span *spans = malloc((t->chunks + 1) * sizeof *spans);
    if (!spans)
        return 0.0;
    double busy = total_length(spans, sp_spans_merge(spans, collect_spans(t, e, spans, 0)));
    free(spans);
    return busy;
}

/* The engine's work over the run, from its recorded chunks, and the factor from their work
 * to that (1 for a full timeline). A sampled timeline's first and last windows stand for
 * themselves (the ramp and the drain are unlike the rest: no waits on earlier chunks yet,
 * none on later ones); its middle windows for every other chunk, by records. */
static double engine_totals(const sp_timeline *t, size_t e, sp_engine_report *r)
{
    size_t first_end, last_start, edge_records = 0, middle_records = 0;
    sp_timeline_edges(t, &first_end, &last_start);
    double edge = 0.0, middle = 0.0;
    r->max_chunk_s = 0.0;
    for (size_t c = 0; c < t->chunks; c++) {
        sp_span s = t->spans[e * t->chunks + c];
        if (s.end < s.start)
            continue;
        double d = s.end - s.start;
        int at_edge = c < first_end || c >= last_start;
        *(at_edge ? &edge : &middle) += d;
        *(at_edge ? &edge_records : &middle_records) += sp_timeline_chunk_records(t, c);
        if (d > r->max_chunk_s)
            r->max_chunk_s = d;
    }
    r->busy_s = sp_sampled_total(edge, middle, edge_records, middle_records, t->n_records);
    double work = edge + middle;
    return work > 0.0 ? r->busy_s / work : 1.0;
}

size_t sp_timeline_timed_chunks(const sp_timeline *t)
{
    if (t->engines <= SP_TL_GPU(0))
        return t->chunks; /* no h2d row (sp_timeline_edges): every chunk stands for itself */
    size_t n = 0;
    for (size_t c = 0; c < t->chunks; c++) {
        sp_span s = t->spans[SP_TL_GPU(0) * t->chunks + c];
        n += s.end >= s.start;
    }
    return n;
}

static void figures_of(const sp_timeline *t, sp_report *report)
{
    report->n_engines = 0;
    report->bottleneck[0] = '\0';
    report->h2d_gbps = report->d2h_gbps = 0.0;
    double per_chunk_max = 0.0, per_chunk_sum = 0.0;
    report->bound_s = 0.0;
    report->serial_s = 0.0;
    for (size_t e = 0; e < t->engines && report->n_engines < SP_MAX_ENGINES; e++) {
        if (!t->active[e])
            continue;
        sp_engine_report *r = &report->engines[report->n_engines++];
        memset(r, 0, sizeof *r);
        strncpy(r->name, t->name[e], sizeof r->name - 1);
        r->kind = t->kind[e];
        r->bytes = t->bytes[e];
        double scale = engine_totals(t, e, r);
        double work = r->busy_s; /* the no-overlap figures add up work, not wall time */
        if (t->streams[e] > 1)
            r->busy_s = engine_union(t, e) * scale;
        report->serial_s += work;
        /* the model's per-chunk time is the engine's rate: wall time per chunk, so a stage
         * running chunks side by side counts what it achieves, not its work */
        double mean = t->chunks ? r->busy_s / (double)t->chunks : 0.0;
        per_chunk_sum += mean;
        if (mean > per_chunk_max)
            per_chunk_max = mean;
        if (!is_host_staging(r->kind) && r->busy_s > report->bound_s) {
            report->bound_s = r->busy_s;
            strncpy(report->bottleneck, r->name, sizeof report->bottleneck - 1);
        }
        if (r->kind == SP_ENGINE_H2D)
            report->h2d_gbps = sp_gbps((double)r->bytes, r->busy_s);
        if (r->kind == SP_ENGINE_D2H)
            report->d2h_gbps = sp_gbps((double)r->bytes, r->busy_s);
    }
    double host_staging = host_staging_time(t);
    if (host_staging > report->bound_s) {
        report->bound_s = host_staging;
        strncpy(report->bottleneck, "host staging", sizeof report->bottleneck - 1);
    }
    report->bottleneck[sizeof report->bottleneck - 1] = '\0';
    report->model_s = t->chunks ? (double)(t->chunks - 1) * per_chunk_max + per_chunk_sum : 0.0;
    report->efficiency = report->makespan_s > 0.0 ? report->bound_s / report->makespan_s : 0.0;
    report->hidden_transfer = sp_timeline_hidden_transfer(t);
}

/* A sampled timeline's figures are those of a copy whose untimed chunks are replayed
 * (timeline_replay.c): where the host's staging sets the pace and varies chunk to chunk
 * (pageable input), a few windows' overlap does not stand for the rest, but every chunk's
 * stage-in end is known and with it when each untimed chunk could start. The busy times of
 * single-queue engines come out as the windows' extrapolation does (the replay's rates are
 * its ratio); a stage on several queues gets the union of its replayed spans, and hidden
 * transfer the exact arithmetic. Where no replay can be made (timeline.h says when) or no
 * memory is left for the copy, the windows' estimates remain. */
void sp_timeline_figures(const sp_timeline *t, sp_report *report)
{
    size_t timed = sp_timeline_timed_chunks(t);
    int replayed = 0;
    if (timed < t->chunks) {
        sp_timeline copy;
        memset(&copy, 0, sizeof copy);
        replayed = sp_timeline_copy(&copy, t) == SP_OK && sp_timeline_replay(&copy) == SP_OK;
        if (replayed)
            figures_of(&copy, report);
        sp_timeline_free(&copy);
    }
    if (!replayed)
        figures_of(t, report);
    report->timed_chunks = timed; /* the run's cost: what was timed, not what was replayed */
}
