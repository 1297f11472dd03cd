/* The reports of batches: one run's (with the timeline's figures when it was timed), and
 * that of batches fed behind each other (counts, the pipeline's figures, the makespan). */
#include <stdio.h>
#include <string.h>

#include "core/flight.h"
#include "core/report.h"
#include "core/stats.h"
#include "core/timing.h"
#include "core/tune.h"

size_t sp_report_pcie_bytes(const sp_batch *b)
{
    /* the records of the chunks that went into the ring, [base, next): a batch cut short by
     * a cancel or a failure moved those, not its whole length (a source's plan.n_records
     * grows as its chunks go in) */
    size_t fed = b->next > b->base ? sp_chunk_first(b, b->next) : 0;
    size_t records = fed < b->plan.n_records ? fed : b->plan.n_records;
    const sp_pipeline *p = b->p;
    return (b->in_device ? 0 : records * p->record_bytes[0]) +
           (b->out_device ? 0 : records * p->record_bytes[p->n_stages]);
}

/* A copy of the run's timeline in its report, when the config keeps one and the run left a
 * complete one (it succeeded, had records, was timed). */
static sp_status keep_run_timeline(const sp_batch *run, sp_report *report)
{
    sp_pipeline *p = run->p;
    if (!p->keep_timeline || !p->timeline.complete || !run->timing || !run->plan.chunks)
        return SP_OK;
    sp_status st = sp_report_keep_timeline(p, report);
    return st == SP_OK ? SP_OK
                       : sp_pipeline_fail(p, st, "the run succeeded, but its report's timeline "
                                          "(keep_timeline) found no memory");
}

sp_status sp_report_batch(const sp_batch *run, sp_report *report)
{
    sp_pipeline *p = run->p;
    memset(report, 0, sizeof *report);
    report->records = run->plan.n_records;
    report->chunks = run->plan.chunks;
    report->chunk_records = run->plan.chunk_records;
    report->depth = p->depth;
    report->staging_threads = sp_staging_pool_threads(p->pool);
    report->staged_in = run->stage_in;
    report->staged_out = run->stage_out;
    report->makespan_s = p->last_makespan_s; /* sp_sched_finish's, or 0: no run started */
    if (run->timing && run->plan.chunks) {
        sp_timeline_figures(&p->timeline, report);
        sp_stats_final_hidden(p, report->hidden_transfer); /* the live figure ends as this */
        sp_timing_complete(run->p, report->makespan_s); /* a run that succeeded: the trace
                                                            writers may use it */
    }
    report->graph = run->replayed;
    report->batches = run->plan.n_records > 0;
    report->pinned_bytes = atomic_load(&p->held_pinned_bytes); /* pipeline.c counts it */
    report->slot_records = p->chunk_capacity;
    report->pcie_bytes = sp_report_pcie_bytes(run);
    report->tune_changes = p->tune.total; /* the scheduler's thread wrote it: this one */
    report->flight_recorder_s = p->flight ? p->flight->seconds : 0.0;
    report->flight_recorder_bytes = sp_flight_bytes(p->flight);
    report->submit_s = p->last_submit_s;
    report->wait_s = p->last_wait_s;
    if (run->chunk_by_tuner == 2)
        snprintf(report->notes, sizeof report->notes, "chunks of %zu records (slots of %zu) "
                 "at the end: re-picked while the run went (the tune changes say why)",
                 run->plan.chunk_records, p->chunk_capacity);
    else if (run->chunk_by_tuner == 1)
        snprintf(report->notes, sizeof report->notes, "chunks of %zu records (slots of %zu): "
                 "the size the tuner picked in the runs before (the tune changes say why)",
                 run->plan.chunk_records, p->chunk_capacity);
    else if (run->chunk_by_decode)
        snprintf(report->notes, sizeof report->notes, "chunks of %zu records (slots of %zu): "
                 "whole blocks for the decompression in the ring, %u a chunk as batched GPU "
                 "decompression wants, or the whole input (the input's note says what held "
                 "them)", run->plan.chunk_records, p->chunk_capacity, SP_RING_DECODE_BLOCKS);
    else if (p->chunk_chosen && run->plan.chunk_records < p->chunk_capacity)
        snprintf(report->notes, sizeof report->notes,
                 "chunk cut from %zu to %zu records so that the short run has chunks to overlap",
                 p->chunk_capacity, run->plan.chunk_records);
    if (run->graph_note[0] != '\0') {
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used, "%s%s", used ? "; " : "",
                 run->graph_note);
    }
    if (run->activity_timing) { /* config.timeline CUPTI */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used,
                 "%sGPU times from the backend's activity records (CUPTI), not events: "
                 "starting them took %.3f ms of the run, reading them %.3f ms after it",
                 used ? "; " : "", 1e3 * run->activity_start_s, 1e3 * run->activity_read_s);
    }
    if (run->activity_note[0] != '\0') { /* never a silent fallback */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used, "%s%s", used ? "; " : "",
                 run->activity_note);
    }
    if (run->event_timing && p->timeline_mode == SP_TIMELINE_SAMPLED && run->plan.chunks) {
        size_t used = strlen(report->notes);
        sp_sample_windows w = sp_timing_windows(p);
        if (w.first)
            snprintf(report->notes + used, sizeof report->notes - used,
                     "%stimeline sampled: %zu of %zu chunks timed (windows: the first %zu, %zu "
                     "in every %d, the last %zu); figures extrapolated", used ? "; " : "",
                     report->timed_chunks, run->plan.chunks, w.first, w.middle,
                     SP_TIMELINE_SAMPLE_STRIDE, w.last);
        else
            snprintf(report->notes + used, sizeof report->notes - used,
                     "%stimeline sampled: a short run, every chunk timed", used ? "; " : "");
    }
    if (p->timeline_mode == SP_TIMELINE_OFF) {
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used, "%sno per-engine figures: "
                 "the config's timeline is off", used ? "; " : "");
    }
    if (p->copy_by_kernel && !p->ctx->ops->copy_kernel) { /* never a silent fallback */
        size_t used = strlen(report->notes);
        snprintf(report->notes + used, sizeof report->notes - used,
                 "%scopies by the copy engines: the %s backend has no copy kernel",
                 used ? "; " : "", p->ctx->ops->name);
    }
    return keep_run_timeline(run, report);
}

void sp_report_pipeline(const sp_pipeline *p, sp_report *report)
{
    report->depth = p->depth;
    report->chunk_records = p->chunk_capacity;
    report->staging_threads = sp_staging_pool_threads(p->pool);
    report->pinned_bytes = atomic_load(&p->held_pinned_bytes); /* pipeline.c counts it */
    report->slot_records = p->chunk_capacity;
    report->tune_changes = p->tune.total;
}

void sp_report_batches(const sp_pipeline *p, const sp_batch_totals *t, double makespan_s,
                              sp_report *report)
{
    memset(report, 0, sizeof *report);
    sp_report_pipeline(p, report);
    report->records = t->records;
    report->chunks = t->chunks;
    report->batches = t->batches;
    report->staged_in = t->staged_in;
    report->staged_out = t->staged_out;
    report->graph = t->replayed;
    report->pcie_bytes = t->pcie_bytes;
    report->makespan_s = makespan_s;
}
