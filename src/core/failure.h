/* The failure of the work in the ring: one record per pipeline and the one rule that decides
 * which failure it keeps. Only failure.c writes an sp_failure.
 *
 * The precedence rule, applied in sp_failure_record under the record's lock:
 *   1. a lost device wins: the context can no longer show that work in flight has stopped,
 *      so nothing is trusted (the text keeps the first failure and says what followed);
 *   2. a backend failure (a call that enqueues, waits or records failed) trusts no chunk in
 *      flight: chunks from 0 on are lost; a later failure of any kind but 1 changes nothing;
 *   3. a chunk's failure (a stage, a source or a sink failed at chunk c) loses the chunks
 *      from c on, and the earliest failed chunk wins: with several queues per stage, and
 *      stages on queues of their own, chunk c may fail after chunk d > c has, and the chunks
 *      before the earliest failed one are handed on.
 * Every failure's status is also noted on the context (a DEVICE_LOST marks it lost), kept
 * or not. The text of a kept failure becomes the pipeline's last error and the context's.
 *
 * Readers: stage workers ask sp_failure_drops (lock-free) before running a chunk; the
 * scheduler reads the rest once the queues have drained. */
#ifndef SP_FAILURE_H
#define SP_FAILURE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/context.h"
#include "core/error_box.h"

typedef enum sp_failure_kind {
    SP_FAILURE_BACKEND, /* rule 2 */
    SP_FAILURE_CHUNK,   /* rule 3 */
    SP_FAILURE_LOST,    /* rule 1 */
} sp_failure_kind;

typedef struct sp_failure {
    atomic_int failed;
    atomic_size_t lost_from; /* chunks from this one on are lost (SIZE_MAX: none) */
    pthread_mutex_t lock;
    sp_status status;
    uint64_t cause; /* the kept failure's cause (sp_chunk_fail_cause), 0: none */
    char text[SP_ERROR_TEXT];
} sp_failure;

/* Where a kept failure's text goes besides the record: the pipeline's box and its context. */
typedef struct sp_failure_sink {
    sp_context *ctx;
    sp_error_box *box;
} sp_failure_sink;

void sp_failure_init(sp_failure *f);
void sp_failure_destroy(sp_failure *f);
/* No failure: a run or a stream starts, or recovery is done. */
void sp_failure_reset(sp_failure *f);
/* Applies the rule to a failure of `kind` (chunk: a chunk failure's chunk; else ignored; cause:
 * the caller's, kept with it) and returns `status`, or SP_ERR_DEVICE_LOST for kind LOST. */
sp_status sp_failure_vrecord(sp_failure *f, sp_failure_sink sink, sp_failure_kind kind,
                             size_t chunk, uint64_t cause, sp_status status, const char *fmt,
                             va_list ap);

/* Whether any failure is recorded; whether chunk is lost to the failure recorded so far (no
 * failure: 0). Lock-free reads, asked on every chunk's path and by the stage workers: static
 * inline, read here by include (issue 22). */
static inline int sp_failure_any(sp_failure *f) { return atomic_load(&f->failed); }
static inline int sp_failure_drops(sp_failure *f, size_t chunk)
{
    return atomic_load(&f->failed) && chunk >= atomic_load(&f->lost_from);
}
/* The first chunk lost (SIZE_MAX: none), the kept status (SP_OK: none), its text. */
size_t sp_failure_lost_from(sp_failure *f);
sp_status sp_failure_status(sp_failure *f);
uint64_t sp_failure_cause(sp_failure *f);
void sp_failure_copy_text(sp_failure *f, char *buf, size_t n);

#endif
