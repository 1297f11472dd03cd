/* The pipeline's state that any file may touch through these calls: who holds it (claim),
 * its last error, the run's failure (through failure.c's rule), the last run's figures. */
#ifndef SP_PIPELINE_STATE_H
#define SP_PIPELINE_STATE_H

#include <stdarg.h>

#include "core/pipeline_fields.h"

#if defined(__GNUC__)
#define SP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SP_PRINTF(f, a)
#endif

/* The pipeline's last error and the context's, not the run's failure: a refused call. */
sp_status sp_pipeline_fail(struct sp_pipeline *p, sp_status status, const char *fmt, ...)
    SP_PRINTF(3, 4);
sp_status sp_pipeline_vfail(struct sp_pipeline *p, sp_status status, const char *fmt,
                            va_list ap);
/* Like sp_pipeline_fail with the backend's reason appended: "<what>: <backend text>". */
sp_status sp_pipeline_backend_fail(struct sp_pipeline *p, sp_status status, const char *what);
/* Copies the pipeline's error text into buf (n bytes), under its lock. */
void sp_pipeline_error_copy(struct sp_pipeline *p, char *buf, size_t n);

/* The work's failures, through failure.h's rule: a chunk's (a stage, source or sink failed at
 * `chunk`), a backend call's ("<what>: <backend text>"), and a lost context's. */
sp_status sp_pipeline_fail_chunk(struct sp_pipeline *p, size_t chunk, uint64_t cause,
                                 sp_status status, const char *fmt, ...) SP_PRINTF(5, 6);
sp_status sp_pipeline_vfail_chunk(struct sp_pipeline *p, size_t chunk, uint64_t cause,
                                  sp_status status, const char *fmt, va_list ap);
sp_status sp_pipeline_fail_work(struct sp_pipeline *p, sp_status status, const char *fmt, ...)
    SP_PRINTF(3, 4);
sp_status sp_pipeline_vfail_work(struct sp_pipeline *p, sp_status status, const char *fmt,
                                 va_list ap);
sp_status sp_pipeline_fail_lost(struct sp_pipeline *p, const char *fmt, ...) SP_PRINTF(2, 3);
static inline int sp_pipeline_has_failed(struct sp_pipeline *p)
{
    return sp_failure_any(&p->failure); /* on every chunk's path: read by include */
}

/* Sets the three sp_pipeline_last_* figures at once (a run's end, or 0 when it did not
 * start). */
void sp_pipeline_set_last_figures(struct sp_pipeline *p, double makespan_s, double submit_s,
                                  double wait_s);

/* Claims p for `call` ("sp_pipeline_run", ...) on this thread, or fails at once with
 * SP_ERR_INVALID_ARGUMENT, the reason in the context's text, touching nothing else, when
 * another call holds it. sp_pipeline_release gives it back. */
sp_status sp_pipeline_claim(struct sp_pipeline *p, const char *call);
void sp_pipeline_release(struct sp_pipeline *p);
/* Why this thread's last sp_pipeline_claim was refused; "" when it succeeded since. */
const char *sp_pipeline_claim_refusal(void);
/* Marks p as a device group's member (1), which sp_pipeline_destroy refuses, or frees it of
 * that (0) before the group destroys it. */
void sp_pipeline_set_group_member(struct sp_pipeline *p, int member);
int sp_pipeline_is_group_member(struct sp_pipeline *p);

#endif
