// Pipelines: creation from the Python layer's stage descriptions, the calls into Python stages,
// runs (with the GIL released) from arrays or from a Python source into a Python sink,
// reports and the trace writers.
#include <cstdio>
#include <cstdint>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "binding.h"
#include "streampipe_io.h"
#include "streampipe_trace.h"

namespace sp_py {

nb::object host_view(void *ptr, const std::vector<size_t> &shape, nb::dlpack::dtype dtype,
                     bool read_only, nb::handle owner)
{
    constexpr auto view = nb::rv_policy::reference;
    if (read_only)
        return nb::cast(nb::ndarray<nb::numpy, nb::ro>(ptr, shape.size(), shape.data(), owner,
                                                        nullptr, dtype), view);
    return nb::cast(nb::ndarray<nb::numpy>(ptr, shape.size(), shape.data(), owner, nullptr,
                                           dtype), view);
}

// streampipe.stage wraps a device view with the chunk's stream and __cuda_array_interface__.
nb::object device_view(void *ptr, const std::vector<size_t> &shape, nb::dlpack::dtype dtype,
                       int device_id, nb::handle owner)
{
    return nb::cast(nb::ndarray<nb::array_api>(ptr, shape.size(), shape.data(), owner, nullptr,
                                                dtype, nb::device::cuda::value, device_id),
                    nb::rv_policy::reference);
}

namespace {

std::vector<size_t> chunk_shape(size_t records, const std::vector<size_t> &record_shape)
{
    std::vector<size_t> shape{records};
    shape.insert(shape.end(), record_shape.begin(), record_shape.end());
    return shape;
}

// The adapters catch what the user's function raises and return None when it did not, else
// (cause, message): the cause a number under which streampipe.stage keeps the exception, the
// message what the chunk's error says. The chunk fails with sp_chunk_fail_cause, so that the
// library, which decides which failure a run or batch keeps, hands back the kept one's cause
// (sp_pipeline_last_cause, the DONE event's cause). An exception that escapes the adapters
// anyway is a bug of the binding's own, reported as unraisable, never lost. At interpreter
// exit the function is not called (python_entry): the chunk fails, with no cause.
sp_status call_stage(nb::object (*call)(stage_slot *, const sp_chunk *), stage_slot *slot,
                     const sp_chunk *chunk)
{
    python_entry python;
    if (!python.entered())
        return sp_chunk_fail(chunk, SP_ERR_STAGE_FAILED, "not called: %s", exiting_message);
    try {
        nb::object result = call(slot, chunk);
        if (result.is_none())
            return SP_OK;
        if (!nb::isinstance<nb::tuple>(result))
            return sp_chunk_fail(chunk, SP_ERR_STAGE_FAILED, "the stage's function is gone");
        nb::tuple failed = nb::borrow<nb::tuple>(result);
        uint64_t cause = nb::cast<uint64_t>(failed[0]);
        std::string message = nb::cast<std::string>(failed[1]);
        return sp_chunk_fail_cause(chunk, SP_ERR_STAGE_FAILED, cause, "%s", message.c_str());
    } catch (nb::python_error &e) {
        e.discard_as_unraisable(slot->name.c_str());
    } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(nullptr);
    }
    return SP_ERR_STAGE_FAILED;
}

nb::object call_host(stage_slot *slot, const sp_chunk *c)
{
    if (!slot->host_fn.is_valid() || slot->host_fn.is_none())
        return nb::bool_(false);
    nb::object owner = nb::find(*slot->owner);
    nb::object in = host_view(const_cast<void *>(c->in), chunk_shape(c->records, slot->in_shape),
                              slot->in_dtype, true, owner);
    nb::object out = host_view(c->out, chunk_shape(c->records, slot->out_shape),
                               slot->out_dtype, false, owner);
    nb::object scratch = nb::none();
    if (slot->scratch_bytes)
        scratch = host_view(c->scratch, {slot->scratch_bytes}, nb::dtype<uint8_t>(), false, owner);
    return slot->host_fn(c->index, c->first_record, c->records, in, out, scratch);
}

nb::object call_cuda(stage_slot *slot, const sp_chunk *c)
{
    if (!slot->cuda_fn.is_valid() || slot->cuda_fn.is_none())
        return nb::bool_(false);
    nb::object owner = nb::find(*slot->owner);
    int device = slot->owner->device;
    nb::object in = device_view(const_cast<void *>(c->in), chunk_shape(c->records, slot->in_shape),
                                slot->in_dtype, device, owner);
    nb::object out = device_view(c->out, chunk_shape(c->records, slot->out_shape),
                                 slot->out_dtype, device, owner);
    nb::object scratch = nb::none();
    if (slot->scratch_bytes)
        scratch = device_view(c->scratch, {slot->scratch_bytes}, nb::dtype<uint8_t>(), device, owner);
    return slot->cuda_fn(c->index, c->first_record, c->records, in, out, (uintptr_t)c->in,
                         (uintptr_t)c->out, (uintptr_t)c->stream, scratch,
                         (uintptr_t)c->scratch);
}

sp_status host_trampoline(const sp_chunk *chunk, void *user)
{
    return call_stage(call_host, static_cast<stage_slot *>(user), chunk);
}

sp_status cuda_trampoline(const sp_chunk *chunk, void *user)
{
    return call_stage(call_cuda, static_cast<stage_slot *>(user), chunk);
}

nb::dlpack::dtype dtype_of(const nb::dict &d, const char *key)
{
    nb::tuple t = nb::cast<nb::tuple>(d[key]);
    return to_dtype(nb::cast<int>(t[0]), nb::cast<int>(t[1]));
}

// What a pipeline holds beside the C handle; gathered before the pipeline exists, so that a
// failed creation lets go of everything without a half-made object.
struct pipeline_parts {
    std::vector<std::shared_ptr<const void>> keep;
    std::vector<std::unique_ptr<stage_slot>> slots;
};

// The config's numbers as the Python layer checked them.
struct pipeline_options {
    size_t in_record_bytes, chunk_records;
    unsigned depth, staging_threads;
    int priority;
    size_t copy_piece_bytes;
    int graph;
    bool copy_by_kernel;
    int timeline;
    size_t max_pinned_bytes, max_device_bytes;
    bool keep_timeline;
};

sp_pipeline *create_pipeline(const context &ctx, const sp_pipeline_config &config);

// One stage from the dict streampipe.pipeline passes (keys as read here). `owner` is where the
// pipeline will be constructed.
sp_stage make_stage(pipeline *owner, pipeline_parts &parts, const nb::dict &d)
{
    unsigned streams = nb::cast<unsigned>(d["streams"]);
    nb::object builtin = d["builtin"];
    if (!builtin.is_none()) {
        const builtin_stage &b = nb::cast<const builtin_stage &>(builtin);
        parts.keep.push_back(b.keep);
        sp_stage stage = b.stage;
        stage.streams = streams;
        return stage;
    }
    auto slot = std::make_unique<stage_slot>();
    slot->owner = owner;
    slot->name = nb::cast<std::string>(d["name"]);
    slot->host_fn = d["host"];
    slot->cuda_fn = d["cuda"];
    slot->in_dtype = dtype_of(d, "in_dtype");
    slot->out_dtype = dtype_of(d, "out_dtype");
    slot->in_shape = nb::cast<std::vector<size_t>>(d["in_shape"]);
    slot->out_shape = nb::cast<std::vector<size_t>>(d["out_shape"]);
    slot->scratch_bytes = nb::cast<size_t>(d["scratch_bytes"]);
    sp_stage stage{};
    stage.name = slot->name.c_str(); // copied by sp_pipeline_create
    stage.out_record_bytes = nb::cast<size_t>(d["out_record_bytes"]);
    stage.host = slot->host_fn.is_none() ? nullptr : host_trampoline;
    stage.cuda = slot->cuda_fn.is_none() ? nullptr : cuda_trampoline;
    stage.user = slot.get();
    stage.streams = streams;
    stage.scratch_bytes = slot->scratch_bytes;
    parts.slots.push_back(std::move(slot));
    return stage;
}

// The config of a pipeline (or of every member of a group) from the stage dicts; `stages`
// and `parts` own what it points into.
sp_pipeline_config make_config(pipeline *self, const std::vector<nb::dict> &stage_dicts,
                               pipeline_parts &parts, std::vector<sp_stage> &stages,
                               const pipeline_options &o)
{
    for (const nb::dict &d : stage_dicts)
        stages.push_back(make_stage(self, parts, d));
    sp_pipeline_config config{};
    config.size = sizeof config; // the 0.8 layout: keep_timeline is read
    config.in_record_bytes = o.in_record_bytes;
    config.stages = stages.data();
    config.n_stages = stages.size();
    config.chunk_records = o.chunk_records;
    config.depth = o.depth;
    config.staging_threads = o.staging_threads;
    config.priority = o.priority;
    config.copy_piece_bytes = o.copy_piece_bytes;
    config.graph = (sp_graph_mode)o.graph;
    config.copy_by_kernel = o.copy_by_kernel ? 1 : 0;
    config.timeline = (sp_timeline_mode)o.timeline;
    config.max_pinned_bytes = o.max_pinned_bytes;
    config.max_device_bytes = o.max_device_bytes;
    config.keep_timeline = o.keep_timeline ? 1 : 0;
    return config;
}

// devices: empty for a plain pipeline on ctx; else a group over them (group.cpp).
void make_pipeline(pipeline *self, const context &ctx, const std::vector<nb::dict> &stage_dicts,
                   size_t in_record_bytes, size_t chunk_records, unsigned depth,
                   unsigned staging_threads, int priority, size_t copy_piece_bytes, int graph,
                   bool copy_by_kernel, int timeline, size_t max_pinned_bytes,
                   size_t max_device_bytes, bool keep_timeline,
                   const std::vector<int> &devices)
{
    pipeline_options o{in_record_bytes,  chunk_records,    depth,
                       staging_threads,  priority,         copy_piece_bytes,
                       graph,            copy_by_kernel,   timeline,
                       max_pinned_bytes, max_device_bytes, keep_timeline};
    pipeline_parts parts;
    std::vector<sp_stage> stages;
    sp_pipeline_config config = make_config(self, stage_dicts, parts, stages, o);
    sp_pipeline *handle = nullptr;
    sp_group *group = nullptr;
    if (devices.empty())
        handle = create_pipeline(ctx, config);
    else
        group = create_group(ctx, devices, config, &handle);
    auto *p = new (self) pipeline();
    p->ctx = ctx.handle;
    p->device = ctx.device;
    p->keep = std::move(parts.keep);
    p->slots = std::move(parts.slots);
    p->handle = handle;
    p->group = group;
}

sp_pipeline *create_pipeline(const context &ctx, const sp_pipeline_config &config)
{
    sp_pipeline *handle = nullptr;
    sp_status status;
    std::string why;
    gil_released unlocked; // allocates every device and pinned buffer
    status = sp_pipeline_create(ctx.handle->ctx, &config, &handle);
    if (status != SP_OK)
        why = sp_context_last_error(ctx.handle->ctx);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    return handle;
}

nb::dict report_dict(const report &self)
{
    static const char *const kinds[] = {"stage-in", "h2d", "compute", "d2h", "stage-out"};
    const sp_report &r = self.r;
    nb::list engines;
    for (size_t i = 0; i < r.n_engines && i < SP_MAX_ENGINES; i++) {
        const sp_engine_report &e = r.engines[i];
        nb::dict d;
        d["name"] = std::string(e.name);
        d["kind"] = (unsigned)e.kind < 5 ? kinds[e.kind] : "?";
        d["busy_s"] = e.busy_s;
        d["max_chunk_s"] = e.max_chunk_s;
        d["bytes"] = e.bytes;
        engines.append(d);
    }
    nb::dict d;
    d["records"] = r.records;
    d["chunks"] = r.chunks;
    d["chunk_records"] = r.chunk_records;
    d["depth"] = r.depth;
    d["staging_threads"] = r.staging_threads;
    d["staged_in"] = r.staged_in != 0;
    d["staged_out"] = r.staged_out != 0;
    d["makespan_s"] = r.makespan_s;
    d["engines"] = engines;
    d["bound_s"] = r.bound_s;
    d["efficiency"] = r.efficiency;
    d["serial_s"] = r.serial_s;
    d["model_s"] = r.model_s;
    d["hidden_transfer"] = r.hidden_transfer;
    d["h2d_gbps"] = r.h2d_gbps;
    d["d2h_gbps"] = r.d2h_gbps;
    d["bottleneck"] = std::string(r.bottleneck);
    d["notes"] = std::string(r.notes);
    d["graph"] = r.graph != 0;
    d["submit_s"] = r.submit_s;
    d["wait_s"] = r.wait_s;
    d["pinned_bytes"] = r.pinned_bytes;
    d["batches"] = r.batches;
    d["slot_records"] = r.slot_records;
    d["pcie_bytes"] = r.pcie_bytes;
    d["tune_changes"] = r.tune_changes;
    d["timed_chunks"] = r.timed_chunks;
    return d;
}

using in_array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using out_array = nb::ndarray<nb::c_contig, nb::device::cpu>;

nb::object run(pipeline &self, in_array in, size_t n_records, out_array out, bool want_report,
               bool serial)
{
    report rep;
    sp_status status;
    std::string why;
    gil_released unlocked; // taken again only to call a Python stage
    sp_report *r = want_report ? &rep.r : nullptr;
    if (self.group) // the Python layer refuses serial runs of a group
        status = sp_group_run(self.group, in.data(), n_records, out.data(), r);
    else if (serial)
        status = sp_pipeline_run_serial(self.handle, in.data(), n_records, out.data(), r);
    else
        status = sp_pipeline_run(self.handle, in.data(), n_records, out.data(), r);
    if (status != SP_OK)
        why = self.group ? sp_group_last_error(self.group) : sp_pipeline_last_error(self.handle);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    if (!want_report)
        return nb::none();
    return nb::cast(std::move(rep), nb::rv_policy::move);
}

// A source and a sink written in Python (sp_pipeline_run_io): adapters streampipe.pipeline
// makes, called with views of the slot's pinned staging memory, valid during the call only.
struct io_adapters {
    nb::handle owner; // the pipeline, whose staging the views are of
    nb::object read, write;
    nb::dlpack::dtype in_dtype{}, out_dtype{};
    std::vector<size_t> in_shape, out_shape;
};

// read(dst, first_record, max_records) -> records, or < 0 when the source raised.
sp_status io_read(void *dst, size_t first_record, size_t max_records, size_t *records, void *user)
{
    auto *io = static_cast<io_adapters *>(user);
    python_entry python;
    if (!python.entered())
        return SP_ERR_STAGE_FAILED; // interpreter exit
    try {
        nb::object view = host_view(dst, chunk_shape(max_records, io->in_shape), io->in_dtype,
                                    false, io->owner);
        long long got = nb::cast<long long>(io->read(view, first_record, max_records));
        if (got < 0)
            return SP_ERR_STAGE_FAILED;
        *records = (size_t)got;
        return SP_OK;
    } catch (nb::python_error &e) {
        e.discard_as_unraisable("streampipe source");
    } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(nullptr);
    }
    return SP_ERR_STAGE_FAILED;
}

