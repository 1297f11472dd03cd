// What the binding's files share: handles that own the C objects, and raising a status.
//
// The binding only converts: C handles to Python objects that own them, Python arrays to
// pointers, sp_report to a dict, a status to the exception streampipe.errors maps it to. Every
// check, default and message of its own is in the pure-Python layer (python/streampipe). One
// exception: feed.cpp, streampipe.torch.Loader's feed, runs a stream's submit and event loops on
// threads of its own, because a Python thread doing them takes the GIL from the training loop.
#ifndef STREAMPIPE_PY_BINDING_H
#define STREAMPIPE_PY_BINDING_H

#include <memory>
#include <optional>
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

// One run's (or stream's) sp_report; to_dict converts it. It owns the timeline the run kept
// (keep_timeline), which the library frees when the Python Report goes: moved, never copied.
struct report {
    sp_report r{};

    report() = default;
    report(const report &) = delete;
    report &operator=(const report &) = delete;
    report(report &&other) noexcept : r(other.r) { other.r.timeline = nullptr; }
    report &operator=(report &&) = delete;
    ~report() { sp_report_release(&r); }
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

// Interpreter exit (exit.cpp): once streampipe's atexit hook has run, no thread but the one
// finalizing may take the GIL, which Python would answer with pthread_exit (an abort). Both
// classes are for that alone.
//
// The GIL released while the library works, in a binding function called from Python; use it
// in place of nb::gil_scoped_release:
//     gil_released unlocked;              // no Python API from here...
//     status = sp_pipeline_run(...);
//     unlocked.relock();                  // ...to here (the destructor relocks otherwise)
//     if (status != SP_OK) raise_status(status, why);
// At exit a thread coming back (a daemon thread's run) waits in relock for the process to end
// instead of taking the GIL; until the object goes, the hook counts the thread as still on
// its way into Python, and waits for it.
class gil_released {
public:
    gil_released() noexcept;
    ~gil_released();
    void relock();
    gil_released(const gil_released &) = delete;
    gil_released &operator=(const gil_released &) = delete;

private:
    PyThreadState *state_;
    bool locked_ = false;
};

// The GIL taken to call a Python stage, source or sink from a library thread; at exit it is
// not taken (entered() is false) and the caller fails the chunk without touching Python.
class python_entry {
public:
    python_entry() noexcept;
    ~python_entry();
    bool entered() const noexcept { return gil_.has_value(); }
    python_entry(const python_entry &) = delete;
    python_entry &operator=(const python_entry &) = delete;

private:
    std::optional<nb::gil_scoped_acquire> gil_;
};

// Why a chunk failed when its Python stage was not called.
constexpr const char *exiting_message = "the Python interpreter is exiting";

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
void bind_exit(nb::module_ &m);
void bind_device(nb::module_ &m); // device.cpp: device memory, DLPack, runs by address
void bind_stats(nb::module_ &m); // stats.cpp
void bind_feed(nb::module_ &m);  // feed.cpp: streampipe.torch.Loader's stream, fed off the GIL

} // namespace sp_py

#endif
