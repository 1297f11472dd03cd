// Streams (sp_stream_*): open, submit (timed), next, cancel and close, each with the GIL
// released while the library works. streampipe.stream keeps the batches' arrays alive, numbers them (the tag) and
// turns the events into futures; nothing here decides anything.
#include <cstdint>

#include <nanobind/stl/string.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>

#include "binding.h"

namespace sp_py {
namespace {

struct stream {
    nb::object owner; // the Python object of the pipeline: alive while the stream is open
    sp_stream *handle = nullptr;

    stream() = default;
    stream(const stream &) = delete;
    stream &operator=(const stream &) = delete;
    // Only reached without close() when the Python layer lost track of the stream: drain it
    // here rather than leave the pipeline claimed. Python stages may need the GIL meanwhile.
    ~stream()
    {
        if (handle) {
            gil_released unlocked;
            sp_stream_close(handle, nullptr);
        }
    }
};

sp_stream *open_handle(const stream &s)
{
    if (!s.handle)
        raise_status(SP_ERR_INVALID_ARGUMENT, "the stream is closed");
    return s.handle;
}

void make_stream(stream *self, nb::object pipe, unsigned max_in_flight, bool nonblocking,
                 bool input_released_events)
{
    pipeline &p = nb::cast<pipeline &>(pipe);
    sp_stream_config config{};
    config.max_in_flight = max_in_flight;
    config.nonblocking = nonblocking ? 1 : 0;
    config.input_released_events = input_released_events ? 1 : 0;
    sp_stream *handle = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked;
    status = sp_stream_open(p.handle, &config, &handle);
    if (status != SP_OK)
        why = sp_pipeline_last_error(p.handle);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    auto *s = new (self) stream();
    s->owner = std::move(pipe);
    s->handle = handle;
}

using in_array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using out_array = nb::ndarray<nb::c_contig, nb::device::cpu>;

// Waits at most timeout_s for room (< 0: for ever; 0: not at all), as sp_stream_submit_wait.
void submit(stream &self, in_array in, size_t n_records, out_array out, uint64_t tag,
            double timeout_s)
{
    sp_stream *h = open_handle(self);
    sp_status status;
    std::string why;
    gil_released unlocked;
    status = sp_stream_submit_wait(h, in.data(), n_records, out.data(), tag, timeout_s);
    if (status != SP_OK)
        why = sp_stream_last_error(h);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
}

// The same with addresses, for a batch with a device end (the Python layer keeps the arrays
// alive); with a consumer stream (a cudaStream_t as an int, 0 for NULL) through
// sp_stream_submit_to, which waits for room as long as it takes (timeout_s is not used).
void submit_ptr(stream &self, uintptr_t in, size_t n_records, uintptr_t out, uint64_t tag,
                double timeout_s, std::optional<uintptr_t> consumer)
{
    sp_stream *h = open_handle(self);
    sp_status status;
    std::string why;
    gil_released unlocked;
    if (consumer)
        status = sp_stream_submit_to(h, (const void *)in, n_records, (void *)out, tag,
                                     (void *)*consumer);
    else
        status = sp_stream_submit_wait(h, (const void *)in, n_records, (void *)out, tag,
                                       timeout_s);
    if (status != SP_OK)
        why = sp_stream_last_error(h);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
}

// (kind, tag, status, records, first_record, cause, message): the event, and for a failed
// batch's DONE its own text (next() makes it the stream's last error).
std::tuple<int, uint64_t, int, size_t, size_t, uint64_t, std::string>
next_event(stream &self, double timeout_s)
{
    sp_stream *h = open_handle(self);
    sp_stream_event ev{};
    sp_status status;
    std::string why;
    gil_released unlocked;
    status = sp_stream_next(h, &ev, timeout_s);
    if (status != SP_OK || ev.status != SP_OK)
        why = sp_stream_last_error(h);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    return {(int)ev.kind, ev.tag, (int)ev.status, ev.records, ev.first_record, ev.cause, why};
}

// sp_stream_cancel (all: sp_stream_cancel_all): the status, not raised; its text is not read
// (a submit on another thread may be reading the stream's).
int cancel(stream &self, uint64_t tag, bool all)
{
    sp_stream *h = open_handle(self);
    sp_status status;
    gil_released unlocked;
    status = all ? sp_stream_cancel_all(h) : sp_stream_cancel(h, tag);
    unlocked.relock();
    return (int)status;
}

// (status, report, message): close's status is the first failure since the stream opened,
// which the Python layer has already handed to that batch's future, so it is returned, not
// raised. The pipeline is let go of afterwards.
std::tuple<int, nb::object, std::string> close(stream &self)
{
    sp_stream *h = open_handle(self);
    report rep;
    sp_status status;
    std::string why;
    gil_released unlocked; // drains: Python stages take the GIL meanwhile
    why = sp_stream_last_error(h);
    status = sp_stream_close(h, &rep.r);
    unlocked.relock();
    self.handle = nullptr;
    nb::object r = nb::cast(std::move(rep), nb::rv_policy::move);
    self.owner = nb::none();
    return {(int)status, r, status != SP_OK ? why : std::string()};
}

} // namespace

void bind_stream(nb::module_ &m)
{
    m.attr("EVENT_INPUT_RELEASED") = (int)SP_EVENT_INPUT_RELEASED;
    m.attr("EVENT_DONE") = (int)SP_EVENT_DONE;
    m.attr("EVENT_HANDED_OFF") = (int)SP_EVENT_HANDED_OFF;

    nb::class_<stream>(m, "Stream")
        .def("__init__", &make_stream, nb::arg("pipeline"), nb::arg("max_in_flight"),
             nb::arg("nonblocking"), nb::arg("input_released_events"))
        .def("submit", &submit, nb::arg("x").noconvert(), nb::arg("n_records"),
             nb::arg("out").noconvert(), nb::arg("tag"), nb::arg("timeout_s"))
        .def("submit_ptr", &submit_ptr, nb::arg("in_ptr"), nb::arg("n_records"),
             nb::arg("out_ptr"), nb::arg("tag"), nb::arg("timeout_s"),
             nb::arg("consumer").none())
        .def("cancel", &cancel, nb::arg("tag"), nb::arg("all"))
        .def("next", &next_event, nb::arg("timeout_s"))
        .def("close", &close)
        .def_prop_ro("closed", [](const stream &s) { return s.handle == nullptr; });
}

} // namespace sp_py
