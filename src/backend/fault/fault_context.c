/* The fault target's public entry points (streampipe_fault.h): a context opened through the
 * seam's wrap hook with the fault backend around the real one. */
#include "backend/fault/fault_backend.h"
#include "core/sized.h" /* header-only: how every sized struct is read */

/* The caller's config (NULL: no failures, no delays) in this library's layout. */
static sp_status read_config(const sp_fault_config *given, sp_fault_config *cfg,
                             const char **why)
{
    if (!given) {
        memset(cfg, 0, sizeof *cfg);
        cfg->size = sizeof *cfg;
        return SP_OK;
    }
    return sp_sized_read(cfg, sizeof *cfg, given, SP_FAULT_CONFIG_SIZE_0_5, why);
}

static sp_status wrap_in_fault(const sp_backend_ops *inner, void *inner_impl, void *arg,
                               const sp_backend_ops **ops, void **impl)
{
    sp_fault_config cfg;
    const char *why;
    sp_status st = read_config(arg, &cfg, &why);
    if (st != SP_OK) {
        sp_backend_fail("sp_context_create_fault: config: %s", why);
        return st;
    }
    st = sp_fault_open(inner, inner_impl, &cfg, impl);
    if (st == SP_OK)
        *ops = sp_backend_fault_ops();
    return st;
}

sp_status sp_context_create_fault(sp_backend_kind kind, int device, const sp_fault_config *cfg,
                                  sp_context **out)
{
    return sp_context_create_wrapped(kind, device, wrap_in_fault, (void *)cfg, out);
}

sp_status sp_fault_set(sp_context *ctx, const sp_fault_config *given)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    void *impl = sp_context_backend_impl(ctx, sp_backend_fault_ops());
    if (!impl)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "sp_fault_set: the context was not made by sp_context_create_fault");
    sp_fault_config cfg;
    const char *why;
    sp_status st = read_config(given, &cfg, &why);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_fault_set: config: %s", why);
    sp_fault_configure(impl, &cfg);
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
