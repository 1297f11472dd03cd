/* Shared parts of the trace writers. The library never prints: everything goes to the FILE
 * the caller passed, and a failed write becomes the pipeline's error, not a message. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "trace/trace_common.h"

/* The public calls take a const pipeline (writing a trace does not change it); the error
 * text is its one mutable part, like errno beside a const argument. */
static sp_pipeline *error_holder(const sp_pipeline *p) { return (sp_pipeline *)p; }

sp_status sp_trace_fail(const sp_pipeline *p, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = sp_pipeline_vfail(error_holder(p), status, fmt, ap);
    va_end(ap);
    return st;
}

sp_status sp_trace_begin(const sp_pipeline *p, FILE *f, const char *fn, sp_trace_writer *w,
                         const sp_timeline **timeline)
{
    if (!p)
        return SP_ERR_INVALID_ARGUMENT;
    if (!f)
        return sp_trace_fail(p, SP_ERR_INVALID_ARGUMENT, "%s: f is NULL", fn);
    if (!p->timeline.complete)
        return sp_trace_fail(p, SP_ERR_INVALID_ARGUMENT,
                             "%s: no timeline to write: pass a report to sp_pipeline_run (or "
                             "sp_pipeline_run_serial) first; the last run made with a report "
                             "must have succeeded and had records",
                             fn);
    w->f = f;
    w->error = 0;
    *timeline = &p->timeline;
    return SP_OK;
}

static void note_write_failure(sp_trace_writer *w)
{
    if (w->error == 0)
        w->error = errno ? errno : EIO;
}

void sp_trace_printf(sp_trace_writer *w, const char *fmt, ...)
{
    if (w->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    errno = 0;
    int n = vfprintf(w->f, fmt, ap);
    va_end(ap);
    if (n < 0)
        note_write_failure(w);
}

sp_status sp_trace_end(const sp_pipeline *p, sp_trace_writer *w)
{
    errno = 0;
    if (fflush(w->f) != 0 || ferror(w->f))
        note_write_failure(w);
    if (w->error == 0)
        return SP_OK;
    char reason[128];
    if (strerror_r(w->error, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", w->error);
    return sp_trace_fail(p, SP_ERR_BACKEND, "writing the trace failed: %s", reason);
}

void sp_trace_figures(const sp_timeline *t, sp_report *report)
{
    memset(report, 0, sizeof *report);
    report->records = t->n_records;
    report->chunks = t->chunks;
    report->chunk_records = t->chunk_records;
    report->makespan_s = t->makespan_s;
    sp_timeline_figures(t, report);
}

const char *sp_trace_backend_name(const sp_pipeline *p) { return sp_backend_name(p->ctx->kind); }
