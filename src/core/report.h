/* Reports of batches (report.c). */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include "core/batch.h"

/* One run's report, from its batch and the times sp_sched_finish kept in the pipeline. */
void sp_report_batch(const sp_batch *b, sp_report *report);
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
