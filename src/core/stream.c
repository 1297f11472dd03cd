/* Streams: batches submitted as they arrive, fed by one engine thread into the pipeline's
 * ring behind the chunks already in flight (the scheduler, sched.c, does the chunks; this
 * file keeps the batches, the events and the thread).
 *
 * Locking: `lock` guards the batch list, the event queue and the counters below it. The ring
 * (the pipeline's slots) belongs to the engine thread alone, which calls the scheduler with
 * `lock` not held; what left the ring comes back from each call (an sp_done_list), and the
 * thread takes `lock` once per list to account for it (take_done).
 *
 * A batch's life: submitted (held, in the list) -> started by the engine (its chunks go into
 * the ring) -> complete (every chunk has left its slot, or the batch failed) -> its DONE is
 * queued once every batch before it has had its DONE queued (the batch is freed then: the
 * event carries its tag, status, records and failure text), which makes room for another
 * submit -> the DONE taken by sp_stream_next.
 *
 * Room is counted in batches the engine still has, not in events not yet taken: a thread
 * that submits more than max_in_flight batches before it takes any event waits only for the
 * engine, which always gets on, so one thread alone can submit all and then take all. The
 * queued events are small and their ring grows at submit (on the user's thread, where no
 * memory can fail the engine), so that it always has room for two events per held batch.
 *
 * Close wakes every thread waiting inside submit or next (they return an error) and waits for
 * them to leave before it frees the stream: the header forbids the overlap, but a submitter
 * blocked for room while another thread closes would otherwise wait on freed memory. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/device_memory.h"
#include "core/live_objects.h"
#include "core/pipeline.h"
#include "core/report.h"
#include "core/sched.h"
#include "core/sized.h"
#include "core/stats.h"
#include "core/tune.h"

#define DEFAULT_MAX_IN_FLIGHT 4u
#define MAX_IN_FLIGHT_LIMIT 65536u /* two events of 40 bytes each reserved per held batch */

typedef struct stream_batch {
    const void *in;
    void *out;
    size_t n_records;
    uint64_t tag;
    size_t first_record; /* its first record in the stream's numbering (given at submit) */
    uint64_t cause;      /* the failure's sp_chunk_fail_cause, for its DONE */
    atomic_int stop;     /* cancelled while being fed: the scheduler feeds no more chunks */
    void *consumer;      /* sp_stream_submit_to's stream, made to wait for the output */
    int cut_short;       /* ... and it stopped: complete with SP_ERR_CANCELLED */
    size_t base;         /* the engine's number of its first chunk (once started) */
    size_t chunks;       /* chunks the engine cuts it into (known once started; the
                            library's re-picks of the chunk size settle it once fed) */
    size_t records_fed;  /* records that went into the ring (all but for a cancel) */
    size_t retired;      /* of those, chunks that have left their slots */
    int started;         /* the engine has begun feeding it to the ring */
    int submitted;       /* every chunk is in the ring (or the batch failed first) */
    int released_queued; /* INPUT_RELEASED is queued (or not asked for) */
    int complete;        /* its status is final */
    int done_queued;
    sp_status status;
    char *error;         /* why it failed (malloc'd; handed to its DONE event), or NULL */
    struct stream_batch *next;
} stream_batch;

/* An event waiting for next(), with the failure text its DONE brings (malloc'd, or NULL). */
typedef struct queued_event {
    sp_stream_event ev;
    char *error;
} queued_event;

