// Pipelines of Context.group: one sp_group over several devices (HOST: several host backends)
// behind the same Pipeline object, whose runs go to sp_group_run and sp_group_run_io.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"

namespace sp_py {

sp_group *create_group(const context &ctx, const std::vector<int> &devices,
                       const sp_pipeline_config &config, sp_pipeline **member0)
{
    sp_backend_kind kind = sp_context_backend(ctx.handle->ctx);
    // {-1}: every visible GPU (HOST: one host backend), as sp_group_create reads it
    sp_group *group = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked; // opens the contexts, allocates every buffer
    status = sp_group_create(kind, devices.data(), devices.size(), &config, &group);
    if (status != SP_OK) { // a failed creation still yields a handle, whose error says why
        why = group ? sp_group_last_error(group) : "no memory for a group";
        sp_group_destroy(group);
    }
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    *member0 = sp_group_pipeline(group, 0);
    return group;
}

nb::list group_members(const pipeline &self)
{
    nb::list members;
    for (size_t k = 0; self.group && k < sp_group_size(self.group); k++) {
        sp_group_device_stats s{};
        report rep;
        if (sp_group_device_stats_get(self.group, k, &s) != SP_OK ||
            sp_group_device_report(self.group, k, &rep.r) != SP_OK)
            break;
        nb::dict d;
        d["device"] = s.device;
        d["units"] = s.units;
        d["records"] = s.records;
        d["busy_s"] = s.busy_s;
        d["status"] = (int)s.status;
        d["report"] = nb::cast(std::move(rep), nb::rv_policy::move);
        members.append(d);
    }
    return members;
}

} // namespace sp_py
