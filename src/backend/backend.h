/*
 * The one seam between the scheduler (src/core) and a device. A backend is a const table of
 * function pointers plus an opaque `impl` pointer returned by open(); the core calls nothing
 * else. Modelled on ggml's backend interface.
 *
 * Semantics every backend must give (the HOST backend is the executable specification):
 * - A queue runs its operations one at a time, in the order they were enqueued.
 * - event_record(e, q) enqueues "mark e complete" on q. A later queue_wait(q2, e) makes q2's
 *   following operations wait for the most recent record of e made before the wait call (not
 *   for later re-records). Waiting on an event never recorded is satisfied at once.
 * - Successive records of one event complete in the order they were made. The core
 *   guarantees it, also when a stage's chunks alternate between queues: chunk i+K's record of
 *   a slot event waits, through the WAR chain, for chunk i's. The HOST backend's counters
 *   rely on it.
 * - event_sync(e) blocks the calling thread until the latest record of e has completed;
 *   event_query(e) tells the same without blocking (a never-recorded event is complete).
 * - Enqueue calls return at once; a status they return concerns the enqueue itself.
 * - launch() calls fn(chunk', arg) where chunk' is *chunk with .stream set to the queue's
 *   native handle: synchronously on the calling thread (CUDA: fn enqueues device work) or later
 *   on the queue's worker (HOST: fn does the work). The core's fn records stage failures
 *   itself, so an asynchronous backend may drop fn's return value.
 * - On error, a function stores a human-readable reason with sp_backend_fail() before
 *   returning; the core reads it with sp_backend_error() on the same thread.
 * - SP_ERR_DEVICE_LOST means the device context is corrupt and nothing will work again.
 */
#ifndef SP_BACKEND_H
#define SP_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

#define SP_BACKEND_ABI 5 /* 2: queue_drain; 3: activity timing; 4: device-resident ends;
                            5: decompression in the ring */

typedef struct sp_bqueue sp_bqueue; /* defined by each backend */
typedef struct sp_bevent sp_bevent; /* defined by each backend */
typedef struct sp_bgraph sp_bgraph; /* defined by each backend that has graphs */

enum sp_event_flags {
    SP_EVENT_SYNC = 0,   /* ordering only: cheapest */
    SP_EVENT_TIMING = 1  /* can be passed to event_elapsed */
};

/* What a range of memory is, for memory_kind below. */
typedef enum sp_mem_kind {
    SP_MEM_PAGEABLE = 0,     /* ordinary host memory */
    SP_MEM_PINNED = 1,       /* page-locked host memory the copy engines use directly */
    SP_MEM_DEVICE = 2,       /* device (or managed) memory of the context's device */
    SP_MEM_OTHER_DEVICE = 3, /* device memory of another device */
    SP_MEM_MIXED = 4         /* not one kind throughout */
} sp_mem_kind;

/* One call of decompress (below): n units of one format, every array in device memory (the
 * core copies them with the compressed bytes, so one h2d carries both). */
typedef struct sp_decompress_args {
    int format;                 /* SP_INPUT_FORMAT_LZ4 (raw LZ4 blocks) or _ZSTD (frames) */
    size_t n;
    const void *const *src;     /* device: each unit's compressed bytes */
    const size_t *src_bytes;    /* device */
    void *const *dst;           /* device: where each unit's bytes go */
    const size_t *dst_bytes;    /* device: the room of each, exactly what it must make */
    size_t *made;               /* device: what each made (written) */
    int *status;                /* device: 0 for each unit that decoded (written) */
    size_t max_dst_bytes, total_dst_bytes;
    void *temp;                 /* device scratch of decompress_prepare's temp_bytes */
    size_t temp_bytes;
    size_t *made_host;          /* pinned: made and status copied here before done() */
    int *status_host;
    void (*done)(void *arg);    /* called on a host thread in q's order, once the results
                                   are in made_host/status_host; q's later work waits for it */
    void *done_arg;
} sp_decompress_args;

/* The function a stage launch runs; see launch() above. */
typedef sp_status (*sp_launch_fn)(const sp_chunk *chunk, void *arg);
/* What activity_collect hands on: one marked operation's device span. */
typedef void (*sp_activity_fn)(void *user, uint64_t id, double start_s, double end_s);