struct sp_stream {
    sp_pipeline *p;
    unsigned max_in_flight;
    int nonblocking;
    int input_events;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work;   /* the engine: a batch queued, or closing */
    pthread_cond_t room;   /* submit: a held batch's DONE was queued, or closing */
    pthread_cond_t events; /* next: an event was queued, or closing */
    pthread_cond_t left;   /* close: a thread left submit or next */
    stream_batch *head;    /* batches whose DONE is not queued yet, in submission order */
    stream_batch *tail;
    stream_batch *to_start; /* the first batch the engine has not started */
    unsigned held;          /* submitted, DONE not yet queued: what the engine still has */
    unsigned inside;        /* threads inside submit or next (close waits for none) */
    queued_event *queue;    /* events queued for next(): a ring of queue_cap */
    size_t queue_head, queue_len, queue_cap;
    int closing;
    int lost;
    sp_status first_failure;
    /* for the report: the engine's numbering and what it has done */
    size_t next_chunk;
    size_t next_record;   /* the first record of the next batch submitted */
    size_t records, chunks, batches;
    int any_staged_in, any_staged_out, any_replayed;
    size_t pcie_bytes;      /* what the batches' copies moved between host and device */
    sp_bevent *hand_off;    /* recorded after a consumer's batch (made at the first) */
    double t_first, t_last;
    /* sp_stream_last_error's text: written only by the user's calls (a refused submit, next()
     * taking a failed batch's DONE), never by the engine thread, so that reading it cannot
     * race with a failure being handled */
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

static void free_batch(stream_batch *b)
{
    free(b->error);
    free(b);
}

/* ---- events, in submission order (under lock) ----------------------------------------- */

static void queue_event(sp_stream *s, sp_stream_event_kind kind, stream_batch *b)
{
    queued_event *q = &s->queue[(s->queue_head + s->queue_len) % s->queue_cap];
    q->ev = (sp_stream_event){kind, b->tag, kind == SP_EVENT_DONE ? b->status : SP_OK,
                              b->n_records, b->first_record,
                              kind == SP_EVENT_DONE ? b->cause : 0};
    q->error = NULL;
    if (kind == SP_EVENT_DONE) {
        q->error = b->error;
        b->error = NULL;
    }
    s->queue_len++; /* room for 2 per held batch was made at submit (reserve_events) */
    pthread_cond_broadcast(&s->events);
}

/* Queues the events that are due: INPUT_RELEASED of any complete batch not released yet,
 * and DONE of complete batches from the head on, so that DONE events keep submission order.
 * A batch is freed once its DONE is queued, which makes room for another submit. */
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
        if (b->status != SP_OK && b->status != SP_ERR_CANCELLED)
            sp_stats_error(s->p);
        if (b->status != SP_OK && b->status != SP_ERR_CANCELLED && s->first_failure == SP_OK)
            s->first_failure = b->status; /* a cancel is no failure; one after a failure
                                             follows that failure, which came first */
        s->head = b->next;
        if (!s->head)
            s->tail = NULL;
        if (s->to_start == b) /* cancelled before the engine reached it: it never will */
            s->to_start = b->next;
        free_batch(b); /* the event carries what the user needs */
        s->held--;
        sp_stats_batches(s->p, s->held);
        pthread_cond_broadcast(&s->room); /* a waiter that fails its allocation passes none on */
    }
}

/* Under lock, on the user's thread: makes the event ring big enough for the events already
 * queued and two for every held batch, this new one included, so that the engine never
 * needs memory to queue one (three for a batch: INPUT_RELEASED, HANDED_OFF and DONE). Grows
 * by doubling, keeping the events' order. */
static int reserve_events(sp_stream *s)
{
    size_t need = s->queue_len + 3u * ((size_t)s->held + 1u);
    if (need <= s->queue_cap)
        return 1;
    size_t cap = s->queue_cap * 2u > need ? s->queue_cap * 2u : need;
    queued_event *grown = calloc(cap, sizeof *grown);
    if (!grown)
        return 0;
    for (size_t k = 0; k < s->queue_len; k++)
        grown[k] = s->queue[(s->queue_head + k) % s->queue_cap];
    free(s->queue);
    s->queue = grown;
    s->queue_head = 0;
    s->queue_cap = cap;
    return 1;
}

static void complete(sp_stream *s, stream_batch *b, sp_status status)
{
    if (b->complete)
        return;
    b->complete = 1;
    b->status = status;
    s->t_last = sp_now();
}

/* A failed batch's status and why; the text is the event's to carry (no memory: none). */
static void fail_batch(sp_stream *s, stream_batch *b, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void fail_batch(sp_stream *s, stream_batch *b, sp_status status, const char *fmt, ...)
{
    if (b->complete)
        return;
    complete(s, b, status);
    b->error = malloc(SP_ERROR_TEXT);
    if (b->error) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->error, SP_ERROR_TEXT, fmt, ap);
        va_end(ap);
    }
}

/* ---- what comes back from the scheduler (under lock) --------------------------------- */

/* Every chunk fed is done: the batch is, whole or cut short by a cancel. */
static void chunks_done(sp_stream *s, stream_batch *b)
{
    if (b->cut_short)
        fail_batch(s, b, SP_ERR_CANCELLED, "batch %llu: cancelled after %zu of its %zu records "
                   "(their output is written, the rest left as it was)",
                   (unsigned long long)b->tag, b->records_fed, b->n_records);
    else
        complete(s, b, SP_OK);
}

