/* Orders for a HOST graph launch. A HOST launch runs a graph's operations one after another
 * on one queue, so any order that keeps the stated dependencies is a legal replay. Running
 * them in capture order would also keep dependencies nobody stated (a branch captured after
 * the origin's copy would always run after it), and a missing fork or join would never show
 * without a GPU. So launches alternate between two orders as far apart as the edges allow:
 * branches as early as possible, and the origin as early as possible. */
#include <stdlib.h>

#include "backend/host/host_graph_order.h"

/* Whether operation number `pos` of branch b may run, branch c having run done[c] of its. */
static int ready(size_t b, size_t pos, const size_t *done, const host_graph_edge *edges,
                 size_t n_edges)
{
    for (size_t e = 0; e < n_edges; e++)
        if (edges[e].waiter == b && edges[e].at <= pos && done[edges[e].source] < edges[e].count)
            return 0;
    return 1;
}

/* The next branch to take an operation from, or n_branches when none is ready. */
static size_t pick(size_t n_branches, const size_t *done, const size_t *total,
                   const host_graph_edge *edges, size_t n_edges, int origin_first)
{
    for (size_t k = 0; k < n_branches; k++) {
        size_t b = origin_first ? k : n_branches - 1 - k;
        if (done[b] < total[b] && ready(b, done[b], done, edges, n_edges))
            return b;
    }
    return n_branches;
}

int sp_host_graph_order(const size_t *owner, size_t n, size_t n_branches,
                        const host_graph_edge *edges, size_t n_edges, int origin_first,
                        size_t *order)
{
    /* first[b]: where branch b's operations start in `by_branch`, which lists them in order */
    size_t *first = calloc(3 * n_branches + 1, sizeof *first);
    size_t *by_branch = malloc((n ? n : 1) * sizeof *by_branch);
    int ok = first && by_branch;
    size_t *total = first + n_branches + 1, *done = total + n_branches;
    for (size_t k = 0; ok && k < n; k++)
        total[owner[k]]++;
    for (size_t b = 0; ok && b < n_branches; b++)
        first[b + 1] = first[b] + total[b];
    for (size_t k = 0; ok && k < n; k++) /* done[] counts the placed ones meanwhile */
        by_branch[first[owner[k]] + done[owner[k]]++] = k;
    for (size_t b = 0; ok && b < n_branches; b++)
        done[b] = 0;
    for (size_t placed = 0; ok && placed < n; placed++) {
        size_t b = pick(n_branches, done, total, edges, n_edges, origin_first);
        ok = b < n_branches;
        if (ok)
            order[placed] = by_branch[first[b] + done[b]++];
    }
    free(by_branch);
    free(first);
    return ok;
}
