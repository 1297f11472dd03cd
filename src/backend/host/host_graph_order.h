/* The dependencies between a HOST graph's operations and the orders a launch may run them in
 * (host_graph.c). */
#ifndef SP_HOST_GRAPH_ORDER_H
#define SP_HOST_GRAPH_ORDER_H

#include <stddef.h>

/* The operations of branch `waiter` from its `at`-th on (counting from 0) come after the
 * first `count` operations of branch `source`: a wait on an event recorded in the capture. */
typedef struct host_graph_edge {
    size_t waiter, at, source, count;
} host_graph_edge;

/* Fills order[0..n) with the operations 0..n-1 (owner[k]: the branch of operation k, each
 * branch's operations in index order) in an order that keeps each branch's own order and
 * every edge. Among the operations ready at each step it takes the lowest branch's when
 * origin_first, else the highest branch's. Returns 0 when no such order exists (a cycle) or
 * there is no memory for the work. */
int sp_host_graph_order(const size_t *owner, size_t n, size_t n_branches,
                        const host_graph_edge *edges, size_t n_edges, int origin_first,
                        size_t *order);

#endif /* SP_HOST_GRAPH_ORDER_H */
