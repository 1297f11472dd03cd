/* The host queue: a growable ring of operations and a worker thread draining it.
 *
 * Locking: `lock` guards the ring, the counters and `stopping`. The worker holds it only to
 * take an operation and to count it finished, never while running one, so an enqueue never
 * waits for work and an operation that blocks (an event wait, a slow stage) blocks only its
 * own queue. Lock order: a queue's lock may be held while taking an event's lock (event
 * record), never the reverse. */
#include "backend/host/host_queue.h"

#include <stdlib.h>
#include <string.h>

#define QUEUE_FIRST_CAPACITY 64u

struct sp_bqueue {
    sp_live_link link; /* membership in the backend's live-queue list */
    sp_live_list *owner;
    pthread_t worker;
    pthread_mutex_t lock;
    pthread_cond_t work_ready; /* an operation was enqueued, or the queue is stopping */
    pthread_cond_t op_done;    /* the worker finished an operation */
    host_op *ring;
    size_t capacity;
    size_t head;  /* index of the oldest queued operation */
    size_t count; /* operations queued and not yet taken by the worker */
    unsigned long long enqueued; /* operations ever enqueued */
    unsigned long long finished; /* operations the worker has completed */
    int stopping;
    struct sp_bgraph *capture; /* set: pushes are recorded there (host_graph.c) */
};

static void *queue_worker(void *arg)
{
    host_queue *queue = arg;
    pthread_mutex_lock(&queue->lock);
    for (;;) {
        while (queue->count == 0 && !queue->stopping)
            pthread_cond_wait(&queue->work_ready, &queue->lock);
        if (queue->count == 0)
            break; /* stopping, and drained */
        host_op op = queue->ring[queue->head];
        queue->head = (queue->head + 1) % queue->capacity;
        queue->count--;
        pthread_mutex_unlock(&queue->lock);
        sp_host_op_run(&op);
        pthread_mutex_lock(&queue->lock);
        queue->finished++;
        pthread_cond_broadcast(&queue->op_done);
    }
    pthread_mutex_unlock(&queue->lock);
    return NULL;
}

/* Frees what queue_init_sync made; the worker must not be running. */
static void queue_free(host_queue *queue)
{
    pthread_cond_destroy(&queue->op_done);
    pthread_cond_destroy(&queue->work_ready);
    pthread_mutex_destroy(&queue->lock);
    free(queue->ring);
    free(queue);
}

static int queue_init_sync(host_queue *queue)
{
    if (pthread_mutex_init(&queue->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&queue->work_ready, NULL) != 0) {
        pthread_mutex_destroy(&queue->lock);
        return -1;
    }
    if (pthread_cond_init(&queue->op_done, NULL) != 0) {
        pthread_cond_destroy(&queue->work_ready);
        pthread_mutex_destroy(&queue->lock);
        return -1;
    }
    return 0;
}

