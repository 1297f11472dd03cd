/* The fault target's public entry points (streampipe_fault.h): a context opened through the
 * seam's wrap hook with the fault backend around the real one. */
#include "backend/fault/fault_backend.h"

static sp_status wrap_in_fault(const sp_backend_ops *inner, void *inner_impl, void *arg,
                               const sp_backend_ops **ops, void **impl)
{
    sp_status st = sp_fault_open(inner, inner_impl, arg, impl);
    if (st == SP_OK)
        *ops = sp_backend_fault_ops();
    return st;
}

sp_status sp_context_create_fault(sp_backend_kind kind, int device, const sp_fault_config *cfg,
                                  sp_context **out)
{
    return sp_context_create_wrapped(kind, device, wrap_in_fault, (void *)cfg, out);
}

sp_status sp_fault_set(sp_context *ctx, const sp_fault_config *cfg)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    void *impl = sp_context_backend_impl(ctx, sp_backend_fault_ops());
    if (!impl)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "sp_fault_set: the context was not made by sp_context_create_fault");
    sp_fault_config none = {0};
    sp_fault_configure(impl, cfg ? cfg : &none);
    return SP_OK;
}

sp_status sp_fault_get_stats(const sp_context *ctx, sp_fault_stats *out)
{
    void *impl = sp_context_backend_impl(ctx, sp_backend_fault_ops());
    if (!impl || !out)
        return SP_ERR_INVALID_ARGUMENT;
    sp_fault_stats_read(impl, out);
    return SP_OK;
}
