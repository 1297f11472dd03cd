/* Unit test of the HOST backend's semantics and of the fault backend, through backend.h only.
 * The ordering tests use gates (launches that block their queue until the test opens them)
 * so that every interleaving they check is forced, not hoped for. A test that hangs is a
 * failure: every wait for progress has a timeout, and the runner bounds each test. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend_under_test.h"

#define WAIT_LIMIT_S 5.0

/* ---- latches: a gate a queue can block on, or a flag the test can wait for --------------- */

typedef struct latch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
} latch;

static void latch_init(latch *l)
{
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->open = 0;
}

static void latch_destroy(latch *l)
{
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
}

static void latch_open(latch *l)
{
    pthread_mutex_lock(&l->lock);
    l->open = 1;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* 1 when the latch opened within `seconds`. */
static int latch_wait(latch *l, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long long ns = (long long)until.tv_nsec + (long long)(seconds * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&l->lock);
    int timed_out = 0;
    while (!l->open && !timed_out)
        timed_out = pthread_cond_timedwait(&l->cond, &l->lock, &until) != 0;
    int open = l->open;
    pthread_mutex_unlock(&l->lock);
    return open;
}

/* Launch functions: block the queue until the latch opens, or open it. */
static sp_status pass_gate(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    latch_wait(arg, 3600.0);
    return SP_OK;
}

static sp_status raise_flag(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    latch_open(arg);
    return SP_OK;
}

static sp_chunk no_chunk(void) { return (sp_chunk){.index = 0}; }

/* ---- FIFO order -------------------------------------------------------------------------- */

typedef struct order_log {
    int cell;             /* written by copies, read by launches */
    int seen[2000];
    size_t count;
    int bad_chunk;        /* a launch saw a stream or an index it should not */
} order_log;

static sp_status append_cell(const sp_chunk *chunk, void *arg)
{
    order_log *log = arg;
    if (chunk->stream != NULL || chunk->index != log->count)
        log->bad_chunk = 1;
    log->seen[log->count++] = log->cell;
    return SP_ERR_STAGE_FAILED; /* must be ignored by the backend */
}

/* Copies and launches alternate on one queue, enqueued while a gate holds the queue (so the
 * FIFO must grow and wrap); each launch must see the value of the copy just before it. */
static void test_fifo_order(backend b)
{
    static int values[2000];
    static order_log log;
    memset(&log, 0, sizeof log);
    latch gate;
    latch_init(&gate);
    sp_bqueue *q = NULL;
    if (!CHECK_OK(b.ops->queue_create(b.impl, "h2d", 0, &q)))
        return;
    sp_chunk chunk = no_chunk();
    chunk.stream = &chunk; /* the backend must hand the stage NULL */
    CHECK_OK(b.ops->launch(b.impl, q, pass_gate, &gate, &chunk));
    for (size_t i = 0; i < 2000; i++) {
        values[i] = (int)(i * 7 + 3);
        chunk.index = i;
        CHECK_OK(b.ops->copy_h2d(b.impl, &log.cell, &values[i], sizeof(int), q));
        CHECK_OK(b.ops->launch(b.impl, q, append_cell, &log, &chunk));
    }
    chunk.index = 99999; /* the queue holds copies of the chunk, not the chunk */
    latch_open(&gate);
    CHECK_OK(b.ops->queue_sync(b.impl, q));
    CHECK(log.count == 2000);
    CHECK(!log.bad_chunk);
    int in_order = 1;
    for (size_t i = 0; i < log.count; i++)
        in_order &= log.seen[i] == values[i];
    CHECK(in_order);
    b.ops->queue_destroy(b.impl, q);
    latch_destroy(&gate);
}

/* ---- events across queues ---------------------------------------------------------------- */

/* A slow producer copies in and records; a consumer waits on the event and copies out. The
 * consumer must see the producer's data, round after round with the event re-recorded. */
static void test_cross_queue(backend b)
{
    enum { BYTES = 1 << 20 };
    static unsigned char src[BYTES], dev[BYTES], out[BYTES];
    sp_bqueue *producer = NULL, *consumer = NULL;
    sp_bevent *ready = NULL;
    CHECK_OK(b.ops->queue_create(b.impl, "h2d", 0, &producer));
    CHECK_OK(b.ops->queue_create(b.impl, "d2h", 0, &consumer));
    CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &ready));
    if (!producer || !consumer || !ready)
        return;
    for (int round = 0; round < 3; round++) {
        memset(src, 0x10 + round, BYTES);
        memset(out, 0xee, BYTES);
        CHECK_OK(b.ops->queue_delay(b.impl, producer, 20000));
        CHECK_OK(b.ops->copy_h2d(b.impl, dev, src, BYTES, producer));
        CHECK_OK(b.ops->event_record(b.impl, ready, producer));
        CHECK_OK(b.ops->queue_wait(b.impl, consumer, ready));
        CHECK_OK(b.ops->copy_d2h(b.impl, out, dev, BYTES, consumer));
        CHECK_OK(b.ops->queue_sync(b.impl, consumer));
        CHECK(memcmp(out, src, BYTES) == 0);
        CHECK_OK(b.ops->queue_sync(b.impl, producer));
    }
    b.ops->event_destroy(b.impl, ready);
    b.ops->queue_destroy(b.impl, consumer);
    b.ops->queue_destroy(b.impl, producer);
}