// write(src, first_record) -> bool (False when the sink raised).
sp_status io_write(const void *src, size_t first_record, size_t records, void *user)
{
    auto *io = static_cast<io_adapters *>(user);
    python_entry python;
    if (!python.entered())
        return SP_ERR_STAGE_FAILED; // interpreter exit
    try {
        nb::object view = host_view(const_cast<void *>(src), chunk_shape(records, io->out_shape),
                                    io->out_dtype, true, io->owner);
        return nb::cast<bool>(io->write(view, first_record)) ? SP_OK : SP_ERR_STAGE_FAILED;
    } catch (nb::python_error &e) {
        e.discard_as_unraisable("streampipe sink");
    } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(nullptr);
    }
    return SP_ERR_STAGE_FAILED;
}

nb::object run_io(nb::pointer_and_handle<pipeline> self, nb::object read, nb::object write,
                  size_t n_records, bool positional, nb::tuple in_dtype,
                  const std::vector<size_t> &in_shape, nb::tuple out_dtype,
                  const std::vector<size_t> &out_shape, bool want_report)
{
    io_adapters adapters;
    adapters.owner = self.h;
    adapters.read = std::move(read);
    adapters.write = std::move(write);
    adapters.in_dtype = to_dtype(nb::cast<int>(in_dtype[0]), nb::cast<int>(in_dtype[1]));
    adapters.out_dtype = to_dtype(nb::cast<int>(out_dtype[0]), nb::cast<int>(out_dtype[1]));
    adapters.in_shape = in_shape;
    adapters.out_shape = out_shape;
    sp_io io{};
    io.read = io_read;
    io.read_user = &adapters;
    io.write = io_write;
    io.write_user = &adapters;
    io.n_records = n_records;
    io.positional = positional ? 1 : 0;
    report rep;
    sp_status status;
    std::string why;
    gil_released unlocked; // taken again only to call the source and the sink
    sp_report *r = want_report ? &rep.r : nullptr;
    sp_group *group = self.p->group;
    status = group ? sp_group_run_io(group, &io, r) : sp_pipeline_run_io(self.p->handle, &io, r);
    if (status != SP_OK)
        why = group ? sp_group_last_error(group) : sp_pipeline_last_error(self.p->handle);
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    if (!want_report)
        return nb::none();
    return nb::cast(std::move(rep), nb::rv_policy::move);
}

