/* Context lifetime, backend selection and the context's error text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/live_objects.h"

/* Opens the requested backend; AUTO prefers CUDA and falls back to HOST only when CUDA is
 * unsupported here (not built, or no GPU), never when a present GPU fails to open. Failures
 * are the context's last error, as on any other call. */
static sp_status open_backend(sp_context *ctx, sp_backend_kind kind, int device,
                              const sp_backend_ops **ops, void **impl)
{
    const sp_backend_ops *cuda = sp_backend_cuda_ops();
    sp_backend_error_clear();
    if (kind == SP_BACKEND_CUDA || kind == SP_BACKEND_AUTO) {
        if (!cuda) {
            if (kind == SP_BACKEND_CUDA)
                return sp_context_fail(ctx, SP_ERR_UNSUPPORTED, "CUDA backend requested, but "
                                       "this build has no CUDA support");
        } else {
            sp_status st = cuda->open(device, impl);
            if (st == SP_OK) {
                *ops = cuda;
                return SP_OK;
            }
            if (kind == SP_BACKEND_CUDA || st != SP_ERR_UNSUPPORTED)
                return sp_context_fail(ctx, st, "opening the CUDA backend on device %d failed: "
                                       "%s", device, sp_backend_error());
        }
    }
    if (kind != SP_BACKEND_AUTO && kind != SP_BACKEND_HOST)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "unknown backend kind %d",
                               (int)kind);
    const sp_backend_ops *host = sp_backend_host_ops();
    sp_status st = host->open(device, impl);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "opening the host backend failed: %s",
                               sp_backend_error());
    *ops = host;
    return SP_OK;
}

/* Puts the wrapper around the opened backend; on failure the opened one is closed. */
static sp_status wrap_backend(sp_context *ctx, sp_backend_wrap_fn wrap, void *arg,
                              const sp_backend_ops **ops, void **impl)
{
    const sp_backend_ops *inner = *ops;
    void *inner_impl = *impl;
    sp_backend_error_clear();
    sp_status st = wrap(inner, inner_impl, arg, ops, impl);
    if (st == SP_OK)
        return SP_OK;
    inner->close(inner_impl);
    return sp_context_fail(ctx, st, "wrapping the %s backend failed: %s", inner->name,
                           sp_backend_error());
}

/* The handle exists before the backend is opened, so that a failure to open has a context
 * to be the last error of (as sqlite3_open's handle does). */
static sp_context *context_alloc(void)
{
    sp_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    atomic_init(&ctx->lost, 0);
    atomic_init(&ctx->refs, 1); /* the handle the caller gets */
    pthread_mutex_init(&ctx->error_lock, NULL);
    sp_live_object_add(SP_LIVE_CONTEXT, +1); /* a failed open's handle too: it is destroyed */
    return ctx;
}

static sp_status context_open(sp_backend_kind kind, int device, sp_backend_wrap_fn wrap,
                              void *arg, sp_context **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    sp_context *ctx = *out = context_alloc();
    if (!ctx)
        return SP_ERR_OUT_OF_MEMORY;
    const sp_backend_ops *ops = NULL;
    void *impl = NULL;
    sp_status st = open_backend(ctx, kind, device, &ops, &impl);
    sp_backend_kind opened = ops ? ops->kind : SP_BACKEND_AUTO;
    if (st == SP_OK && wrap)
        st = wrap_backend(ctx, wrap, arg, &ops, &impl);
    if (st != SP_OK) {
        ctx->open_status = st; /* ops stays NULL: nothing opened */
        return st;
    }
    ctx->ops = ops;
    ctx->impl = impl;
    ctx->kind = opened; /* the opened backend's, whatever wraps it */
    return SP_OK;
}

sp_status sp_context_create(sp_backend_kind kind, int device, sp_context **out)
{
    return context_open(kind, device, NULL, NULL, out);
}

sp_status sp_context_create_wrapped(sp_backend_kind kind, int device, sp_backend_wrap_fn wrap,
                                    void *arg, sp_context **out)
{
    if (!wrap) {
        if (out)
            *out = NULL;
        return SP_ERR_INVALID_ARGUMENT;
    }
    return context_open(kind, device, wrap, arg, out);
}

void *sp_context_backend_impl(const sp_context *ctx, const sp_backend_ops *ops)
{
    return ctx && ops && ctx->ops == ops ? ctx->impl : NULL;
}

void sp_context_retain(sp_context *ctx) { atomic_fetch_add(&ctx->refs, 1); }

/* The last reference can only be dropped once: no other holder is left to race with, so
 * the teardown runs alone. */
void sp_context_release(sp_context *ctx)
{
    if (atomic_fetch_sub(&ctx->refs, 1) != 1)
        return;
    if (ctx->ops)
        ctx->ops->close(ctx->impl);
    pthread_mutex_destroy(&ctx->error_lock);
    free(ctx);
    sp_live_object_add(SP_LIVE_CONTEXT, -1);
}

/* The caller's reference: pipelines still made on ctx keep it open (a garbage collector
 * destroys in any order). */
void sp_context_destroy(sp_context *ctx)
{
    if (ctx)
        sp_context_release(ctx);
}

sp_backend_kind sp_context_backend(const sp_context *ctx)
{
    return ctx ? ctx->kind : SP_BACKEND_AUTO;
}

/* The text itself, not a copy: a caller may read it in the same expression as the call that
 * fails (`check(sp_pipeline_create(...), sp_context_last_error(ctx))`, arguments evaluated in
 * any order), which a copy taken first would leave empty. With several threads on one
 * context the header sends readers to the pipeline's or the stream's text instead. */
const char *sp_context_last_error(const sp_context *ctx)
{
    return ctx ? ctx->error : "no context: out of memory when it was created, or ctx is NULL";
}

void sp_context_set_error_text(sp_context *ctx, const char *text)
{
    pthread_mutex_lock(&ctx->error_lock);
    snprintf(ctx->error, sizeof ctx->error, "%s", text);
    pthread_mutex_unlock(&ctx->error_lock);
}

void sp_context_clear_error(sp_context *ctx) { sp_context_set_error_text(ctx, ""); }

sp_status sp_context_note_status(sp_context *ctx, sp_status status)
{
    if (status == SP_ERR_DEVICE_LOST)
        atomic_store(&ctx->lost, 1);
    return status;
}

sp_status sp_context_fail(sp_context *ctx, sp_status status, const char *fmt, ...)
{
    char text[SP_ERROR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sp_context_set_error_text(ctx, text);
    return sp_context_note_status(ctx, status);
}

sp_status sp_context_check_alive(sp_context *ctx)
{
    if (!ctx->ops)
        return ctx->open_status; /* its last error still says why it did not open */
    if (atomic_load(&ctx->lost))
        return sp_context_fail(ctx, SP_ERR_DEVICE_LOST,
                               "the device context was lost earlier; destroy and recreate it");
    return SP_OK;
}