/* ---- a wait captures the generation recorded at the time of the wait call ---------------- */

typedef struct capture_rig {
    latch producer_gate, consumer_gate, rerecord_gate;
    latch early_done, late_done;
    sp_bqueue *producer, *consumer, *rerecorder, *late;
    sp_bevent *event;
} capture_rig;

static int capture_rig_open(backend b, capture_rig *rig)
{
    latch *latches[] = {&rig->producer_gate, &rig->consumer_gate, &rig->rerecord_gate,
                        &rig->early_done, &rig->late_done};
    for (size_t i = 0; i < sizeof latches / sizeof latches[0]; i++)
        latch_init(latches[i]);
    return CHECK_OK(b.ops->queue_create(b.impl, "producer", 0, &rig->producer)) &&
           CHECK_OK(b.ops->queue_create(b.impl, "consumer", 0, &rig->consumer)) &&
           CHECK_OK(b.ops->queue_create(b.impl, "rerecorder", 0, &rig->rerecorder)) &&
           CHECK_OK(b.ops->queue_create(b.impl, "late", 0, &rig->late)) &&
           CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &rig->event));
}

static void capture_rig_close(backend b, capture_rig *rig)
{
    latch_open(&rig->producer_gate); /* whatever happened, let every queue drain */
    latch_open(&rig->consumer_gate);
    latch_open(&rig->rerecord_gate);
    b.ops->queue_destroy(b.impl, rig->producer);
    b.ops->queue_destroy(b.impl, rig->consumer);
    b.ops->queue_destroy(b.impl, rig->rerecorder);
    b.ops->queue_destroy(b.impl, rig->late);
    b.ops->event_destroy(b.impl, rig->event);
    latch *latches[] = {&rig->producer_gate, &rig->consumer_gate, &rig->rerecord_gate,
                        &rig->early_done, &rig->late_done};
    for (size_t i = 0; i < sizeof latches / sizeof latches[0]; i++)
        latch_destroy(latches[i]);
}

/* Record 1 (held by a gate), a consumer's wait, then record 2 (held by another gate). The
 * consumer's worker reaches its wait only after record 2 was issued: an implementation that
 * read the generation when the wait runs, not when it was enqueued, would block until record
 * 2 completes, which this test never allows before checking. A wait enqueued after record 2
 * must, on the contrary, wait for it. */
