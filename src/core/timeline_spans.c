/* The timeline's leaf arithmetic: a chunk's bytes (its records: timeline.h, inline, as every
 * timed chunk reads them while a watched run goes), and spans merged and covered;
 * used by the figures (timeline.c) and the windows (timeline_windows.c). */
#include <stdlib.h>

#include "core/timeline.h"

size_t sp_timeline_chunk_bytes(const sp_timeline *t, size_t engine, size_t chunk)
{
    if (t->n_records == 0)
        return 0;
    return t->bytes[engine] / t->n_records * sp_timeline_chunk_records(t, chunk);
}

static int span_by_start(const void *a, const void *b)
{
    double x = ((const sp_span *)a)->start, y = ((const sp_span *)b)->start;
    return (x > y) - (x < y);
}

size_t sp_spans_merge(sp_span *spans, size_t n)
{
    qsort(spans, n, sizeof *spans, span_by_start);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && spans[i].start <= spans[m - 1].end) {
            if (spans[i].end > spans[m - 1].end)
                spans[m - 1].end = spans[i].end;
        } else {
            spans[m++] = spans[i];
        }
    }
    return m;
}

/* The first of the merged spans that ends after `at`: disjoint and sorted by start, they
 * are sorted by end too. */
static size_t first_ending_after(const sp_span *merged, size_t n, double at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (merged[mid].end > at)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Searched, not scanned from the first: a replayed sampled timeline (timeline_replay.c) asks
 * this of every copy of a long run, and a scan would make the report quadratic in chunks. */
double sp_span_covered(sp_span s, const sp_span *merged, size_t n)
{
    double covered = 0.0;
    for (size_t i = first_ending_after(merged, n, s.start); i < n && merged[i].start < s.end;
         i++) {
        double a = merged[i].start > s.start ? merged[i].start : s.start;
        double b = merged[i].end < s.end ? merged[i].end : s.end;
        if (b > a)
            covered += b - a;
    }
    return covered;
}
