/* The public pinned-memory API: thin checks around the backend's allocation calls. */
#include <stdint.h>

#include "core/context.h"

sp_status sp_host_alloc(sp_context *ctx, size_t bytes, void **out)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!out)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_host_alloc: out is NULL");
    *out = NULL;
    if (bytes == 0)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_host_alloc: bytes is 0");
    sp_status st = sp_context_check_alive(ctx);
    if (st != SP_OK)
        return st;
    st = ctx->ops->pinned_alloc(ctx->impl, bytes, out);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_host_alloc(%zu bytes of pinned host memory): %s",
                               bytes, sp_backend_error());
    return SP_OK;
}

void sp_host_free(sp_context *ctx, void *ptr)
{
    if (ctx && ptr && ctx->ops)
        ctx->ops->pinned_free(ctx->impl, ptr);
}

sp_status sp_host_register(sp_context *ctx, void *ptr, size_t bytes)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!ptr || bytes == 0)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "sp_host_register: %s", !ptr ? "ptr is NULL" : "bytes is 0");
    if ((uintptr_t)ptr > UINTPTR_MAX - bytes)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "sp_host_register: ptr + bytes overflows the address space");
    sp_status st = sp_context_check_alive(ctx);
    if (st != SP_OK)
        return st;
    st = ctx->ops->host_register(ctx->impl, ptr, bytes);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_host_register(%zu bytes): %s", bytes,
                               sp_backend_error());
    return SP_OK;
}

sp_status sp_host_unregister(sp_context *ctx, void *ptr)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!ptr)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_host_unregister: ptr is NULL");
    if (!ctx->ops)
        return ctx->open_status;
    sp_status st = ctx->ops->host_unregister(ctx->impl, ptr);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_host_unregister: %s", sp_backend_error());
    return SP_OK;
}
