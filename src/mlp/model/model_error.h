/* Reasons for failures of the MLP code, written into a buffer: the handle's error text (the
 * model's, the stages') or a launcher's, which a stage hands to sp_chunk_fail. Never printed. */
#ifndef SP_MODEL_ERROR_H
#define SP_MODEL_ERROR_H

#include <stddef.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" { /* also used by the CUDA launchers (.cu) */
#endif

/* Room for a reason: the handles' error texts and the launchers' buffers. */
#define SP_MLP_ERROR_SIZE 320

/* Formats the reason into err[0..size) (always terminated; nothing when err is NULL or size
 * is 0) and returns `status`, so that a failure reads `return sp_model_fail(...)`. */
sp_status sp_model_fail(char *err, size_t size, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* SP_MODEL_ERROR_H */
