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
void bind_builtins(nb::module_ &m);

} // namespace sp_py

#endif
