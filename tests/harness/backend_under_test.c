/* See backend_under_test.h. */
#include "backend_under_test.h"

#include <string.h>

int backend_check_status(sp_status got, sp_status want, const char *expr, const char *file,
                         int line)
{
    if (got == want)
        return 1;
    return harness_fail(file, line, "%s returned %d, expected %d (%s)", expr, (int)got,
                        (int)want, sp_backend_error());
}

int open_fault(const sp_fault_config *cfg, backend *out)
{
    const sp_backend_ops *host = sp_backend_host_ops();
    void *host_impl = NULL;
    out->ops = sp_backend_fault_ops();
    out->impl = NULL;
    if (!CHECK_OK(host->open(0, &host_impl)))
        return 0;
    if (!CHECK_OK(sp_fault_open(host, host_impl, cfg, &out->impl))) {
        host->close(host_impl);
        return 0;
    }
    return 1; /* the fault backend closes the HOST one it wraps */
}

sp_fault_stats fault_stats(backend b)
{
    sp_fault_stats stats;
    memset(&stats, 0xff, sizeof stats);
    sp_fault_stats_read(b.impl, &stats);
    return stats;
}

int run_on_host(backend_test fn)
{
    backend host = {sp_backend_host_ops(), NULL};
    if (!CHECK_OK(host.ops->open(0, &host.impl)))
        return TEST_FAIL;
    fn(host);
    host.ops->close(host.impl);
    return TEST_OK;
}

int run_on_fault(backend_test fn, const sp_fault_config *cfg, int queued)
{
    backend fault;
    if (!open_fault(cfg, &fault))
        return TEST_FAIL;
    fn(fault);
    sp_fault_stats stats = fault_stats(fault);
    CHECK_MSG(stats.injected == 0, "%lu failures injected with none asked for", stats.injected);
    CHECK_MSG(stats.live_objects == 0, "%ld queues, events or allocations left",
              stats.live_objects);
    CHECK_MSG(!queued || stats.delays > 0, "no delay was applied");
    fault.ops->close(fault.impl);
    return TEST_OK;
}