// The file I/O config of run_file and run_file_into (output nullptr: a source alone).
sp_file_io_config file_config(const std::string &input, const char *output,
                              size_t in_record_bytes, size_t out_record_bytes, int input_format,
                              int decompress, int output_format = 0)
{
    sp_file_io_config config{}; // SP_FILE_IO_CONFIG_INIT is C's
    config.size = sizeof config;
    config.input = input.c_str();
    config.output = output;
    config.in_record_bytes = in_record_bytes;
    config.out_record_bytes = out_record_bytes;
    config.input_format = input_format; // sp_input_format
    config.decompress = decompress;     // sp_decompress_where
    config.output_format = output_format; // sp_input_format's RAW, LZ4, ZSTD (0: RAW)
    return config;
}

// The run of an open file I/O's records (io: its sp_io, or a copy with an end changed), then
// its commit and close; GIL released by the caller. Fills why on failure with the run's text
// and the file I/O's.
sp_status run_open_files(pipeline &self, sp_file_io *files, const sp_io *io, sp_report *r,
                         std::string &why, sp_file_io_input *in_fig = nullptr,
                         sp_file_io_output *out_fig = nullptr)
{
    sp_status status = SP_OK;
    if (sp_file_io_records(files) > 0) {
        status = self.group ? sp_group_run_io(self.group, io, r)
                            : sp_pipeline_run_io(self.handle, io, r);
        if (status != SP_OK) {
            why = self.group ? sp_group_last_error(self.group)
                             : sp_pipeline_last_error(self.handle);
            if (sp_file_io_last_error(files)[0])
                why = why + ": " + sp_file_io_last_error(files);
        }
    } else if (r) {
        *r = sp_report{};
    }
    if (status == SP_OK)
        status = sp_file_io_commit(files);
    if (status != SP_OK && why.empty())
        why = sp_file_io_last_error(files);
    if (status == SP_OK && in_fig) // the figures outlive the commit, until the close
        sp_file_io_input_get(files, in_fig);
    if (status == SP_OK && out_fig)
        sp_file_io_output_get(files, out_fig);
    sp_file_io_close(files);
    return status;
}

