/* Host events: see host_event.h for the generation rules. One mutex and condition variable
 * per event: waiters on different events never contend, and a worker completing an event
 * wakes only the threads that wait on that event. */
#include "backend/host/host_event.h"

#include <stdlib.h>
#include <time.h>

struct sp_bevent {
    sp_live_link link; /* membership in the backend's live-event list */
    sp_live_list *owner;
    unsigned flags;
    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t changed; /* broadcast whenever `completed` grows */
    /* The user's handle plus one per queued operation that names the event, so destroying
     * an event with work in flight is safe, as it is with cudaEventDestroy. Counted under
     * the lock rather than atomically so that the last unlock visibly precedes the free
     * (Helgrind and DRD do not model C11 atomics). */
    unsigned refs;
    unsigned long long recorded;
    unsigned long long completed;
    struct timespec completed_at; /* TIMING events: when `completed` last grew */
    struct sp_bgraph *recorded_in; /* last recorded during this capture (host_graph.c) */
};

sp_status sp_host_event_create(sp_live_list *owner, unsigned flags, host_event **out)
{
    if (flags & ~(unsigned)SP_EVENT_TIMING) {
        sp_backend_fail("host event_create: unknown flags 0x%x", flags);
        return SP_ERR_INVALID_ARGUMENT;
    }
    host_event *event = calloc(1, sizeof *event);
    if (!event) {
        sp_backend_fail("host event_create: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    if (pthread_mutex_init(&event->lock, NULL) != 0) {
        free(event);
        sp_backend_fail("host event_create: pthread_mutex_init failed");
        return SP_ERR_BACKEND;
    }
    if (pthread_cond_init(&event->changed, NULL) != 0) {
        pthread_mutex_destroy(&event->lock);
        free(event);
        sp_backend_fail("host event_create: pthread_cond_init failed");
        return SP_ERR_BACKEND;
    }
    event->owner = owner;
    event->flags = flags;
    event->refs = 1;
    sp_live_list_add(owner, &event->link);
    *out = event;
    return SP_OK;
}

void sp_host_event_release(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    unsigned refs = --event->refs;
    pthread_mutex_unlock(&event->lock);
    if (refs > 0)
        return;
    pthread_cond_destroy(&event->changed);
    pthread_mutex_destroy(&event->lock);
    free(event);
}

void sp_host_event_destroy(host_event *event)
{
    if (!event)
        return;
    sp_live_list_remove(event->owner, &event->link);
    sp_host_event_release(event);
}

void sp_host_event_destroy_all(sp_live_list *owner)
{
    sp_live_link *link;
    while ((link = sp_live_list_any(owner)) != NULL)
        sp_host_event_destroy(SP_CONTAINER_OF(link, host_event, link));
}

unsigned long long sp_host_event_begin_record(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    event->refs++;
    event->recorded_in = NULL; /* an ordinary record: no capture's any more */
    unsigned long long generation = ++event->recorded;
    pthread_mutex_unlock(&event->lock);
    return generation;
}

void sp_host_event_hold(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    event->refs++;
    pthread_mutex_unlock(&event->lock);
}

void sp_host_event_set_recorded_in(host_event *event, struct sp_bgraph *graph)
{
    pthread_mutex_lock(&event->lock);
    event->recorded_in = graph;
    pthread_mutex_unlock(&event->lock);
}

void sp_host_event_forget_capture(host_event *event, struct sp_bgraph *graph)
{
    pthread_mutex_lock(&event->lock);
    if (event->recorded_in == graph)
        event->recorded_in = NULL;
    pthread_mutex_unlock(&event->lock);
}

struct sp_bgraph *sp_host_event_recorded_in(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    struct sp_bgraph *graph = event->recorded_in;
    pthread_mutex_unlock(&event->lock);
    return graph;
}

unsigned long long sp_host_event_capture(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    event->refs++;
    unsigned long long generation = event->recorded;
    pthread_mutex_unlock(&event->lock);
    return generation;
}

void sp_host_event_complete(host_event *event, unsigned long long generation)
{
    struct timespec now = {0, 0};
    if (event->flags & SP_EVENT_TIMING)
        clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&event->lock);
    /* Records of one event on two queues may finish out of order; `completed` must never
     * go back, or a later event_sync would wait for a generation that already ran. */
    if (generation > event->completed) {
        event->completed = generation;
        event->completed_at = now;
        pthread_cond_broadcast(&event->changed);
    }
    pthread_mutex_unlock(&event->lock);
}

void sp_host_event_wait_for(host_event *event, unsigned long long generation)
{
    pthread_mutex_lock(&event->lock);
    while (event->completed < generation)
        pthread_cond_wait(&event->changed, &event->lock);
    pthread_mutex_unlock(&event->lock);
}

void sp_host_event_sync(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    unsigned long long generation = event->recorded;
    while (event->completed < generation)
        pthread_cond_wait(&event->changed, &event->lock);
    pthread_mutex_unlock(&event->lock);
}

int sp_host_event_query(host_event *event)
{
    pthread_mutex_lock(&event->lock);
    int complete = event->completed >= event->recorded;
    pthread_mutex_unlock(&event->lock);
    return complete;
}

/* Whether the event is a complete TIMING event, and its completion time if so. */
static int event_timestamp(host_event *event, struct timespec *at)
{
    pthread_mutex_lock(&event->lock);
    int usable = (event->flags & SP_EVENT_TIMING) && event->recorded > 0 &&
                 event->completed >= event->recorded;
    *at = event->completed_at;
    pthread_mutex_unlock(&event->lock);
    return usable;
}

sp_status sp_host_event_elapsed(host_event *from, host_event *to, double *seconds)
{
    struct timespec start, end;
    int from_ok = event_timestamp(from, &start);
    int to_ok = event_timestamp(to, &end);
    if (!from_ok || !to_ok) {
        sp_backend_fail("host event_elapsed: the %s event is not a recorded, complete TIMING "
                        "event", from_ok ? "`to`" : "`from`");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
    return SP_OK;
}