static void chunk_retired(sp_stream *s, stream_batch *b)
{
    b->retired++;
    if (b->submitted && b->retired == b->chunks)
        chunks_done(s, b);
}

static void input_read(sp_stream *s, stream_batch *b)
{
    if (b->in == b->out)
        return; /* in place, the input is the output: released when complete, before DONE */
    if (!b->released_queued) {
        b->released_queued = 1;
        if (s->input_events)
            queue_event(s, SP_EVENT_INPUT_RELEASED, b);
    }
}

/* Accounts for what left the ring in one scheduler call, and queues the events now due. */
static void take_done(sp_stream *s, const sp_done_list *done)
{
    if (done->n == 0)
        return;
    pthread_mutex_lock(&s->lock);
    for (size_t k = 0; k < done->n; k++) {
        stream_batch *b = done->item[k].owner;
        if (done->item[k].kind == SP_DONE_CHUNK)
            chunk_retired(s, b);
        else
            input_read(s, b);
    }
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
}

/* ---- the engine thread ---------------------------------------------------------------- */

/* The started batch that chunk `chunk` belongs to, if it is still held. */
static stream_batch *batch_of_chunk(sp_stream *s, size_t chunk)
{
    for (stream_batch *b = s->head; b; b = b->next)
        if (b->started && chunk >= b->base && chunk - b->base < b->chunks)
            return b;
    return NULL;
}

/* After a failure, once sp_sched_recover has drained the ring and handed on the chunks
 * before the failing one (so the batches wholly before it are complete): the batch that
 * failed gets the status and why, and every later started batch is cancelled. Which batch
 * failed: the one holding the failed chunk when a stage failed (whichever batch the engine
 * was busy with when it noticed: a HOST stage fails on its worker, maybe batches earlier),
 * else the batch being fed (`noticed`), else the oldest still held. A lost device fails
 * everything, the batches not started too. */
static void settle_failure(sp_stream *s, stream_batch *noticed, const sp_sched_failure *f)
{
    pthread_mutex_lock(&s->lock);
    int lost = atomic_load(&s->p->ctx->lost);
    if (lost)
        s->lost = 1;
    stream_batch *culprit = f->chunk_failed ? batch_of_chunk(s, f->chunk) : NULL;
    if (!culprit && noticed && !noticed->complete)
        culprit = noticed;
    for (stream_batch *b = s->head; !culprit && b; b = b->next)
        if (b->started && !b->complete)
            culprit = b;
    uint64_t tag = culprit ? culprit->tag : 0;
    for (stream_batch *b = s->head; b; b = b->next) {
        if (lost)
            fail_batch(s, b, SP_ERR_DEVICE_LOST, "%s", f->text);
        else if (b == culprit && !b->complete) {
            b->cause = f->cause;
            fail_batch(s, b, f->status, "%s", f->text);
        }
        else if (b->started)
            fail_batch(s, b, SP_ERR_CANCELLED, "cancelled: batch %llu, before it, failed: %s",
                       (unsigned long long)tag, f->text);
    }
    if (lost) /* nothing will run again */
        s->to_start = NULL;
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
}

static void recover_and_settle(sp_stream *s, stream_batch *noticed, sp_status st)
{
    sp_sched_failure f;
    sp_done_list done;
    sp_sched_recover(s->p, st, &f, &done);
    take_done(s, &done);
    settle_failure(s, noticed, &f);
}

