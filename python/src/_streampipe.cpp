// streampipe._streampipe: the module, status codes, contexts and pinned host arrays.
#include <cstdint>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"
#include "streampipe_ops.h"

namespace sp_py {

void raise_status(sp_status status, const std::string &message)
{
    nb::object make = nb::module_::import_("streampipe.errors").attr("_from_status");
    nb::object error = make((int)status, message);
    PyErr_SetObject((PyObject *)Py_TYPE(error.ptr()), error.ptr());
    throw nb::python_error();
}

namespace {

void make_context(context *self, int kind, int device)
{
    sp_context *ctx = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked; // opening CUDA takes a while
    status = sp_context_create((sp_backend_kind)kind, device, &ctx);
    if (status != SP_OK) { // a failed open still yields a handle, with the reason
        why = sp_context_last_error(ctx);
        sp_context_destroy(ctx);
    }
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    new (self) context{std::make_shared<context_handle>(ctx), device};
}

// Pinned memory handed to numpy: the capsule frees it and holds the context until then.
struct pinned_block {
    context_ref owner;
    void *ptr;
    ~pinned_block() { sp_host_free(owner->ctx, ptr); }
};

nb::ndarray<nb::numpy> pinned_array(const context &self, size_t bytes,
                                    const std::vector<size_t> &shape, int code, int bits)
{
    void *ptr = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked; // cudaHostAlloc of a GiB takes half a second
    status = sp_host_alloc(self.handle->ctx, bytes, &ptr);
    if (status != SP_OK)
        why = sp_context_last_error(self.handle->ctx);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    auto *block = new pinned_block{self.handle, ptr};
    nb::capsule owner(block, [](void *p) noexcept { delete static_cast<pinned_block *>(p); });
    return nb::ndarray<nb::numpy>(ptr, shape.size(), shape.data(), owner, nullptr,
                                  to_dtype(code, bits));
}

} // namespace
} // namespace sp_py

NB_MODULE(_streampipe, m)
{
    using namespace sp_py;
    m.doc() = "The C API of streampipe, converted and nothing more; use the streampipe package.";

    m.def("version", [] { return std::string(sp_version()); });
    m.def("status_name", [](int s) { return std::string(sp_status_name((sp_status)s)); });
    m.def("status_message", [](int s) { return std::string(sp_status_message((sp_status)s)); });
    m.def("backend_name", [](int k) { return std::string(sp_backend_name((sp_backend_kind)k)); });
    // Sizes, contiguity and overlap are checked by streampipe.copy_nontemporal.
    m.def("copy_nontemporal",
          [](nb::ndarray<nb::c_contig, nb::device::cpu> dst,
             nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> src, size_t bytes) {
              gil_released unlocked; // a staging-sized copy: other threads run on
              sp_copy_nontemporal(dst.data(), src.data(), bytes);
          },
          nb::arg("dst"), nb::arg("src"), nb::arg("bytes"));
    // nvCOMP for decompression in the ring (streampipe.nvcomp finds it): (status, why).
    m.def("nvcomp_load", [](std::optional<std::string> path) {
        char why[256] = "";
        sp_status st = sp_nvcomp_load(path ? path->c_str() : nullptr, why, sizeof why);
        return nb::make_tuple((int)st, std::string(why));
    }, nb::arg("path").none());
    m.def("nvcomp_status", [] {
        char why[256] = "";
        unsigned version = 0;
        int loaded = sp_nvcomp_status(&version, why, sizeof why);
        return nb::make_tuple(loaded != 0, version, std::string(why));
    });
    // The library was built with CUDA when its built-in stage has a CUDA function.
    m.def("built_with_cuda", [] {
        static const sp_sinmix_params params{};
        return sp_sinmix_stage(&params).cuda != nullptr;
    });

    m.attr("OK") = (int)SP_OK;
    m.attr("ERR_INVALID_ARGUMENT") = (int)SP_ERR_INVALID_ARGUMENT;
    m.attr("ERR_OUT_OF_MEMORY") = (int)SP_ERR_OUT_OF_MEMORY;
    m.attr("ERR_OUT_OF_DEVICE_MEMORY") = (int)SP_ERR_OUT_OF_DEVICE_MEMORY;
    m.attr("ERR_UNSUPPORTED") = (int)SP_ERR_UNSUPPORTED;
    m.attr("ERR_STAGE_FAILED") = (int)SP_ERR_STAGE_FAILED;
    m.attr("ERR_BACKEND") = (int)SP_ERR_BACKEND;
    m.attr("ERR_DEVICE_LOST") = (int)SP_ERR_DEVICE_LOST;
    m.attr("ERR_CANCELLED") = (int)SP_ERR_CANCELLED;
    m.attr("ERR_WOULD_BLOCK") = (int)SP_ERR_WOULD_BLOCK;
    m.attr("ERR_TIMEOUT") = (int)SP_ERR_TIMEOUT;
    m.attr("BACKEND_AUTO") = (int)SP_BACKEND_AUTO;
    m.attr("BACKEND_HOST") = (int)SP_BACKEND_HOST;
    m.attr("BACKEND_CUDA") = (int)SP_BACKEND_CUDA;
    m.attr("GRAPH_OFF") = (int)SP_GRAPH_OFF;
    m.attr("GRAPH_ON") = (int)SP_GRAPH_ON;
    m.attr("GRAPH_AUTO") = (int)SP_GRAPH_AUTO;
    m.attr("TIMELINE_SAMPLED") = (int)SP_TIMELINE_SAMPLED;
    m.attr("TIMELINE_EVENTS") = (int)SP_TIMELINE_EVENTS;
    m.attr("TIMELINE_CUPTI") = (int)SP_TIMELINE_CUPTI;
    m.attr("TIMELINE_OFF") = (int)SP_TIMELINE_OFF;
    m.attr("MAX_STAGES") = SP_MAX_STAGES;
    m.attr("MAX_DEPTH") = SP_MAX_DEPTH;
    m.attr("MAX_STAGE_STREAMS") = SP_MAX_STAGE_STREAMS;
    m.attr("SIZE_MAX") = (size_t)SIZE_MAX;

    nb::class_<context>(m, "Context")
        .def("__init__", &make_context, nb::arg("kind"), nb::arg("device"))
        .def_prop_ro("backend", [](const context &c) { return (int)sp_context_backend(c.handle->ctx); })
        .def_prop_ro("device", [](const context &c) { return c.device; })
        .def("last_error", [](const context &c) {
            return std::string(sp_context_last_error(c.handle->ctx));
        })
        .def("pinned_array", &pinned_array, nb::arg("bytes"), nb::arg("shape"), nb::arg("code"),
             nb::arg("bits"));

    bind_pipeline(m);
    bind_stream(m);
    bind_builtins(m);
    bind_exit(m);
    bind_device(m);
    bind_stats(m);
    bind_feed(m);
}
