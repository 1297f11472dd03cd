/* A host queue: one worker thread that runs the queue's operations strictly in FIFO order.
 * Enqueueing never waits for the work; the FIFO grows as needed. */
#ifndef SP_HOST_QUEUE_H
#define SP_HOST_QUEUE_H

#include "backend/backend.h"
#include "backend/live_list.h"
#include "backend/host/host_op.h"

typedef struct sp_bqueue host_queue;

/* Starts the worker. The queue joins `owner` until destroyed. */
sp_status sp_host_queue_create(sp_live_list *owner, host_queue **out);
/* Lets every enqueued operation finish, then joins the worker and frees the queue. */
void sp_host_queue_destroy(host_queue *queue);
/* Destroys every queue still in `owner` (backend close). */
void sp_host_queue_destroy_all(sp_live_list *owner);
/* Blocks until every operation enqueued before the call has finished. */
sp_status sp_host_queue_sync(host_queue *queue);

/* Two-step enqueue, for operations whose contents must be fixed in queue order (an event
 * record takes its generation here): begin_push returns the next FIFO slot with the queue
 * locked, or NULL (unlocked, reason set) when the FIFO cannot grow; fill the slot, then
 * end_push publishes it and unlocks. Take no other queue's lock in between. */
host_op *sp_host_queue_begin_push(host_queue *queue);
void sp_host_queue_end_push(host_queue *queue);
/* Both steps for an operation that is complete as it is. */
sp_status sp_host_queue_push(host_queue *queue, const host_op *op);

/* Graph capture (host_graph.c): while a capture is set, pushes append to `graph` instead of
 * reaching the worker. Only the capturing thread may push to the queue meanwhile. */
struct sp_bgraph;
void sp_host_queue_set_capture(host_queue *queue, struct sp_bgraph *graph);
struct sp_bgraph *sp_host_queue_capture(host_queue *queue);
/* The next free op of a graph being captured (NULL, reason set, if it cannot grow), and
 * counting it in once filled. */
host_op *sp_host_graph_begin_append(struct sp_bgraph *graph);
void sp_host_graph_end_append(struct sp_bgraph *graph, host_queue *queue);
/* `queue`, in `graph`'s capture, is being destroyed: the capture breaks (or, if the queue
 * began it, goes with it, and its other queues leave it). */
void sp_host_graph_queue_gone(struct sp_bgraph *graph, host_queue *queue);

#endif /* SP_HOST_QUEUE_H */