static void test_wait_captures_generation(backend b)
{
    capture_rig rig;
    memset(&rig, 0, sizeof rig);
    sp_chunk chunk = no_chunk();
    if (capture_rig_open(b, &rig)) {
        CHECK_OK(b.ops->launch(b.impl, rig.producer, pass_gate, &rig.producer_gate, &chunk));
        CHECK_OK(b.ops->event_record(b.impl, rig.event, rig.producer));
        CHECK_OK(b.ops->launch(b.impl, rig.consumer, pass_gate, &rig.consumer_gate, &chunk));
        CHECK_OK(b.ops->queue_wait(b.impl, rig.consumer, rig.event));
        CHECK_OK(b.ops->launch(b.impl, rig.consumer, raise_flag, &rig.early_done, &chunk));
        CHECK_OK(b.ops->launch(b.impl, rig.rerecorder, pass_gate, &rig.rerecord_gate, &chunk));
        CHECK_OK(b.ops->event_record(b.impl, rig.event, rig.rerecorder));
        CHECK_OK(b.ops->queue_wait(b.impl, rig.late, rig.event));
        CHECK_OK(b.ops->launch(b.impl, rig.late, raise_flag, &rig.late_done, &chunk));
        latch_open(&rig.consumer_gate);
        latch_open(&rig.producer_gate);
        CHECK(latch_wait(&rig.early_done, WAIT_LIMIT_S));
        CHECK(!latch_wait(&rig.late_done, 0.05)); /* record 2 has not run yet */
        latch_open(&rig.rerecord_gate);
        CHECK(latch_wait(&rig.late_done, WAIT_LIMIT_S));
        CHECK_OK(b.ops->event_sync(b.impl, rig.event));
    }
    capture_rig_close(b, &rig);
}

/* Waiting on an event that was never recorded is satisfied at once, on a queue and on the
 * host. */
static void test_never_recorded(backend b)
{
    sp_bqueue *q = NULL;
    sp_bevent *event = NULL;
    latch done;
    latch_init(&done);
    sp_chunk chunk = no_chunk();
    if (CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &q)) &&
        CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &event))) {
        CHECK_OK(b.ops->queue_wait(b.impl, q, event));
        CHECK_OK(b.ops->launch(b.impl, q, raise_flag, &done, &chunk));
        CHECK(latch_wait(&done, WAIT_LIMIT_S));
        CHECK_OK(b.ops->event_sync(b.impl, event));
    }
    b.ops->event_destroy(b.impl, event);
    b.ops->queue_destroy(b.impl, q);
    latch_destroy(&done);
}

/* ---- event_sync and timing --------------------------------------------------------------- */

static sp_status set_atomic(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    atomic_store((atomic_int *)arg, 1);
    return SP_OK;
}

static void test_event_sync(backend b)
{
    sp_bqueue *q = NULL;
    sp_bevent *event = NULL;
    atomic_int ran;
    atomic_init(&ran, 0);
    sp_chunk chunk = no_chunk();
    if (CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &q)) &&
        CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &event))) {
        CHECK_OK(b.ops->queue_delay(b.impl, q, 30000));
        CHECK_OK(b.ops->launch(b.impl, q, set_atomic, &ran, &chunk));
        CHECK_OK(b.ops->event_record(b.impl, event, q));
        CHECK_OK(b.ops->event_sync(b.impl, event));
        CHECK(atomic_load(&ran) == 1);
    }
    b.ops->event_destroy(b.impl, event);
    b.ops->queue_destroy(b.impl, q);
}

static void test_elapsed(backend b)
{
    sp_bqueue *q = NULL;
    sp_bevent *start = NULL, *end = NULL, *plain = NULL, *unrecorded = NULL;
    double seconds = -1.0;
    if (!CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &q)) ||
        !CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &start)) ||
        !CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &end)) ||
        !CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &plain)) ||
        !CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &unrecorded)))
        goto done;
    CHECK_OK(b.ops->event_record(b.impl, start, q));
    CHECK_OK(b.ops->queue_delay(b.impl, q, 20000));
    CHECK_OK(b.ops->event_record(b.impl, end, q));
    CHECK_OK(b.ops->event_record(b.impl, plain, q));
    CHECK_OK(b.ops->event_sync(b.impl, end));
    CHECK_OK(b.ops->event_sync(b.impl, plain));
    CHECK_OK(b.ops->event_elapsed(b.impl, start, end, &seconds));
    CHECK(seconds >= 0.020 && seconds < 5.0);
    CHECK_STATUS(b.ops->event_elapsed(b.impl, start, plain, &seconds),
                 SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->event_elapsed(b.impl, unrecorded, end, &seconds),
                 SP_ERR_INVALID_ARGUMENT);
    CHECK(sp_backend_error()[0] != '\0');
