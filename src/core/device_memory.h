/* What a range of memory is, for any context (device_memory.c). */
#ifndef SP_DEVICE_MEMORY_H
#define SP_DEVICE_MEMORY_H

#include "core/context.h"

/* The backend's memory_kind, or, for a backend without device-resident ends, pinned or
 * pageable host memory as is_pinned says. A failure is the backend's (its text set). */
sp_status sp_memory_kind(sp_context *ctx, const void *ptr, size_t bytes, sp_mem_kind *kind);
/* "pageable host memory", "device memory", ... for messages. */
const char *sp_mem_kind_name(sp_mem_kind kind);

#endif