// A compressed end's figures: (format, compressed bytes, uncompressed bytes), None for raw.
nb::object compression_figures(int format, uint64_t file_bytes, uint64_t stream_bytes)
{
    if (format == SP_INPUT_FORMAT_RAW || format == SP_INPUT_FORMAT_AUTO)
        return nb::none();
    return nb::make_tuple(format, file_bytes, stream_bytes);
}

// A compressed input's figures: compression_figures' three, then where its blocks were
// decompressed (sp_file_io_input's ring_chunks, staging_chunks, ring_blocks, ring_bytes_in,
// ring_bytes_out, ring_busy_s, note); None for raw.
nb::object input_figures(const sp_file_io_input &in)
{
    if (in.format == SP_INPUT_FORMAT_RAW || in.format == SP_INPUT_FORMAT_AUTO)
        return nb::none();
    return nb::make_tuple(in.format, in.file_bytes, in.stream_bytes, in.ring_chunks,
                          in.staging_chunks, in.ring_blocks, in.ring_bytes_in,
                          in.ring_bytes_out, in.ring_busy_s, std::string(in.note));
}

// A file of records through the pipeline into another (streampipe_io.h): opened, run with
// the GIL released, committed, closed. A failure raises its status with the file I/O's text
// (and the run's, for a run that failed). With a report: (records, report, the input's
// compression figures, the output's).
nb::object run_file(pipeline &self, const std::string &input, const std::string &output,
                    size_t in_record_bytes, size_t out_record_bytes, bool want_report,
                    int input_format, int decompress, int output_format)
{
    sp_file_io_config config = file_config(input, output.c_str(), in_record_bytes,
                                           out_record_bytes, input_format, decompress,
                                           output_format);
    sp_file_io_input in_fig{};
    sp_file_io_output out_fig{};
    report rep;
    sp_report *r = want_report ? &rep.r : nullptr;
    std::string why;
    sp_file_io *files = nullptr;
    gil_released unlocked;
    sp_status status = sp_file_io_open(&config, &files);
    size_t n = sp_file_io_records(files);
    if (status == SP_OK)
        status = run_open_files(self, files, sp_file_io_get(files), r, why, &in_fig, &out_fig);
    else {
        why = sp_file_io_last_error(files);
        sp_file_io_close(files);
    }
    unlocked.relock();
    if (status != SP_OK)
        raise_status(status, why);
    if (!want_report)
        return nb::int_(n);
    return nb::make_tuple(n, nb::cast(std::move(rep), nb::rv_policy::move),
                          input_figures(in_fig),
                          compression_figures(out_fig.format, out_fig.file_bytes,
                                              out_fig.stream_bytes));
}

