/* Streams: batches submitted as they arrive, fed by one engine thread into the pipeline's
 * ring behind the chunks already in flight (engine.c does the chunks; this file keeps the
 * batches, the events and the thread).
 *
 * Locking: `lock` guards the batch list, the event queue and the counters below it. The ring
 * (the pipeline's slots) belongs to the engine thread alone. The engine calls back into this
 * file (chunk_retired, input_read) from inside a host turn, with `lock` not held.
 *
 * A batch's life: submitted (held, in the list) -> started by the engine (its chunks go into
 * the ring) -> complete (every chunk has left its slot, or the batch failed) -> its DONE is
 * queued once every batch before it has had its DONE queued -> taken by sp_stream_next, which
 * frees it and makes room for another submit. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/run.h"

#define DEFAULT_MAX_IN_FLIGHT 4u
#define MAX_IN_FLIGHT_LIMIT 4096u

typedef struct stream_batch {
    const void *in;
    void *out;
    size_t n_records;
    uint64_t tag;
    size_t chunks;       /* chunks the engine cut it into (known once started) */
    size_t retired;      /* of those, chunks that have left their slots */
    int submitted;       /* every chunk is in the ring (or the batch failed first) */
    int released_queued; /* INPUT_RELEASED is queued (or not asked for) */
    int complete;        /* its status is final */
    int done_queued;
    sp_status status;
    struct stream_batch *next;
} stream_batch;

struct sp_stream {
    sp_pipeline *p;
    unsigned max_in_flight;
    int nonblocking;
    int input_events;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work;   /* the engine: a batch queued, or closing */
    pthread_cond_t room;   /* submit: a DONE was taken */
    pthread_cond_t events; /* next: an event was queued */
    stream_batch *head;    /* batches whose DONE is not queued yet, in submission order */
    stream_batch *tail;
    stream_batch *to_start; /* the first batch the engine has not started */
    unsigned held;          /* submitted and not yet returned as DONE */
    sp_stream_event *queue; /* events queued for next(): a ring of 2 x max_in_flight */
    size_t queue_head, queue_len;
    int closing;
    int lost;
    sp_status first_failure;
    /* for the report: the engine's numbering and what it has done */
    size_t next_chunk, next_record;
    size_t records, chunks, batches;
    int any_staged_in, any_staged_out, any_replayed;
    double t_first, t_last;
    char error[SP_ERROR_TEXT];
};

