/* Inside the fault target: the wrapping backend's table and its own entry points, used by
 * fault_context.c (the public API, streampipe_fault.h) and by white-box tests. */
#ifndef SP_FAULT_BACKEND_H
#define SP_FAULT_BACKEND_H

#include "backend/backend.h"
#include "streampipe_fault.h"

const sp_backend_ops *sp_backend_fault_ops(void);
/* Wraps (inner, inner_impl), taking ownership of inner_impl on success (close() closes the
 * inner backend too). cfg may be NULL: no failures, no delays. */
sp_status sp_fault_open(const sp_backend_ops *inner, void *inner_impl,
                        const sp_fault_config *cfg, void **impl);
/* Only valid on an impl made by sp_fault_open. */
void sp_fault_configure(void *impl, const sp_fault_config *cfg);
void sp_fault_stats_read(void *impl, sp_fault_stats *out);

#endif /* SP_FAULT_BACKEND_H */