/* Feeds the batch into the ring, handing back what leaves it meanwhile. */
static sp_status feed_batch(sp_stream *s, stream_batch *b, int *staged_in, int *staged_out,
                            int *replayed)
{
    sp_batch job;
    sp_done_list done;
    sp_status st = sp_sched_start(&job, s->p, b->in, b->n_records, b->out, s->next_chunk,
                                  b->first_record, b);
    job.stop = &b->stop;
    for (int fed = 0; st == SP_OK && !fed;) {
        st = sp_sched_feed(&job, &done, &fed);
        take_done(s, &done); /* also after a failure: what left before it */
    }
    *staged_in = b->n_records && job.stage_in;
    *staged_out = b->n_records && job.stage_out;
    *replayed = job.replayed;
    pthread_mutex_lock(&s->lock); /* failed or cut short too: what went in crossed */
    s->pcie_bytes += sp_report_pcie_bytes(&job);
    /* the chunks it was cut into: as planned at its start unless the chunk size was re-picked
     * as it went (tune_run.h) or a cancel stopped it; nothing reads them before it is fed
     * but a failure's settling, which comes after this */
    b->chunks = job.end - job.base;
    b->records_fed = b->n_records;
    if (st == SP_OK && job.stopped) {
        b->records_fed = job.end > job.base ? sp_chunk_first(&job, job.end) : 0;
        b->cut_short = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* Under lock: a batch cancelled before it started is complete already; it passes without
 * touching the ring. */
static int skip_cancelled(sp_stream *s, stream_batch *b)
{
    if (!b->complete)
        return 0;
    b->started = b->submitted = 1;
    b->base = s->next_chunk;
    b->chunks = 0;
    queue_due_events(s);
    return 1;
}

static void run_batch(sp_stream *s, stream_batch *b)
{
    size_t cap = s->p->chunk_capacity;
    pthread_mutex_lock(&s->lock);
    if (skip_cancelled(s, b)) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    b->started = 1;
    b->base = s->next_chunk;
    b->chunks = b->n_records ? (b->n_records - 1) / cap + 1 : 0; /* the scheduler's cut */
    pthread_mutex_unlock(&s->lock);
    int staged_in = 0, staged_out = 0, replayed = 0;
    sp_status st = feed_batch(s, b, &staged_in, &staged_out, &replayed);
    /* the consumer waits for whatever went in, failed or not, so that nothing it queues races
     * the ring's writes; only a batch fed whole is said to be handed off */
    sp_status handed = b->consumer ? sp_sched_hand_off(s->p, s->hand_off, b->consumer) : st;
    pthread_mutex_lock(&s->lock);
    if (b->consumer && st == SP_OK && handed == SP_OK)
        queue_event(s, SP_EVENT_HANDED_OFF, b);
    if (st == SP_OK)
        st = handed;
    b->submitted = 1;
    s->next_chunk += b->chunks; /* the numbering goes on past the batch's chunks whatever */
    s->records += b->n_records;
    s->chunks += b->chunks;
    s->batches++;
    s->any_staged_in |= staged_in;
    s->any_staged_out |= staged_out;
    s->any_replayed |= replayed;
    if (st == SP_OK && b->retired == b->chunks)
        chunks_done(s, b); /* no chunks, or all already retired */
    queue_due_events(s);
    pthread_mutex_unlock(&s->lock);
    if (st != SP_OK)
        recover_and_settle(s, b, st);
}

static void *engine_main(void *arg)
{
    sp_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        int in_flight = sp_sched_busy(s->p) > 0;
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
            sp_done_list done;
            sp_status st = sp_sched_retire_oldest(s->p, &done);
            take_done(s, &done);
            if (st != SP_OK)
                recover_and_settle(s, NULL, st);
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the public calls ----------------------------------------------------------------- */

/* Under lock: the calling thread leaves submit or next; a close waiting for it goes on. */
static void leave(sp_stream *s)
{
    s->inside--;
    if (s->closing)
        pthread_cond_broadcast(&s->left);
}

/* With the depth left to the library, a stream gets a deeper ring than a run (plan.h's
 * SP_STREAM_DEPTH, within the budget). Without the memory for it the stream opens on the ring
 * it has: the pipeline's text says what failed. */
static void deepen_for_streams(sp_pipeline *p)
{
    unsigned from = p->depth, want = sp_tune_stream_depth(p);
    if (want > from && sp_pipeline_deepen(p, want) == SP_OK && p->depth > from)
        sp_tune_deepened(p, from);
}

sp_status sp_stream_open(sp_pipeline *p, const sp_stream_config *given, sp_stream **out)
{
    if (!p || !out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    sp_stream_config cfg = {.size = sizeof cfg}; /* NULL: the defaults */
    const char *why;
    sp_status read = given ? sp_sized_read(&cfg, sizeof cfg, given, SP_STREAM_CONFIG_SIZE_0_5,
                                           &why)
                           : SP_OK;
    if (read != SP_OK)
        return sp_pipeline_fail(p, read, "sp_stream_open: config: %s", why);
    const sp_stream_config *config = &cfg;
    unsigned max = config->max_in_flight ? config->max_in_flight : DEFAULT_MAX_IN_FLIGHT;
    if (max > MAX_IN_FLIGHT_LIMIT)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT,
                                "sp_stream_open: max_in_flight %u is more than %u", max,
                                MAX_IN_FLIGHT_LIMIT);
    sp_status st = sp_pipeline_claim(p, "sp_stream_open");
    if (st != SP_OK)
        return st;
    deepen_for_streams(p);
    sp_stream *s = calloc(1, sizeof *s);
    queued_event *queue = calloc(2u * max, sizeof *queue);
    if (!s || !queue) {
        free(s);
        free(queue);
        sp_pipeline_release(p);
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "no memory for a stream");
    }
    s->p = p;
    s->max_in_flight = max;
    s->nonblocking = config->nonblocking != 0;
    s->input_events = config->input_released_events != 0;
    s->queue = queue;
    s->queue_cap = 2u * max;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->room, NULL);
    pthread_cond_init(&s->events, NULL);
    pthread_cond_init(&s->left, NULL);
    sp_sched_reset(p);
    sp_stats_begin(p, 0); /* before the engine thread, which counts from here */
    if (pthread_create(&s->thread, NULL, engine_main, s) != 0) {
        pthread_cond_destroy(&s->left);
        pthread_cond_destroy(&s->events);
        pthread_cond_destroy(&s->room);
        pthread_cond_destroy(&s->work);
        pthread_mutex_destroy(&s->lock);
        free(queue);
        free(s);
        sp_pipeline_release(p);
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "starting the stream's thread failed");
    }
    sp_live_object_add(SP_LIVE_STREAM, +1);
    *out = s;
    return SP_OK;
}