// A file of records through the pipeline into memory (sp_io.out: a device buffer, or host
// memory): the file opened as a source alone, then make_out(records) -> the address of
// memory for that many output records (the Python layer makes or checks it and keeps it
// alive), then the run with the GIL released. Returns (the report, the input's figures as
// input_figures gives them), or None.
nb::object run_file_into(pipeline &self, const std::string &input, size_t in_record_bytes,
                         size_t out_record_bytes, bool want_report, int input_format,
                         int decompress, nb::callable make_out)
{
    sp_file_io_config config = file_config(input, nullptr, in_record_bytes, out_record_bytes,
                                           input_format, decompress);
    sp_file_io *files = nullptr;
    sp_status status;
    {
        gil_released unlocked;
        status = sp_file_io_open(&config, &files);
    }
    if (status != SP_OK) {
        std::string why = sp_file_io_last_error(files);
        sp_file_io_close(files);
        raise_status(status, why);
    }
    uintptr_t out = 0;
    try {
        out = nb::cast<uintptr_t>(make_out(sp_file_io_records(files)));
    } catch (...) {
        sp_file_io_close(files);
        throw;
    }
    report rep;
    sp_report *r = want_report ? &rep.r : nullptr;
    std::string why;
    sp_file_io_input in_fig{};
    {
        gil_released unlocked;
        sp_io io = *sp_file_io_get(files);
        io.out = (void *)out;
        status = run_open_files(self, files, &io, r, why, &in_fig);
    }
    if (status != SP_OK)
        raise_status(status, why);
    if (!want_report)
        return nb::none();
    return nb::make_tuple(nb::cast(std::move(rep), nb::rv_policy::move), input_figures(in_fig));
}

