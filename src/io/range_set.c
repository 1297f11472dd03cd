/* The set of record ranges (range_set.h). */
#include <stdlib.h>
#include <string.h>

#include "io/range_set.h"

static int reserve(sp_range_set *s, size_t n)
{
    if (n <= s->cap)
        return 1;
    size_t cap = s->cap ? 2 * s->cap : 8;
    while (cap < n)
        cap *= 2;
    sp_range *grown = realloc(s->r, cap * sizeof *grown);
    if (!grown)
        return 0;
    s->r = grown;
    s->cap = cap;
    return 1;
}

int sp_range_set_add(sp_range_set *s, size_t first, size_t end)
{
    if (first >= end)
        return 1;
    /* lo: the first range that ends at or after `first`; hi: past the last that starts at or
     * before `end` (touching ranges merge, so that a finished run is one range) */
    size_t lo = 0, hi;
    while (lo < s->n && s->r[lo].end < first)
        lo++;
    for (hi = lo; hi < s->n && s->r[hi].first <= end; hi++) {
        if (s->r[hi].first < first)
            first = s->r[hi].first;
        if (s->r[hi].end > end)
            end = s->r[hi].end;
    }
    if (hi == lo) { /* touches none: a new range at lo */
        if (!reserve(s, s->n + 1))
            return 0;
        memmove(&s->r[lo + 1], &s->r[lo], (s->n - lo) * sizeof *s->r);
        s->n++;
    } else { /* ranges lo..hi-1 become one */
        memmove(&s->r[lo + 1], &s->r[hi], (s->n - hi) * sizeof *s->r);
        s->n -= hi - lo - 1;
    }
    s->r[lo] = (sp_range){first, end};
    return 1;
}

size_t sp_range_set_count(const sp_range_set *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->r[i].end - s->r[i].first;
    return n;
}

int sp_range_set_covers(const sp_range_set *s, size_t first, size_t end)
{
    if (first >= end)
        return 1;
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].first <= first && end <= s->r[i].end)
            return 1;
    return 0;
}

int sp_range_set_first_gap(const sp_range_set *s, size_t total, size_t *first, size_t *end)
{
    return sp_range_set_gap_from(s, 0, total, first, end);
}

int sp_range_set_gap_from(const sp_range_set *s, size_t from, size_t total, size_t *first,
                          size_t *end)
{
    size_t at = from;
    for (size_t i = 0; i < s->n && at < total; i++) {
        if (s->r[i].first > at) {
            *first = at;
            *end = s->r[i].first < total ? s->r[i].first : total;
            return 1;
        }
        if (s->r[i].end > at)
            at = s->r[i].end;
    }
    if (at >= total)
        return 0;
    *first = at;
    *end = total;
    return 1;
}

int sp_range_set_copy(sp_range_set *dst, const sp_range_set *src)
{
    if (!reserve(dst, src->n))
        return 0;
    if (src->n)
        memcpy(dst->r, src->r, src->n * sizeof *src->r);
    dst->n = src->n;
    return 1;
}

void sp_range_set_free(sp_range_set *s)
{
    free(s->r);
    s->r = NULL;
    s->n = s->cap = 0;
}
