/* The context: one opened backend plus the per-context error text and the lost flag. It is
 * reference-counted: the user's handle holds one reference and every pipeline one, so that
 * the context and its backend outlive every pipeline whatever the order of the destroys. */
#ifndef SP_CONTEXT_H
#define SP_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend/backend.h"
#include "streampipe.h"

#define SP_ERROR_TEXT 1024

struct sp_context {
    const sp_backend_ops *ops; /* NULL when opening failed (open_status says how) */
    void *impl;
    sp_status open_status;
    sp_backend_kind kind; /* HOST or CUDA, also under a wrapper (sp_context_create_wrapped) */
    atomic_int lost;      /* set once a backend reports SP_ERR_DEVICE_LOST */
    atomic_long refs;     /* the user's handle (until sp_context_destroy) + live pipelines */
    pthread_mutex_t error_lock;
    char error[SP_ERROR_TEXT];
};

/* A pipeline takes a reference when it is made and gives it back when destroyed; the last
 * reference given back (that, or sp_context_destroy's) closes the backend and frees ctx. */
void sp_context_retain(sp_context *ctx);
void sp_context_release(sp_context *ctx);

/* sp_context_fail: backend.h (wrappers report through it too). */
void sp_context_set_error_text(sp_context *ctx, const char *text);
void sp_context_clear_error(sp_context *ctx);
/* SP_ERR_DEVICE_LOST with a message when the context is lost, the open failure when it
 * never opened (its text kept), else SP_OK. Every call that reaches the backend asks first. */
sp_status sp_context_check_alive(sp_context *ctx);
/* Marks the context lost when status is SP_ERR_DEVICE_LOST; returns status. */
sp_status sp_context_note_status(sp_context *ctx, sp_status status);

#endif
