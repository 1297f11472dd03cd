// Device memory for the Python layer (issue 25): blocks from sp_device_alloc, sp_memcpy,
// DLPack views of a block, the DLPack facts of a foreign array (a torch CUDA tensor), and
// runs whose ends are raw addresses. streampipe.device decides everything: which object is
// device memory, the checks, the pool; nothing here does more than convert.
#include <cstdint>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "binding.h"

namespace sp_py {
namespace {

// Device memory the Python layer owns (a DeviceBuffer's, the pipeline's pool's): freed with
// sp_device_free when the last Python reference goes, and it holds the context until then.
struct device_block {
    context_ref ctx;
    void *ptr = nullptr;
    size_t bytes = 0;

    device_block() = default;
    device_block(const device_block &) = delete;
    device_block &operator=(const device_block &) = delete;
    ~device_block()
    {
        if (ptr)
            sp_device_free(ctx->ctx, ptr);
    }
};

void make_block(device_block *self, const context &ctx, size_t bytes)
{
    void *ptr = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked; // cudaMalloc may wait for the device
    status = sp_device_alloc(ctx.handle->ctx, bytes, &ptr);
    if (status != SP_OK)
        why = sp_context_last_error(ctx.handle->ctx);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    auto *b = new (self) device_block();
    b->ctx = ctx.handle;
    b->ptr = ptr;
    b->bytes = bytes;
}

// sp_memcpy between any two addresses of the context (host or device), synchronous.
void copy(const context &ctx, uintptr_t dst, uintptr_t src, size_t bytes)
{
    sp_status status;
    std::string why;
    gil_released unlocked;
    status = sp_memcpy(ctx.handle->ctx, (void *)dst, (const void *)src, bytes);
    if (status != SP_OK)
        why = sp_context_last_error(ctx.handle->ctx);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
}

// An array-API object (__dlpack__, __dlpack_device__) over `ptr`, made anew for each export:
// its DLPack capsule, and whatever tensor a consumer makes of it, holds `owner` (the
// DeviceBuffer) until the consumer's deleter runs, so the pool sees the consumer's hold.
nb::object dlpack_view(uintptr_t ptr, const std::vector<size_t> &shape, int code, int bits,
                       int device_type, int device_id, nb::handle owner)
{
    return nb::cast(nb::ndarray<nb::array_api>((void *)ptr, shape.size(), shape.data(), owner,
                                                nullptr, to_dtype(code, bits),
                                                device_type, device_id),
                    nb::rv_policy::reference);
}

// (address, shape, strides in elements, DLPack code, bits, device type, device id) of any
// DLPack producer, read without copying; the producer keeps the memory (the caller keeps it).
std::tuple<uintptr_t, std::vector<size_t>, std::vector<int64_t>, int, int, int, int>
array_info(nb::ndarray<nb::ro> a)
{
    std::vector<size_t> shape;
    std::vector<int64_t> strides;
    for (size_t i = 0; i < a.ndim(); i++) {
        shape.push_back(a.shape(i));
        strides.push_back(a.stride(i));
    }
    return {(uintptr_t)a.data(), shape,  strides,         (int)a.dtype().code,
            (int)a.dtype().bits,  a.device_type(), a.device_id()};
}

// A run (or serial run) whose ends are addresses, for a device end: the Python layer keeps
// the arrays alive and has checked them (sp_pipeline_check_buffers included).
nb::object run_ptr(pipeline &self, uintptr_t in, size_t n_records, uintptr_t out,
                   bool want_report, bool serial)
{
    report rep;
    sp_status status;
    std::string why;
    gil_released unlocked; // taken again only to call a Python stage
    sp_report *r = want_report ? &rep.r : nullptr;
    if (serial)
        status = sp_pipeline_run_serial(self.handle, (const void *)in, n_records, (void *)out, r);
    else
        status = sp_pipeline_run(self.handle, (const void *)in, n_records, (void *)out, r);
    if (status != SP_OK)
        why = sp_pipeline_last_error(self.handle);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    if (!want_report)
        return nb::none();
    return nb::cast(std::move(rep), nb::rv_policy::move);
}

} // namespace

void bind_device(nb::module_ &m)
{
    nb::class_<device_block>(m, "DeviceBlock")
        .def("__init__", &make_block, nb::arg("ctx"), nb::arg("bytes"))
        .def_prop_ro("ptr", [](const device_block &b) { return (uintptr_t)b.ptr; })
        .def_prop_ro("bytes", [](const device_block &b) { return b.bytes; });
    m.def("memcpy", &copy, nb::arg("ctx"), nb::arg("dst"), nb::arg("src"), nb::arg("bytes"));
    m.def("dlpack_view", &dlpack_view, nb::arg("ptr"), nb::arg("shape"), nb::arg("code"),
          nb::arg("bits"), nb::arg("device_type"), nb::arg("device_id"), nb::arg("owner"));
    m.def("array_info", &array_info, nb::arg("array").noconvert());
    m.def("run_ptr", &run_ptr, nb::arg("pipeline"), nb::arg("in_ptr"), nb::arg("n_records"),
          nb::arg("out_ptr"), nb::arg("report"), nb::arg("serial"));
}

} // namespace sp_py
