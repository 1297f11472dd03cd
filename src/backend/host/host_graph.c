/* HOST graphs: a capture records the operations pushed on a queue; a launch pushes copies
 * of them, so a later rebase cannot change a replay already enqueued. This is the
 * executable specification of backend.h's graph entries, so that the core's graph mode
 * runs (and is tested) without a GPU.
 *
 * Forks and joins follow CUDA's stream capture: a queue that waits on an event recorded in
 * the capture joins it, and its operations go into the same graph; before the capture ends,
 * the queue it began on must wait on an event recorded on each joined queue after that
 * queue's last operation. Each such wait is an edge between branches. A launch runs the
 * operations one after another on the launch queue, in an order that keeps the edges and
 * each branch's own order but is otherwise as far from the capture's order as it can be
 * (host_graph_order.c), so that a dependency nobody stated shows here as on a GPU. Stricter
 * than CUDA: only a wait by the origin queue joins a branch back. Waiting on an event
 * recorded outside the capture breaks the graph, as it would break a CUDA capture.
 *
 * A capture and the queues in it are driven from one thread, as the core does (and as
 * CUDA's thread-local capture mode expects): nothing here is locked beyond the queues. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/host_array.h"
#include "backend/host/host_graph.h"
#include "backend/host/host_graph_order.h"

/* A queue in the capture (the origin first) and how many operations it added; `joined` is
 * that count as of the last event of it the origin waited for. */
typedef struct branch {
    host_queue *queue; /* NULL once destroyed during the capture */
    size_t added, joined;
    int rejoined;
} branch;

/* An event recorded during the capture: on which branch, after how many of its operations. */
typedef struct mark {
    host_event *event; /* a reference held until the capture ends */
    size_t branch, added;
} mark;

struct sp_bgraph {
    host_op *ops;      /* what a launch pushes: host sides as last rebased */
    host_op *captured; /* the same as captured, made at capture_end: what rebases match */
    size_t n, capacity;
    size_t *owner; /* the branch each operation was captured on */
    size_t owner_capacity;
    branch *branches; /* branches[0] is the origin queue */
    size_t n_branches, branches_capacity;
    mark *marks;
    size_t n_marks, marks_capacity;
    host_graph_edge *edges;
    size_t n_edges, edges_capacity;
    size_t *orders[2];       /* made at capture_end: [1] origin first, [0] branches first */
    unsigned long launches;  /* which order the next launch takes */
    char broken[128]; /* why the capture cannot be replayed; "" when it can */
};

host_op *sp_host_graph_begin_append(sp_bgraph *graph)
{
    size_t needed = graph->n + 1;
    if (sp_host_array_reserve((void **)&graph->ops, &graph->capacity, sizeof *graph->ops,
                              needed) != SP_OK ||
        sp_host_array_reserve((void **)&graph->owner, &graph->owner_capacity,
                              sizeof *graph->owner, needed) != SP_OK)
        return NULL; /* the reason is set */
    return &graph->ops[graph->n];
}

/* The index of `queue` among the capture's branches (it is one: its capture is `graph`). */
static size_t branch_of(const sp_bgraph *graph, const host_queue *queue)
{
    size_t b = 0;
    while (b + 1 < graph->n_branches && graph->branches[b].queue != queue)
        b++;
    return b;
}

void sp_host_graph_end_append(sp_bgraph *graph, host_queue *queue)
{
    size_t b = branch_of(graph, queue);
    graph->owner[graph->n++] = b;
    graph->branches[b].added++;
}

static sp_status add_branch(sp_bgraph *graph, host_queue *queue)
{
    sp_status st = sp_host_array_reserve((void **)&graph->branches, &graph->branches_capacity,
                                         sizeof *graph->branches, graph->n_branches + 1);
    if (st != SP_OK)
        return st;
    graph->branches[graph->n_branches++] = (branch){queue, 0, 0, 0};
    return SP_OK;
}

sp_status sp_host_graph_record(sp_bgraph *graph, host_queue *queue, host_event *event)
{
    size_t k = 0;
    while (k < graph->n_marks && graph->marks[k].event != event)
        k++;
    if (k == graph->n_marks) {
        sp_status st = sp_host_array_reserve((void **)&graph->marks, &graph->marks_capacity,
                                             sizeof *graph->marks, graph->n_marks + 1);
        if (st != SP_OK)
            return st;
        sp_host_event_hold(event);
        graph->n_marks++;
    }
    size_t b = branch_of(graph, queue);
    graph->marks[k] = (mark){event, b, graph->branches[b].added};
    sp_host_event_set_recorded_in(event, graph);
    return SP_OK;
}

/* The origin waited for `event`, recorded in the capture: its branch is joined up to it. */
static void join(sp_bgraph *graph, const host_event *event)
{
    for (size_t k = 0; k < graph->n_marks; k++) {
        const mark *m = &graph->marks[k];
        if (m->event != event)
            continue;
        branch *joined = &graph->branches[m->branch];
        if (!joined->rejoined || m->added > joined->joined)
            joined->joined = m->added;
        joined->rejoined = 1;
    }
}

