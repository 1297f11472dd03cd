/* Claims, error texts, failures (through failure.c) and the last run's figures; the public
 * getters of a pipeline. */
#include <stdio.h>
#include <string.h>

#include "core/pipeline_state.h"
#include "core/plan.h"

sp_status sp_pipeline_vfail(sp_pipeline *p, sp_status status, const char *fmt, va_list ap)
{
    char text[SP_ERROR_TEXT];
    vsnprintf(text, sizeof text, fmt, ap);
    sp_error_box_set(&p->error, text);
    sp_context_set_error_text(p->ctx, text);
    return sp_context_note_status(p->ctx, status);
}

sp_status sp_pipeline_fail(sp_pipeline *p, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = sp_pipeline_vfail(p, status, fmt, ap);
    va_end(ap);
    return st;
}

sp_status sp_pipeline_backend_fail(sp_pipeline *p, sp_status status, const char *what)
{
    return sp_pipeline_fail(p, status, "%s: %s", what, sp_backend_error());
}

void sp_pipeline_error_copy(sp_pipeline *p, char *buf, size_t n)
{
    sp_error_box_copy(&p->error, buf, n);
}

static sp_failure_sink sink_of(sp_pipeline *p) { return (sp_failure_sink){p->ctx, &p->error}; }

sp_status sp_pipeline_vfail_chunk(sp_pipeline *p, size_t chunk, uint64_t cause,
                                  sp_status status, const char *fmt, va_list ap)
{
    return sp_failure_vrecord(&p->failure, sink_of(p), SP_FAILURE_CHUNK, chunk, cause, status,
                              fmt, ap);
}

sp_status sp_pipeline_fail_chunk(sp_pipeline *p, size_t chunk, uint64_t cause,
                                 sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = sp_pipeline_vfail_chunk(p, chunk, cause, status, fmt, ap);
    va_end(ap);
    return st;
}

/* Formats the caller's words, then records "<words>: <backend text>". */
static sp_status record_work(sp_pipeline *p, sp_failure_kind kind, sp_status status,
                             const char *text, ...) SP_PRINTF(4, 5);
static sp_status record_work(sp_pipeline *p, sp_failure_kind kind, sp_status status,
                             const char *text, ...)
{
    va_list ap;
    va_start(ap, text);
    sp_status st = sp_failure_vrecord(&p->failure, sink_of(p), kind, 0, 0, status, text, ap);
    va_end(ap);
    return st;
}

sp_status sp_pipeline_vfail_work(sp_pipeline *p, sp_status status, const char *fmt,
                                 va_list ap)
{
    char what[256];
    vsnprintf(what, sizeof what, fmt, ap);
    return record_work(p, SP_FAILURE_BACKEND, status, "%s: %s", what, sp_backend_error());
}

sp_status sp_pipeline_fail_work(sp_pipeline *p, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = sp_pipeline_vfail_work(p, status, fmt, ap);
    va_end(ap);
    return st;
}

sp_status sp_pipeline_fail_lost(sp_pipeline *p, const char *fmt, ...)
{
    char what[SP_ERROR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return record_work(p, SP_FAILURE_LOST, SP_ERR_DEVICE_LOST, "%s", what);
}

void sp_pipeline_set_last_figures(sp_pipeline *p, double makespan_s, double submit_s,
                                  double wait_s)
{
    atomic_store(&p->last_makespan_s, makespan_s);
    atomic_store(&p->last_submit_s, submit_s);
    atomic_store(&p->last_wait_s, wait_s);
}

/* ---- claims --------------------------------------------------------------------------- */

/* The reason of this thread's last refused claim, "" after a claim that succeeded: for a
 * caller inside the library (a device group's member thread) that must pass it on. */
static _Thread_local char refusal[SP_ERROR_TEXT];

/* A pipeline runs on one thread at a time (streampipe.h): a second run at once would share
 * the first one's slots, staging buffers, failure state and graph captures, and give wrong
 * output with SP_OK. It is refused before it reads or writes anything of the pipeline; its
 * reason goes to the context's text (and this thread's refusal), since the pipeline's
 * belongs to the call under way, whose caller reads it after. */
sp_status sp_pipeline_claim(sp_pipeline *p, const char *call)
{
    int idle = 0;
    if (atomic_compare_exchange_strong(&p->busy, &idle, 1)) {
        atomic_store(&p->holder, call);
        refusal[0] = '\0';
        return SP_OK;
    }
    const char *holder = atomic_load(&p->holder);
    if (holder && strcmp(holder, "sp_stream_open") == 0)
        snprintf(refusal, sizeof refusal, "%s: a stream is open on the pipeline "
                 "(sp_stream_open); close it first; nothing was done", call);
    else
        snprintf(refusal, sizeof refusal, "%s: the pipeline is already running on another "
                 "thread (a pipeline runs on one thread at a time); nothing was done", call);
    return sp_context_fail(p->ctx, SP_ERR_INVALID_ARGUMENT, "%s", refusal);
}

const char *sp_pipeline_claim_refusal(void) { return refusal; }

void sp_pipeline_release(sp_pipeline *p)
{
    atomic_store(&p->holder, NULL);
    atomic_store(&p->busy, 0);
}

void sp_pipeline_set_group_member(sp_pipeline *p, int member)
{
    atomic_store(&p->group_member, member);
}

int sp_pipeline_is_group_member(sp_pipeline *p) { return atomic_load(&p->group_member); }

/* ---- the public getters --------------------------------------------------------------- */

/* The text itself, not a copy, as sp_context_last_error (context.c says why); while a stream
 * is open its engine thread may write it, which the header says (the library's own readers
 * copy it under the lock: sp_pipeline_error_copy). */
const char *sp_pipeline_last_error(const sp_pipeline *p)
{
    return p ? p->error.text : "sp_pipeline_last_error: pipeline is NULL";
}

uint64_t sp_pipeline_last_cause(const sp_pipeline *p)
{
    return p ? sp_failure_cause((sp_failure *)&p->failure) : 0; /* its lock is the record's */
}

size_t sp_pipeline_out_record_bytes(const sp_pipeline *p)
{
    return p ? p->record_bytes[p->n_stages] : 0;
}

size_t sp_pipeline_chunk_records(const sp_pipeline *p, size_t n_records)
{
    if (!p)
        return 0;
    sp_run_plan plan;
    sp_plan_run(n_records, p->chunk_capacity, p->chunk_chosen, p->depth, p->widest_record,
                &plan);
    return plan.chunk_records;
}

unsigned sp_pipeline_depth(const sp_pipeline *p) { return p ? p->depth : 0; }

double sp_pipeline_last_submit_s(const sp_pipeline *p)
{
    return p ? atomic_load(&p->last_submit_s) : 0.0;
}

double sp_pipeline_last_wait_s(const sp_pipeline *p)
{
    return p ? atomic_load(&p->last_wait_s) : 0.0;
}

double sp_pipeline_last_makespan_s(const sp_pipeline *p)
{
    return p ? atomic_load(&p->last_makespan_s) : 0.0;
}
