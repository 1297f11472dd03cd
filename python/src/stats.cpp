// The live counters (sp_pipeline_stats) as a dict; streampipe.stats makes the dataclass.
// Read without the GIL held by nothing of the library: the call never blocks, so the GIL
// stays taken (releasing it would cost more than the read).
#include <string>

#include <nanobind/stl/string.h>

#include "binding.h"

namespace sp_py {
namespace {

const char *kind_name(sp_engine_kind kind)
{
    switch (kind) {
    case SP_ENGINE_STAGE_IN: return "stage-in";
    case SP_ENGINE_H2D: return "h2d";
    case SP_ENGINE_COMPUTE: return "compute";
    case SP_ENGINE_D2H: return "d2h";
    case SP_ENGINE_STAGE_OUT: return "stage-out";
    }
    return "?";
}

nb::dict engine_dict(const sp_engine_stats &e)
{
    nb::dict d;
    d["name"] = std::string(e.name);
    d["kind"] = kind_name(e.kind);
    d["busy_measured"] = e.busy_measured != 0;
    d["records"] = e.records;
    d["bytes"] = e.bytes;
    d["busy_s"] = e.busy_s;
    return d;
}

// A stream's counters are its pipeline's (sp_stream_stats reads them there), so one entry
// serves Pipeline.stats() and Stream.stats().
nb::dict stats_dict(const pipeline &self)
{
    sp_stats s{}; // SP_STATS_INIT, without C++ warning of the members it leaves 0
    s.size = sizeof s;
    sp_status status = sp_pipeline_stats(self.handle, &s);
    if (status != SP_OK)
        raise_status(status, "sp_pipeline_stats failed");
    nb::dict d;
    d["run"] = s.run;
    d["active"] = s.active != 0;
    d["elapsed_s"] = s.elapsed_s;
    d["records_total"] = s.records_total;
    d["bytes_total"] = s.bytes_total;
    d["records_done"] = s.records_done;
    d["bytes_done"] = s.bytes_done;
    d["chunks_in_flight"] = s.chunks_in_flight;
    d["batches_in_flight"] = s.batches_in_flight;
    d["wait_s"] = s.wait_s;
    d["errors"] = s.errors;
    d["pinned_bytes"] = s.pinned_bytes;
    d["device_bytes"] = s.device_bytes;
    d["hidden_transfer"] = s.hidden_transfer; // -1: unknown (streampipe.stats says None)
    d["timed_chunks"] = s.timed_chunks;
    nb::list engines;
    for (size_t k = 0; k < s.n_engines; k++)
        engines.append(engine_dict(s.engines[k]));
    d["engines"] = engines;
    return d;
}

} // namespace

void bind_stats(nb::module_ &m) { m.def("pipeline_stats", &stats_dict, nb::arg("pipeline")); }

} // namespace sp_py
