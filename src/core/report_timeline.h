/* A report's own timeline (sp_report.timeline), read-only: what the trace writers
 * (src/trace) and sp_report_sampled_figures read, with no pipeline behind it. report_timeline.c
 * owns the copy (made by sp_report_keep_timeline, report.h) and its memory; and the per-thread
 * error text of the calls on a report alone (sp_report_last_error). */
#ifndef SP_REPORT_TIMELINE_H
#define SP_REPORT_TIMELINE_H

#include "core/timeline.h"
#include "core/timing_state.h" /* sp_sample_windows */

/* The report's timeline, NULL when it holds none. */
const sp_timeline *sp_report_timeline_spans(const sp_report *report);
/* Of the run the timeline is of: the backend's name ("host", "cuda") and the ring's depth. */
const char *sp_report_timeline_backend(const sp_report *report);
unsigned sp_report_timeline_depth(const sp_report *report);
/* Whether that run timed every chunk (no sampled windows), and the windows
 * SP_TIMELINE_SAMPLED would have timed in it (timing.c, sp_timing_sample_windows). */
int sp_report_timeline_whole(const sp_report *report);
sp_sample_windows sp_report_timeline_sample(const sp_report *report);

/* Sets the calling thread's sp_report_last_error text; returns status. */
sp_status sp_report_fail(sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The timeline of a report for a call named fn, or SP_ERR_INVALID_ARGUMENT with the
 * thread's error set when the report is NULL or holds none (the message says to set
 * keep_timeline). */
sp_status sp_report_timeline_get(const sp_report *report, const char *fn,
                                 const sp_timeline **timeline);

#endif