typedef struct sp_backend_ops {
    unsigned abi;          /* SP_BACKEND_ABI */
    const char *name;      /* "host", "cuda", or a wrapper's ("fault") */
    sp_backend_kind kind;  /* what sp_context_backend reports */

    /* Lifetime. open() fails with SP_ERR_UNSUPPORTED (and a reason) when there is no device. */
    sp_status (*open)(int device, void **impl);
    void (*close)(void *impl);

    /* Queues (streams). name is for diagnostics and fault targeting ("h2d", a stage's name). */
    sp_status (*queue_create)(void *impl, const char *name, int priority, sp_bqueue **out);
    void (*queue_destroy)(void *impl, sp_bqueue *q);
    sp_status (*queue_sync)(void *impl, sp_bqueue *q);
    /* Optional (may be NULL): what the core falls back on when queue_sync of a run that is
     * ending has failed: blocks until every operation enqueued on q has finished, so that SP_OK
     * means q is idle for certain and the memory its work uses may be handed back. A backend
     * that can always wait for its queues provides it (HOST: a worker always gets through its
     * operations); the fault backend never counts it or fails it by fail_call (an
     * injected failure is not a real one: it asks the wrapped backend's queue_drain, or its
     * queue_sync), only by fail_op "queue_drain". NULL: the core asks queue_sync once more. */
    sp_status (*queue_drain)(void *impl, sp_bqueue *q);
    /* Optional (may be NULL): enqueue a busy delay of usec microseconds on q. */
    sp_status (*queue_delay)(void *impl, sp_bqueue *q, unsigned usec);

    /* Events. */
    sp_status (*event_create)(void *impl, unsigned flags, sp_bevent **out);
    void (*event_destroy)(void *impl, sp_bevent *e);
    sp_status (*event_record)(void *impl, sp_bevent *e, sp_bqueue *q);
    sp_status (*queue_wait)(void *impl, sp_bqueue *q, sp_bevent *e);
    sp_status (*event_sync)(void *impl, sp_bevent *e);
    /* Seconds from `from` to `to`; both TIMING events, both complete. */
    sp_status (*event_elapsed)(void *impl, sp_bevent *from, sp_bevent *to, double *seconds);
    /* Optional (may be NULL): *complete = 1 when the latest record of e made before the call
     * has completed, or e was never recorded; else 0. Never blocks. The core uses it to skip
     * the start timing event of an operation whose queue is still busy (run.c); without it
     * every timed operation gets one. */
    sp_status (*event_query)(void *impl, sp_bevent *e, int *complete);

    /* Memory. bytes > 0. Frees accept NULL. */
    sp_status (*device_alloc)(void *impl, size_t bytes, void **out);
    void (*device_free)(void *impl, void *ptr);
    sp_status (*pinned_alloc)(void *impl, size_t bytes, void **out);
    void (*pinned_free)(void *impl, void *ptr);
    sp_status (*host_register)(void *impl, void *ptr, size_t bytes);
    sp_status (*host_unregister)(void *impl, void *ptr);
    /* *pinned = 1 when all of [ptr, ptr+bytes) can be read/written by the copy engines. */
    sp_status (*is_pinned)(void *impl, const void *ptr, size_t bytes, int *pinned);

    /* Asynchronous copies on q. src/dst on the host may be pinned or pageable. */
    sp_status (*copy_h2d)(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
    sp_status (*copy_d2h)(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
    /* Optional (may be NULL): a copy between pinned host memory (is_pinned) and device memory
     * (either direction) done by a kernel on q, so that it never waits behind copies of other
     * queues on the copy engines; NULL: the core uses copy_h2d/copy_d2h. graph_rebase leaves
     * such copies alone: the core does not replay graphs whose kernel copies touch memory
     * other than its own pinned staging (submit_graph.c). */
    sp_status (*copy_kernel)(void *impl, void *dst, const void *src, size_t bytes,
                             sp_bqueue *q);

    /* Runs a stage for one chunk on q (see the semantics above). */
    sp_status (*launch)(void *impl, sp_bqueue *q, sp_launch_fn fn, void *arg,
                        const sp_chunk *chunk);

    /* Optional (both NULL or both set): names for a profiler. trace_push opens a range named
     * `label` ("h2d c12") on the calling thread and trace_pop closes the innermost one; the
     * core brackets each operation it enqueues, so a profiler that maps API calls to device
     * work (Nsight Systems with NVTX on CUDA) shows the library's names on the streams too.
     * Ranges nest per thread; neither call can fail, and `label` is only borrowed. */
    void (*trace_push)(void *impl, const char *label);
    void (*trace_pop)(void *impl);

    /* Optional (all five NULL or all set): graphs, for replaying one chunk's operations with
     * one call (CUDA Graphs; a recorded list of operations on HOST).
     * - capture_begin(q): until capture_end(q), what the calling thread enqueues on q (copies,
     *   launches, delays) is recorded instead of run. Nothing else may be enqueued on q
     *   meanwhile, and no events may be recorded or waited for on q: capture_end then fails.
     * - capture_end(q, out): ends the capture (always, also when it fails) and makes the
     *   recording a replayable graph. Fails, leaving q as it was before capture_begin, when
     *   anything enqueued during the capture failed or cannot be replayed.
     * - graph_rebase(g, to_device, old, new, bytes): for the next launches, every copy of g
     *   whose host side (the source of a host-to-device copy when to_device, else the
     *   destination of a device-to-host copy) lay in [old, old + bytes) when it was captured
     *   uses the same offset into `new` instead. Matching the captured address, never the
     *   current one, keeps a copy from moving twice when one chunk's new memory is another's
     *   old. Fails (SP_ERR_INVALID_ARGUMENT) when no copy matches. Launches already enqueued
     *   are not affected. Host memory given to a graph must be pinned (is_pinned).
     * - graph_launch(g, q): enqueues one replay of g on q, as one operation: it starts after
     *   q's earlier operations and q's later ones start after it.
     * - graph_destroy(g): g may still be running; it is freed when done. Accepts NULL. */
    sp_status (*capture_begin)(void *impl, sp_bqueue *q);
    sp_status (*capture_end)(void *impl, sp_bqueue *q, sp_bgraph **out);
    sp_status (*graph_rebase)(void *impl, sp_bgraph *g, int to_device, const void *old_base,
                              const void *new_base, size_t bytes);
    sp_status (*graph_launch)(void *impl, sp_bgraph *g, sp_bqueue *q);
    void (*graph_destroy)(void *impl, sp_bgraph *g);

    /* Optional (all four NULL or all set): activity timing (CUDA with CUPTI), the device's own
     * start and end times of each operation, with nothing enqueued to measure them.
     * - activity_start(): a timed run begins; times are seconds after this call. Fails (the
     *   core then times the run with events) when it cannot, e.g. another run holds it.
     * - activity_push(id) / activity_pop(): what the calling thread enqueues between them
     *   (a copy, a launch and whatever kernels its function enqueues) is marked id.
     * - activity_collect(fn, user): once the run's queues have drained, fn(user, id, start_s,
     *   end_s) for each marked kernel, copy or memset (several for an id that enqueued
     *   several), then ends what activity_start began. Every successful activity_start is
     *   followed by one activity_collect. */
    sp_status (*activity_start)(void *impl);
    sp_status (*activity_push)(void *impl, uint64_t id);
    void (*activity_pop)(void *impl);
    sp_status (*activity_collect)(void *impl, sp_activity_fn fn, void *user);

    /* Optional (both NULL or both set): device-resident ends, the user's device memory as a
     * run's input or output.
     * - memory_kind(ptr, bytes): what [ptr, ptr + bytes) is. HOST: its device_alloc blocks
     *   are device memory. CUDA: device or managed memory of the context's device, or of
     *   another device, or host memory (pinned or not). A range that is not one kind
     *   throughout (starts in one allocation, ends outside it) is SP_MEM_MIXED.
     * - copy_d2d(dst, src, bytes, q): device memory to device memory, enqueued on q. */
    sp_status (*memory_kind)(void *impl, const void *ptr, size_t bytes, sp_mem_kind *kind);
    sp_status (*copy_d2d)(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
    /* Optional: makes the caller's own native queue (a cudaStream_t) wait for the latest
     * record of e, on the device: a stream-ordered hand-off of a batch's output. */
    sp_status (*external_wait)(void *impl, void *native_queue, sp_bevent *e);

    /* Optional (both NULL or both set): decompression inside the ring (CUDA: nvCOMP's batched
     * C API, loaded with sp_nvcomp_load; HOST has none: the core decodes there with the file
     * source's own decoders in a launch, its device memory being host memory).
     * - decompress_prepare(format, max_units, max_unit_bytes, max_total_bytes, temp_bytes):
     *   SP_OK when this backend can decompress units of `format` now, with the device scratch
     *   one call needs in *temp_bytes; SP_ERR_UNSUPPORTED with the reason (sp_backend_fail:
     *   nvCOMP not loaded, a version it does not support) otherwise.
     * - decompress(args, q): enqueues the decompression of args' units on q; then the results
     *   reach made_host/status_host and done(done_arg) runs, before q's later operations. */
    sp_status (*decompress_prepare)(void *impl, int format, size_t max_units,
                                    size_t max_unit_bytes, size_t max_total_bytes,
                                    size_t *temp_bytes);
    sp_status (*decompress)(void *impl, const sp_decompress_args *args, sp_bqueue *q);
} sp_backend_ops;

/* The backends that were built. sp_backend_cuda_ops() is NULL without CUDA. */
const sp_backend_ops *sp_backend_host_ops(void);
/* The HOST backend's owned memory (impl: its context's), [0] pinned and [1] device bytes,
 * held now and at the peak since it opened: the allocator's own count, which tests check a
 * pipeline's budget against. */
void sp_backend_host_memory_held(void *impl, size_t held[2], size_t peak[2]);
const sp_backend_ops *sp_backend_cuda_ops(void);

/* ---- wrapping: a backend put around the one a context opens ------------------------------
 * For libraries that extend a backend without the core knowing them (streampipe_fault wraps
 * HOST or CUDA to inject failures and delays, as SQLite's test VFS wraps the real one).
 *
 * libstreampipe_fault.so is such a library, so the four functions a wrapper calls in the core
 * (sp_context_create_wrapped, sp_context_fail, sp_context_backend_impl, sp_backend_fail) are
 * the only internal ones libstreampipe.so exports besides the public API (SP_API). They are
 * not public: no header in include/ declares them and they carry no ABI promise, since only a
 * library built from the same tree calls them. Their symbols say so: SP_INTERNAL_EXPORT gives
 * each the symbol sp_internal_<name> (the C name stays), so that nm -D tells them from the
 * public API. tools/exports_check.sh allows exactly these; keep the list this short (what else
 * a wrapper shares with the core is header-only, as live_list.h). */
#if defined(__GNUC__)
#define SP_INTERNAL_EXPORT(name) \
    __asm__("sp_internal_" #name) __attribute__((visibility("default")))
#else
#define SP_INTERNAL_EXPORT(name)
#endif

/* Given the backend a context opened, returns in *ops and *impl the table and impl the
 * context is to use instead. On SP_OK the wrapper owns inner_impl (its close() closes it);
 * on failure inner_impl stays the caller's, and the reason is set with sp_backend_fail. */
typedef sp_status (*sp_backend_wrap_fn)(const sp_backend_ops *inner, void *inner_impl,
                                        void *arg, const sp_backend_ops **ops, void **impl);
/* sp_context_create with `wrap` put around the backend it opens (arg passed to it); the
 * context reports the inner backend's kind. Fails, and reports it, as sp_context_create. */
sp_status sp_context_create_wrapped(sp_backend_kind kind, int device, sp_backend_wrap_fn wrap,
                                    void *arg, sp_context **out)
    SP_INTERNAL_EXPORT(context_create_wrapped);
/* Stores the formatted text as ctx's last error (sp_context_last_error) and returns `status`;
 * SP_ERR_DEVICE_LOST also marks the context lost. How a wrapper's own entry points report. */
sp_status sp_context_fail(sp_context *ctx, sp_status status, const char *fmt, ...)
    SP_INTERNAL_EXPORT(context_fail)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* ctx's impl when its backend table is `ops` (a wrapper finding its own state), else NULL. */
void *sp_context_backend_impl(const sp_context *ctx, const sp_backend_ops *ops)
    SP_INTERNAL_EXPORT(context_backend_impl);

/* Whether p lies in [base, base + bytes): how graph_rebase matches a copy's host side. */
static inline int sp_backend_in_range(const void *p, const void *base, size_t bytes)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return a >= b && a - b < bytes;
}

/* Thread-local reason for the last backend failure on this thread (printf-style). A wrapper
 * in another library sets the core's (exported: the wrapping section above). */
void sp_backend_fail(const char *fmt, ...) SP_INTERNAL_EXPORT(backend_fail)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
const char *sp_backend_error(void);
void sp_backend_error_clear(void);

#endif /* SP_BACKEND_H */
