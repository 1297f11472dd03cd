/* A report's own timeline: the copy of the pipeline's timeline a run with keep_timeline
 * hands its report, self-contained (its spans, records, engine names, backend, depth and
 * sampling windows), so that it outlives the pipeline; its release; the read-only accessors
 * (report_timeline.h); and the per-thread error text of the calls on a report alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pipeline_state.h"
#include "core/report.h"
#include "core/report_timeline.h"
#include "core/timing.h"

struct sp_report_timeline {
    sp_timeline t;                  /* its own arrays; t.name[e] points into names[e] */
    char names[SP_MAX_ENGINES][32]; /* as long as the pipeline's stage names */
    char backend[16];
    unsigned depth;
    int whole;                /* every chunk timed: the run had no sampled windows */
    sp_sample_windows sample; /* the windows SP_TIMELINE_SAMPLED would have timed */
};

/* sp_report_last_error: the calls on a report have no handle to keep it in */
static _Thread_local char report_error[SP_ERROR_TEXT];

sp_status sp_report_fail(sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(report_error, sizeof report_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *sp_report_last_error(void) { return report_error; }

/* The spans, records and engine facts of src, in arrays of dst's own. */
static sp_status copy_spans(sp_timeline *dst, const sp_timeline *src)
{
    sp_status st = sp_timeline_reset(dst, src->engines, src->chunks);
    if (st != SP_OK)
        return st;
    memcpy(dst->spans, src->spans, src->engines * src->chunks * sizeof *dst->spans);
    if (src->chunks)
        memcpy(dst->records, src->records, src->chunks * sizeof *dst->records);
    memcpy(dst->bytes, src->bytes, sizeof dst->bytes);
    memcpy(dst->kind, src->kind, sizeof dst->kind);
    memcpy(dst->active, src->active, sizeof dst->active);
    memcpy(dst->streams, src->streams, sizeof dst->streams);
    dst->n_records = src->n_records;
    dst->chunk_records = src->chunk_records;
    dst->complete = src->complete;
    dst->makespan_s = src->makespan_s;
    dst->depth = src->depth;
    return SP_OK;
}

sp_status sp_report_keep_timeline(const sp_pipeline *p, sp_report *report)
{
    sp_report_timeline *kept = calloc(1, sizeof *kept);
    sp_status st = kept ? copy_spans(&kept->t, &p->timeline) : SP_ERR_OUT_OF_MEMORY;
    if (st != SP_OK) {
        if (kept)
            sp_timeline_free(&kept->t);
        free(kept);
        return st;
    }
    for (size_t e = 0; e < kept->t.engines && e < SP_MAX_ENGINES; e++) {
        snprintf(kept->names[e], sizeof kept->names[e], "%s",
                 p->timeline.name[e] ? p->timeline.name[e] : "");
        kept->t.name[e] = kept->names[e];
    }
    snprintf(kept->backend, sizeof kept->backend, "%s", sp_backend_name(p->ctx->kind));
    kept->depth = p->depth;
    kept->whole = sp_timing_windows(p).first == 0;
    kept->sample = sp_timing_sample_windows(p);
    report->timeline = kept;
    return SP_OK;
}

void sp_report_release(sp_report *report)
{
    if (!report || !report->timeline)
        return;
    sp_timeline_free(&report->timeline->t);
    free(report->timeline);
    report->timeline = NULL;
}

const sp_timeline *sp_report_timeline_spans(const sp_report *report)
{
    return report && report->timeline ? &report->timeline->t : NULL;
}

const char *sp_report_timeline_backend(const sp_report *report)
{
    return report->timeline->backend;
}

unsigned sp_report_timeline_depth(const sp_report *report) { return report->timeline->depth; }

int sp_report_timeline_whole(const sp_report *report) { return report->timeline->whole; }

sp_sample_windows sp_report_timeline_sample(const sp_report *report)
{
    return report->timeline->sample;
}

sp_status sp_report_timeline_get(const sp_report *report, const char *fn,
                                 const sp_timeline **timeline)
{
    if (!report)
        return sp_report_fail(SP_ERR_INVALID_ARGUMENT, "%s: report is NULL", fn);
    if (!report->timeline)
        return sp_report_fail(SP_ERR_INVALID_ARGUMENT,
                              "%s: the report has no timeline: set keep_timeline in the "
                              "pipeline's config (Python: keep_timeline=True) and run with a "
                              "report; the run must succeed with records and be timed (its "
                              "timeline mode not off)", fn);
    *timeline = &report->timeline->t;
    return SP_OK;
}
