/* HOST graphs: a capture records the operations pushed on a queue; a launch pushes copies
 * of them, so a later rebase cannot change a replay already enqueued. This is the
 * executable specification of backend.h's graph entries, so that the core's graph mode
 * runs (and is tested) without a GPU. Event records and waits cannot be replayed (each
 * record takes a new generation when it is enqueued), so capturing one breaks the graph,
 * as it would break a CUDA capture that records an event of another stream's work. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/host_graph.h"

struct sp_bgraph {
    host_op *ops;      /* what a launch pushes: host sides as last rebased */
    host_op *captured; /* the same as captured, made at capture_end: what rebases match */
    size_t n, capacity;
    char broken[128]; /* why the capture cannot be replayed; "" when it can */
};

host_op *sp_host_graph_begin_append(sp_bgraph *graph)
{
    if (graph->n == graph->capacity) {
        size_t capacity = graph->capacity ? graph->capacity * 2 : 8;
        host_op *ops = realloc(graph->ops, capacity * sizeof *ops);
        if (!ops) {
            sp_backend_fail("host graph: out of memory recording operation %zu", graph->n);
            return NULL;
        }
        graph->ops = ops;
        graph->capacity = capacity;
    }
    return &graph->ops[graph->n];
}

void sp_host_graph_end_append(sp_bgraph *graph) { graph->n++; }

void sp_host_graph_break(sp_bgraph *graph, const char *why)
{
    if (graph->broken[0] == '\0')
        snprintf(graph->broken, sizeof graph->broken, "%s", why);
}

sp_status sp_host_graph_capture_begin(host_queue *queue)
{
    if (sp_host_queue_capture(queue)) {
        sp_backend_fail("host capture_begin: the queue is already capturing");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_bgraph *graph = calloc(1, sizeof *graph);
    if (!graph) {
        sp_backend_fail("host capture_begin: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    sp_host_queue_set_capture(queue, graph);
    return SP_OK;
}

sp_status sp_host_graph_capture_end(host_queue *queue, sp_bgraph **out)
{
    sp_bgraph *graph = sp_host_queue_capture(queue);
    if (!graph) {
        sp_backend_fail("host capture_end: the queue is not capturing");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_host_queue_set_capture(queue, NULL);
    if (graph->broken[0] != '\0') {
        sp_backend_fail("host capture_end: %s", graph->broken);
        sp_host_graph_destroy(graph);
        return SP_ERR_UNSUPPORTED;
    }
    graph->captured = malloc((graph->n ? graph->n : 1) * sizeof *graph->captured);
    if (!graph->captured) {
        sp_backend_fail("host capture_end: out of memory");
        sp_host_graph_destroy(graph);
        return SP_ERR_OUT_OF_MEMORY;
    }
    if (graph->n)
        memcpy(graph->captured, graph->ops, graph->n * sizeof *graph->ops);
    *out = graph;
    return SP_OK;
}

static int in_range(const void *p, const void *base, size_t bytes)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return a >= b && a - b < bytes;
}

sp_status sp_host_graph_rebase(sp_bgraph *graph, int to_device, const void *old_base,
                               const void *new_base, size_t bytes)
{
    size_t matched = 0;
    for (size_t k = 0; k < graph->n; k++) {
        const host_op *was = &graph->captured[k];
        if (was->kind != HOST_OP_COPY || was->u.copy.to_device != to_device)
            continue;
        const char *host = to_device ? was->u.copy.src : was->u.copy.dst;
        if (!in_range(host, old_base, bytes))
            continue;
        char *moved = (char *)(uintptr_t)new_base + (host - (const char *)old_base);
        if (to_device)
            graph->ops[k].u.copy.src = moved;
        else
            graph->ops[k].u.copy.dst = moved;
        matched++;
    }
    if (matched > 0)
        return SP_OK;
    sp_backend_fail("host graph_rebase: no captured copy has its host side at %p (%zu bytes)",
                    old_base, bytes);
    return SP_ERR_INVALID_ARGUMENT;
}

sp_status sp_host_graph_launch(sp_bgraph *graph, host_queue *queue)
{
    for (size_t k = 0; k < graph->n; k++) {
        sp_status st = sp_host_queue_push(queue, &graph->ops[k]);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

/* Replays hold copies of the operations, never the graph, so it can go at once. */
void sp_host_graph_destroy(sp_bgraph *graph)
{
    if (!graph)
        return;
    free(graph->ops);
    free(graph->captured);
    free(graph);
}
