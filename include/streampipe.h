/*
 * streampipe: stream large host data through GPU work with copy/compute overlap.
 *
 * Data is cut into chunks of whole records. Each chunk goes host -> device copy -> compute
 * stages -> device -> host copy, and different chunks are in different stages at once, each
 * engine on its own queue (a CUDA stream on the CUDA backend, a worker thread on the HOST
 * backend). K slots of buffers are reused round-robin; events make every reuse safe.
 *
 * Conventions
 * - Every call that can fail returns sp_status: SP_OK (0) or a negative error.
 * - The library never exits, aborts or prints.
 * - Errors: one channel per handle, as SQLite's sqlite3_errmsg. Each handle keeps the text of
 *   its last failure: sp_context_last_error, sp_pipeline_last_error, sp_stream_last_error,
 *   sp_group_last_error, sp_mlp_last_error, sp_mlp_stages_last_error. A call that makes a
 *   handle (sp_context_create, sp_context_create_fault, sp_group_create, sp_mlp_load_file,
 *   sp_mlp_stages_create, ...) yields the handle even when it fails, so that its last error
 *   can say why; destroy it as usual. Only when there was no memory for the handle itself is
 *   *out NULL (the call then returns SP_ERR_OUT_OF_MEMORY). A stage says why it failed with
 *   sp_chunk_fail, which becomes its run's error. The calls on a report alone (sp_report_*,
 *   no handle) keep theirs per thread: sp_report_last_error.
 * - Destroy/free functions accept NULL.
 * - No CUDA types appear here; on CUDA, sp_chunk.stream is a cudaStream_t.
 *
 * Structs that grow (so that a program built against one minor version runs against the
 * next). Three kinds, each marked where it is declared:
 * - "sized": structs the caller fills and passes in (sp_pipeline_config, sp_stream_config,
 *   sp_io, sp_fault_config, sp_probe_config) begin with `size_t size`, the
 *   sizeof of the struct the caller was compiled with. New fields are only ever appended,
 *   and the library reads only the bytes the caller's size covers: fields beyond it take
 *   their defaults (0). size 0 stands for the 0.5 layout, the first with a size field, fixed
 *   for good: so zero-initialised structs ({0}, memset, designated initialisers without
 *   .size) written against 0.5 mean the same to every later version. To use a field added
 *   after 0.5, set size: `= SP_PIPELINE_CONFIG_INIT` (a designated initialiser, for C) or
 *   `.size = sizeof(sp_pipeline_config)`; a field set beyond the size given is not seen. A
 *   struct larger than the library knows (a newer header) is accepted when the bytes it does
 *   not know are zero, refused with SP_ERR_UNSUPPORTED otherwise.
 * - "room to grow": structs whose size stays fixed and which end in reserved words that
 *   later fields take. The library fills sp_report, sp_engine_report and sp_probe_result,
 *   zeroing those words, so callers need not initialise anything. The caller fills
 *   sp_stage, whose array stride must not change (a size field could not say it for
 *   stages left at 0): its reserved words must be zero, as any initialiser leaves them; a
 *   stage with one set is refused with SP_ERR_UNSUPPORTED.
 * - "fixed": small structs that will not change (sp_stream_event, sp_sinmix_params,
 *   sp_group_device_stats, sp_fault_stats, sp_mlp_layer, sp_probe_chunk_rate,
 *   sp_probe_thread_rate); something new would come in a new struct or function.
 *   sp_chunk is made by the library and only ever grows at its end: read it through the
 *   pointer a stage gets, never copy it into a struct of your own.
 * Before 1.0 the soname still changes with every minor version (streampipe_version.h); what
 * these rules give is that a minor version that only appends fields and functions keeps the
 * ABI (tools/abi_check.sh shows it), so the soname may then stay.
 */
