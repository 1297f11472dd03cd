/* Shared parts of the trace writers. The library never prints: everything goes to the FILE
 * the caller passed, and a failed write becomes the thread's report error, not a message. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "trace/trace_common.h"

sp_status sp_trace_begin(const sp_report *report, FILE *f, const char *fn, sp_trace_writer *w,
                         const sp_timeline **timeline)
{
    sp_status st = sp_report_timeline_get(report, fn, timeline);
    if (st != SP_OK)
        return st;
    if (!f)
        return sp_report_fail(SP_ERR_INVALID_ARGUMENT, "%s: f is NULL", fn);
    w->f = f;
    w->error = 0;
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

sp_status sp_trace_end(sp_trace_writer *w)
{
    errno = 0;
    if (fflush(w->f) != 0 || ferror(w->f))
        note_write_failure(w);
    if (w->error == 0)
        return SP_OK;
    char reason[128];
    if (strerror_r(w->error, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", w->error);
    return sp_report_fail(SP_ERR_BACKEND, "writing the trace failed: %s", reason);
}
