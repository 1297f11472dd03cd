/* The per-operation timeline of a timed batch: the only writer of the pipeline's timeline
 * and timing events. It enqueues nothing but its own event records, and calls no submitter:
 * the submitters ask it for the events of each operation. */
#ifndef SP_TIMING_H
#define SP_TIMING_H

#include "core/ring.h"

/* Numbers of the timeline's engines for this pipeline: stage-out is after the stages. */
#define SP_TL_STAGE_OUT(p) SP_TL_STAGE_OUT_OF((p)->n_stages)

/* Whether a run with this report records the timeline: a report was asked for and the
 * config's timeline is not SP_TIMELINE_OFF. */
static inline int sp_timing_asked(const sp_pipeline *p, const sp_report *report)
{
    return report != NULL && p->timeline_mode != SP_TIMELINE_OFF;
}

/* The timeline of the batch's chunks, its engines named; SP_ERR_OUT_OF_MEMORY when it
 * cannot be made (the pipeline's last error says so). */
sp_status sp_timing_timeline_start(sp_batch *b);
/* The last run made with a report has no timeline until it succeeds (sp_timing_complete);
 * only a complete one is copied into its report (keep_timeline). */
void sp_timing_invalidate(sp_pipeline *p);
void sp_timing_complete(sp_pipeline *p, double makespan_s);
/* A host span of chunk i (batch numbering) on timeline engine e; a serial run's engines
 * keep each stage on one queue. */
void sp_timing_span(sp_pipeline *p, size_t engine, size_t i, double start, double end);
void sp_timing_serial_queues(sp_pipeline *p);
/* Notes chunk i's records (ring numbering) in a timed batch's timeline as it is submitted:
 * chunks may differ in size, and the figures weigh each chunk by its own. */
void sp_timing_chunk(sp_batch *b, size_t i);
/* The sampled windows of the last run timed with events; first 0: every chunk timed. */
sp_sample_windows sp_timing_windows(const sp_pipeline *p);

/* Per-operation events: makes sure the pool holds a start/end pair and a "start inferred"
 * flag for every GPU engine of every chunk and records the base event (or starts the
 * backend's activity records when the config asks for CUPTI and the backend has them). */
sp_status sp_timing_start(sp_batch *b);
/* SP_TIMELINE_SAMPLED's choice: the windows' lengths for this pipeline, and whether chunk i
 * of a run of n chunks is in a window (timing.c says which). */
sp_sample_windows sp_timing_sample_windows(const sp_pipeline *p);
int sp_timing_in_sample(size_t i, size_t n, const sp_sample_windows *w);
/* Whether chunk i has timing events (every chunk but with SP_TIMELINE_SAMPLED, there the
 * windows' chunks); 0 in a batch timed without events. */
int sp_timing_timed(const sp_batch *b, size_t i);
/* The events of engine g, chunk i (batch numbering from the ring's: i - base is not taken
 * here; timed batches start at ring chunk 0), and its "inferred" flag. */
sp_bevent *sp_timing_event(const sp_batch *b, size_t g, size_t i, int end);
void sp_timing_set_inferred(sp_batch *b, size_t g, size_t i, int inferred);
/* After the drain: every end and every start that was recorded and not read while the run
 * went (sp_timing_retired) read into the timeline and the live counters, with the other
 * starts inferred from ends (submit_direct.c, op_start says why that is exact). */
sp_status sp_timing_collect(sp_batch *b);
/* The same from the backend's activity records: the id of engine g's operation on chunk i,
 * and after the drain every span read into the timeline. Called after every batch whose
 * timing began this way, failed or not. */
uint64_t sp_timing_activity_id(const sp_batch *b, size_t g, size_t i);
sp_status sp_timing_activity_collect(sp_batch *b);

/* While a batch timed with events goes: chunk `chunk` (ring numbering) has left its slot,
 * so it and the timed chunks before it are read, once their last operation is done, into
 * the timeline, the live counters (stats.h: busy times, a window's copy sums) and the flight
 * recorder (flight.h) when the pipeline keeps one (an event that cannot be read fails the
 * batch, as after the drain); and after the drain of a failed batch, what is left, for the
 * recorder. */
sp_status sp_timing_retired(sp_batch *b, size_t chunk);
void sp_timing_drained(sp_batch *b);

#endif