// Opens `path` for the writer and closes it; a failure to open or close is an OSError.
// A report's timeline written to `path` by `write` (sp_report_write_trace or _svg); the
// library's refusal (no timeline: keep_timeline) raised with its words.
template <typename Write> void write_file(const std::string &path, Write write)
{
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
        throw nb::python_error();
    }
    sp_status status = write(f);
    std::string why = status != SP_OK ? sp_report_last_error() : ""; // this thread's
    int closed = std::fclose(f);
    if (status != SP_OK)
        raise_status(status, why);
    if (closed != 0) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
        throw nb::python_error();
    }
}

// The cause (sp_chunk_fail_cause) of the failure the last failed run kept; for a group,
// that of the member whose failure failed the run. 0: none.
uint64_t last_cause(const pipeline &self)
{
    if (!self.group)
        return sp_pipeline_last_cause(self.handle);
    int k = sp_group_failed_device(self.group);
    sp_pipeline *member = k < 0 ? nullptr : sp_group_pipeline(self.group, (size_t)k);
    return member ? sp_pipeline_last_cause(member) : 0;
}

// The library's own checks of a batch's buffers (sp_pipeline_check_buffers): (status, why),
// touching nothing. The addresses are the arrays' as the Python layer will pass them.
std::tuple<int, std::string> check_buffers(const pipeline &self, uintptr_t in, size_t n_records,
                                           uintptr_t out)
{
    char why[256];
    sp_status status = sp_pipeline_check_buffers(self.handle, (const void *)in, n_records,
                                                 (const void *)out, why, sizeof why);
    return {(int)status, std::string(why)};
}