/* Longer waits than this (about 31 years, infinity included) are waits for ever: converting
 * them to a timespec would overflow, and a deadline in the past made next() spin on the
 * stream's lock, starving the engine thread that was to queue the event. */
#define FOREVER_S 1e9

/* The absolute time `timeout_s` (0 .. FOREVER_S) from now, for pthread_cond_timedwait. */
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

/* Under lock: waits for room until `deadline` (NULL: for ever); SP_ERR_TIMEOUT at it. */
static sp_status wait_for_room(sp_stream *s, const struct timespec *deadline, double timeout_s)
{
    while (!s->closing && s->held >= s->max_in_flight) {
        if (s->nonblocking || timeout_s == 0)
            return stream_fail(s, s->nonblocking ? SP_ERR_WOULD_BLOCK : SP_ERR_TIMEOUT,
                               "sp_stream_submit: %u batches are still being processed (the "
                               "max_in_flight); submit again once one is DONE (sp_stream_next "
                               "says when)", s->held);
        if (!deadline) {
            pthread_cond_wait(&s->room, &s->lock); /* the engine makes room: it always gets on */
        } else if (pthread_cond_timedwait(&s->room, &s->lock, deadline) == ETIMEDOUT &&
                   !s->closing && s->held >= s->max_in_flight) {
            return stream_fail(s, SP_ERR_TIMEOUT, "sp_stream_submit: no room within %g s: %u "
                               "batches are still being processed (the max_in_flight)",
                               timeout_s, s->held);
        }
    }
    return SP_OK;
}

/* Under lock: the checked batch joins the list, numbered after the ones before it. */
static sp_status queue_batch(sp_stream *s, const void *in, size_t n_records, void *out,
                             uint64_t tag, void *consumer)
{
    stream_batch *b = calloc(1, sizeof *b);
    if (!b || !reserve_events(s)) {
        free(b);
        return stream_fail(s, SP_ERR_OUT_OF_MEMORY, "sp_stream_submit: no memory for a batch");
    }
    b->in = in;
    b->out = out;
    b->n_records = n_records;
    b->tag = tag;
    b->consumer = consumer;
    b->first_record = s->next_record;
    s->next_record += n_records;
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
    sp_stats_submitted(s->p, n_records);
    sp_stats_batches(s->p, s->held);
    pthread_cond_signal(&s->work);
    return SP_OK;
}