done:
    b.ops->event_destroy(b.impl, unrecorded);
    b.ops->event_destroy(b.impl, plain);
    b.ops->event_destroy(b.impl, end);
    b.ops->event_destroy(b.impl, start);
    b.ops->queue_destroy(b.impl, q);
}

/* An event may be destroyed while queued operations still name it; the queue keeps going. */
static void test_destroy_event_in_flight(backend b)
{
    sp_bqueue *q = NULL, *other = NULL;
    sp_bevent *event = NULL;
    latch gate;
    latch_init(&gate);
    sp_chunk chunk = no_chunk();
    if (CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &q)) &&
        CHECK_OK(b.ops->queue_create(b.impl, "stage2", 0, &other)) &&
        CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &event))) {
        CHECK_OK(b.ops->launch(b.impl, q, pass_gate, &gate, &chunk));
        CHECK_OK(b.ops->event_record(b.impl, event, q));
        CHECK_OK(b.ops->queue_wait(b.impl, other, event));
        b.ops->event_destroy(b.impl, event);
        latch_open(&gate);
        CHECK_OK(b.ops->queue_sync(b.impl, other));
        CHECK_OK(b.ops->queue_sync(b.impl, q));
    }
    b.ops->queue_destroy(b.impl, other);
    b.ops->queue_destroy(b.impl, q);
    latch_destroy(&gate);
}

/* A stage that syncs its own queue would wait for itself forever; the backend refuses. */
typedef struct self_sync {
    backend b;
    sp_bqueue *q;
    sp_status status;
} self_sync;

static sp_status sync_own_queue(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    self_sync *s = arg;
    s->status = s->b.ops->queue_sync(s->b.impl, s->q);
    return SP_OK;
}

static void test_sync_from_worker(backend b)
{
    self_sync s = {b, NULL, SP_OK};
    sp_chunk chunk = no_chunk();
    if (!CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &s.q)))
        return;
    CHECK_OK(b.ops->launch(b.impl, s.q, sync_own_queue, &s, &chunk));
    CHECK_OK(b.ops->queue_sync(b.impl, s.q));
    CHECK(s.status == SP_ERR_INVALID_ARGUMENT);
    b.ops->queue_destroy(b.impl, s.q);
}

/* ---- memory and the pinned registry ------------------------------------------------------ */

static int pinned(backend b, const void *ptr, size_t bytes)
{
    int result = -1;
    CHECK_OK(b.ops->is_pinned(b.impl, ptr, bytes, &result));
    return result;
}

static void *offset(void *base, intptr_t by) { return (void *)((intptr_t)base + by); }

static void test_pinned_blocks(backend b)
{
    void *block = NULL, *dev = NULL, *none = &block;
    if (!CHECK_OK(b.ops->pinned_alloc(b.impl, 8192, &block)) ||
        !CHECK_OK(b.ops->device_alloc(b.impl, 1000, &dev)))
        goto done;
    CHECK((uintptr_t)block % 64 == 0 && (uintptr_t)dev % 64 == 0);
    memset(block, 1, 8192);
    memset(dev, 2, 1000);
    CHECK(pinned(b, block, 8192) == 1);
    CHECK(pinned(b, offset(block, 100), 50) == 1);
    CHECK(pinned(b, offset(block, 8000), 500) == 0);
    CHECK(pinned(b, offset(block, -1), 2) == 0);
    CHECK(pinned(b, dev, 10) == 0);
    /* Registering inside a pinned block does nothing, and so does its unregister. */
    CHECK_OK(b.ops->host_register(b.impl, offset(block, 64), 128));
    CHECK_OK(b.ops->host_unregister(b.impl, offset(block, 64)));
    CHECK(pinned(b, block, 8192) == 1);
    CHECK_STATUS(b.ops->host_unregister(b.impl, block), SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->pinned_alloc(b.impl, 0, &none), SP_ERR_INVALID_ARGUMENT);
    CHECK(none == NULL);
    uintptr_t freed = (uintptr_t)block; /* a freed pointer's value may not be used */
    b.ops->pinned_free(b.impl, block);
    block = NULL;
    CHECK(pinned(b, (void *)freed, 1) == 0);
done:
    b.ops->pinned_free(b.impl, block); /* NULL is accepted */
    b.ops->device_free(b.impl, dev);
}

