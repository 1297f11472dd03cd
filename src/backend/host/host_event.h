/* Host events: generation counters with CUDA event semantics.
 *
 * `recorded` counts event_record calls (bumped at enqueue time); `completed` is the highest
 * generation whose record operation has run on its queue. A wait captures `recorded` when it
 * is enqueued and is satisfied once `completed` reaches that value, so a re-record made after
 * the wait call never delays the earlier waiter, and a never-recorded event (0 >= 0) is
 * satisfied at once. */
#ifndef SP_HOST_EVENT_H
#define SP_HOST_EVENT_H

#include "backend/backend.h"
#include "backend/live_list.h"

typedef struct sp_bevent host_event;

/* flags: SP_EVENT_SYNC or SP_EVENT_TIMING. The event joins `owner` until destroyed. */
sp_status sp_host_event_create(sp_live_list *owner, unsigned flags, host_event **out);
/* Drops the caller's handle; the memory lives on while queued operations still name it. */
void sp_host_event_destroy(host_event *event);
/* Destroys every event still in `owner` (backend close). */
void sp_host_event_destroy_all(sp_live_list *owner);

/* For the queue side. Both take a reference that sp_host_event_release() gives back once the
 * operation has run. */
/* the new generation; the event is no longer one recorded in a capture */
unsigned long long sp_host_event_begin_record(host_event *event);
unsigned long long sp_host_event_capture(host_event *event);      /* generation to wait for */
void sp_host_event_release(host_event *event);
/* One more reference, for a graph being captured that names the event (host_graph.c). */
void sp_host_event_hold(host_event *event);

/* Graph capture (host_graph.c): the capture the event was last recorded in, NULL when its
 * last record was an ordinary one (or the capture has ended). */
struct sp_bgraph;
void sp_host_event_set_recorded_in(host_event *event, struct sp_bgraph *graph);
struct sp_bgraph *sp_host_event_recorded_in(host_event *event);
/* The capture `graph` has ended: the event, if last recorded in it, is ordinary again. */
void sp_host_event_forget_capture(host_event *event, struct sp_bgraph *graph);

/* Run by a queue's worker: generation `generation` has reached its point in the queue. */
void sp_host_event_complete(host_event *event, unsigned long long generation);
/* Blocks the calling thread until `generation` has completed. */
void sp_host_event_wait_for(host_event *event, unsigned long long generation);
/* Blocks until the latest record made before this call has completed. */
void sp_host_event_sync(host_event *event);
/* 1 when the latest record made before this call has completed (or there was none). */
int sp_host_event_query(host_event *event);
/* Seconds between the completions of two complete TIMING events. */
sp_status sp_host_event_elapsed(host_event *from, host_event *to, double *seconds);

#endif /* SP_HOST_EVENT_H */
