/* The live counters of a pipeline (sp_pipeline_stats, sp_stream_stats). Written only by
 * stats' code (stats.c, and the per-chunk writers inline in stats.h), through the small calls
 * of stats.h that the scheduler's thread (sched.c,
 * staging.c, timing.c) and a stream's calls (stream.c) make; read by stats.c's reader from
 * any thread.
 *
 * Every field is an atomic with one writer at a time (the run's or stream engine's thread;
 * a stream's submit and event queueing under the stream's lock), so a writer updates with a
 * relaxed load and store (a plain move on x86: no locked instruction) and a reader never
 * takes a lock the engine waits on. The counters cover the current (or last) run or stream:
 * a run's start zeroes them inside `seq` odd, and the reader tries again when `seq` was odd
 * or moved, so it never mixes two runs' counts.
 *
 * Counted in records, not bytes: every engine's bytes are its records times the fixed
 * record size of the boundary it reads (computed by the reader), which keeps a chunk's cost
 * at one add per counter. */
#ifndef SP_STATS_STATE_H
#define SP_STATS_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/timeline.h"

typedef struct sp_stats_state {
    _Atomic uint64_t seq;              /* odd while a run's start resets the fields below */
    _Atomic uint64_t run;              /* runs and streams begun on the pipeline */
    _Atomic int active;                /* a run or stream is under way */
    _Atomic uint64_t t_begin_ns;       /* host clock at its start ... */
    _Atomic uint64_t t_end_ns;         /* ... and its end (0 while active) */
    _Atomic uint64_t records_total;    /* a run's planned records; a stream's submitted */
    _Atomic uint64_t staged_in;        /* records copied into pinned staging (or read by a
                                          source into it) */
    _Atomic uint64_t left;             /* records of chunks that left the ring (d2h done, their
                                          output handed on) */
    _Atomic uint64_t staged_out;       /* records copied out of pinned staging (or to a sink) */
    _Atomic uint64_t stage_in_ns;      /* host time of the staging copies of turns that staged
                                          input in ... */
    _Atomic uint64_t stage_out_ns;     /* ... and of turns that handed output on */
    _Atomic uint64_t wait_ns;          /* the host turn waiting for a slot (report's wait_s) */
    _Atomic unsigned chunks_in_flight; /* slots holding a chunk */
    _Atomic unsigned batches_in_flight;/* a stream's held batches */
    _Atomic uint64_t errors;           /* failed runs, or a stream's failed batches */

    /* The GPU engines' timing while a run with a report goes (sp_stats_timed, _window):
     * timing.c hands over each timed chunk's busy times once it has read its events, and
     * each window's copy sums once its last chunk is read. One writer, the scheduler's
     * thread, under its own counter `tseq` (odd while it writes; zeroed by a run's start
     * with the rest), so that a reader never mixes a chunk's engines or a window's sums. */
    _Atomic int timing;                /* this run times chunks with events */
    _Atomic uint64_t tseq;
    _Atomic uint64_t timed_chunks;     /* chunks whose events were read */
    _Atomic uint64_t timed_records[2]; /* their records: [0] the edges' (the first and last
                                          windows': they stand for themselves), [1] the
                                          middle windows' (they stand for the rest) */
    _Atomic double timed_s[2][SP_MAX_STAGES + 2]; /* their busy seconds per GPU engine g */
    _Atomic uint64_t windows;          /* windows whose copy sums are below */
    _Atomic int sums_lost;             /* a window's sums found no memory: hidden unknown */
    _Atomic double sums[2][SP_WINDOW_PARTS][3];   /* sp_window_sums: copy, hidden, whole */
    _Atomic uint64_t sums_records[2][SP_WINDOW_PARTS];
    _Atomic double final_hidden;       /* the report's hidden transfer once it is made (the
                                          untimed chunks replayed, timeline_replay.c), which
                                          the window sums do not give; < 0 until then */

    /* Written by the readers, not the engine: set by the first sp_stats_read of the pipeline
     * and never cleared. Until then nobody watches, and timing.c reads the timed chunks
     * after the drain as it always did, so a run nobody watches pays nothing for the live
     * GPU figures (the full timeline read while its run went cost transfer pinned's EVENTS
     * row about 1.8 points more on the H200: bench/PERF.md, twelfth session). */
    _Atomic int watched;
} sp_stats_state;

#endif
