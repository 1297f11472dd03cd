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
 * The first and last windows stand for themselves (the ramp and the drain happen once); the
 * middle windows stand for every other chunk, weighed by records. */
#include <math.h>
#include <stdlib.h>

#include "core/timeline.h"

typedef struct copy_sums {
    double copy, hidden;
    size_t records;
} copy_sums;

static sp_span span_at(const sp_timeline *t, size_t e, size_t c)
{
    return t->spans[e * t->chunks + c];
}

static int recorded(const sp_timeline *t, size_t c)
{
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

/* The window's copies clipped to its region, measured against the compute spans. */
static copy_sums window_copies(const sp_timeline *t, size_t a, size_t b, const sp_span *merged,
                               size_t m)
{
    copy_sums w = {0.0, 0.0, 0};
    double lo, hi;
    window_region(t, a, b, &lo, &hi);
    for (size_t c = a; c <= b; c++)
        w.records += sp_timeline_chunk_records(t, c);
    for (size_t e = 0; lo < hi && e < t->engines; e++) {
        if (!t->active[e] || (t->kind[e] != SP_ENGINE_H2D && t->kind[e] != SP_ENGINE_D2H))
            continue;
        for (size_t c = a; c <= b; c++) {
            sp_span s = span_at(t, e, c);
            if (s.start < lo)
                s.start = lo;
            if (s.end > hi)
                s.end = hi;
            if (s.end <= s.start)
                continue;
            w.copy += s.end - s.start;
            w.hidden += sp_span_covered(s, merged, m);
        }
    }
    return w;
}

static size_t merge_compute(const sp_timeline *t, sp_span *out)
{
    size_t n = 0;
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e] || t->kind[e] != SP_ENGINE_COMPUTE)
            continue;
        for (size_t c = 0; c < t->chunks; c++) {
            sp_span s = span_at(t, e, c);
            if (s.end >= s.start)
                out[n++] = s;
        }
    }
    return sp_spans_merge(out, n);
}

double sp_timeline_hidden_transfer(const sp_timeline *t)
{
    sp_span *merged = malloc((t->engines * t->chunks + 1) * sizeof *merged);
    if (!merged)
        return 0.0;
    size_t m = merge_compute(t, merged);
    copy_sums edge = {0.0, 0.0, 0}, middle = {0.0, 0.0, 0};
    for (size_t a = 0; a < t->chunks;) {
        if (!recorded(t, a)) {
            a++;
            continue;
        }
        size_t b = a;
        while (b + 1 < t->chunks && recorded(t, b + 1))
            b++;
        copy_sums w = window_copies(t, a, b, merged, m);
        copy_sums *into = a == 0 || b + 1 == t->chunks ? &edge : &middle;
        into->copy += w.copy;
        into->hidden += w.hidden;
        into->records += w.records;
        a = b + 1;
    }
    free(merged);
    /* the middle windows stand for every chunk the first and last do not hold */
    double weight = middle.records > 0 && t->n_records > edge.records
                        ? (double)(t->n_records - edge.records) / (double)middle.records
                        : 1.0;
    double copy = edge.copy + weight * middle.copy;
    double hidden = edge.hidden + weight * middle.hidden;
    return copy > 0.0 ? hidden / copy : 0.0;
}