#ifndef STREAMPIPE_H
#define STREAMPIPE_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_export.h"  /* SP_API */
#include "streampipe_version.h" /* SP_VERSION_MAJOR, _MINOR, _PATCH */

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library that is linked (may differ from the header's). */
SP_API const char *sp_version(void);

typedef enum sp_status {
    SP_OK = 0,
    SP_ERR_INVALID_ARGUMENT = -1,
    SP_ERR_OUT_OF_MEMORY = -2,        /* host memory, pinned memory included */
    SP_ERR_OUT_OF_DEVICE_MEMORY = -3,
    SP_ERR_UNSUPPORTED = -4,          /* backend absent, or a stage lacks its function */
    SP_ERR_STAGE_FAILED = -5,         /* a user stage returned an error */
    SP_ERR_BACKEND = -6,              /* a backend call failed; the context stays usable */
    SP_ERR_DEVICE_LOST = -7,          /* the device context is corrupt; every call fails now */
    SP_ERR_CANCELLED = -8,            /* work skipped because an earlier operation failed */
    SP_ERR_WOULD_BLOCK = -9,          /* a non-blocking stream holds max_in_flight batches */
    SP_ERR_TIMEOUT = -10              /* sp_stream_next found no event in time */
} sp_status;

/* "SP_ERR_INVALID_ARGUMENT"; "SP_UNKNOWN_STATUS" for values outside the table. */
SP_API const char *sp_status_name(sp_status status);
/* "invalid argument"; "unknown status" for values outside the table. */
SP_API const char *sp_status_message(sp_status status);

typedef enum sp_backend_kind {
    SP_BACKEND_AUTO = 0, /* CUDA when built and a GPU is present, else HOST */
    SP_BACKEND_HOST = 1, /* CPU: a worker thread per queue, memcpy for copies */
    SP_BACKEND_CUDA = 2
} sp_backend_kind;

/* "auto", "host", "cuda". */
SP_API const char *sp_backend_name(sp_backend_kind kind);

typedef struct sp_context sp_context;
typedef struct sp_pipeline sp_pipeline;
/* 0.8: a run's timeline, copied into its report (sp_report.timeline); opaque. */
typedef struct sp_report_timeline sp_report_timeline;

/* Opens a backend on `device` (ignored by HOST). Asking for CUDA where it is not built or no
 * GPU is present gives SP_ERR_UNSUPPORTED. Whether or not it succeeds, *out is a handle to
 * destroy with sp_context_destroy (NULL only for SP_ERR_OUT_OF_MEMORY, no memory for the
 * handle, or out NULL: SP_ERR_INVALID_ARGUMENT). A context that failed to open says why in
 * sp_context_last_error, reports SP_BACKEND_AUTO as its backend, and every call that needs
 * its backend returns the status the open failed with. */
SP_API sp_status sp_context_create(sp_backend_kind kind, int device, sp_context **out);
/* Gives up the caller's handle: pass ctx to no call after this one. The context itself
 * lives on until its last pipeline is destroyed too, so a context and its pipelines may be
 * destroyed in any order, from any thread, and the pipelines left can still be run.
 * Whichever destroy comes last closes the backend (what that means for host memory of the
 * context: sp_host_alloc). */
SP_API void sp_context_destroy(sp_context *ctx);
/* HOST or CUDA: what AUTO resolved to. */
SP_API sp_backend_kind sp_context_backend(const sp_context *ctx);
/* What the last failed call on this context did wrong, opening it included; "" when
 * nothing has failed. The text stays valid until the next call on the context. With several
 * threads on one context, read sp_pipeline_last_error instead: a failure on another thread
 * may rewrite this text. NULL (no handle: sp_context_create ran out of memory) gives a text
 * that says so. */
SP_API const char *sp_context_last_error(const sp_context *ctx);

/* ---- host memory the copy engines can read directly ------------------------------------- */

/* Pinned (page-locked) host memory owned by the context: cudaHostAlloc on CUDA, ordinary
 * memory marked "pinned" on HOST (so the pinned path is tested there too). Free it with
 * sp_host_free before sp_context_destroy (the handle is gone after that). Memory not freed
 * by then, and registrations not undone, stay valid while pipelines of the context remain,
 * so that their runs may still use them, and go with the context when the last of those is
 * destroyed (HOST frees what is left then): do not touch them after that. */
SP_API sp_status sp_host_alloc(sp_context *ctx, size_t bytes, void **out);
SP_API void sp_host_free(sp_context *ctx, void *ptr);
/* Pins memory the user already owns. Memory that is already registered or pinned is accepted
 * and left as it is (sp_host_unregister of it is then a no-op). */
SP_API sp_status sp_host_register(sp_context *ctx, void *ptr, size_t bytes);
SP_API sp_status sp_host_unregister(sp_context *ctx, void *ptr);

/* ---- device memory: data that starts or ends on the GPU ---------------------------------- */

/* Device memory of the context's device (cudaMalloc on CUDA; on HOST, host memory the
 * backend keeps as device memory, so that device-resident ends run in every test). A run's
 * or a stream batch's `in` and `out` may be device memory: memory from sp_device_alloc or,
 * on CUDA, any pointer the driver reports as device or managed memory of the pipeline's
 * device (PyTorch's caching allocator, CuPy, cudaMalloc). A device input skips its host to
 * device copy (a device to device copy puts it into the ring's slot); a device output skips
 * its device to host copy; nothing of either end goes through pinned staging, and the
 * report's pcie_bytes counts only what did cross. Memory of another device, or a range that
 * is partly device memory, is refused with SP_ERR_INVALID_ARGUMENT and the reason. Graph mode
 * does not replay runs with a device end (the report's notes say so). Lifetime as
 * sp_host_alloc's; SP_ERR_UNSUPPORTED from a backend without device copies. */
SP_API sp_status sp_device_alloc(sp_context *ctx, size_t bytes, void **out);
SP_API void sp_device_free(sp_context *ctx, void *ptr);
/* Copies `bytes` from src to dst, in any direction between host and device memory of this
 * context, and returns once they are there: for tests and small programs (it makes a queue
 * for each call). Overlapping ranges are refused. */
SP_API sp_status sp_memcpy(sp_context *ctx, void *dst, const void *src, size_t bytes);

/* ---- stages ------------------------------------------------------------------------------ */

/* What a stage sees for one chunk (made by the library; it grows only at its end). `in` holds records * (input record size) bytes and `out`
 * has room for records * out_record_bytes; both are device memory on CUDA and host memory on
 * HOST. `stream` is the cudaStream_t to enqueue on (NULL on HOST). */
typedef struct sp_chunk {
    size_t index;        /* chunk number within the run, from 0 */
    size_t first_record; /* index of the chunk's first record within the run */
    size_t records;      /* records in this chunk; the last chunk may be short */
    const void *in;
    void *out;
    void *stream;
    void *scratch;       /* the stage's scratch_bytes of device memory (host memory on HOST),
                            private to this chunk while the stage runs; NULL when 0 */
} sp_chunk;

/* CUDA: enqueue asynchronous work on chunk->stream and return; never synchronize, never use
 * the legacy default stream. Runs on the thread that called sp_pipeline_run.
 * HOST: compute synchronously; runs on the stage's worker thread.
 * Return SP_OK, or an error to fail the run with SP_ERR_STAGE_FAILED. */
typedef sp_status (*sp_stage_fn)(const sp_chunk *chunk, void *user);

/* For a stage function: fails its chunk with a message, printf-style. The run's error
 * (sp_pipeline_last_error, sp_stream_last_error, sp_group_last_error) then reads
 * "stage 'NAME' chunk N: MESSAGE (stage s of M, records a..b; it returned STATUS)". Returns
 * `status` (SP_ERR_STAGE_FAILED for SP_OK), so a stage ends with
 *     return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "%zu records, want even", n);
 * The run fails with SP_ERR_STAGE_FAILED as for any failing stage. Call it from the stage
 * function itself, on the thread that runs it, with the chunk it was given; anywhere else it
 * only returns the status (the message has no run to go to). */
SP_API sp_status sp_chunk_fail(const sp_chunk *chunk, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The same with a cause: a number of the caller's (non-zero) that names what went wrong, such
 * as a binding's handle for the exception its stage raised. The library keeps the cause of
 * the failure it keeps (the earliest failed chunk's: the one the error text describes) and
 * hands it back: sp_pipeline_last_cause after a failed run, sp_stream_event.cause in a failed
 * batch's DONE. Causes of failures it does not keep are simply dropped: a cause must not own
 * anything only the library could free. */
SP_API sp_status sp_chunk_fail_cause(const sp_chunk *chunk, sp_status status, uint64_t cause,
                                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* For CUDA stages: the library's reading of a cudaError_t (passed as an int, so that this
 * header needs no CUDA types): SP_OK for cudaSuccess; SP_ERR_DEVICE_LOST for the errors that
 * leave the CUDA context unusable (illegal address and kin); SP_ERR_OUT_OF_DEVICE_MEMORY for
 * cudaErrorMemoryAllocation; SP_ERR_UNSUPPORTED for no device, an old driver or an
 * unsupported call; SP_ERR_BACKEND otherwise. Errors that do not corrupt the context are
 * consumed (as cudaGetLastError does), so that a later check does not see them again. In a
 * build without CUDA every nonzero value gives SP_ERR_UNSUPPORTED. */
SP_API sp_status sp_cuda_error_status(int cuda_error);

/* Room to grow (see the top of this file): its size is fixed, so that arrays of stages keep
 * their stride; later fields take the reserved words, which must be zero (as any initialiser
 * leaves them). */
typedef struct sp_stage {
    const char *name;         /* shown in errors and reports; copied at pipeline creation */
    size_t out_record_bytes;  /* bytes each output record of this stage takes, > 0 */
    sp_stage_fn cuda;         /* may be NULL if the pipeline never runs on CUDA */
    sp_stage_fn host;         /* may be NULL if the pipeline never runs on HOST */
    void *user;               /* passed to cuda/host unchanged */
    unsigned streams;         /* queues the chunks of this stage take turns on (chunk i on
                                 queue i mod streams), so that kernels too small to fill the GPU
                                 run side by side; dependencies stay exact. 0 or 1: one queue;
                                 at most SP_MAX_STAGE_STREAMS. With more than one, and in
                                 graph mode whatever this says, the stage's function runs for
                                 several chunks at once (HOST: on several workers; CUDA: their
                                 device work overlaps), so it must keep no per-chunk state in
                                 `user` */
    size_t scratch_bytes;     /* a workspace per chunk in flight (cuBLASLt, cuDNN): this many
                                 bytes per slot of the ring, allocated once at pipeline
                                 creation and handed to the stage as chunk->scratch. Two chunks
                                 in flight never share a slot, so the workspace stays private
                                 with several streams and in graph mode (a replay uses the
                                 scratch of the slot it was captured for: the same slot) */
    uint64_t reserved[4];     /* zero; fields of later versions take these */
} sp_stage;

#define SP_MAX_STAGE_STREAMS 8

#define SP_MAX_STAGES 16
#define SP_MAX_DEPTH 64
/* Every slot buffer (device, pinned staging, scratch) starts on a multiple of this many
 * bytes: a slot of a chunk's bytes takes them rounded up to it. */
#define SP_SLOT_ALIGN 256

/* Graph mode: instead of enqueueing a chunk's copies and stages one call at a time (10 to 17
 * backend calls per chunk: bench/PERF.md has what they cost the host), capture a group of up to 16 consecutive chunks (in
 * consecutive slots; the group is the largest power of two that divides the depth and leaves
 * two groups) once as a CUDA graph and replay it with one launch, pointing its copies at each
 * chunk's memory. Within the graph each chunk's stages are a chain of their own, so the
 * group's chunks run side by side. When the group's chunks lie back to back on the device
 * as in host memory (each chunk fills its slot: the run's chunks are the pipeline's chunk
 * size, in and out a multiple of 256 bytes), the group is copied in and out with one copy
 * each way; otherwise each chunk has its own. The capture calls each stage's function once
 * per slot, and the replays repeat that device work for every later chunk of the slot: so a
 * stage may depend on chunk->in, ->out, ->records and ->stream, but not on ->index or
 * ->first_record (its kernels would see the captured chunk's values). Each new graph is checked once against its
 * stages run directly, on chunks other than the captured ones; a capture that fails, a graph
 * CUDA cannot update, or a check that differs makes the pipeline fall back to stream mode for
 * good, and the report's notes say why. Full chunks short of a group and a short last chunk
 * run in stream mode. A stage's `streams` are not used in graph mode: chunks run side by side
 * within a graph and across groups, so every stage's work runs for several chunks at once, as
 * with streams > 1 (it must keep no per-chunk state in `user`: a shared scratch buffer would
 * be raced on, and the one-time check cannot be relied on to see it). On HOST, a stage
 * failing in a replay is reported with the chunk the graph was captured with. */
typedef enum sp_graph_mode {
    SP_GRAPH_OFF = 0,  /* stream mode: every operation enqueued (the default) */
    SP_GRAPH_ON = 1,   /* graphs whenever a run has a group of full chunks */
    SP_GRAPH_AUTO = 2  /* graphs when chunks are small enough (at most 2 MiB in and out
                          together) for the per-operation cost to matter */
} sp_graph_mode;

/* How a run made with a report times its operations (sp_pipeline_config.timeline): the
 * report's per-engine figures (busy time, bound, hidden transfer) and the trace exports come
 * from this timeline. Asked for here, never by the environment. */
#define SP_TIMELINE_SAMPLE_WINDOW 5  /* chunks per middle window, and the first's least (it is
                                        depth + 2 when more: the ring's ramp); each window
                                        twice a stage's streams when more */
#define SP_TIMELINE_SAMPLE_TAIL 3    /* chunks in the last window (the drain) */
#define SP_TIMELINE_SAMPLE_STRIDE 64 /* chunks from one middle window to the next */

typedef enum sp_timeline_mode {
    SP_TIMELINE_SAMPLED = 0, /* 0.7, the default: timing events only in a few windows of
                               consecutive chunks (the first, depth + 2 long; one every
                               SP_TIMELINE_SAMPLE_STRIDE chunks, SP_TIMELINE_SAMPLE_WINDOW
                               long; the last, SP_TIMELINE_SAMPLE_TAIL long; a run of at most
                               four windows is timed whole). The figures are extrapolated to the run
                               (busy times by records, hidden transfer measured where the
                               windows show every compute operation) and the report says how
                               many chunks were timed (timed_chunks, notes). Cheap enough for
                               every run (bench/PERF.md); the trace exports show only the
                               timed chunks' GPU operations: ask for EVENTS for a full one */
    SP_TIMELINE_CUPTI = 1,  /* the backend's activity records (CUDA with libcupti): nothing is
                               enqueued to time the operations; where the backend has none,
                               events, and the report's notes say why */
    SP_TIMELINE_OFF = 2,    /* none: a report keeps the counts, the makespan and what the
                               library chose, without per-engine figures */
    SP_TIMELINE_EVENTS = 3  /* the full per-operation timeline: timing events for every
                               operation of every chunk (0 meant this before 0.7's sampling):
                               about +2 to +5% of the makespan at 8 MiB chunks (bench/PERF.md) */
} sp_timeline_mode;

/* Sized (see the top of this file): SP_PIPELINE_CONFIG_INIT, or size 0 for the 0.5 layout. */
typedef struct sp_pipeline_config {
    size_t size;              /* sizeof(sp_pipeline_config) as built; 0: the 0.5 layout */
    size_t in_record_bytes;   /* > 0 */
    const sp_stage *stages;   /* n_stages entries, copied at creation */
    size_t n_stages;          /* 0..SP_MAX_STAGES; 0 copies to the device and back */
    size_t chunk_records;     /* records per chunk; 0 = choose (8 MiB of the wider of the
                                 records in and out, at most 128 MiB of the widest record
                                 between stages; fewer for short runs so that there are
                                 enough chunks to overlap; for a compressed input that
                                 run_io decompresses in the ring, 4096 of its blocks or the
                                 whole input, the slots made anew for it: streampipe_io.h),
                                 and, under a budget (max_pinned_bytes, max_device_bytes),
                                 re-choose while a run goes (sp_pipeline_run, run_io, a
                                 stream's batches; not a run timed for a report nor one
                                 replayed as graphs): chunks then differ in size within
                                 a run, never above the size chosen at create, each change
                                 in sp_pipeline_tune_changes; a stage must take each chunk's
                                 own first_record and records */
    unsigned depth;           /* K, slots in the buffer ring (1..SP_MAX_DEPTH); 0 = choose:
                                 stages + 4, at most 8; in graph mode with chunks of at most
                                 2 MiB in + out, 16 to 64: enough for four groups of 2 MiB
                                 (64 for chunks of 128 KiB in + out) */
    unsigned staging_threads; /* host threads copying pageable data; 0 = choose from the CPU */
    int priority;             /* stream priority: 0 = default, negative = higher (CUDA) */
    size_t copy_piece_bytes;  /* enqueue each chunk's copies in pieces of at most this many
                                 bytes, so that copies of another (higher-priority) pipeline
                                 wait behind one piece rather than a whole chunk; 0 = whole.
                                 Each piece costs an enqueue (bench/PERF.md has the figure):
                                 keep pieces at a MiB or more */
    sp_graph_mode graph;      /* see sp_graph_mode; HOST replays recorded operations */
    int copy_by_kernel;       /* 1: this pipeline's host<->device copies are done by a kernel
                                 on its own streams reading and writing pinned host memory
                                 over PCIe, not by the copy engines, so they never wait behind
                                 another pipeline's copies (the engines serve one busy queue
                                 until it is empty; bench/PERF.md). For small latency-critical
                                 requests beside bulk transfers: it takes SM time and is slower
                                 than the engines for large copies. Pageable user memory still
                                 goes through the pinned staging buffers. HOST: no difference.
                                 sp_pipeline_run only (the serial baseline keeps the engines);
                                 graph mode is not used for a run whose kernel copies would
                                 read or write the user's memory (a graph cannot be pointed at
                                 each chunk's memory then), and the report's notes say so */
    sp_timeline_mode timeline; /* 0.7: see sp_timeline_mode */
    size_t max_pinned_bytes;  /* 0.7: a budget of pinned host memory (the staging buffers of
                                 every slot), never exceeded; 0: no budget. A chunk_records
                                 or depth left at 0 is cut to fit it (depth first, then the
                                 chunk); a budget that cannot hold even one record at depth
                                 1, or the user's own chunk_records and depth, fails the
                                 create with SP_ERR_INVALID_ARGUMENT saying so */
    size_t max_device_bytes;  /* 0.7: the same for device memory (slot buffers and stage
                                 scratch; HOST: the host memory standing for it). Both hold
                                 the buffers of a compressed input decompressed in the ring
                                 too (streampipe_io.h, decompress), its scratch included */
    double flight_recorder_s;  /* 0.7: > 0 keeps the last this many seconds of the timeline
                                  (whatever the mode times: sampled windows by default) of
                                  runs made with a report, in a ring of bounded memory,
                                  for sp_pipeline_dump_recent; 0: none kept */
    int keep_timeline;         /* 0.8: 1: a run made with a report whose timeline is complete
                                  (it succeeded, had records and was timed: the timeline
                                  mode is not SP_TIMELINE_OFF, no graph replays) hands the
                                  report a copy of that timeline (sp_report.timeline) for
                                  sp_report_write_trace, sp_report_write_svg and
                                  sp_report_sampled_figures, which outlives the pipeline;
                                  the report then owns memory (a span per engine per chunk):
                                  sp_report_release frees it. 0 (the default): none kept */
} sp_pipeline_config;

#define SP_PIPELINE_CONFIG_INIT {.size = sizeof(sp_pipeline_config)}

/* Threads: different pipelines of one context may run on different threads at once; one
 * pipeline runs on one thread at a time (its slots, staging threads and report are its own).
 * A sp_pipeline_run or sp_pipeline_run_serial of a pipeline while another call runs it (on
 * another thread, or from one of its own stages) fails at once with SP_ERR_INVALID_ARGUMENT
 * and touches nothing: not the pipeline, its error text (the call under way owns it) nor the
 * buffers; sp_context_last_error says why. A sp_pipeline_destroy meanwhile does nothing and
 * says so there too: destroy it once the run has returned.
 *
 * Allocates every buffer the pipeline needs (device buffers for each stage boundary, pinned
 * staging) once; runs reuse them. The config and stages are copied. */
SP_API sp_status sp_pipeline_create(sp_context *ctx, const sp_pipeline_config *config,
                                    sp_pipeline **out);
/* Frees the pipeline and gives back its hold on the context (the last one closes a context
 * whose handle is gone: sp_context_destroy); refused while the pipeline runs (above). */
SP_API void sp_pipeline_destroy(sp_pipeline *pipeline);
/* What the last failed call on this pipeline did wrong; "" when nothing has failed. Not for
 * reading while another thread may fail on the pipeline: a stream's engine thread writes it
 * when a batch fails, so while a stream is open read sp_stream_last_error, which the stream's
 * own calls write. A refused call (the pipeline busy) leaves it alone and writes the
 * context's text. */
SP_API const char *sp_pipeline_last_error(const sp_pipeline *pipeline);
/* The cause given with sp_chunk_fail_cause for the failure of the last run that failed (0:
 * none given, or no run failed), until the next run or stream starts. */
SP_API uint64_t sp_pipeline_last_cause(const sp_pipeline *pipeline);
/* The checks sp_pipeline_run and sp_stream_submit make of in, out and their sizes, alone:
 * SP_OK, or the status they would fail with and why (in why, why_size bytes; "" when OK),
 * with nothing touched and no error text written: for a binding that wants the library's
 * own words before it queues anything. */
SP_API sp_status sp_pipeline_check_buffers(const sp_pipeline *pipeline, const void *in,
                                           size_t n_records, const void *out, char *why,
                                           size_t why_size);
/* Bytes of output per record: the last stage's out_record_bytes, or in_record_bytes. */
SP_API size_t sp_pipeline_out_record_bytes(const sp_pipeline *pipeline);
/* Records per chunk a run of n_records would use (a chosen chunk shrinks for short runs). */
SP_API size_t sp_pipeline_chunk_records(const sp_pipeline *pipeline, size_t n_records);
/* Slots in the ring (the config's depth, or the one chosen). */
SP_API unsigned sp_pipeline_depth(const sp_pipeline *pipeline);
/* Host seconds the last run spent submitting work (sp_report.submit_s), also when it was run
 * without a report; 0 before the first run. */
SP_API double sp_pipeline_last_submit_s(const sp_pipeline *pipeline);
/* Of that, the time the host waited for slots to come free (sp_report.wait_s). */
SP_API double sp_pipeline_last_wait_s(const sp_pipeline *pipeline);
/* Host seconds from the last run's first enqueue until every queue had drained: the same
 * clock readings as sp_report.makespan_s, taken the same way whether or not a report was
 * asked for, so the figure excludes what a run with a report does after the drain (reading
 * its timing events, computing the figures). Set by sp_pipeline_run (stream or graph mode)
 * and sp_pipeline_run_serial, also when the run failed once started (then up to its drain).
 * These three getters read 0 before the first run and after a run that did not start: no
 * records, bad arguments, a lost context, no memory for the timeline. */
SP_API double sp_pipeline_last_makespan_s(const sp_pipeline *pipeline);

/* ---- the report of one run ---------------------------------------------------------------- */

/* An engine is one queue of the pipeline: stage-in (host copies into pinned staging), h2d,
 * each compute stage, d2h, stage-out. */
#define SP_MAX_ENGINES (SP_MAX_STAGES + 4)

typedef enum sp_engine_kind {
    SP_ENGINE_STAGE_IN = 0,
    SP_ENGINE_H2D,
    SP_ENGINE_COMPUTE,
    SP_ENGINE_D2H,
    SP_ENGINE_STAGE_OUT
} sp_engine_kind;

/* Room to grow (see the top of this file). */
typedef struct sp_engine_report {
    char name[32];        /* "stage-in", "h2d", the stage's name, "d2h", "stage-out" */
    sp_engine_kind kind;
    double busy_s;        /* time this engine worked: the sum over chunks, or for a stage on
                             several streams the time any of its chunks was running */
    double max_chunk_s;   /* the longest single chunk on this engine */
    size_t bytes;         /* bytes moved (copies) or read (compute) */
    uint64_t reserved[4]; /* zero; later figures take these */
} sp_engine_report;

/* Room to grow (see the top of this file): fill it by passing it to a run; no set-up. */
typedef struct sp_report {
    size_t records;        /* records in the run */
    size_t chunks;         /* chunks the run was cut into */
    size_t chunk_records;  /* records per chunk (the last may be short); where the library
                              re-chose the size while the run went, its last chunks' size */
    unsigned depth;        /* slots in the ring */
    unsigned staging_threads;
    int staged_in;         /* 1 when input was pageable and went through pinned staging */
    int staged_out;        /* 1 when output was pageable and went through pinned staging */
    double makespan_s;     /* first enqueue to last completion, host clock; the same as
                              sp_pipeline_last_makespan_s (reading the timing events after
                              the run is not in it) */

    size_t n_engines;      /* engines[0..n_engines) were active in this run */
    sp_engine_report engines[SP_MAX_ENGINES];

    double bound_s;        /* the largest engine total; host staging as its union (above) */
    double efficiency;     /* bound_s / makespan_s */
    double serial_s;       /* the work of every engine, one chunk after another: the time with
                              no overlap at all */
    double model_s;        /* (N-1) * max(per-chunk engine time) + sum(per-chunk engine time) */
    double hidden_transfer;/* fraction of copy time that overlapped compute (0..1) */
    double h2d_gbps;       /* bytes / busy time of each copy direction */
    double d2h_gbps;
    char bottleneck[32];   /* the engine with the largest total, or "host staging" when the
                              time the host spent copying either way (stage-in and stage-out
                              run together, so their union) is larger */
    char notes[256];       /* fallbacks and choices the library made, "" when none */
    int graph;             /* 1 when full chunks were replayed from graphs (graph mode; for a
                              stream, in any of its batches); the engine figures above are
                              then not measured (n_engines is 0) */
    double submit_s;       /* host time from the first enqueue to the last chunk's: the host's
                              cost of submitting, submit_s / chunks per chunk */
    double wait_s;         /* of submit_s, the time the host waited for a slot to come free:
                              time the device (not the host's enqueueing or staging) was the
                              limit */
    size_t pinned_bytes;   /* pinned staging memory the pipeline holds, whatever the data's
                              size: depth x slot_records x the bytes of a record in and out
                              (each slot rounded up to 256 bytes), and a compressed input's
                              buffers while it is decompressed in the ring; a group's is the
                              sum over its devices */
    size_t batches;        /* batches the report covers: 1 for a run, those of a stream */
    size_t slot_records;   /* records a slot holds: the pipeline's chunk, which a short run
                              with a chunk the library chose cuts below (chunk_records) */
    size_t pcie_bytes;     /* bytes the run's copies moved between host and device memory:
                              records x (in + out record bytes), less a device-resident end's
                              (sp_device_alloc), whose copies stay on the device; of a stream,
                              the records of the chunks that went into the ring (a batch cut
                              short by a cancel or a failure counts those, not its length) */
    uint64_t tune_changes; /* 0.7: changes of chunk size or depth the library made for this
                              pipeline so far (sp_pipeline_tune_changes lists them) */
    size_t timed_chunks;   /* 0.7: chunks whose GPU operations were timed: all of them with
                              SP_TIMELINE_EVENTS or _CUPTI, the sampled windows' with
                              _SAMPLED (the figures above are then extrapolated), 0 when
                              none was */
    double flight_recorder_s; /* 0.7: seconds the flight recorder keeps (the config's), 0: off */
    size_t flight_recorder_bytes; /* 0.7: the memory it holds at most (fixed at creation) */
    sp_report_timeline *timeline; /* 0.8: the run's own timeline, when the config's
                              keep_timeline asked for it and the run kept one (else NULL):
                              what sp_report_write_trace, _write_svg and
                              sp_report_sampled_figures read. The report owns it:
                              sp_report_release frees it. A run writes a new report over the
                              old without freeing anything (it may hold garbage), so release
                              a report before it is filled again (a run that fails leaves it
                              as it was); a copy of the struct shares the pointer (release
                              one of them). Streams, groups and sp_pipeline_run_feed keep
                              none */
    uint64_t reserved[9];  /* zero; later figures take these */
} sp_report;

/* 0.8: frees the timeline a report holds (sp_report.timeline) and sets it to NULL; the
 * figures stay. NULL, a report without one and a second release do nothing. */
SP_API void sp_report_release(sp_report *report);

/* 0.8: the text of the last failure of an sp_report_* call (sp_report_sampled_figures,
 * sp_report_write_trace, sp_report_write_svg) on the calling thread: these take no handle
 * whose last error could say it. "" before any such failure on this thread. */
SP_API const char *sp_report_last_error(void);

/* 0.8: what SP_TIMELINE_SAMPLED would have reported for a run, from that run's full
 * timeline kept in its report (a run with a report, keep_timeline and SP_TIMELINE_EVENTS or
 * _CUPTI, that succeeded): `out` gets `report`'s figures again from the sampled windows'
 * chunks alone (busy times, bound, efficiency, hidden transfer, bottleneck, timed_chunks;
 * the rest is copied from `report`, all but its timeline: out->timeline is NULL, unless out
 * is report itself, which keeps its own). The two reports of one run differ by the
 * estimator alone, where two runs also differ by their own noise: for checking the sampling
 * on one's own workload (bench --timeline-full). Any thread; the pipeline may be gone.
 * SP_ERR_INVALID_ARGUMENT when an argument is NULL or the report holds no full timeline
 * (the reason in sp_report_last_error); SP_ERR_OUT_OF_MEMORY. */
SP_API sp_status sp_report_sampled_figures(const sp_report *report, sp_report *out);

/* Runs n_records records from `in` into `out` (n_records * sp_pipeline_out_record_bytes).
 * in == out is allowed when input and output record sizes are equal; any other overlap is
 * rejected. Memory from sp_host_alloc/sp_host_register is read and written by the copy engines
 * directly; other memory is staged through pinned buffers by the pipeline's host threads.
 * n_records == 0 succeeds without calling any stage. `report` may be NULL; when given, the
 * run also records per-chunk timings: an end event per operation, and a start event only
 * where the operation's queue is idle when it is enqueued; otherwise the operation starts as
 * the last of what it waits for ends (the previous operation on its queue, the operations
 * whose buffers it reads or overwrites), and that time is read from their end events. On
 * failure the run stops submitting, drains everything in flight and returns; the pipeline
 * can be run again. Once a run has returned, nothing of it reads `in` or writes `out`, with
 * one exception: a queue that cannot be waited for (its synchronization fails, and so does
 * the last resort, a second try on CUDA; HOST can always wait for its threads). Then the
 * library cannot show that the run's copies have stopped: the run returns
 * SP_ERR_DEVICE_LOST, the context is lost, and `in` may still be read and `out` written
 * until sp_pipeline_destroy of this pipeline has returned. Keep both allocated (and
 * registered) until then; what `out` holds is undefined.
 * The host thread keeps at most `depth` chunks queued ahead of the device, also with pinned
 * memory, so a failure stops the run within `depth` chunks and the device's queues never hold
 * a whole run. That does not let another pipeline's copies through sooner (the copy engines
 * serve one busy queue until it is empty): a latency-critical pipeline beside a bulk one
 * should set copy_by_kernel (bench/PERF.md, latency under load). */
SP_API sp_status sp_pipeline_run(sp_pipeline *pipeline, const void *in, size_t n_records, void *out,
                                 sp_report *report);

/* The textbook way, for baselines: for each chunk, a synchronous copy straight from the user's
 * memory to the device, the stages, and a synchronous copy back; nothing overlaps. Same
 * arguments, same results and same report figures as sp_pipeline_run. */
SP_API sp_status sp_pipeline_run_serial(sp_pipeline *pipeline, const void *in, size_t n_records,
                                        void *out, sp_report *report);

/* ---- streams: batches submitted as they arrive, one ring under all of them ------------------
 *
 * A stream keeps the pipeline's ring running across batches: sp_stream_submit queues a batch
 * (any number of records, 0 included) and returns once it is queued; the stream's engine
 * thread cuts it into chunks (a chunk never holds records of two batches) and feeds them to
 * the ring behind the chunks already in flight, without draining between batches. Records
 * are numbered from the stream's start (sp_chunk.first_record). `in` and `out` stay the
 * caller's until the batch's DONE event; `in` may be reused once its INPUT_RELEASED event has
 * come (asked for with input_released_events; it always comes before DONE; in place, where
 * `in` is the output, it comes once the output is complete). DONE events come
 * in submission order. in == out with equal record sizes is allowed, as in sp_pipeline_run.
 *
 * Failures: a stage failing in batch b completes b with SP_ERR_STAGE_FAILED (stage and chunk
 * in sp_stream_last_error); the batches after it that were already in flight complete with
 * SP_ERR_CANCELLED, or SP_OK if they had finished; batches before it complete normally;
 * nothing in flight is lost track of, and the stream accepts new batches afterwards. A lost
 * device fails every batch, and every later call, with SP_ERR_DEVICE_LOST.
 *
 * Room: at most max_in_flight batches are held, a batch being held from its submit until it
 * is complete (its DONE is queued, whether or not it has been taken). So one thread may
 * submit any number of batches and then take their events: a blocking submit waits only for
 * the stream's engine, never for this thread's next. Events of completed batches queue until
 * sp_stream_next takes them (a few dozen bytes each); a program that never takes them grows
 * by that much per batch.
 *
 * Threads: CUDA stage functions run on the stream's engine thread (HOST ones on their
 * workers, as in a run). submit and next may be called from different threads at once (one
 * thread submitting while another takes events), each by one thread at a time. Close only
 * once no other thread will call submit or next again: a thread already waiting inside
 * either when close begins is woken, returns SP_ERR_INVALID_ARGUMENT ("the stream is
 * closing") and is waited for before the stream is freed, but a call that begins after close
 * uses freed memory. A pipeline with an open stream refuses sp_pipeline_run until the stream
 * is closed; a stream leaves the sp_pipeline_last_* figures of the last run as they were.
 * Streams record no per-operation timings: the report of sp_stream_close has the counts, the
 * makespan and what the library chose, and says so in its notes. */
typedef struct sp_stream sp_stream;

/* Sized (see the top of this file): SP_STREAM_CONFIG_INIT, or size 0 for the 0.5 layout. */
typedef struct sp_stream_config {
    size_t size;               /* sizeof(sp_stream_config) as built; 0: the 0.5 layout */
    unsigned max_in_flight;    /* batches submitted and not yet complete (DONE queued, taken or
                                  not); 0 = 4 */
    int nonblocking;           /* 1: submit returns SP_ERR_WOULD_BLOCK instead of waiting */
    int input_released_events; /* 1: also report SP_EVENT_INPUT_RELEASED per batch */
} sp_stream_config;

#define SP_STREAM_CONFIG_INIT {.size = sizeof(sp_stream_config)}

typedef enum sp_stream_event_kind {
    SP_EVENT_INPUT_RELEASED = 1, /* the batch's input has been read: `in` may be reused */
    SP_EVENT_DONE = 2,           /* the batch's output is in `out` (or it failed: status) */
    SP_EVENT_HANDED_OFF = 3      /* sp_stream_submit_to: the consumer stream now waits for the
                                    output; work queued there from now on reads it whole */
} sp_stream_event_kind;

/* Fixed (see the top of this file; 0.7 added first_record and cause). */
typedef struct sp_stream_event {
    sp_stream_event_kind kind;
    uint64_t tag;        /* the submit's tag */
    sp_status status;    /* SP_OK, or why the batch failed (DONE only) */
    size_t records;      /* the batch's records */
    size_t first_record; /* its first record in the stream's numbering (sp_chunk.first_record) */
    uint64_t cause;      /* DONE of a batch a stage failed with sp_chunk_fail_cause: the cause;
                            else 0 */
} sp_stream_event;

/* Opens a stream on the pipeline (config may be NULL: the defaults). The pipeline must not be
 * running and may have one stream open at a time. */
SP_API sp_status sp_stream_open(sp_pipeline *pipeline, const sp_stream_config *config,
                                sp_stream **out);
/* Queues a batch of n_records from `in` to `out` (n_records * out record bytes). Checks the
 * arguments at once (as sp_pipeline_run does) and touches nothing when they are wrong. Blocks
 * while max_in_flight batches are held (submitted and not yet complete: the engine's own
 * progress makes room, so a single thread can submit all its batches before it takes any
 * event), or returns SP_ERR_WOULD_BLOCK when nonblocking. */
SP_API sp_status sp_stream_submit(sp_stream *stream, const void *in, size_t n_records, void *out,
                                  uint64_t tag);
/* The same waiting at most timeout_s for room (0: not at all; < 0 or more than 1e9 s: for
 * ever, as sp_stream_next counts it): SP_ERR_TIMEOUT when none came in time (nonblocking
 * streams return SP_ERR_WOULD_BLOCK at once, as for sp_stream_submit). */
SP_API sp_status sp_stream_submit_wait(sp_stream *stream, const void *in, size_t n_records,
                                       void *out, uint64_t tag, double timeout_s);
/* The same, handing the output to a consumer without a host wait: once every chunk of the
 * batch is enqueued, `consumer_stream` (a cudaStream_t of the pipeline's device) is made to
 * wait, on the device, for the batch's output to be complete, and a HANDED_OFF event comes
 * (before its DONE). Work the caller queues on that stream after taking HANDED_OFF reads
 * `out` whole; work queued before it may not (a test shows it reading early). `out` must be
 * device memory (sp_device_alloc, a CUDA tensor). The batch's DONE still comes as usual; a
 * batch that fails has its consumer wait all the same but gets no HANDED_OFF, only the failed
 * DONE. CUDA only: SP_ERR_UNSUPPORTED on HOST; SP_ERR_INVALID_ARGUMENT for a NULL stream or an
 * `out` that is not device memory. */
SP_API sp_status sp_stream_submit_to(sp_stream *stream, const void *in, size_t n_records,
                                     void *out, uint64_t tag, void *consumer_stream);
/* Takes back batches the caller no longer wants: every held batch with this tag
 * (sp_stream_cancel_all: every held batch). One not started yet completes with
 * SP_ERR_CANCELLED at once (its DONE still comes in submission order); one being cut into
 * chunks stops at the next chunk boundary and completes with SP_ERR_CANCELLED once the chunks
 * already in the ring are done (those records of `out` are written, the rest left as they
 * were); one whose chunks are all in the ring finishes (SP_OK, or how it failed). Returns
 * SP_OK, or SP_ERR_INVALID_ARGUMENT when no held batch has the tag (it is done already, or
 * never was). Any thread, as submit. */
SP_API sp_status sp_stream_cancel(sp_stream *stream, uint64_t tag);
SP_API sp_status sp_stream_cancel_all(sp_stream *stream);
/* The next event, in order. timeout_s: 0 polls, < 0 waits for ever (so does one of more than
 * 1e9 s, INFINITY included); SP_ERR_TIMEOUT when none came in time, SP_ERR_INVALID_ARGUMENT
 * when nothing is submitted that could still give one, or when the stream began closing
 * while this call waited. */
SP_API sp_status sp_stream_next(sp_stream *stream, sp_stream_event *event, double timeout_s);
/* What the last failure on this stream was ("" when none). Valid until the next call of
 * submit or next; written by those calls only (never by the engine thread), so read it on the
 * thread whose call failed, before that thread or the other calls again. */
SP_API const char *sp_stream_last_error(const sp_stream *stream);
/* Drains (every submitted batch completes; events not taken are dropped), stops the engine
 * thread and frees the stream. `report` (may be NULL) covers the whole stream. Returns SP_OK,
 * or the status of the first failure since the stream was opened (a batch cancelled by
 * sp_stream_cancel is none). NULL is a no-op. */
SP_API sp_status sp_stream_close(sp_stream *stream, sp_report *report);

/* ---- live counters: what a run or stream has done so far, read while it runs ------------
 *
 * Always on, in every run mode: the engine keeps them with a few relaxed atomic stores per
 * chunk (no lock, no clock read beyond one pair per host turn that stages), and any thread
 * may read them at any moment without a lock the engine waits on, during a run, a stream or
 * after either: sp_pipeline_stats and sp_stream_stats never block and never touch the
 * pipeline's error text. They cover the current run or stream (or the last one, once it
 * has ended): a run's start zeroes them and numbers it (`run`). Each counter only grows
 * within a run; two counters read by one call are read one after the other, not as one
 * snapshot, so one may be a chunk ahead of another.
 *
 * Which runs count: sp_pipeline_run, sp_pipeline_run_io, streams and device groups (each
 * device's pipeline). sp_pipeline_run_serial numbers its run and times it, but counts no
 * chunks (it has no ring).
 *
 * Busy time: the host's staging engines (stage-in, stage-out) always: the time of the
 * turns' staging copies, on the host clock the scheduler reads anyway. The GPU engines
 * (h2d, the stages, d2h) only in a run that times its chunks with events, that is one made
 * with a report (sp_pipeline_run / _run_io with a non-NULL report, the config's timeline
 * SP_TIMELINE_SAMPLED or _EVENTS; SP_TIMELINE_CUPTI's activity records are read only after
 * the run, so only where it fell back to events): the scheduler reads a timed chunk's events
 * once the chunk has left its slot (they are complete then: reading never waits) and hands
 * its busy times over, from the first read of the pipeline's counters on (before any read,
 * they are read after each run as ever, so a run nobody watches pays nothing for this; the
 * first read of a run under way shows its GPU figures from the next chunk to leave on). With SP_TIMELINE_SAMPLED (the default) only the windows' chunks are
 * timed, so a GPU engine's busy_s is an estimate: the timed chunks' busy time extrapolated
 * to the records done so far by records, as the report extrapolates to the run (the first
 * and last windows stand for themselves, the middle ones for the rest); once the run has
 * ended it equals the report's figure (sp_engine_report.busy_s; for a stage on several
 * queues it is the sum of its chunks' times, where the report takes their union). With
 * SP_TIMELINE_EVENTS every chunk is timed and busy_s is exact. Being an estimate, a GPU
 * engine's busy_s may step down a little when a newly timed chunk moves the mean. Runs
 * without a report, streams, sp_pipeline_run_feed and graph-mode runs time nothing: their
 * GPU engines keep busy_s 0 and busy_measured 0, and hidden_transfer is -1. */

/* Fixed (see the top of this file): one engine's counters. */
typedef struct sp_engine_stats {
    char name[32];        /* as sp_engine_report's: "stage-in", "h2d", a stage's, "d2h", ... */
    sp_engine_kind kind;
    int busy_measured;    /* 1: busy_s is measured (a GPU engine's: from its timed chunks,
                             see above); 0: not measured (a GPU engine in a run that times
                             nothing), busy_s 0 */
    uint64_t records;     /* records this engine has done: staged in or out (the host
                             engines, counted as staged), or of chunks that left the ring
                             (h2d, the stages, d2h: counted when the chunk's slot is retired,
                             so a chunk is counted once its d2h is complete) */
    uint64_t bytes;       /* records x the bytes of a record this engine reads (copies: moves) */
    double busy_s;        /* host staging: seconds its copies took; a GPU engine: seconds
                             busy over the records done (estimated from the timed chunks,
                             see above); 0 when not measured */
} sp_engine_stats;

/* Sized (see the top of this file): SP_STATS_INIT; the library fills it, writing only the
 * bytes the caller's size covers (size 0: the 0.7 layout, the first), and sets size to what
 * it wrote. Engines come in a fixed order: engines[0] stage-in, [1] h2d, [2 .. M+1] the
 * stages, [M+2] d2h, [M+3] stage-out (n_engines = M + 4), whether or not a run used them. */
typedef struct sp_stats {
    size_t size;               /* sizeof(sp_stats) as built */
    uint64_t run;              /* runs and streams begun on the pipeline, this one
                                  included; 0: none yet (every other figure is 0 then) */
    int active;                /* 1 while the run or stream is under way */
    double elapsed_s;          /* since it began; once it has ended, its whole length */
    uint64_t records_total;    /* records of the whole run (a source of unknown length: 0);
                                  of a stream: submitted so far */
    uint64_t bytes_total;      /* their input bytes */
    uint64_t records_done;     /* records of chunks that left the ring, output handed on */
    uint64_t bytes_done;       /* their input bytes */
    unsigned chunks_in_flight; /* slots holding a chunk */
    unsigned batches_in_flight;/* a stream's held batches (submitted, DONE not queued); a
                                  run: 0 */
    double wait_s;             /* host time the scheduler waited for a slot to come free
                                  (sp_report.wait_s, so far): the device was the limit */
    uint64_t errors;           /* 1 for a failed run; a stream's failed batches (cancelled
                                  ones are none) */
    size_t pinned_bytes;       /* pinned staging memory the pipeline holds (sp_report's) */
    size_t device_bytes;       /* device memory it holds: slot buffers and stage scratch, and
                                  while a compressed input is decompressed in the ring its
                                  compressed buffers and scratch (HOST: host memory standing
                                  for it) */
    size_t n_engines;
    sp_engine_stats engines[SP_MAX_ENGINES];
    uint64_t tune_changes;     /* 0.7: the library's changes of chunk size or depth so far */
    char tune_reason[160];     /* 0.7: why the last one was made; "" when none */
    double hidden_transfer;    /* 0.7: fraction of copy time (h2d, d2h) that overlapped
                                  compute so far (0..1), by the report's estimator over the
                                  timing windows complete so far, for the records done; -1:
                                  unknown (a run that times nothing, or before its first
                                  window is complete: with SP_TIMELINE_EVENTS the whole run is
                                  one window, known once the run has ended). Once a run has
                                  ended it equals its sp_report.hidden_transfer */
    uint64_t timed_chunks;     /* 0.7: chunks whose GPU operations were timed and read so
                                  far (sp_report.timed_chunks once the run has ended) */
} sp_stats;

#define SP_STATS_INIT {.size = sizeof(sp_stats)}

/* Fixed (see the top of this file): one change of chunk size or depth the library made
 * (only ever of a chunk_records or depth the config left at 0), and why. */
typedef struct sp_tune_change {
    double at_s;                 /* host clock (seconds, the stats' clock) when it was made */
    size_t from_chunk, to_chunk; /* records per chunk */
    unsigned from_depth, to_depth;
    char reason[160];            /* e.g. "h2d 3.1 ms/chunk hidden behind compute 9.8 ms:
                                    depth 6 -> 3 to free 96 MiB" */
} sp_tune_change;
#define SP_TUNE_CHANGES_KEPT 32 /* the pipeline keeps the first and the last 31 */

/* The changes kept (oldest first), at most `max` into out; *n says how many were written,
 * *total (may be NULL) how many were made. SP_ERR_INVALID_ARGUMENT for NULL pipeline, n, or
 * out with max > 0. Any thread, while the pipeline exists. */
SP_API sp_status sp_pipeline_tune_changes(const sp_pipeline *pipeline, sp_tune_change *out,
                                          size_t max, size_t *n, uint64_t *total);

/* The pipeline's counters (above) into *stats; any thread, any moment, while the pipeline
 * exists. SP_ERR_INVALID_ARGUMENT for NULL or a size smaller than the size field. */
SP_API sp_status sp_pipeline_stats(const sp_pipeline *pipeline, sp_stats *stats);
/* The same for an open stream's pipeline: the stream's counters since it was opened. Any
 * thread, until sp_stream_close begins. */
SP_API sp_status sp_stream_stats(const sp_stream *stream, sp_stats *stats);

/* ---- sources and sinks: data that is not an array in memory ------------------------------ */

/* Fills dst (pinned staging memory, max_records * in record bytes) with up to max_records
 * records starting at first_record, and says how many in *records. A sequential source may
 * return fewer (a short read: it is called again for the rest of the chunk) and 0 at the
 * end; a positional one must return exactly max_records. Return SP_OK, or an error to fail
 * the run with SP_ERR_STAGE_FAILED. */
typedef sp_status (*sp_source_fn)(void *dst, size_t first_record, size_t max_records,
                                  size_t *records, void *user);
/* Consumes `records` output records starting at first_record from src (pinned staging
 * memory, valid only during the call). Return SP_OK, or an error to fail the run. */
typedef sp_status (*sp_sink_fn)(const void *src, size_t first_record, size_t records,
                                void *user);

/* Sized (see the top of this file): SP_IO_INIT, or size 0 for the 0.5 layout. */
typedef struct sp_io {
    size_t size;      /* sizeof(sp_io) as built; 0: the 0.5 layout */
    sp_source_fn read;
    void *read_user;
    sp_sink_fn write;
    void *write_user;
    size_t n_records; /* 0: until read returns 0 records (sequential only) */
    int positional;   /* 1: n_records is known, and read and write may run for pieces of
                         several chunks at once, on the staging threads (pread, pwrite) */
    /* 0.7: a compressed input's blocks, which the run may copy as they are and decompress
       inside the ring (set only by the library's own file source, streampipe_io.h; callers
       leave it NULL). read still serves the chunks that cannot be decompressed there. */
    const struct sp_block_source *blocks;
    /* 0.7: memory at one end instead of the source or the sink, for a file read straight
       into device memory (sp_file_io with no output, `out` a device buffer: no sink, no
       device-to-host copy) or device memory written to a sink. `in`: n_records records are
       read from it, `read` must be NULL; `out`: n_records results are written to it, `write`
       must be NULL. Host or device memory, as sp_pipeline_run's in and out (a device end
       skips its PCIe copy, and sp_report.pcie_bytes counts only the other end). NULL: the
       source or sink as above. Not both: that is sp_pipeline_run. */
    const void *in;
    void *out;
} sp_io;

#define SP_IO_INIT {.size = sizeof(sp_io)}

/* 0.7: NVIDIA nvCOMP (not shipped with streampipe: the PyPI wheel nvidia-libnvcomp-cu13, which
 * holds libnvcomp.so.6), for decompressing compressed inputs inside the ring on CUDA. The
 * library reads no environment: the caller finds it (the CLI: $SP_NVCOMP_LIBRARY, else the
 * library path; Python: also the nvidia.libnvcomp package) and loads it here, once, before
 * the runs that use it. path NULL: "libnvcomp.so.6" by the dynamic linker's search. SP_OK;
 * SP_ERR_UNSUPPORTED with the reason in why (not found, a symbol missing, a version this
 * library does not support: major 5 or 6); a CUDA run without it decompresses on the staging
 * threads and its input's note says why (sp_nvcomp_status). Any thread; a second successful
 * load keeps the first. */
SP_API sp_status sp_nvcomp_load(const char *path, char *why, size_t why_size);
/* 1 when nvCOMP is loaded (its version, as major * 1000 + minor * 100 + patch, in *version),
 * else 0 with the last load's reason (or "not loaded") in why. */
SP_API int sp_nvcomp_status(unsigned *version, char *why, size_t why_size);

/* memcpy with non-temporal stores, as the library's own staging copies: for a source copying
 * its data into pinned staging, or a sink copying results out into a large array, where the
 * destination is not read again soon. A plain store first reads each destination line it
 * writes, a third more host memory traffic, which these stores save (bench/PERF.md: the
 * generator source rows, memcpy against this). Any alignment; copies under 64 KiB are a plain memcpy, which keeps the data
 * in cache for whoever reads it. The stores are complete (fenced) when it returns. dst and
 * src must not overlap. */
SP_API void sp_copy_nontemporal(void *dst, const void *src, size_t bytes);

/* Streams io->n_records records from the source through the stages into the sink: read fills
 * a slot's pinned staging buffer directly and write consumes results straight from pinned
 * memory, so no user array is copied and the pinned memory held is the slots' (the report's
 * pinned_bytes), whatever the data's size. Sequential sources and sinks are called on the
 * calling thread, one at a time, in record order; positional ones on the staging threads,
 * several at once, for pieces of whole records. A failing source or sink fails the run with
 * SP_ERR_STAGE_FAILED naming it and the records; the run drains and the pipeline can run
 * again. Graph mode is not used for sources. */
SP_API sp_status sp_pipeline_run_io(sp_pipeline *pipeline, const sp_io *io, sp_report *report);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_H */