// The GC may see the Python stage functions a pipeline holds (they may refer to the pipeline).
int pipeline_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self))
        return 0;
    for (auto &slot : nb::inst_ptr<pipeline>(self)->slots) {
        Py_VISIT(slot->host_fn.ptr());
        Py_VISIT(slot->cuda_fn.ptr());
    }
    return 0;
}

int pipeline_clear(PyObject *self)
{
    if (!nb::inst_ready(self))
        return 0;
    for (auto &slot : nb::inst_ptr<pipeline>(self)->slots) {
        slot->host_fn = nb::none();
        slot->cuda_fn = nb::none();
    }
    return 0;
}

PyType_Slot pipeline_slots[] = {{Py_tp_traverse, (void *)pipeline_traverse},
                                {Py_tp_clear, (void *)pipeline_clear},
                                {0, nullptr}};

// The library's changes of chunk size and depth, oldest first (sp_pipeline_tune_changes).
nb::list tune_changes(const pipeline &p)
{
    sp_tune_change kept[SP_TUNE_CHANGES_KEPT];
    size_t n = 0;
    sp_status status = sp_pipeline_tune_changes(p.handle, kept, SP_TUNE_CHANGES_KEPT, &n, nullptr);
    if (status != SP_OK)
        raise_status(status, "sp_pipeline_tune_changes");
    nb::list out;
    for (size_t k = 0; k < n; k++) {
        nb::dict d;
        d["at_s"] = kept[k].at_s;
        d["from_chunk"] = kept[k].from_chunk;
        d["to_chunk"] = kept[k].to_chunk;
        d["from_depth"] = kept[k].from_depth;
        d["to_depth"] = kept[k].to_depth;
        d["reason"] = std::string(kept[k].reason);
        out.append(d);
    }
    return out;
}

} // namespace

