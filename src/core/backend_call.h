/* Backend calls whose optional entries have a fallback: each fallback decided here, once,
 * not at each call site (the report's notes say which were taken: report.c). */
#ifndef SP_BACKEND_CALL_H
#define SP_BACKEND_CALL_H

#include "core/pipeline_fields.h"

/* One copy on q, whole or in pieces of the pipeline's copy_piece_bytes; by the backend's copy
 * kernel when the pipeline asks for it and the backend has one (copy_kernel), else by the
 * copy engines. */
sp_status sp_call_copy(const sp_pipeline *p, int to_device, void *dst, const void *src,
                       size_t bytes, sp_bqueue *q);
/* A batch's copy into the ring (h2d) or out of it (d2h): device to device when that end of
 * the batch is device memory (device_end), else sp_call_copy's. */
sp_status sp_call_copy_end(const sp_pipeline *p, int to_device, int device_end, void *dst,
                           const void *src, size_t bytes, sp_bqueue *q);
/* Profiler ranges around what is enqueued ("h2d c12", "<stage> c12", "stage c12"), when the
 * backend has trace_push; without it nothing is formatted. */
void sp_call_trace_push(const sp_pipeline *p, const char *what, size_t chunk);
void sp_call_trace_pop(const sp_pipeline *p);

#endif