static void test_registry(backend b)
{
    static char buf[4096];
    void *range = buf + 256;
    CHECK_OK(b.ops->host_register(b.impl, range, 1024));
    CHECK(pinned(b, range, 1024) == 1);
    CHECK(pinned(b, buf + 300, 10) == 1);
    CHECK(pinned(b, buf + 255, 2) == 0);    /* straddles the start */
    CHECK(pinned(b, buf + 1200, 200) == 0); /* straddles the end */
    CHECK(pinned(b, buf, 100) == 0);
    CHECK_STATUS(b.ops->host_register(b.impl, buf + 200, 100), SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->host_register(b.impl, buf + 1000, 600), SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->host_register(b.impl, NULL, 10), SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->host_register(b.impl, buf, 0), SP_ERR_INVALID_ARGUMENT);
    /* Inside: a no-op, undone by a no-op. */
    CHECK_OK(b.ops->host_register(b.impl, buf + 512, 64));
    CHECK_OK(b.ops->host_unregister(b.impl, buf + 512));
    CHECK(pinned(b, range, 1024) == 1);
    CHECK_STATUS(b.ops->host_unregister(b.impl, buf + 512), SP_ERR_INVALID_ARGUMENT);
    /* The same range twice needs two unregisters. */
    CHECK_OK(b.ops->host_register(b.impl, range, 1024));
    CHECK_OK(b.ops->host_unregister(b.impl, range));
    CHECK(pinned(b, range, 1024) == 1);
    CHECK_OK(b.ops->host_unregister(b.impl, range));
    CHECK(pinned(b, range, 1024) == 0);
    CHECK_STATUS(b.ops->host_unregister(b.impl, range), SP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(b.ops->host_unregister(b.impl, buf + 3000), SP_ERR_INVALID_ARGUMENT);
    CHECK(sp_backend_error()[0] != '\0');
    /* Two disjoint neighbours are two ranges: a span across both is not in one. */
    CHECK_OK(b.ops->host_register(b.impl, buf, 1024));
    CHECK_OK(b.ops->host_register(b.impl, buf + 1024, 1024));
    CHECK(pinned(b, buf + 1000, 48) == 0);
    CHECK(pinned(b, buf + 1024, 1024) == 1);
    CHECK_OK(b.ops->host_unregister(b.impl, buf + 1024));
    CHECK_OK(b.ops->host_unregister(b.impl, buf));
}

/* A registration nested in a pinned range did nothing, so it must not outlive that range:
 * once the range is gone, the same address registered again is a range of its own, and its
 * unregister unpins it. HOST only: the fault backend counts the nested call as a live object
 * that nothing can release any more (as on CUDA, its unregister fails once the range is gone). */
static void test_nested_dies_with_its_range(backend b)
{
    static char a[4096];
    CHECK_OK(b.ops->host_register(b.impl, a, 4096));
    CHECK_OK(b.ops->host_register(b.impl, a + 64, 256)); /* nested: a no-op */
    CHECK_OK(b.ops->host_unregister(b.impl, a));
    CHECK(pinned(b, a + 64, 256) == 0);
    CHECK_OK(b.ops->host_register(b.impl, a + 64, 256));
    CHECK_OK(b.ops->host_unregister(b.impl, a + 64));
    CHECK(pinned(b, a + 64, 256) == 0);
    CHECK_OK(b.ops->host_register(b.impl, a, 128));
    CHECK_OK(b.ops->host_unregister(b.impl, a));
    CHECK(pinned(b, a, 128) == 0);
    /* The same through a pinned block that is freed under its nested registration. */
    void *block = NULL;
    if (!CHECK_OK(b.ops->pinned_alloc(b.impl, 4096, &block)))
        return;
    CHECK_OK(b.ops->host_register(b.impl, block, 64));
    uintptr_t freed = (uintptr_t)block;
    b.ops->pinned_free(b.impl, block);
    /* Nothing is registered there any more: no pinned range, no leftover no-op to undo. */
    CHECK_STATUS(b.ops->host_unregister(b.impl, (void *)freed), SP_ERR_INVALID_ARGUMENT);
}

/* Leaving objects behind is the core's bug, but close must still free them (valgrind and
 * ASan check that nothing leaks) and drain the work in flight. */
static void test_close_frees_leftovers(void)
{
    const sp_backend_ops *ops = sp_backend_host_ops();
    void *impl = NULL;
    if (!CHECK_OK(ops->open(0, &impl)))
        return;
    sp_bqueue *q = NULL;
    sp_bevent *event = NULL;
    void *dev = NULL, *host = NULL;
    static char user[256];
    CHECK_OK(ops->queue_create(impl, "h2d", 0, &q));
    CHECK_OK(ops->event_create(impl, SP_EVENT_TIMING, &event));
    CHECK_OK(ops->device_alloc(impl, 4096, &dev));
    CHECK_OK(ops->pinned_alloc(impl, 4096, &host));
    CHECK_OK(ops->host_register(impl, user, sizeof user));
    CHECK_OK(ops->queue_delay(impl, q, 10000));
    CHECK_OK(ops->copy_h2d(impl, dev, host, 4096, q));
    CHECK_OK(ops->event_record(impl, event, q));
    ops->close(impl);
}

/* ---- the fault backend ------------------------------------------------------------------- */

static void test_fault_fail_call(void)
{
    sp_fault_config cfg = {.fail_call = 3, .fail_status = SP_ERR_OUT_OF_DEVICE_MEMORY};
    backend b;
    if (!open_fault(&cfg, &b))
        return;
    void *never = NULL;
    CHECK_STATUS(b.ops->open(0, &never), SP_ERR_UNSUPPORTED);
    CHECK(strcmp(b.ops->name, "fault") == 0);
    sp_bqueue *q = NULL;
    sp_bevent *event = NULL;
    void *dev = &cfg, *dev2 = NULL;
    CHECK_OK(b.ops->queue_create(b.impl, "h2d", 0, &q));                      /* call 1 */
    CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &event));             /* call 2 */
    CHECK_STATUS(b.ops->device_alloc(b.impl, 64, &dev), SP_ERR_OUT_OF_DEVICE_MEMORY);
    CHECK(dev == NULL);
    CHECK(strstr(sp_backend_error(), "call 3 (device_alloc)") != NULL);
    CHECK_OK(b.ops->device_alloc(b.impl, 64, &dev2));                         /* call 4 */
    sp_fault_stats stats = fault_stats(b);
    CHECK(stats.calls == 4 && stats.injected == 1 && stats.live_objects == 3);

    sp_fault_config again = {.fail_call = 2}; /* fail_status 0 means SP_ERR_BACKEND */
    sp_fault_configure(b.impl, &again);
    CHECK(fault_stats(b).calls == 0);
    CHECK_OK(b.ops->event_record(b.impl, event, q));                          /* call 1 */
    CHECK_STATUS(b.ops->queue_sync(b.impl, q), SP_ERR_BACKEND);               /* call 2 */
    CHECK_OK(b.ops->queue_sync(b.impl, q));                                   /* call 3 */
    int is = -1;
    CHECK_OK(b.ops->is_pinned(b.impl, dev2, 1, &is));                         /* call 4 */
    stats = fault_stats(b);
    CHECK(stats.calls == 4 && stats.injected == 2 && stats.delays == 0);

    b.ops->device_free(b.impl, dev2);
    b.ops->device_free(b.impl, NULL);
    b.ops->event_destroy(b.impl, event);
    b.ops->queue_destroy(b.impl, q);
    CHECK(fault_stats(b).live_objects == 0);
    b.ops->close(b.impl);
}

