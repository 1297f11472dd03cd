/* The live counters' writer (stats_state.h says who calls it from where) and their reader
 * (sp_pipeline_stats; sp_stream_stats goes through it). Each writer call is a few relaxed
 * loads and stores: what a chunk pays is listed in stats.c. */
#ifndef SP_STATS_H
#define SP_STATS_H

#include <stdint.h>

#include "core/pipeline_state.h"

/* A run or stream begins (counters zeroed, the run numbered, the clock started) with
 * `records` planned (0: not known yet), or ends: a run whose status is not SP_OK counts one
 * error (a stream passes SP_OK: its failed batches were counted one by one). */
void sp_stats_begin(sp_pipeline *p, uint64_t records);
void sp_stats_end(sp_pipeline *p, sp_status status);
/* A stream: records submitted; held batches now; one of its batches failed. */
void sp_stats_submitted(sp_pipeline *p, uint64_t records);
void sp_stats_batches(sp_pipeline *p, unsigned held);
void sp_stats_error(sp_pipeline *p);
/* The scheduler: n chunks took slots; one left its slot (records whose output went on:
 * 0 for a chunk dropped by a failure); the host turn waited `seconds` for a slot. */
void sp_stats_occupied(sp_pipeline *p, unsigned n);
void sp_stats_vacated(sp_pipeline *p, uint64_t records);
void sp_stats_waited(sp_pipeline *p, double seconds);
/* A host turn's staging: records copied in and out, in `seconds` of the turn's clock. */
void sp_stats_staged(sp_pipeline *p, uint64_t in_records, uint64_t out_records,
                     double seconds);

/* timing.c, on the scheduler's thread: this run times chunks with events; a timed chunk's
 * events were read: its records, whether it is an edge chunk (in the first or last window)
 * and each GPU engine's busy seconds busy[0 .. gpu_engines); a window's copy sums are
 * complete (NULL: they could not be made, hidden transfer is then unknown for the run).
 * A few relaxed stores each, the second per timed chunk, the third per window. */
void sp_stats_timing(sp_pipeline *p);
void sp_stats_timed(sp_pipeline *p, int edge, uint64_t records, const double *busy,
                    size_t gpu_engines);
void sp_stats_window(sp_pipeline *p, const sp_window_sums *sums);

/* 1 once any thread has read the pipeline's counters (sp_stats_read): timing.c then reads
 * timed chunks while runs go, for the GPU figures; until then only after each drain. */
int sp_stats_watched(const sp_pipeline *p);

/* The reader: the counters as the caller's sp_stats (sized: its size says how much to
 * write). SP_ERR_INVALID_ARGUMENT for NULL or a size smaller than the size field. */
sp_status sp_stats_read(const sp_pipeline *p, sp_stats *out);

#endif
