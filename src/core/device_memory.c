/* Device memory for the user: sp_device_alloc, sp_device_free, sp_memcpy, and what a range of
 * memory is (device_memory.h). On HOST "device memory" is host memory the backend keeps as
 * its device blocks, so that every path of device-resident ends runs without a GPU. */
#include <stdint.h>
#include <string.h>

#include "core/device_memory.h"
#include "core/plan.h"

sp_status sp_memory_kind(sp_context *ctx, const void *ptr, size_t bytes, sp_mem_kind *kind)
{
    if (ctx->ops->memory_kind)
        return ctx->ops->memory_kind(ctx->impl, ptr, bytes, kind);
    int pinned = 0;
    sp_status st = ctx->ops->is_pinned(ctx->impl, ptr, bytes, &pinned);
    *kind = pinned ? SP_MEM_PINNED : SP_MEM_PAGEABLE;
    return st;
}

const char *sp_mem_kind_name(sp_mem_kind kind)
{
    switch (kind) {
    case SP_MEM_PAGEABLE: return "pageable host memory";
    case SP_MEM_PINNED: return "pinned host memory";
    case SP_MEM_DEVICE: return "device memory";
    case SP_MEM_OTHER_DEVICE: return "memory of another device";
    case SP_MEM_MIXED: return "memory of more than one kind";
    }
    return "memory of an unknown kind";
}

sp_status sp_device_alloc(sp_context *ctx, size_t bytes, void **out)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!out || bytes == 0)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_device_alloc: %s",
                               !out ? "out is NULL" : "bytes is 0");
    *out = NULL;
    sp_status st = sp_context_check_alive(ctx);
    if (st == SP_OK && !ctx->ops->copy_d2d)
        return sp_context_fail(ctx, SP_ERR_UNSUPPORTED, "sp_device_alloc: the %s backend has "
                               "no device-resident ends", ctx->ops->name);
    if (st == SP_OK && (st = ctx->ops->device_alloc(ctx->impl, bytes, out)) != SP_OK)
        return sp_context_fail(ctx, st, "sp_device_alloc(%zu bytes of device memory): %s",
                               bytes, sp_backend_error());
    return st;
}

void sp_device_free(sp_context *ctx, void *ptr)
{
    if (ctx && ptr && ctx->ops)
        ctx->ops->device_free(ctx->impl, ptr);
}

/* The copy from src (of kind `from`) to dst (`to`) on q: the one the kinds need. */
static sp_status enqueue_any(sp_context *ctx, void *dst, sp_mem_kind to, const void *src,
                             sp_mem_kind from, size_t bytes, sp_bqueue *q)
{
    int dev_to = to == SP_MEM_DEVICE, dev_from = from == SP_MEM_DEVICE;
    if (dev_to && dev_from)
        return ctx->ops->copy_d2d(ctx->impl, dst, src, bytes, q);
    if (dev_to)
        return ctx->ops->copy_h2d(ctx->impl, dst, src, bytes, q);
    return ctx->ops->copy_d2h(ctx->impl, dst, src, bytes, q);
}

/* Both kinds, refused with the reason when neither is this context's memory. */
static sp_status kinds_of(sp_context *ctx, void *dst, const void *src, size_t bytes,
                          sp_mem_kind *to, sp_mem_kind *from)
{
    sp_status st = sp_memory_kind(ctx, dst, bytes, to);
    if (st == SP_OK)
        st = sp_memory_kind(ctx, src, bytes, from);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_memcpy: asking what the memory is: %s",
                               sp_backend_error());
    sp_mem_kind bad = *to >= SP_MEM_OTHER_DEVICE ? *to : *from;
    if (bad >= SP_MEM_OTHER_DEVICE)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_memcpy: %s is %s",
                               bad == *to ? "dst" : "src", sp_mem_kind_name(bad));
    return SP_OK;
}

sp_status sp_memcpy(sp_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (bytes == 0)
        return SP_OK;
    if (!dst || !src || (uintptr_t)dst > UINTPTR_MAX - bytes ||
        (uintptr_t)src > UINTPTR_MAX - bytes)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_memcpy: %s",
                               !dst || !src ? "dst or src is NULL"
                                            : "a range overflows the address space");
    if (sp_ranges_overlap(dst, bytes, src, bytes))
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_memcpy: dst [%p, +%zu) and "
                               "src overlap", dst, bytes);
    sp_status st = sp_context_check_alive(ctx);
    sp_mem_kind to = SP_MEM_PAGEABLE, from = SP_MEM_PAGEABLE;
    if (st == SP_OK)
        st = kinds_of(ctx, dst, src, bytes, &to, &from);
    if (st != SP_OK)
        return st;
    if (to != SP_MEM_DEVICE && from != SP_MEM_DEVICE) {
        memcpy(dst, src, bytes); /* host to host */
        return SP_OK;
    }
    if ((to == SP_MEM_DEVICE && from == SP_MEM_DEVICE) && !ctx->ops->copy_d2d)
        return sp_context_fail(ctx, SP_ERR_UNSUPPORTED, "sp_memcpy: the %s backend has no "
                               "device copies", ctx->ops->name);
    sp_bqueue *q = NULL;
    st = ctx->ops->queue_create(ctx->impl, "memcpy", 0, &q);
    if (st == SP_OK)
        st = enqueue_any(ctx, dst, to, src, from, bytes, q);
    if (st == SP_OK)
        st = ctx->ops->queue_sync(ctx->impl, q);
    if (st != SP_OK)
        sp_context_fail(ctx, st, "sp_memcpy(%zu bytes, %s to %s): %s", bytes,
                        sp_mem_kind_name(from), sp_mem_kind_name(to), sp_backend_error());
    if (q)
        ctx->ops->queue_destroy(ctx->impl, q); /* drains what a failed sync left */
    return st;
}