void bind_pipeline(nb::module_ &m)
{
    nb::class_<report>(m, "Report")
        .def("to_dict", &report_dict)
        .def_prop_ro("has_timeline", [](const report &self) { return self.r.timeline != nullptr; })
        .def("write_trace", [](const report &self, const std::string &path) {
            write_file(path, [&](FILE *f) { return sp_report_write_trace(&self.r, f); });
        })
        .def("write_svg", [](const report &self, const std::string &path) {
            write_file(path, [&](FILE *f) { return sp_report_write_svg(&self.r, f); });
        });

    nb::class_<pipeline>(m, "Pipeline", nb::type_slots(pipeline_slots))
        .def("__init__", &make_pipeline, nb::arg("ctx"), nb::arg("stages"),
             nb::arg("in_record_bytes"), nb::arg("chunk_records"), nb::arg("depth"),
             nb::arg("staging_threads"), nb::arg("priority"), nb::arg("copy_piece_bytes"),
             nb::arg("graph"), nb::arg("copy_by_kernel"), nb::arg("timeline"),
             nb::arg("max_pinned_bytes"), nb::arg("max_device_bytes"), nb::arg("keep_timeline"),
             nb::arg("devices"))
        .def("group_members", &group_members)
        .def("run", &run, nb::arg("x").noconvert(), nb::arg("n_records"),
             nb::arg("out").noconvert(), nb::arg("report"), nb::arg("serial"))
        .def("run_io", &run_io, nb::arg("read"), nb::arg("write"), nb::arg("n_records"),
             nb::arg("positional"), nb::arg("in_dtype"), nb::arg("in_shape"),
             nb::arg("out_dtype"), nb::arg("out_shape"), nb::arg("report"))
        .def("run_file", &run_file, nb::arg("input"), nb::arg("output"),
             nb::arg("in_record_bytes"), nb::arg("out_record_bytes"), nb::arg("report"),
             nb::arg("input_format"), nb::arg("decompress"), nb::arg("output_format"))
        .def("run_file_into", &run_file_into, nb::arg("input"), nb::arg("in_record_bytes"),
             nb::arg("out_record_bytes"), nb::arg("report"), nb::arg("input_format"),
             nb::arg("decompress"), nb::arg("make_out"))
        .def_prop_ro("out_record_bytes",
                     [](const pipeline &p) { return sp_pipeline_out_record_bytes(p.handle); })
        .def_prop_ro("depth", [](const pipeline &p) { return sp_pipeline_depth(p.handle); })
        .def("tune_changes", &tune_changes)
        .def("chunk_records", [](const pipeline &p, size_t n) {
            return sp_pipeline_chunk_records(p.handle, n);
        })
        .def("last_error", [](const pipeline &p) {
            return std::string(sp_pipeline_last_error(p.handle));
        })
        .def_prop_ro("last_cause", &last_cause)
        .def("check_buffers", &check_buffers, nb::arg("in_ptr"), nb::arg("n_records"),
             nb::arg("out_ptr"))
        .def_prop_ro("last_submit_s", [](const pipeline &p) {
            return sp_pipeline_last_submit_s(p.handle);
        })
        .def_prop_ro("last_wait_s", [](const pipeline &p) {
            return sp_pipeline_last_wait_s(p.handle);
        })
        .def_prop_ro("last_makespan_s", [](const pipeline &p) {
            return sp_pipeline_last_makespan_s(p.handle);
        });
}

} // namespace sp_py
