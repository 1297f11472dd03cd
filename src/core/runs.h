/* Runs whose records are numbered from a first record rather than 0: what a stage sees in
 * sp_chunk.first_record, and what a source and sink are asked for, is that plus the record's
 * index in the run. For sp_group (src/group/), whose units are slices of one run: a stage
 * that depends on a record's position sees the same numbers as in one whole run. */
#ifndef SP_RUNS_H
#define SP_RUNS_H

#include "streampipe.h"

/* io->n_records records, numbered from first_record (positional io only in sp_group; a
 * sequential one is numbered the same way). */
sp_status sp_pipeline_run_io_at(sp_pipeline *pipeline, const sp_io *io, size_t first_record,
                                sp_report *report);

/* A run fed batch by batch: next() fills *batch and returns 1, or returns 0 when there are no
 * more (it is called on the caller's thread, between batches). The batches go through one
 * ring that does not drain between them, as a stream's do; each is checked as a stream's
 * submit is, and numbered from its own first_record. On a failure no more batches are asked
 * for; every queue is drained before the call returns. The report: a stream's figures (no
 * per-operation timings), makespan from the call's start to the last chunk retired. */
typedef struct sp_feed_batch {
    const void *in;
    size_t n_records;
    void *out;
    size_t first_record;
} sp_feed_batch;
typedef int (*sp_feed_next_fn)(void *user, sp_feed_batch *batch);
sp_status sp_pipeline_run_feed(sp_pipeline *pipeline, sp_feed_next_fn next, void *user,
                               sp_report *report);

#endif
