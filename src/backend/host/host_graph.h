/* HOST graphs: recorded operations of a queue and the queues that joined its capture,
 * replayed by pushing copies of them. */
#ifndef SP_HOST_GRAPH_H
#define SP_HOST_GRAPH_H

#include <stdio.h>

#include "backend/host/host_queue.h"

sp_status sp_host_graph_capture_begin(host_queue *queue);
sp_status sp_host_graph_capture_end(host_queue *queue, sp_bgraph **out);
/* Marks the capture under way as unusable (the first reason is kept). */
void sp_host_graph_break(sp_bgraph *graph, const char *why);
/* An event recorded on `queue`, which is in `graph`'s capture: a fork or join point. */
sp_status sp_host_graph_record(sp_bgraph *graph, host_queue *queue, host_event *event);
/* A wait by `queue` where the queue is capturing (in `mine`) or the event was recorded in a
 * capture (`its`), one of them not NULL: a fork (the queue joins), a join (the origin waits
 * for a branch) or an error. */
sp_status sp_host_graph_wait(host_queue *queue, host_event *event, sp_bgraph *mine,
                             sp_bgraph *its);
sp_status sp_host_graph_rebase(sp_bgraph *graph, int to_device, const void *old_base,
                               const void *new_base, size_t bytes);
sp_status sp_host_graph_launch(sp_bgraph *graph, host_queue *queue);
void sp_host_graph_destroy(sp_bgraph *graph);

#endif /* SP_HOST_GRAPH_H */
