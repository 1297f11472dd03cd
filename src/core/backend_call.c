/* The fallbacks of backend_call.h. */
#include <stdio.h>

#include "core/backend_call.h"

sp_status sp_call_copy(const sp_pipeline *p, int to_device, void *dst, const void *src,
                       size_t bytes, sp_bqueue *q)
{
    const sp_backend_ops *ops = p->ctx->ops;
    size_t piece = p->copy_piece_bytes ? p->copy_piece_bytes : bytes;
    /* A kernel on q itself, when asked for: the copy engines serve one busy queue until it is
     * empty, so a copy there waits behind another pipeline's (bench/PERF.md). */
    int by_kernel = p->copy_by_kernel && ops->copy_kernel;
    sp_status st = SP_OK;
    for (size_t off = 0; st == SP_OK && off < bytes; off += piece) {
        size_t len = bytes - off < piece ? bytes - off : piece;
        char *to = (char *)dst + off;
        const char *from = (const char *)src + off;
        if (by_kernel)
            st = ops->copy_kernel(p->ctx->impl, to, from, len, q);
        else
            st = to_device ? ops->copy_h2d(p->ctx->impl, to, from, len, q)
                           : ops->copy_d2h(p->ctx->impl, to, from, len, q);
    }
    return st;
}

sp_status sp_call_copy_end(const sp_pipeline *p, int to_device, int device_end, void *dst,
                           const void *src, size_t bytes, sp_bqueue *q)
{
    if (!device_end)
        return sp_call_copy(p, to_device, dst, src, bytes, q);
    return p->ctx->ops->copy_d2d(p->ctx->impl, dst, src, bytes, q); /* batch.c checked it */
}

void sp_call_trace_push(const sp_pipeline *p, const char *what, size_t chunk)
{
    const sp_context *ctx = p->ctx;
    if (!ctx->ops->trace_push)
        return; /* the common case: not even the label is formatted */
    char label[64]; /* a stage name (31 characters at most) and the chunk number */
    snprintf(label, sizeof label, "%s c%zu", what, chunk);
    ctx->ops->trace_push(ctx->impl, label);
}

void sp_call_trace_pop(const sp_pipeline *p)
{
    const sp_context *ctx = p->ctx;
    if (ctx->ops->trace_pop)
        ctx->ops->trace_pop(ctx->impl);
}