static sp_status do_nothing(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    (void)arg;
    return SP_OK;
}

/* Enqueues one of each delayed operation kind on q: record, copy, launch, wait, copy.
 * scratch[2] belongs to q alone, so queues running side by side never share memory. */
static void five_ops(backend b, sp_bqueue *q, sp_bevent *event, int *scratch)
{
    sp_chunk chunk = no_chunk();
    CHECK_OK(b.ops->event_record(b.impl, event, q));
    CHECK_OK(b.ops->copy_h2d(b.impl, &scratch[1], &scratch[0], sizeof *scratch, q));
    CHECK_OK(b.ops->launch(b.impl, q, do_nothing, NULL, &chunk));
    CHECK_OK(b.ops->queue_wait(b.impl, q, event));
    CHECK_OK(b.ops->copy_d2h(b.impl, &scratch[0], &scratch[1], sizeof *scratch, q));
}

static void test_fault_delays(void)
{
    sp_fault_config cfg = {.delay_us = 2000, .delay_queue = "h2d"};
    backend b;
    if (!open_fault(&cfg, &b))
        return;
    sp_bqueue *h2d = NULL, *d2h = NULL;
    sp_bevent *start = NULL, *end = NULL, *mark = NULL;
    double seconds = 0.0;
    static int h2d_scratch[2], d2h_scratch[2];
    /* Running totals of counted calls are noted as "calls: n". */
    CHECK_OK(b.ops->queue_create(b.impl, "h2d", 0, &h2d));
    CHECK_OK(b.ops->queue_create(b.impl, "d2h", 0, &d2h));
    CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &start));
    CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_TIMING, &end));
    CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &mark)); /* calls: 5 */
    five_ops(b, h2d, mark, h2d_scratch);                          /* calls: 10 */
    CHECK(fault_stats(b).delays == 5);
    five_ops(b, d2h, mark, d2h_scratch); /* calls: 15; d2h does not match "h2d" */
    CHECK(fault_stats(b).delays == 5);
    /* Between the two records lie six delays: five operations' and end's own. */
    CHECK_OK(b.ops->event_record(b.impl, start, h2d));
    five_ops(b, h2d, mark, h2d_scratch);
    CHECK_OK(b.ops->event_record(b.impl, end, h2d));
    CHECK_OK(b.ops->event_sync(b.impl, end));
    CHECK_OK(b.ops->event_elapsed(b.impl, start, end, &seconds)); /* calls: 24 */
    CHECK(seconds >= 0.012);
    sp_fault_stats stats = fault_stats(b);
    CHECK(stats.delays == 12 && stats.calls == 24 && stats.live_objects == 5);

    /* NULL prefix: every queue; random part in [0, 1000] on top of 1 us, never 0. */
    sp_fault_config all = {.delay_us = 1, .random_delay_us = 1000, .seed = 7};
    sp_fault_configure(b.impl, &all);
    five_ops(b, d2h, mark, d2h_scratch);
    CHECK(fault_stats(b).delays == 17);
    CHECK_OK(b.ops->queue_sync(b.impl, d2h));
    CHECK_OK(b.ops->queue_sync(b.impl, h2d));
    b.ops->event_destroy(b.impl, mark);
    b.ops->event_destroy(b.impl, end);
    b.ops->event_destroy(b.impl, start);
    b.ops->queue_destroy(b.impl, d2h);
    b.ops->queue_destroy(b.impl, h2d);
    CHECK(fault_stats(b).live_objects == 0);
    b.ops->close(b.impl);
}