static sp_status stream_fail(sp_stream *s, sp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Under lock. */
static sp_status stream_fail(sp_stream *s, sp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- events, in submission order (under lock) ----------------------------------------- */

static void queue_event(sp_stream *s, sp_stream_event_kind kind, const stream_batch *b)
{
    size_t cap = 2u * s->max_in_flight;
    sp_stream_event *ev = &s->queue[(s->queue_head + s->queue_len) % cap];
    *ev = (sp_stream_event){kind, b->tag, kind == SP_EVENT_DONE ? b->status : SP_OK,
                            b->n_records};
    s->queue_len++; /* never more than 2 per held batch: the ring cannot overflow */
    pthread_cond_broadcast(&s->events);
}

/* Queues the events that are due: INPUT_RELEASED of any batch whose input is read, and DONE
 * of complete batches from the head on, so that DONE events keep submission order. A batch
 * stays allocated until next() returns its DONE. */
static void queue_due_events(sp_stream *s)
{
    for (stream_batch *b = s->head; b; b = b->next)
        if (b->complete && !b->released_queued) {
            b->released_queued = 1; /* before DONE, always */
            if (s->input_events)
                queue_event(s, SP_EVENT_INPUT_RELEASED, b);
        }
    while (s->head && s->head->complete && !s->head->done_queued) {
        stream_batch *b = s->head;
        b->done_queued = 1;
        queue_event(s, SP_EVENT_DONE, b);
        if (b->status != SP_OK && s->first_failure == SP_OK)
            s->first_failure = b->status;
        s->head = b->next;
        if (!s->head)
            s->tail = NULL;
        free(b); /* the event carries what the user needs */
    }
}

static void complete(sp_stream *s, stream_batch *b, sp_status status)
{
    if (b->complete)
        return;
    b->complete = 1;
    b->status = status;
    s->t_last = sp_now();
}

/* ---- what the engine reports (engine.c calls these from a host turn) -------------------- */

static void chunk_retired(void *owner, void *batch)
{
    sp_stream *s = owner;
    stream_batch *b = batch;
    pthread_mutex_lock(&s->lock);
    b->retired++;
    if (b->submitted && b->retired == b->chunks)
        complete(s, b, SP_OK);
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
}

static void input_read(void *owner, void *batch)
{
    sp_stream *s = owner;
    stream_batch *b = batch;
    if (b->in == b->out)
        return; /* in place, the input is the output: released when complete, before DONE */
    pthread_mutex_lock(&s->lock);
    if (!b->released_queued) {
        b->released_queued = 1;
        if (s->input_events)
            queue_event(s, SP_EVENT_INPUT_RELEASED, b);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- the engine thread ---------------------------------------------------------------- */

/* After a failure inside batch `failed` (or while draining): batches wholly before the
 * failing chunk kept their output (engine.c retired them normally); `failed` gets the
 * status; every later started batch is cancelled. A lost device fails everything. */
static void settle_failure(sp_stream *s, stream_batch *failed, sp_status st)
{
    pthread_mutex_lock(&s->lock);
    int lost = atomic_load(&s->p->ctx->lost);
    if (lost)
        s->lost = 1;
    for (stream_batch *b = s->head; b; b = b->next) {
        if (b->complete)
            continue;
        int started = b == failed || b->submitted || b->retired > 0;
        if (lost)
            complete(s, b, SP_ERR_DEVICE_LOST);
        else if (b == failed)
            complete(s, b, st);
        else if (started && b->retired == b->chunks && b->submitted)
            complete(s, b, SP_OK);
        else if (started)
            complete(s, b, SP_ERR_CANCELLED);
    }
    if (lost) /* nothing will run again: fail the batches not started too */
        s->to_start = NULL;
    snprintf(s->error, sizeof s->error, "%s", sp_pipeline_last_error(s->p));
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
}

static void run_batch(sp_stream *s, stream_batch *b)
{
    sp_engine_batch job = {
        .in = b->in, .out = b->out, .n_records = b->n_records,
        .base = s->next_chunk, .record_base = s->next_record,
        .hooks = {s, chunk_retired, input_read}, .batch = b,
    };
    size_t chunks = 0;
    int staged_in = 0, staged_out = 0, replayed = 0;
    sp_status st = sp_engine_run_batch(s->p, &job, &chunks, &staged_in, &staged_out, &replayed);
    pthread_mutex_lock(&s->lock);
    b->chunks = chunks;
    b->submitted = 1;
    s->next_chunk += chunks;
    s->next_record += b->n_records;
    s->records += b->n_records;
    s->chunks += chunks;
    s->batches++;
    s->any_staged_in |= staged_in;
    s->any_staged_out |= staged_out;
    s->any_replayed |= replayed;
    if (st == SP_OK && b->retired == b->chunks)
        complete(s, b, SP_OK); /* no chunks, or all already retired */
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
    if (st != SP_OK) {
        sp_engine_recover(s->p, &job.hooks);
        settle_failure(s, b, st);
    }
}

static void *engine_main(void *arg)
{
    sp_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        int in_flight = sp_engine_busy_slots(s->p) > 0;
        if (!s->to_start && !in_flight) {
            if (s->closing)
                break;
            pthread_cond_wait(&s->work, &s->lock);
            continue;
        }
        stream_batch *b = s->to_start;
        if (b)
            s->to_start = b->next;
        pthread_mutex_unlock(&s->lock);
        if (b) {
            run_batch(s, b);
        } else {
            /* nothing new to feed: hand back the oldest chunk's results rather than wait */
            sp_engine_hooks hooks = {s, chunk_retired, input_read};
            sp_status st = sp_engine_retire_oldest(s->p, &hooks);
            if (st != SP_OK) {
                sp_engine_recover(s->p, &hooks);
                settle_failure(s, NULL, st);
            }
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the public calls ----------------------------------------------------------------- */

sp_status sp_stream_open(sp_pipeline *p, const sp_stream_config *config, sp_stream **out)
{
    if (!p || !out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    unsigned max = config && config->max_in_flight ? config->max_in_flight
                                                    : DEFAULT_MAX_IN_FLIGHT;
    if (max > MAX_IN_FLIGHT_LIMIT)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT,
                                "sp_stream_open: max_in_flight %u is more than %u", max,
                                MAX_IN_FLIGHT_LIMIT);
    sp_status st = sp_pipeline_claim(p, "sp_stream_open");
    if (st != SP_OK)
        return st;
    sp_stream *s = calloc(1, sizeof *s);
    sp_stream_event *queue = calloc(2u * max, sizeof *queue);
    if (!s || !queue) {
        free(s);
        free(queue);
        sp_pipeline_release(p);
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "no memory for a stream");
    }
    s->p = p;
    s->max_in_flight = max;
    s->nonblocking = config && config->nonblocking;
    s->input_events = config && config->input_released_events;
    s->queue = queue;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->room, NULL);
    pthread_cond_init(&s->events, NULL);
    sp_engine_reset(p);
    if (pthread_create(&s->thread, NULL, engine_main, s) != 0) {
        pthread_cond_destroy(&s->events);
        pthread_cond_destroy(&s->room);
        pthread_cond_destroy(&s->work);
        pthread_mutex_destroy(&s->lock);
        free(queue);
        free(s);
        sp_pipeline_release(p);
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "starting the stream's thread failed");
    }
    *out = s;
    return SP_OK;
}

sp_status sp_stream_submit(sp_stream *s, const void *in, size_t n_records, void *out,
                           uint64_t tag)
{
    if (!s)
        return SP_ERR_INVALID_ARGUMENT;
    char why[256];
    sp_status st = sp_run_check_buffers(s->p, in, n_records, out, why, sizeof why);
    pthread_mutex_lock(&s->lock);
    if (s->lost)
        st = stream_fail(s, SP_ERR_DEVICE_LOST, "the device was lost; close the stream");
    else if (st != SP_OK)
        stream_fail(s, st, "sp_stream_submit: %s", why);
    else if (s->closing)
        st = stream_fail(s, SP_ERR_INVALID_ARGUMENT, "sp_stream_submit: the stream is closing");
    while (st == SP_OK && s->held >= s->max_in_flight) {
        if (s->nonblocking) {
            st = stream_fail(s, SP_ERR_WOULD_BLOCK, "sp_stream_submit: %u batches held (the "
                             "max_in_flight); take a DONE with sp_stream_next first",
                             s->held);
            break;
        }
        pthread_cond_wait(&s->room, &s->lock);
    }
    stream_batch *b = st == SP_OK ? calloc(1, sizeof *b) : NULL;
    if (st == SP_OK && !b)
        st = stream_fail(s, SP_ERR_OUT_OF_MEMORY, "sp_stream_submit: no memory for a batch");
    if (st == SP_OK) {
        *b = (stream_batch){.in = in, .out = out, .n_records = n_records, .tag = tag};
        if (s->tail)
            s->tail->next = b;
        else
            s->head = b;
        s->tail = b;
        if (!s->to_start)
            s->to_start = b;
        if (s->t_first == 0.0)
            s->t_first = sp_now();
        s->held++;
        pthread_cond_signal(&s->work);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* The absolute time `timeout_s` from now, for pthread_cond_timedwait. */
static struct timespec deadline_after(double timeout_s)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    double whole = (double)(long long)timeout_s;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((timeout_s - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

sp_status sp_stream_next(sp_stream *s, sp_stream_event *ev, double timeout_s)
{
    if (!s || !ev)
        return SP_ERR_INVALID_ARGUMENT;
    struct timespec deadline = deadline_after(timeout_s > 0 ? timeout_s : 0);
    sp_status st = SP_OK;
    pthread_mutex_lock(&s->lock);
    while (s->queue_len == 0) {
        if (s->held == 0) {
            st = stream_fail(s, SP_ERR_INVALID_ARGUMENT,
                             "sp_stream_next: no batch is held, so no event can come");
            break;
        }
        if (timeout_s == 0) {
            st = SP_ERR_TIMEOUT;
            break;
        }
        if (timeout_s < 0) {
            pthread_cond_wait(&s->events, &s->lock);
        } else if (pthread_cond_timedwait(&s->events, &s->lock, &deadline) == ETIMEDOUT &&
                   s->queue_len == 0) {
            st = SP_ERR_TIMEOUT;
            break;
        }
    }
    if (st == SP_OK) {
        *ev = s->queue[s->queue_head];
        s->queue_head = (s->queue_head + 1) % (2u * s->max_in_flight);
        s->queue_len--;
        if (ev->kind == SP_EVENT_DONE) {
            s->held--;
            pthread_cond_signal(&s->room);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

const char *sp_stream_last_error(const sp_stream *s)
{
    return s ? s->error : "sp_stream_last_error: stream is NULL";
}

static void stream_report(const sp_stream *s, sp_report *report)
{
    memset(report, 0, sizeof *report);
    sp_engine_fill_report(s->p, report);
    report->records = s->records;
    report->chunks = s->chunks;
    report->batches = s->batches;
    report->staged_in = s->any_staged_in;
    report->staged_out = s->any_staged_out;
    report->graph = s->any_replayed;
    report->makespan_s = s->t_last > s->t_first ? s->t_last - s->t_first : 0.0;
    snprintf(report->notes, sizeof report->notes, "a stream records no per-operation timings: "
             "%zu batches, makespan from the first submit to the last batch complete%s",
             s->batches, s->any_replayed ? "; full chunks replayed from graphs" : "");
}

sp_status sp_stream_close(sp_stream *s, sp_report *report)
{
    if (!s)
        return SP_OK;
    pthread_mutex_lock(&s->lock);
    s->closing = 1;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL); /* it runs every batch and retires every slot first */
    sp_status st = s->lost ? SP_ERR_DEVICE_LOST : s->first_failure;
    for (stream_batch *b = s->head; b; b = b->next)
        if (b->complete && b->status != SP_OK && st == SP_OK)
            st = b->status;
    if (report)
        stream_report(s, report);
    while (s->head) {
        stream_batch *b = s->head;
        s->head = b->next;
        free(b);
    }
    sp_pipeline *p = s->p;
    pthread_cond_destroy(&s->events);
    pthread_cond_destroy(&s->room);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    free(s->queue);
    free(s);
    sp_pipeline_release(p);
    return st;
}