sp_status sp_host_queue_create(sp_live_list *owner, host_queue **out)
{
    host_queue *queue = calloc(1, sizeof *queue);
    if (!queue) {
        sp_backend_fail("host queue_create: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    if (queue_init_sync(queue) != 0) {
        free(queue);
        sp_backend_fail("host queue_create: initialising a mutex or condition variable failed");
        return SP_ERR_BACKEND;
    }
    int err = pthread_create(&queue->worker, NULL, queue_worker, queue);
    if (err != 0) {
        queue_free(queue);
        sp_backend_fail("host queue_create: pthread_create failed (error %d)", err);
        return SP_ERR_BACKEND;
    }
    queue->owner = owner;
    sp_live_list_add(owner, &queue->link);
    *out = queue;
    return SP_OK;
}

void sp_host_queue_destroy(host_queue *queue)
{
    if (!queue)
        return;
    sp_live_list_remove(queue->owner, &queue->link);
    struct sp_bgraph *capture = sp_host_queue_capture(queue);
    if (capture) /* the capture must not keep a pointer to this queue */
        sp_host_graph_queue_gone(capture, queue);
    pthread_mutex_lock(&queue->lock);
    queue->stopping = 1;
    pthread_cond_signal(&queue->work_ready);
    pthread_mutex_unlock(&queue->lock);
    pthread_join(queue->worker, NULL);
    queue_free(queue);
}

void sp_host_queue_destroy_all(sp_live_list *owner)
{
    sp_live_link *link;
    while ((link = sp_live_list_any(owner)) != NULL)
        sp_host_queue_destroy(SP_CONTAINER_OF(link, host_queue, link));
}

sp_status sp_host_queue_sync(host_queue *queue)
{
    if (pthread_equal(pthread_self(), queue->worker)) {
        sp_backend_fail("host queue_sync: called from the queue's own worker (a stage "
                        "cannot wait for its own queue)");
        return SP_ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&queue->lock);
    unsigned long long target = queue->enqueued;
    while (queue->finished < target)
        pthread_cond_wait(&queue->op_done, &queue->lock);
    pthread_mutex_unlock(&queue->lock);
    return SP_OK;
}

/* The ring's next size in operations and in bytes; nonzero when that overflows. */
static int next_ring_size(size_t current, size_t *capacity, size_t *bytes)
{
    *capacity = QUEUE_FIRST_CAPACITY;
    if (current > 0 && __builtin_mul_overflow(current, (size_t)2, capacity))
        return 1;
    return __builtin_mul_overflow(*capacity, sizeof(host_op), bytes);
}

/* Doubles the ring, unwrapping it so the oldest operation lands at index 0. */
static sp_status queue_grow(host_queue *queue)
{
    size_t capacity, bytes;
    if (next_ring_size(queue->capacity, &capacity, &bytes)) {
        sp_backend_fail("host queue: %zu queued operations overflow the FIFO size",
                        queue->count);
        return SP_ERR_OUT_OF_MEMORY;
    }
    host_op *ring = malloc(bytes);
    if (!ring) {
        sp_backend_fail("host queue: out of memory growing the FIFO to %zu operations",
                        capacity);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < queue->count; i++)
        ring[i] = queue->ring[(queue->head + i) % queue->capacity];
    free(queue->ring);
    queue->ring = ring;
    queue->capacity = capacity;
    queue->head = 0;
    return SP_OK;
}

void sp_host_queue_set_capture(host_queue *queue, struct sp_bgraph *graph)
{
    pthread_mutex_lock(&queue->lock);
    queue->capture = graph;
    pthread_mutex_unlock(&queue->lock);
}

struct sp_bgraph *sp_host_queue_capture(host_queue *queue)
{
    pthread_mutex_lock(&queue->lock);
    struct sp_bgraph *graph = queue->capture;
    pthread_mutex_unlock(&queue->lock);
    return graph;
}

host_op *sp_host_queue_begin_push(host_queue *queue)
{
    pthread_mutex_lock(&queue->lock);
    if (queue->capture) {
        host_op *op = sp_host_graph_begin_append(queue->capture);
        if (!op)
            pthread_mutex_unlock(&queue->lock);
        return op;
    }
    if (queue->count == queue->capacity && queue_grow(queue) != SP_OK) {
        pthread_mutex_unlock(&queue->lock);
        return NULL;
    }
    return &queue->ring[(queue->head + queue->count) % queue->capacity];
}

void sp_host_queue_end_push(host_queue *queue)
{
    if (queue->capture) {
        sp_host_graph_end_append(queue->capture, queue);
        pthread_mutex_unlock(&queue->lock);
        return;
    }
    queue->count++;
    queue->enqueued++;
    pthread_cond_signal(&queue->work_ready);
    pthread_mutex_unlock(&queue->lock);
}

sp_status sp_host_queue_push(host_queue *queue, const host_op *op)
{
    host_op *slot = sp_host_queue_begin_push(queue);
    if (!slot)
        return SP_ERR_OUT_OF_MEMORY;
    *slot = *op;
    sp_host_queue_end_push(queue);
    return SP_OK;
}