static void test_fault_live_objects(void)
{
    backend b;
    if (!open_fault(NULL, &b))
        return;
    static char user[128];
    void *host = NULL, *dev = NULL;
    CHECK_OK(b.ops->pinned_alloc(b.impl, 100, &host));
    CHECK_OK(b.ops->device_alloc(b.impl, 100, &dev));
    CHECK_OK(b.ops->host_register(b.impl, user, sizeof user));
    CHECK_OK(b.ops->host_register(b.impl, user + 8, 8)); /* nested: still an object */
    CHECK_STATUS(b.ops->host_unregister(b.impl, user + 64), SP_ERR_INVALID_ARGUMENT);
    CHECK(fault_stats(b).live_objects == 4);
    CHECK_OK(b.ops->host_unregister(b.impl, user + 8));
    CHECK_OK(b.ops->host_unregister(b.impl, user));
    b.ops->pinned_free(b.impl, host);
    b.ops->device_free(b.impl, dev);
    CHECK(fault_stats(b).live_objects == 0);
    /* Leftovers are released by close (checked by the sanitizers). */
    sp_bqueue *q = NULL;
    CHECK_OK(b.ops->queue_create(b.impl, "stage", 0, &q));
    CHECK_OK(b.ops->queue_delay(b.impl, q, 1000));
    b.ops->close(b.impl);
}

