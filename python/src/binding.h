// What the binding's files share: handles that own the C objects, and raising a status.
//
// The binding only converts: C handles to Python objects that own them, Python arrays to
// pointers, sp_report to a dict, a status to the exception streampipe.errors maps it to. Every
// check, default and message of its own is in the pure-Python layer (python/streampipe).
#ifndef STREAMPIPE_PY_BINDING_H
#define STREAMPIPE_PY_BINDING_H

#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "streampipe.h"
#include "streampipe_group.h"

namespace nb = nanobind;

namespace sp_py {

// The context is destroyed when its last owner lets go: the Python Context, a pipeline, a
// pinned array, a set of MLP stages. So memory and pipelines never outlive it.
struct context_handle {
    sp_context *ctx = nullptr;
    explicit context_handle(sp_context *c) : ctx(c) {}
    context_handle(const context_handle &) = delete;
    context_handle &operator=(const context_handle &) = delete;
    ~context_handle() { sp_context_destroy(ctx); }
};
using context_ref = std::shared_ptr<context_handle>;

struct context {
    context_ref handle;
    int device = 0;
};

// A stage the library provides: its sp_stage and whatever its `user` pointer needs alive.
struct builtin_stage {
    sp_stage stage{};
    std::shared_ptr<const void> keep;
};

// One Python stage of one pipeline: its adapters (streampipe.stage makes them), the dtype and
// record shape of what it reads and writes, to build the arrays it is handed, and the bytes of
// scratch it asked for.
struct pipeline;
struct stage_slot {
    pipeline *owner = nullptr;
    std::string name;
    nb::object host_fn; // None when absent
    nb::object cuda_fn;
    nb::dlpack::dtype in_dtype{}, out_dtype{};
    std::vector<size_t> in_shape, out_shape; // of one record
    size_t scratch_bytes = 0;
};

// A pipeline and what its C handle points into: the context, built-in stages' state, the
// Python stages. A stream (stream.cpp) holds the Python object of its pipeline, so the
// pipeline is never destroyed with a stream open.
struct pipeline {
    context_ref ctx;
    int device = 0;
    std::vector<std::shared_ptr<const void>> keep; // what built-in stages point into
    std::vector<std::unique_ptr<stage_slot>> slots;
    sp_pipeline *handle = nullptr; // a group's: its member 0's, for the facts all share
    sp_group *group = nullptr;     // a pipeline of Context.group (group.cpp): runs go to it

    pipeline() = default;
    pipeline(const pipeline &) = delete;
    pipeline &operator=(const pipeline &) = delete;
    ~pipeline() // before ctx and keep let go
    {
        if (group)
            sp_group_destroy(group); // and its members' pipelines
        else
            sp_pipeline_destroy(handle);
    }
};

// A copy of one run's (or stream's) sp_report; to_dict converts it.
struct report {
    sp_report r{};
};

// group.cpp: a group over `devices` on ctx's backend, every member made with `config`, and
// *member0 its first pipeline; raises the library's error when it cannot be made. Then what
// each member did in the group's last run: a list of dicts with the device's figures and its
// report.
sp_group *create_group(const context &ctx, const std::vector<int> &devices,
                       const sp_pipeline_config &config, sp_pipeline **member0);
nb::list group_members(const pipeline &self);

// Views, never copies, of memory the library owns (slot buffers, staging); `owner` stays alive
// while a view does. Host memory as a numpy array (read-only when asked)...
nb::object host_view(void *ptr, const std::vector<size_t> &shape, nb::dlpack::dtype dtype,
                     bool read_only, nb::handle owner);
// ...and device memory as an array-API object (__dlpack__, __dlpack_device__).
nb::object device_view(void *ptr, const std::vector<size_t> &shape, nb::dlpack::dtype dtype,
                       int device_id, nb::handle owner);

// Raises the exception streampipe.errors._from_status makes of (status, message).
[[noreturn]] void raise_status(sp_status status, const std::string &message);

// A DLPack dtype from the (code, bits) pair the Python layer passes.
inline nb::dlpack::dtype to_dtype(int code, int bits)
{
    nb::dlpack::dtype d;
    d.code = (uint8_t)code;
    d.bits = (uint8_t)bits;
    d.lanes = 1;
    return d;
}

void bind_pipeline(nb::module_ &m);
void bind_stream(nb::module_ &m);
void bind_builtins(nb::module_ &m);

} // namespace sp_py

#endif