/* Branch `waiter` waited, after `at` of its operations, for `event` of this capture. */
static sp_status add_edge(sp_bgraph *graph, size_t waiter, size_t at, const host_event *event)
{
    size_t k = 0;
    while (k < graph->n_marks && graph->marks[k].event != event)
        k++;
    if (k == graph->n_marks || graph->marks[k].branch == waiter)
        return SP_OK; /* a branch's own order already keeps it */
    sp_status st = sp_host_array_reserve((void **)&graph->edges, &graph->edges_capacity,
                                         sizeof *graph->edges, graph->n_edges + 1);
    if (st != SP_OK)
        return st;
    graph->edges[graph->n_edges++] =
        (host_graph_edge){waiter, at, graph->marks[k].branch, graph->marks[k].added};
    return SP_OK;
}

sp_status sp_host_graph_wait(host_queue *queue, host_event *event, sp_bgraph *mine,
                             sp_bgraph *its)
{
    if (!its) {
        sp_host_graph_break(mine, "a queue in the capture waited for an event recorded "
                                  "outside it");
        sp_backend_fail("host queue_wait: the event was not recorded in this capture");
        return SP_ERR_UNSUPPORTED;
    }
    if (!mine) { /* a fork: the queue joins the capture */
        sp_status st = add_branch(its, queue);
        if (st == SP_OK)
            st = add_edge(its, its->n_branches - 1, 0, event);
        if (st == SP_OK)
            sp_host_queue_set_capture(queue, its);
        return st;
    }
    if (mine != its) {
        sp_host_graph_break(mine, "a queue waited for an event of another capture");
        sp_host_graph_break(its, "a queue of another capture waited for its event");
        sp_backend_fail("host queue_wait: the event was recorded in another capture");
        return SP_ERR_UNSUPPORTED;
    }
    if (queue == mine->branches[0].queue)
        join(mine, event);
    size_t b = branch_of(mine, queue);
    return add_edge(mine, b, mine->branches[b].added, event);
}

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
    if (!graph || add_branch(graph, queue) != SP_OK) {
        free(graph);
        sp_backend_fail("host capture_begin: out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    sp_host_queue_set_capture(queue, graph);
    return SP_OK;
}

/* Every queue leaves the capture and every event recorded in it becomes an ordinary event
 * again (its last ordinary record is what a wait then sees). Notes an unjoined branch. */
static void close_capture(sp_bgraph *graph)
{
    for (size_t b = 0; b < graph->n_branches; b++) {
        const branch *br = &graph->branches[b];
        if (br->queue)
            sp_host_queue_set_capture(br->queue, NULL);
        if (b > 0 && (!br->rejoined || br->joined < br->added))
            sp_host_graph_break(graph, "a queue that joined the capture was not joined back "
                                       "to the queue it began on");
    }
    for (size_t k = 0; k < graph->n_marks; k++) {
        host_event *event = graph->marks[k].event;
        sp_host_event_forget_capture(event, graph);
        sp_host_event_release(event);
    }
    graph->n_marks = 0;
}

/* The two orders launches take turns with (host_graph_order.c). */
static int make_orders(sp_bgraph *graph)
{
    for (int k = 0; k < 2; k++) {
        graph->orders[k] = malloc((graph->n ? graph->n : 1) * sizeof *graph->orders[k]);
        if (!graph->orders[k] ||
            !sp_host_graph_order(graph->owner, graph->n, graph->n_branches, graph->edges,
                                 graph->n_edges, k, graph->orders[k]))
            return 0;
    }
    return 1;
}

sp_status sp_host_graph_capture_end(host_queue *queue, sp_bgraph **out)
{
    sp_bgraph *graph = sp_host_queue_capture(queue);
    if (!graph) {
        sp_backend_fail("host capture_end: the queue is not capturing");
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (graph->branches[0].queue != queue) {
        sp_backend_fail("host capture_end: the queue joined a capture; end it on the queue "
                        "it began on");
        return SP_ERR_INVALID_ARGUMENT;
    }
    close_capture(graph);
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
    if (!make_orders(graph)) {
        sp_backend_fail("host capture_end: out of memory, or the waits make a cycle");
        sp_host_graph_destroy(graph);
        return SP_ERR_OUT_OF_MEMORY;
    }
    *out = graph;
    return SP_OK;
}

void sp_host_graph_queue_gone(sp_bgraph *graph, host_queue *queue)
{
    size_t b = branch_of(graph, queue);
    if (b == 0) { /* the capture can never end: its other queues leave it */
        close_capture(graph);
        sp_host_graph_destroy(graph);
        return;
    }
    sp_host_graph_break(graph, "a queue in the capture was destroyed");
    graph->branches[b].queue = NULL;
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
        if (!sp_backend_in_range(host, old_base, bytes))
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
    const size_t *order = graph->orders[graph->launches++ % 2];
    for (size_t k = 0; k < graph->n; k++) {
        sp_status st = sp_host_queue_push(queue, &graph->ops[order[k]]);
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
    free(graph->owner);
    free(graph->branches);
    free(graph->marks);
    free(graph->edges);
    free(graph->orders[0]);
    free(graph->orders[1]);
    free(graph);
}
