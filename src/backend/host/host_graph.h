/* HOST graphs: recorded operations of one queue, replayed by pushing copies of them. */
#ifndef SP_HOST_GRAPH_H
#define SP_HOST_GRAPH_H

#include <stdio.h>

#include "backend/host/host_queue.h"

sp_status sp_host_graph_capture_begin(host_queue *queue);
sp_status sp_host_graph_capture_end(host_queue *queue, sp_bgraph **out);
/* Marks the capture under way as unusable (the first reason is kept). */
void sp_host_graph_break(sp_bgraph *graph, const char *why);
sp_status sp_host_graph_rebase(sp_bgraph *graph, int to_device, const void *old_base,
                               const void *new_base, size_t bytes);
sp_status sp_host_graph_launch(sp_bgraph *graph, host_queue *queue);
void sp_host_graph_destroy(sp_bgraph *graph);

#endif /* SP_HOST_GRAPH_H */
