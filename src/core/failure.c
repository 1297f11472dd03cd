/* The one writer of an sp_failure, and the precedence rule of failure.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/failure.h"

void sp_failure_init(sp_failure *f)
{
    pthread_mutex_init(&f->lock, NULL);
    atomic_init(&f->failed, 0);
    atomic_init(&f->lost_from, SIZE_MAX);
    f->status = SP_OK;
    f->cause = 0;
    f->text[0] = '\0';
}

void sp_failure_destroy(sp_failure *f) { pthread_mutex_destroy(&f->lock); }

void sp_failure_reset(sp_failure *f)
{
    pthread_mutex_lock(&f->lock);
    atomic_store(&f->failed, 0);
    atomic_store(&f->lost_from, SIZE_MAX);
    f->status = SP_OK;
    f->cause = 0;
    f->text[0] = '\0';
    pthread_mutex_unlock(&f->lock);
}

/* Whether a failure of `kind` at `chunk` replaces what is kept (under the lock). */
static int takes_precedence(const sp_failure *f, sp_failure_kind kind, size_t chunk)
{
    if (kind == SP_FAILURE_LOST || !atomic_load(&f->failed))
        return 1;
    return kind == SP_FAILURE_CHUNK && f->status != SP_ERR_DEVICE_LOST &&
           chunk < atomic_load(&f->lost_from);
}

/* The text a kept failure leaves: its own, or for a lost context the first one's with this
 * one after it. */
static void compose(const sp_failure *f, sp_failure_kind kind, char *text, size_t n,
                    const char *fmt, va_list ap)
{
    char own[SP_ERROR_TEXT];
    vsnprintf(own, sizeof own, fmt, ap);
    int len = kind == SP_FAILURE_LOST && atomic_load(&f->failed)
                  ? snprintf(text, n, "%.600s; then %.400s", f->text, own)
                  : snprintf(text, n, "%s", own);
    (void)len; /* a text longer than n ends short, as every error text here may */
}

sp_status sp_failure_vrecord(sp_failure *f, sp_failure_sink sink, sp_failure_kind kind,
                             size_t chunk, uint64_t cause, sp_status status, const char *fmt,
                             va_list ap)
{
    if (kind == SP_FAILURE_LOST)
        status = SP_ERR_DEVICE_LOST;
    pthread_mutex_lock(&f->lock);
    if (takes_precedence(f, kind, chunk)) {
        char text[SP_ERROR_TEXT];
        compose(f, kind, text, sizeof text, fmt, ap);
        memcpy(f->text, text, sizeof text);
        f->status = status;
        f->cause = kind == SP_FAILURE_LOST ? 0 : cause;
        atomic_store(&f->lost_from, kind == SP_FAILURE_CHUNK ? chunk : 0);
        atomic_store(&f->failed, 1);
        sp_error_box_set(sink.box, text);
        sp_context_set_error_text(sink.ctx, text);
    }
    sp_context_note_status(sink.ctx, status);
    pthread_mutex_unlock(&f->lock);
    return status;
}

size_t sp_failure_lost_from(sp_failure *f) { return atomic_load(&f->lost_from); }

sp_status sp_failure_status(sp_failure *f)
{
    pthread_mutex_lock(&f->lock);
    sp_status st = f->status;
    pthread_mutex_unlock(&f->lock);
    return st;
}

uint64_t sp_failure_cause(sp_failure *f)
{
    pthread_mutex_lock(&f->lock);
    uint64_t cause = f->cause;
    pthread_mutex_unlock(&f->lock);
    return cause;
}

void sp_failure_copy_text(sp_failure *f, char *buf, size_t n)
{
    pthread_mutex_lock(&f->lock);
    snprintf(buf, n, "%s", f->text);
    pthread_mutex_unlock(&f->lock);
}
