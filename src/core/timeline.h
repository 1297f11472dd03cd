/* Per-chunk, per-engine start and end times of one run, in seconds from the run's start, and
 * the figures of DESIGN.md section 5 computed from them. */
#ifndef SP_TIMELINE_H
#define SP_TIMELINE_H

#include <stddef.h>

#include "streampipe.h"

/* Timeline engine numbering: stage-in, h2d, the stages, d2h, stage-out. GPU engine g
 * (h2d = 0 .. M+1 = d2h, as the pipeline's events) is timeline engine g + 1. */
#define SP_TL_STAGE_IN 0u
#define SP_TL_GPU(g) ((g) + 1u)
#define SP_TL_STAGE_OUT_OF(n_stages) ((n_stages) + 3u)

typedef struct sp_span {
    double start, end; /* end < start: not recorded */
} sp_span;

typedef struct sp_timeline {
    size_t engines, chunks;
    sp_span *spans;    /* engines x chunks, spans[e * chunks + c] */
    size_t capacity;   /* spans allocated */
    size_t bytes[SP_MAX_ENGINES];
    sp_engine_kind kind[SP_MAX_ENGINES];
    const char *name[SP_MAX_ENGINES];
    int active[SP_MAX_ENGINES];
    unsigned streams[SP_MAX_ENGINES]; /* queues of a stage; its busy time is their union */
    size_t n_records, chunk_records; /* the run's records, and records per chunk */
    size_t *records;   /* chunks entries: chunk c's records as it was submitted, 0 where
                          not noted (then n_records and chunk_records say): chunks may
                          differ in size when the chunk changes during a run */
    size_t records_capacity;
    int complete;      /* 1 when a run that succeeded recorded every span: only then may its
                          report keep a copy (a failed run leaves a partial timeline) */
    double makespan_s; /* that run's makespan */
    size_t depth;      /* the ring's slots: chunk c reuses chunk c - depth's buffers (the
                          replay's dependencies, timeline_replay.c); 0: not known */
} sp_timeline;

/* Makes room for engines x chunks spans, all unrecorded. */
sp_status sp_timeline_reset(sp_timeline *t, size_t engines, size_t chunks);
void sp_timeline_free(sp_timeline *t);
/* src copied into *copy (a zeroed or reset timeline): spans, records, the engines' facts
 * (names point where src's do). */
sp_status sp_timeline_copy(sp_timeline *copy, const sp_timeline *src);

static inline void sp_timeline_set_records(sp_timeline *t, size_t chunk, size_t records)
{
    t->records[chunk] = records;
}

static inline void sp_timeline_set(sp_timeline *t, size_t engine, size_t chunk, double start,
                                   double end)
{
    sp_span *s = &t->spans[engine * t->chunks + chunk];
    s->start = start;
    s->end = end;
}

/* Records in chunk `chunk` (the last may be short), and bytes engine e moved or read for it:
 * bytes[e] is n_records whole records of one size, so the per-record size divides exactly. */
static inline size_t sp_timeline_chunk_records(const sp_timeline *t, size_t chunk)
{
    if (chunk < t->chunks && t->records[chunk] != 0)
        return t->records[chunk];
    size_t first = chunk * t->chunk_records;
    if (first >= t->n_records)
        return 0;
    size_t left = t->n_records - first;
    return left < t->chunk_records ? left : t->chunk_records;
}
size_t sp_timeline_chunk_bytes(const sp_timeline *t, size_t engine, size_t chunk);

/* Fills the figures of `report` (engines, busy times, bound, efficiency, model, hidden
 * transfer, rates, bottleneck, timed_chunks) from the timeline; makespan_s must already be
 * set. A timeline whose GPU spans are recorded for some chunks only (sampled) gives the
 * figures of a copy with its untimed chunks replayed (timeline_replay.c), and timed_chunks
 * its own; where no replay can be made, figures extrapolated to the run: each engine's busy
 * time scaled by the run's records over those of its recorded chunks, hidden transfer
 * measured inside windows of consecutive recorded chunks (timeline_windows.c). A full
 * timeline gives exact ones. */
void sp_timeline_figures(const sp_timeline *t, sp_report *report);

/* Exposed for tests: seconds of [s.start, s.end) covered by the union of `sorted` spans
 * (sorted by start, non-overlapping). */
double sp_span_covered(sp_span s, const sp_span *merged, size_t n);
/* Sorts spans[0..n) and merges overlapping ones in place; returns how many remain. */
size_t sp_spans_merge(sp_span *spans, size_t n);
/* The first window of recorded GPU spans, [0, *first_end), and the last, [*last_start,
 * chunks): empty (0, chunks) when chunk 0 or the last has none (timeline_windows.c). */
void sp_timeline_edges(const sp_timeline *t, size_t *first_end, size_t *last_start);
/* Fraction of copy time (h2d, d2h) under compute (timeline_windows.c). */
double sp_timeline_hidden_transfer(const sp_timeline *t);

/* The hidden-transfer estimator in two steps, so that the live counters (stats.c) apply the
 * report's very arithmetic to the windows timed so far: each window of consecutive recorded
 * chunks [a, b] adds its copies' sums to the part it stands for (the first window, a == 0;
 * the last, b + 1 == chunks; the middle ones), and the sums give the fraction for a run of
 * n_records. sp_timeline_hidden_transfer is every window's sums, then the fraction. */
typedef struct sp_copy_sums {
    double copy, hidden; /* inside the windows' regions: copy time, and of it under compute */
    double whole;        /* the same copies' whole time, in the regions or not */
    size_t records;      /* the windows' records */
} sp_copy_sums;
enum { SP_WINDOW_FIRST, SP_WINDOW_MIDDLE, SP_WINDOW_LAST, SP_WINDOW_PARTS };
typedef struct sp_window_sums {
    sp_copy_sums part[2][SP_WINDOW_PARTS]; /* [0: h2d, 1: d2h][part] */
} sp_window_sums;
/* Adds window [a, b]'s sums into *sums; SP_ERR_OUT_OF_MEMORY (nothing added) when the
 * window's compute spans find no memory. */
sp_status sp_timeline_window_sums(const sp_timeline *t, size_t a, size_t b,
                                  sp_window_sums *sums);
/* The fraction for a run of n_records from the sums (0 when they hold no copy time). */
double sp_window_sums_hidden(const sp_window_sums *sums, size_t n_records);

/* A sampled engine's busy time over a run of n_records: the edges' (the first and last
 * windows' chunks, which stand for themselves) plus the middle's scaled by records to the
 * chunks it stands for (timeline.c's figures and the live counters both use it). */
static inline double sp_sampled_total(double edge, double middle, size_t edge_records,
                                      size_t middle_records, size_t n_records)
{
    double weight = middle_records > 0 && n_records > edge_records + middle_records
                        ? (double)(n_records - edge_records) / (double)middle_records
                        : 1.0;
    return edge + weight * middle;
}
/* Chunks with their GPU spans (told by the h2d row; all of them in a timeline without one). */
size_t sp_timeline_timed_chunks(const sp_timeline *t);

/* Fills every unrecorded GPU span of a sampled timeline by replaying the ring's
 * dependencies over the chunks in order, each operation as long as its records at its
 * engine's measured rate (timeline_replay.c). SP_OK when filled; SP_ERR_INVALID_ARGUMENT,
 * the timeline unchanged, when it cannot be replayed: no depth, an inactive GPU engine, an
 * engine with no timed records, or an untimed chunk without its stage-in span (a device-
 * resident or pinned input: nothing tells when the host let the chunk go). */
sp_status sp_timeline_replay(sp_timeline *t);

#endif
