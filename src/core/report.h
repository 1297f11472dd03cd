/* Reports of batches (report.c). */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include "core/batch.h"

/* One run's report, from its batch and the times sp_sched_finish kept in the pipeline, with
 * a copy of the run's timeline when the config keeps one (sp_report_keep_timeline);
 * SP_ERR_OUT_OF_MEMORY, the pipeline's error saying so, when that copy finds no memory. */
sp_status sp_report_batch(const sp_batch *b, sp_report *report);
/* report->timeline: a copy of the pipeline's complete timeline, self-contained
 * (report_timeline.c); SP_ERR_OUT_OF_MEMORY, nothing set, when there is no memory. */
sp_status sp_report_keep_timeline(const sp_pipeline *p, sp_report *report);
/* Bytes batch b's copies moved between host and device memory: the records of the chunks
 * that went into the ring (a batch cut short counts what went in), its device ends' none. */
size_t sp_report_pcie_bytes(const sp_batch *b);
/* The report's figures that are the pipeline's (depth, chunk, threads, pinned bytes). */
void sp_report_pipeline(const sp_pipeline *p, sp_report *report);
/* What batches fed through the ring add up to (streams, sp_pipeline_run_feed), and the report
 * they make: those counts, the pipeline's figures and the makespan; no per-operation timings,
 * so no engines. The caller writes the notes. */
typedef struct sp_batch_totals {
    size_t records, chunks, batches;
    int staged_in, staged_out, replayed;
    size_t pcie_bytes;
} sp_batch_totals;
void sp_report_batches(const sp_pipeline *p, const sp_batch_totals *totals,
                       double makespan_s, sp_report *report);

#endif
