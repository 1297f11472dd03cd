/* See model_error.h. */
#include <stdarg.h>
#include <stdio.h>

#include "mlp/model/model_error.h"

sp_status sp_model_fail(char *err, size_t size, sp_status status, const char *fmt, ...)
{
    if (err != NULL && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, size, fmt, ap);
        va_end(ap);
    }
    return status;
}