static sp_status submit(sp_stream *s, const void *in, size_t n_records, void *out,
                        uint64_t tag, double timeout_s, void *consumer)
{
    if (!s)
        return SP_ERR_INVALID_ARGUMENT;
    if (timeout_s > FOREVER_S)
        timeout_s = -1.0;
    struct timespec deadline = deadline_after(timeout_s > 0 ? timeout_s : 0);
    char why[256];
    sp_status st = sp_batch_check_buffers(s->p, in, n_records, out, why, sizeof why);
    pthread_mutex_lock(&s->lock);
    s->inside++;
    if (s->lost)
        st = stream_fail(s, SP_ERR_DEVICE_LOST, "the device was lost; close the stream");
    else if (st != SP_OK)
        stream_fail(s, st, "sp_stream_submit: %s", why);
    if (st == SP_OK)
        st = wait_for_room(s, timeout_s > 0 ? &deadline : NULL, timeout_s);
    if (st == SP_OK && s->lost) /* lost while this thread waited: the loss made the room */
        st = stream_fail(s, SP_ERR_DEVICE_LOST, "the device was lost; close the stream");
    if (st == SP_OK && s->closing) /* also when close woke this thread waiting for room */
        st = stream_fail(s, SP_ERR_INVALID_ARGUMENT, "sp_stream_submit: the stream is closing");
    if (st == SP_OK && consumer && !s->hand_off &&
        s->p->ctx->ops->event_create(s->p->ctx->impl, SP_EVENT_SYNC, &s->hand_off) != SP_OK)
        st = stream_fail(s, SP_ERR_OUT_OF_MEMORY, "sp_stream_submit_to: no event for the "
                         "hand-off: %s", sp_backend_error());
    if (st == SP_OK)
        st = queue_batch(s, in, n_records, out, tag, consumer);
    leave(s);
    pthread_mutex_unlock(&s->lock);
    return st;
}

sp_status sp_stream_submit(sp_stream *s, const void *in, size_t n_records, void *out,
                           uint64_t tag)
{
    return submit(s, in, n_records, out, tag, -1.0, NULL);
}

sp_status sp_stream_submit_wait(sp_stream *s, const void *in, size_t n_records, void *out,
                                uint64_t tag, double timeout_s)
{
    return submit(s, in, n_records, out, tag, timeout_s, NULL);
}

/* Why a consumer stream cannot be given this batch, or NULL. Touches nothing of the stream. */
static const char *hand_off_refused(sp_stream *s, void *out, size_t n_records, void *consumer,
                                    sp_status *st)
{
    sp_context *ctx = s->p->ctx;
    sp_mem_kind kind = SP_MEM_PAGEABLE;
    *st = SP_ERR_UNSUPPORTED;
    if (ctx->kind != SP_BACKEND_CUDA || !ctx->ops->external_wait)
        return "a consumer stream is a CUDA stream: the backend has none";
    *st = SP_ERR_INVALID_ARGUMENT;
    if (!consumer)
        return "consumer_stream is NULL";
    size_t bytes = n_records * s->p->record_bytes[s->p->n_stages]; /* submit checks overflow */
    if (out && n_records && sp_memory_kind(ctx, out, bytes, &kind) == SP_OK &&
        kind != SP_MEM_DEVICE)
        return "out is not device memory: a consumer stream reads the output on the device";
    return NULL;
}

sp_status sp_stream_submit_to(sp_stream *s, const void *in, size_t n_records, void *out,
                              uint64_t tag, void *consumer_stream)
{
    if (!s)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = SP_OK;
    const char *why = hand_off_refused(s, out, n_records, consumer_stream, &st);
    if (why) {
        pthread_mutex_lock(&s->lock);
        stream_fail(s, st, "sp_stream_submit_to: %s", why);
        pthread_mutex_unlock(&s->lock);
        return st;
    }
    return submit(s, in, n_records, out, tag, -1.0, consumer_stream);
}

/* ---- cancelling ----------------------------------------------------------------------- */

/* Under lock: one held batch cancelled as sp_stream_cancel says. */
static void cancel_batch(sp_stream *s, stream_batch *b)
{
    if (b->complete)
        return;
    if (!b->started)
        fail_batch(s, b, SP_ERR_CANCELLED, "batch %llu: cancelled before it started (its "
                   "output left as it was)", (unsigned long long)b->tag);
    else if (!b->submitted)
        atomic_store(&b->stop, 1); /* the scheduler stops at the next chunk boundary */
}

/* Under lock: cancels the held batches with `tag` (every one with all); whether one was. */
static int cancel_matching(sp_stream *s, int all, uint64_t tag)
{
    int found = 0;
    for (stream_batch *b = s->head; b; b = b->next)
        if (all || b->tag == tag) {
            found = 1;
            cancel_batch(s, b);
        }
    queue_due_events(s);
    return found;
}

