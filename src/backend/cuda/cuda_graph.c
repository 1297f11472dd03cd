/* CUDA Graphs: a stream capture in thread-local mode (so other threads' CUDA calls cannot
 * break it, nor it theirs), instantiated once and replayed with cudaGraphLaunch. The host
 * side of each captured copy is kept, so a replay can be pointed at another chunk's pinned
 * memory with cudaGraphExecMemcpyNodeSetParams1D, which updates the executable graph in
 * place: no new capture, no new instantiation. */
#include <stdint.h>
#include <stdlib.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

typedef struct graph_copy {
    cudaGraphNode_t node;
    enum cudaMemcpyKind kind; /* HostToDevice or DeviceToHost; others are never rebased */
    void *dst;
    const void *src;
    const void *captured_host; /* the host side as captured: what rebases match */
    size_t bytes;
    int one_d;                /* a plain 1D copy, the only kind SetParams1D can update */
} graph_copy;

struct sp_bgraph {
    cudaGraph_t graph; /* kept: its nodes name the copies to update in exec */
    cudaGraphExec_t exec;
    graph_copy *copies;
    size_t n_copies;
};

sp_status sp_cuda_capture_begin(void *opaque, sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q) {
        sp_backend_fail("cuda capture_begin: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaStreamBeginCapture(q->stream, cudaStreamCaptureModeThreadLocal));
}

static sp_status read_copy(cudaGraphNode_t node, graph_copy *c)
{
    struct cudaMemcpy3DParms p;
    sp_status status = SP_CUDA_CHECK(cudaGraphMemcpyNodeGetParams(node, &p));
    if (status != SP_OK)
        return status;
    c->node = node;
    c->kind = p.kind;
    c->one_d = p.extent.height <= 1 && p.extent.depth <= 1 && p.srcPos.y == 0 &&
               p.srcPos.z == 0 && p.dstPos.y == 0 && p.dstPos.z == 0;
    c->src = (const char *)p.srcPtr.ptr + p.srcPos.x;
    c->dst = (char *)p.dstPtr.ptr + p.dstPos.x;
    c->captured_host = c->kind == cudaMemcpyHostToDevice ? c->src : c->dst;
    c->bytes = p.extent.width;
    return SP_OK;
}

/* Finds the memcpy nodes of g->graph. */
static sp_status collect_copies(sp_bgraph *g)
{
    size_t n = 0;
    sp_status status = SP_CUDA_CHECK(cudaGraphGetNodes(g->graph, NULL, &n));
    if (status != SP_OK || n == 0)
        return status;
    cudaGraphNode_t *nodes = malloc(n * sizeof *nodes);
    g->copies = malloc(n * sizeof *g->copies);
    if (!nodes || !g->copies) {
        free(nodes);
        sp_backend_fail("cuda capture_end: out of host memory for %zu graph nodes", n);
        return SP_ERR_OUT_OF_MEMORY;
    }
    status = SP_CUDA_CHECK(cudaGraphGetNodes(g->graph, nodes, &n));
    for (size_t k = 0; status == SP_OK && k < n; k++) {
        enum cudaGraphNodeType type;
        status = SP_CUDA_CHECK(cudaGraphNodeGetType(nodes[k], &type));
        if (status == SP_OK && type == cudaGraphNodeTypeMemcpy)
            status = read_copy(nodes[k], &g->copies[g->n_copies++]);
    }
    free(nodes);
    return status;
}

void sp_cuda_graph_destroy(void *opaque, sp_bgraph *g)
{
    sp_cuda_impl *impl = opaque;
    if (!g)
        return;
    /* CUDA lets a graph in flight finish after its exec is destroyed. */
    if (impl && sp_cuda_use_device(impl) == SP_OK) {
        if (g->exec)
            (void)SP_CUDA_CHECK(cudaGraphExecDestroy(g->exec));
        if (g->graph)
            (void)SP_CUDA_CHECK(cudaGraphDestroy(g->graph));
    }
    free(g->copies);
    free(g);
}

sp_status sp_cuda_capture_end(void *opaque, sp_bqueue *q, sp_bgraph **out)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !q || !out) {
        sp_backend_fail("cuda capture_end: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    /* The capture is ended even when the device cannot be made current: q must leave it. */
    sp_status status = sp_cuda_use_device(impl);
    sp_bgraph *g = calloc(1, sizeof *g);
    /* Ended even when g could not be allocated: the stream must leave capture mode. */
    cudaError_t err = cudaStreamEndCapture(q->stream, g ? &g->graph : &(cudaGraph_t){NULL});
    if (!g || status != SP_OK) {
        (void)sp_cuda_absorb(err);
        if (g && g->graph)
            (void)sp_cuda_absorb(cudaGraphDestroy(g->graph));
        free(g);
        if (status != SP_OK)
            return status;
        sp_backend_fail("cuda capture_end: out of host memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    status = sp_cuda_check(err, "cudaStreamEndCapture", __FILE__, __LINE__);
    if (status == SP_OK)
        status = collect_copies(g);
    if (status == SP_OK)
        status = SP_CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
    if (status != SP_OK) {
        sp_cuda_graph_destroy(impl, g);
        return status;
    }
    *out = g;
    return SP_OK;
}

/* The copy's host side moved from old_base to new_base (same offset). */
static sp_status rebase_copy(sp_bgraph *g, graph_copy *c, const void *old_base,
                             const void *new_base)
{
    int h2d = c->kind == cudaMemcpyHostToDevice;
    const char *host = c->captured_host;
    char *moved = (char *)(uintptr_t)new_base + (host - (const char *)old_base);
    if (!c->one_d) {
        sp_backend_fail("cuda graph_rebase: a captured copy is not one-dimensional");
        return SP_ERR_UNSUPPORTED;
    }
    void *dst = h2d ? c->dst : moved;
    const void *src = h2d ? (const void *)moved : c->src;
    sp_status status = SP_CUDA_CHECK(
        cudaGraphExecMemcpyNodeSetParams1D(g->exec, c->node, dst, src, c->bytes, c->kind));
    if (status == SP_OK) {
        c->dst = dst;
        c->src = src;
    }
    return status;
}

sp_status sp_cuda_graph_rebase(void *opaque, sp_bgraph *g, int to_device, const void *old_base,
                               const void *new_base, size_t bytes)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !g || !old_base || !new_base) {
        sp_backend_fail("cuda graph_rebase: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    enum cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    size_t matched = 0;
    for (size_t k = 0; status == SP_OK && k < g->n_copies; k++) {
        graph_copy *c = &g->copies[k];
        if (c->kind == kind && sp_backend_in_range(c->captured_host, old_base, bytes)) {
            status = rebase_copy(g, c, old_base, new_base);
            matched++;
        }
    }
    if (status == SP_OK && matched == 0) {
        sp_backend_fail("cuda graph_rebase: no captured %s copy has its host side at %p "
                        "(%zu bytes)", to_device ? "host-to-device" : "device-to-host",
                        old_base, bytes);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return status;
}

sp_status sp_cuda_graph_launch(void *opaque, sp_bgraph *g, sp_bqueue *q)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !g || !q) {
        sp_backend_fail("cuda graph_launch: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    return SP_CUDA_CHECK(cudaGraphLaunch(g->exec, q->stream));
}