/* ---- the list ---------------------------------------------------------------------------- */

/* The semantic tests hold on HOST and through the fault backend with random delays
 * everywhere; `queued`: the test enqueues work, so delays must have been applied. */
static const sp_fault_config jitter = {.random_delay_us = 300, .seed = 42};

#define ON_HOST_AND_FAULT(name, queued)                                                        \
    TEST(host_##name) { return run_on_host(test_##name); }                                      \
    TEST(fault_##name) { return run_on_fault(test_##name, &jitter, queued); }

ON_HOST_AND_FAULT(fifo_order, 1)
ON_HOST_AND_FAULT(cross_queue, 1)
ON_HOST_AND_FAULT(wait_captures_generation, 1)
ON_HOST_AND_FAULT(never_recorded, 1)
ON_HOST_AND_FAULT(event_sync, 1)
ON_HOST_AND_FAULT(elapsed, 1)
ON_HOST_AND_FAULT(destroy_event_in_flight, 1)
ON_HOST_AND_FAULT(sync_from_worker, 1)
ON_HOST_AND_FAULT(pinned_blocks, 0)
ON_HOST_AND_FAULT(registry, 0)

TEST(host_table)
{
    const sp_backend_ops *ops = sp_backend_host_ops();
    CHECK(ops->abi == SP_BACKEND_ABI && strcmp(ops->name, "host") == 0);
    return TEST_OK;
}

TEST(host_nested_dies_with_its_range) { return run_on_host(test_nested_dies_with_its_range); }

TEST(close_frees_leftovers)
{
    test_close_frees_leftovers();
    return TEST_OK;
}

TEST(fault_fail_call)
{
    test_fault_fail_call();
    return TEST_OK;
}

TEST(fault_delays)
{
    test_fault_delays();
    return TEST_OK;
}

TEST(fault_live_objects)
{
    test_fault_live_objects();
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(host_table),
        TEST_ENTRY(host_fifo_order),
        TEST_ENTRY(host_cross_queue),
        TEST_ENTRY(host_wait_captures_generation),
        TEST_ENTRY(host_never_recorded),
        TEST_ENTRY(host_event_sync),
        TEST_ENTRY(host_elapsed),
        TEST_ENTRY(host_destroy_event_in_flight),
        TEST_ENTRY(host_sync_from_worker),
        TEST_ENTRY(host_pinned_blocks),
        TEST_ENTRY(host_registry),
        TEST_ENTRY(host_nested_dies_with_its_range),
        TEST_ENTRY(fault_fifo_order),
        TEST_ENTRY(fault_cross_queue),
        TEST_ENTRY(fault_wait_captures_generation),
        TEST_ENTRY(fault_never_recorded),
        TEST_ENTRY(fault_event_sync),
        TEST_ENTRY(fault_elapsed),
        TEST_ENTRY(fault_destroy_event_in_flight),
        TEST_ENTRY(fault_sync_from_worker),
        TEST_ENTRY(fault_pinned_blocks),
        TEST_ENTRY(fault_registry),
        TEST_ENTRY(close_frees_leftovers),
        TEST_ENTRY(fault_fail_call),
        TEST_ENTRY(fault_delays),
        TEST_ENTRY(fault_live_objects),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
