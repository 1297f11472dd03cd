/* Hidden transfer from a timeline whose GPU spans may be recorded for some chunks only
 * (SP_TIMELINE_SAMPLED), and exactly from a full one.
 *
 * A copy's overlap with compute is only known where every compute operation running then is
 * known. Each queue runs its operations in order, so within a window of consecutive recorded
 * chunks [a, b] a compute queue's activity between the start of its first chunk of the window
 * and the end of its last is exactly the window's spans. Their intersection over the compute
 * queues is the window's region; the copies of the window's chunks are measured inside it
 * only (before chunk 0 nothing computed, and after the last chunk nothing will: the first and
 * last windows' regions reach the run's start and end). A full timeline is one window whose
 * region is the whole run: the figure is then exact, as before sampling.
 *
 * The first and last windows stand for themselves (the ramp and the drain happen once, and
 * unlike each other); the middle windows for every other chunk. Each direction's (h2d, d2h) hidden fraction is
 * measured inside the regions, per part, and applied to that part's whole copy time in that
 * direction (the middle's scaled by records to the chunks it stands for): a region holds
 * only some of its window's copies (the first h2d comes before any compute of the window,
 * and in a deep ring a d2h overlaps compute up to depth chunks later), so weighing by the
 * time measured would favour whichever the regions happen to hold more of. The first window
 * is depth + 2 chunks long (timing.c), so the ramp's copies have their overlap partners in
 * it; the middle and last windows are shorter, each holding a steady state or the drain. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeline.h"

static sp_span span_at(const sp_timeline *t, size_t e, size_t c)
{
    return t->spans[e * t->chunks + c];
}

static int recorded(const sp_timeline *t, size_t c)
{
    if (t->engines <= SP_TL_GPU(0))
        return 1; /* no h2d row to tell timed chunks by (a timeline of a few engines, as the
                     unit tests make): every chunk stands for itself */
    sp_span s = span_at(t, SP_TL_GPU(0), c); /* h2d: every timed chunk has one */
    return s.end >= s.start;
}

void sp_timeline_edges(const sp_timeline *t, size_t *first_end, size_t *last_start)
{
    size_t a = 0, b = t->chunks;
    while (a < t->chunks && recorded(t, a))
        a++;
    while (b > a && recorded(t, b - 1))
        b--;
    *first_end = a;
    *last_start = b;
}

/* [lo, hi] where every compute queue's activity is known from chunks [a, b]; lo > hi when
 * nowhere (a queue none of the window's chunks ran on). */
static void window_region(const sp_timeline *t, size_t a, size_t b, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    double start_max = -INFINITY, end_min = INFINITY;
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e] || t->kind[e] != SP_ENGINE_COMPUTE)
            continue;
        size_t queues = t->streams[e] > 1 ? t->streams[e] : 1;
        for (size_t q = 0; q < queues; q++) {
            size_t first = a + (q + queues - a % queues) % queues; /* first c >= a, c%Q == q */
            if (first > b) {
                *lo = INFINITY; /* this queue's activity in the window is unknown */
                return;
            }
            size_t last = first + (b - first) / queues * queues;
            if (span_at(t, e, first).start > start_max)
                start_max = span_at(t, e, first).start;
            if (span_at(t, e, last).end < end_min)
                end_min = span_at(t, e, last).end;
        }
    }
    if (a > 0)
        *lo = start_max;
    if (b + 1 < t->chunks)
        *hi = end_min;
}

/* The window's copies of one direction (kind) inside its region, measured against the
 * compute spans. The first and last windows' are cut to the region: what lies inside is
 * known exactly, and the rest is estimated apart. A middle window gives a fraction for the
 * rest of the run, and there only the copies that lie whole inside count, where the window
 * holds any: a copy cut at the region's edge keeps the part that the region's own computes
 * overlap and drops the rest, so cut copies read high. On the H200's transfer workload, where
 * the d2h queue lags the ring by 3 chunks and a window's last compute overlaps its second
 * d2h, one middle window of 5 read +2.9 points of hidden transfer in the median over its
 * positions, and +0.0 from whole copies (bench/PERF.md, eleventh session). A window whose
 * copies all straddle its region (a queue lagging by more than the window) has only the cut
 * ones to go by. */
