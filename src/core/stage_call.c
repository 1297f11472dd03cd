/* Calling a stage's function for one chunk (through the backend's launch) and recording how
 * it failed: the status it returned and the message it gave with sp_chunk_fail. */
#include <stdarg.h>
#include <stdio.h>

#include "core/pipeline_state.h"
#include "core/stage_call.h"

/* The pipeline whose graph the calling thread is capturing, if any (submit_graph.c). CUDA calls
 * a stage's function on that thread to record its kernels; if the function refuses then, it
 * is a reason not to use the graph, not a failure of the run: stream mode calls it again for
 * the same chunks and fails the run then if it still refuses. Thread-local, so that a replay
 * failing on another thread (HOST workers) meanwhile is recorded as usual. */
static _Thread_local const sp_pipeline *capturing;

void sp_pipeline_set_capturing(const sp_pipeline *p) { capturing = p; }

/* The stage call under way on this thread: where sp_chunk_fail puts its message. A stage may
 * run another pipeline from inside its function, so calls nest (outer). */
typedef struct stage_frame {
    const sp_chunk *chunk;
    char message[512];
    uint64_t cause; /* sp_chunk_fail_cause's, 0: none */
    struct stage_frame *outer;
} stage_frame;

static _Thread_local stage_frame *current_frame;

/* Attaches the message and cause to the chunk's stage call under way on this thread. */
static sp_status attach(const sp_chunk *chunk, sp_status status, uint64_t cause,
                        const char *fmt, va_list ap)
{
    if (status == SP_OK)
        status = SP_ERR_STAGE_FAILED;
    stage_frame *frame = current_frame;
    if (frame == NULL || frame->chunk != chunk)
        return status; /* not inside this chunk's stage call: nothing to attach it to */
    frame->cause = cause;
    if (fmt)
        vsnprintf(frame->message, sizeof frame->message, fmt, ap);
    return status;
}

sp_status sp_chunk_fail(const sp_chunk *chunk, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = attach(chunk, status, 0, fmt, ap);
    va_end(ap);
    return st;
}

sp_status sp_chunk_fail_cause(const sp_chunk *chunk, sp_status status, uint64_t cause,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_status st = attach(chunk, status, cause, fmt, ap);
    va_end(ap);
    return st;
}

/* The run's error text for a stage that failed at `chunk`: its own message when it gave one. */
static void record_stage_failure(sp_pipeline *p, const sp_stage_call *call,
                                 const sp_chunk *chunk, sp_status status,
                                 const stage_frame *frame)
{
    const char *message = frame->message;
    const sp_stage *st = &p->stages[call->index];
    size_t last = chunk->first_record + chunk->records - 1;
    if (message[0] != '\0')
        sp_pipeline_fail_chunk(p, chunk->index, frame->cause, SP_ERR_STAGE_FAILED,
                               "stage '%s' chunk %zu: %s (stage %zu of %zu, records %zu..%zu; "
                               "it returned %s)",
                               st->name, chunk->index, message, call->index + 1, p->n_stages,
                               chunk->first_record, last, sp_status_name(status));
    else
        sp_pipeline_fail_chunk(p, chunk->index, frame->cause, SP_ERR_STAGE_FAILED,
                               "stage '%s' (stage %zu of %zu) failed at chunk %zu (records "
                               "%zu..%zu): it returned %s (%s)",
                               st->name, call->index + 1, p->n_stages, chunk->index,
                               chunk->first_record, last, sp_status_name(status),
                               sp_status_message(status));
}

static sp_status call_stage(const sp_stage *st, sp_stage_fn fn, const sp_chunk *chunk,
                            stage_frame *frame)
{
    frame->chunk = chunk;
    frame->message[0] = '\0';
    frame->cause = 0;
    frame->outer = current_frame;
    current_frame = frame;
    sp_status status = fn(chunk, st->user);
    current_frame = frame->outer;
    return status;
}

sp_status sp_stage_trampoline(const sp_chunk *chunk, void *arg)
{
    const sp_stage_call *call = arg;
    sp_pipeline *p = call->pipeline;
    if (sp_failure_drops(&p->failure, chunk->index))
        return SP_ERR_CANCELLED; /* stop doing work for the chunks a failure has lost */
    const sp_stage *st = &p->stages[call->index];
    sp_stage_fn fn = p->ctx->kind == SP_BACKEND_CUDA ? st->cuda : st->host;
    stage_frame frame;
    sp_status status = call_stage(st, fn, chunk, &frame);
    if (status == SP_OK)
        return SP_OK;
    if (capturing == p) {
        sp_backend_fail("stage '%s' returned %s while its chunk %zu was being captured%s%s",
                        st->name, sp_status_name(status), chunk->index,
                        frame.message[0] ? ": " : "", frame.message);
        return status;
    }
    /* which failure is kept (the earliest failed chunk's) is failure.c's rule */
    record_stage_failure(p, call, chunk, status, &frame);
    return status;
}
