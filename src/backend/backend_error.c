/* The thread-local "why" behind a failed backend call. Thread-local because queues of one
 * context may be driven from several threads; the core reads it on the failing thread. */
#include <stdarg.h>
#include <stdio.h>

#include "backend/backend.h"

static _Thread_local char backend_message[512];

void sp_backend_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(backend_message, sizeof backend_message, fmt, ap);
    va_end(ap);
}

const char *sp_backend_error(void) { return backend_message; }

void sp_backend_error_clear(void) { backend_message[0] = '\0'; }
