/* The live counters of a pipeline (sp_pipeline_stats, sp_stream_stats). Written only by
 * stats.c, through the small calls of stats.h that the scheduler's thread (sched.c,
 * staging.c) and a stream's calls (stream.c) make; read by stats.c's reader from any thread.
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
} sp_stats_state;

#endif
