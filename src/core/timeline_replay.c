/* The untimed chunks of a sampled timeline, replayed (issue 27).
 *
 * The windows (timeline_windows.c) measure how much copy time compute hides in a few
 * chunks and take the rest of the run to be alike. Where the host's staging sets the pace
 * and varies from chunk to chunk (pageable input), it is not: a window that happens to hold
 * slow stagings sees the GPU idle more than the run did, and one holding fast ones less
 * (on an H100, -18 to +7.6 points). But every chunk's stage-in span is recorded, sampled or
 * not, and the GPU side is regular: each queue runs its operations in order, each operation
 * waits for the ring's other dependencies, and on a GPU an operation's time follows its
 * records. So each untimed GPU operation is given its chunk's records times its engine's
 * seconds per record, starting once all it waits for has ended:
 *   - GPU engine g of chunk c (h2d = 0 .. d2h = G - 1) after engine g of the previous chunk
 *     on its queue (c - 1; c - Q for a stage on Q queues, chunk c on queue c % Q);
 *   - after engine g - 1 of chunk c (the h2d: after chunk c's stage-in, which the host does
 *     before it enqueues the chunk's operations);
 *   - for g < G - 1, after engine g + 1 of chunk c - K, K the ring's depth: that engine reads
 *     the buffer chunk c's engine g overwrites (test_sampled's check_timed_order).
 * Chunks go in order, so each sees its predecessors, timed or replayed; timed spans stay as
 * measured. The completed timeline's figures are then exact arithmetic on it (timeline.c).
 *
 * An engine's seconds per record is the ratio of sums (time over records) of its timed
 * chunks in the middle windows, all its timed chunks where there is none: the middle windows
 * are what the untimed chunks lie among (the ramp and the drain are unlike them), and the
 * ratio of sums is the very factor by which the report scales the middle's busy time to the
 * run (sp_sampled_total), so the replayed timeline's copy time is the busy time the report
 * states. A median would shrug off one slow operation, but a GPU's operations of one size
 * vary by a few percent, and a median over unequal chunks would no longer add up to that
 * busy time. */
#include "core/timeline.h"

static sp_span *span_at(sp_timeline *t, size_t e, size_t c)
{
    return &t->spans[e * t->chunks + c];
}

static int has(sp_span s) { return s.end >= s.start; }

/* GPU engines: those between stage-in and stage-out. */
static size_t gpu_engines(const sp_timeline *t) { return t->engines >= 4 ? t->engines - 2 : 0; }

/* Queues GPU engine g runs its chunks on, in turn. */
static size_t queues(const sp_timeline *t, size_t g)
{
    unsigned q = t->streams[SP_TL_GPU(g)];
    return q > 1 ? q : 1;
}

/* Seconds per record of GPU engine g over its recorded spans of chunks [a, b); 0 with
 * *records 0 where they hold no records. */
static double rate_over(sp_timeline *t, size_t g, size_t a, size_t b, size_t *records)
{
    double seconds = 0.0;
    size_t n = 0;
    for (size_t c = a; c < b; c++) {
        sp_span s = *span_at(t, SP_TL_GPU(g), c);
        if (!has(s))
            continue;
        seconds += s.end - s.start;
        n += sp_timeline_chunk_records(t, c);
    }
    *records = n;
    return n ? seconds / (double)n : 0.0;
}

/* Every GPU engine's seconds per record into rate[]; 0 when an engine has no timed records
 * to measure it by. */
static int engine_rates(sp_timeline *t, double *rate)
{
    size_t first_end, last_start;
    sp_timeline_edges(t, &first_end, &last_start);
    for (size_t g = 0; g < gpu_engines(t); g++) {
        size_t records;
        rate[g] = rate_over(t, g, first_end, last_start, &records);
        if (records == 0)
            rate[g] = rate_over(t, g, 0, t->chunks, &records);
        if (records == 0)
            return 0;
    }
    return 1;
}

/* Whether every GPU engine is active and every chunk with an unrecorded GPU span has its
 * stage-in span: the replay's start for it. */
static int replayable(sp_timeline *t)
{
    size_t G = gpu_engines(t);
    if (G < 2 || G > SP_MAX_ENGINES || t->depth == 0 || !t->active[SP_TL_STAGE_IN])
        return 0;
    for (size_t g = 0; g < G; g++)
        if (!t->active[SP_TL_GPU(g)])
            return 0;
    for (size_t c = 0; c < t->chunks; c++)
        for (size_t g = 0; g < G; g++)
            if (!has(*span_at(t, SP_TL_GPU(g), c)) && !has(*span_at(t, SP_TL_STAGE_IN, c)))
                return 0;
    return 1;
}

/* When GPU engine g of chunk c may start: the last end of what it waits for (the header). */
static double ready(sp_timeline *t, size_t g, size_t c)
{
    size_t K = t->depth, Q = queues(t, g);
    double at = g == 0 ? span_at(t, SP_TL_STAGE_IN, c)->end : span_at(t, SP_TL_GPU(g - 1), c)->end;
    if (c >= Q && span_at(t, SP_TL_GPU(g), c - Q)->end > at)
        at = span_at(t, SP_TL_GPU(g), c - Q)->end;
    if (g + 1 < gpu_engines(t) && c >= K && span_at(t, SP_TL_GPU(g + 1), c - K)->end > at)
        at = span_at(t, SP_TL_GPU(g + 1), c - K)->end;
    return at;
}

sp_status sp_timeline_replay(sp_timeline *t)
{
    double rate[SP_MAX_ENGINES];
    if (!replayable(t) || !engine_rates(t, rate))
        return SP_ERR_INVALID_ARGUMENT;
    for (size_t c = 0; c < t->chunks; c++)
        for (size_t g = 0; g < gpu_engines(t); g++) {
            sp_span *s = span_at(t, SP_TL_GPU(g), c);
            if (has(*s))
                continue; /* timed: as measured */
            s->start = ready(t, g, c);
            s->end = s->start + (double)sp_timeline_chunk_records(t, c) * rate[g];
        }
    return SP_OK;
}