static sp_copy_sums window_copies(const sp_timeline *t, size_t a, size_t b, sp_engine_kind kind,
                               const sp_span *merged, size_t m)
{
    int middle = a > 0 && b + 1 < t->chunks;
    sp_copy_sums whole = {0.0, 0.0, 0.0, 0}, cut = whole;
    double lo, hi;
    window_region(t, a, b, &lo, &hi);
    for (size_t c = a; c <= b; c++)
        whole.records += sp_timeline_chunk_records(t, c);
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e] || t->kind[e] != kind)
            continue;
        for (size_t c = a; c <= b; c++) {
            sp_span s = span_at(t, e, c);
            if (s.end <= s.start)
                continue;
            whole.whole += s.end - s.start;
            if (s.start >= lo && s.end <= hi) {
                whole.copy += s.end - s.start;
                whole.hidden += sp_span_covered(s, merged, m);
            }
            s.start = fmax(s.start, lo);
            s.end = fmin(s.end, hi);
            if (s.end > s.start) {
                cut.copy += s.end - s.start;
                cut.hidden += sp_span_covered(s, merged, m);
            }
        }
    }
    if (!middle || whole.copy <= 0.0) {
        whole.copy = cut.copy;
        whole.hidden = cut.hidden;
    }
    return whole;
}

/* The compute spans of chunks [a, b], merged into out (room for engines x (b - a + 1)):
 * inside the window's region every compute queue runs the window's chunks only (each queue
 * runs its chunks in order), so these are all the compute a copy measured there can meet. */
static size_t merge_compute(const sp_timeline *t, size_t a, size_t b, sp_span *out)
{
    size_t n = 0;
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e] || t->kind[e] != SP_ENGINE_COMPUTE)
            continue;
        for (size_t c = a; c <= b; c++) {
            sp_span s = span_at(t, e, c);
            if (s.end >= s.start)
                out[n++] = s;
        }
    }
    return sp_spans_merge(out, n);
}

static void add_sums(sp_copy_sums *into, sp_copy_sums w)
{
    into->copy += w.copy;
    into->hidden += w.hidden;
    into->whole += w.whole;
    into->records += w.records;
}

sp_status sp_timeline_window_sums(const sp_timeline *t, size_t a, size_t b,
                                  sp_window_sums *sums)
{
    size_t n = (b - a + 1) * t->engines + 1;
    sp_span *merged = n <= SIZE_MAX / sizeof *merged ? malloc(n * sizeof *merged) : NULL;
    if (!merged)
        return SP_ERR_OUT_OF_MEMORY;
    size_t m = merge_compute(t, a, b, merged);
    int part = a == 0 ? SP_WINDOW_FIRST : b + 1 == t->chunks ? SP_WINDOW_LAST : SP_WINDOW_MIDDLE;
    add_sums(&sums->part[0][part], window_copies(t, a, b, SP_ENGINE_H2D, merged, m));
    add_sums(&sums->part[1][part], window_copies(t, a, b, SP_ENGINE_D2H, merged, m));
    free(merged);
    return SP_OK;
}

/* One direction's copy time over a run of n_records and the part of it under compute. The
 * copy time is the windows' whole copies, the middle's scaled by records to the chunks it
 * stands for. Of it, what the first and last windows' regions hold is measured exactly (the
 * ramp and the drain, which happen once and are unlike the rest); everything else is taken
 * to be hidden as the middle windows' regions show (the edges' if there is no middle window). */
static void direction(const sp_copy_sums *part, size_t n_records, double *copy, double *hidden)
{
    const sp_copy_sums *first = &part[SP_WINDOW_FIRST], *last = &part[SP_WINDOW_LAST];
    const sp_copy_sums *middle = &part[SP_WINDOW_MIDDLE];
    size_t edge_records = first->records + last->records;
    double weight = middle->records > 0 && n_records > edge_records
                        ? (double)(n_records - edge_records) / (double)middle->records
                        : 1.0;
    double f_middle = middle->copy > 0.0 ? middle->hidden / middle->copy
                      : first->copy + last->copy > 0.0
                          ? (first->hidden + last->hidden) / (first->copy + last->copy) : 0.0;
    *copy = first->whole + last->whole + weight * middle->whole;
    double known = first->copy + last->copy; /* measured exactly: the ramp's and the drain's */
    *hidden = first->hidden + last->hidden + f_middle * (*copy > known ? *copy - known : 0.0);
}

double sp_window_sums_hidden(const sp_window_sums *sums, size_t n_records)
{
    double in_copy, in_hidden, out_copy, out_hidden;
    direction(sums->part[0], n_records, &in_copy, &in_hidden);
    direction(sums->part[1], n_records, &out_copy, &out_hidden);
    double copy = in_copy + out_copy;
    return copy > 0.0 ? (in_hidden + out_hidden) / copy : 0.0;
}

double sp_timeline_hidden_transfer(const sp_timeline *t)
{
    sp_window_sums sums;
    memset(&sums, 0, sizeof sums);
    for (size_t a = 0; a < t->chunks;) {
        if (!recorded(t, a)) {
            a++;
            continue;
        }
        size_t b = a;
        while (b + 1 < t->chunks && recorded(t, b + 1))
            b++;
        if (sp_timeline_window_sums(t, a, b, &sums) != SP_OK)
            return 0.0;
        a = b + 1;
    }
    return sp_window_sums_hidden(&sums, t->n_records);
}