static sp_status cancel(sp_stream *s, int all, uint64_t tag)
{
    if (!s)
        return SP_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    int found = cancel_matching(s, all, tag);
    sp_status st = found || all ? SP_OK
                                : stream_fail(s, SP_ERR_INVALID_ARGUMENT, "sp_stream_cancel: no "
                                              "held batch has tag %llu (done already, or never "
                                              "submitted)", (unsigned long long)tag);
    pthread_mutex_unlock(&s->lock);
    return st;
}

sp_status sp_stream_cancel(sp_stream *s, uint64_t tag) { return cancel(s, 0, tag); }

sp_status sp_stream_cancel_all(sp_stream *s) { return cancel(s, 1, 0); }

sp_status sp_stream_next(sp_stream *s, sp_stream_event *ev, double timeout_s)
{
    if (!s || !ev)
        return SP_ERR_INVALID_ARGUMENT;
    if (timeout_s > FOREVER_S)
        timeout_s = -1.0;
    struct timespec deadline = deadline_after(timeout_s > 0 ? timeout_s : 0);
    sp_status st = SP_OK;
    pthread_mutex_lock(&s->lock);
    s->inside++;
    while (s->queue_len == 0) {
        if (s->held == 0) {
            st = stream_fail(s, SP_ERR_INVALID_ARGUMENT,
                             "sp_stream_next: no batch is held, so no event can come");
            break;
        }
        if (s->closing) {
            st = stream_fail(s, SP_ERR_INVALID_ARGUMENT, "sp_stream_next: the stream is "
                             "closing");
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
        queued_event *q = &s->queue[s->queue_head];
        *ev = q->ev;
        if (q->error) /* the failed batch's text becomes sp_stream_last_error's */
            snprintf(s->error, sizeof s->error, "%s", q->error);
        else if (ev->kind == SP_EVENT_DONE && ev->status != SP_OK)
            snprintf(s->error, sizeof s->error, "batch %llu: %s (no memory for the reason)",
                     (unsigned long long)ev->tag, sp_status_name(ev->status));
        free(q->error);
        q->error = NULL;
        s->queue_head = (s->queue_head + 1) % s->queue_cap;
        s->queue_len--;
    }
    leave(s);
    pthread_mutex_unlock(&s->lock);
    return st;
}

sp_status sp_stream_stats(const sp_stream *s, sp_stats *stats)
{
    return s ? sp_stats_read(s->p, stats) : SP_ERR_INVALID_ARGUMENT;
}

/* The text itself, as sp_context_last_error (context.c says why); the header says which
 * thread may read it when. */
const char *sp_stream_last_error(const sp_stream *s)
{
    return s ? s->error : "sp_stream_last_error: stream is NULL";
}

static void stream_report(const sp_stream *s, sp_report *report)
{
    sp_batch_totals totals = {s->records,        s->chunks,         s->batches,
                              s->any_staged_in,  s->any_staged_out, s->any_replayed,
                              s->pcie_bytes};
    sp_report_batches(s->p, &totals, s->t_last > s->t_first ? s->t_last - s->t_first : 0.0,
                      report);
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
    pthread_cond_broadcast(&s->room); /* a thread waiting inside submit or next returns */
    pthread_cond_broadcast(&s->events);
    while (s->inside > 0)
        pthread_cond_wait(&s->left, &s->lock);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL); /* it runs every batch and retires every slot first */
    sp_stats_end(s->p, SP_OK); /* its failed batches were counted as they failed */
    sp_status st = s->lost ? SP_ERR_DEVICE_LOST : s->first_failure;
    for (stream_batch *b = s->head; b; b = b->next)
        if (b->complete && b->status != SP_OK && b->status != SP_ERR_CANCELLED && st == SP_OK)
            st = b->status;
    if (report)
        stream_report(s, report);
    while (s->head) {
        stream_batch *b = s->head;
        s->head = b->next;
        free_batch(b);
    }
    for (size_t k = 0; k < s->queue_len; k++) /* events not taken */
        free(s->queue[(s->queue_head + k) % s->queue_cap].error);
    sp_pipeline *p = s->p;
    if (s->hand_off) /* the engine thread is gone: nothing records it any more */
        p->ctx->ops->event_destroy(p->ctx->impl, s->hand_off);
    pthread_cond_destroy(&s->left);
    pthread_cond_destroy(&s->events);
    pthread_cond_destroy(&s->room);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    free(s->queue);
    free(s);
    sp_live_object_add(SP_LIVE_STREAM, -1);
    sp_pipeline_release(p);
    return st;
}
