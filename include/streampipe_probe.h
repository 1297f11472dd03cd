/*
 * streampipe probe: what this machine's copy paths reach, measured in this process through
 * the same backend a pipeline uses, so that a pipeline's rates can be quoted against them.
 *
 * Measured (each figure the median of `repeats` timed runs after one untimed warm-up, on
 * random data, never zeros):
 * - copy rates: H2D and D2H from pinned and from pageable memory, and pinned H2D and D2H
 *   running at once (timed with the backend's timing events);
 * - pinned H2D rate by chunk size: back-to-back copies of 64 KiB .. 64 MiB;
 * - pinning costs: sp_host_alloc / sp_host_free and sp_host_register / sp_host_unregister,
 *   in milliseconds per GiB (host clock);
 * - host copy rates: pageable -> pinned memcpy split over 1, 2, 4, .. 16 threads, as the
 *   pipeline's staging threads do it;
 * - host copy under the copy engines: the pipeline's staging copy (pageable -> pinned and
 *   pinned -> pageable at once, its thread count and copy routine) while pinned H2D and D2H
 *   copies keep both copy engines busy, and each of the two alone: what host memory
 *   delivers to both together, which limits pageable pipelines;
 * - per-operation costs: an event record, a queue wait, an empty launch and a 4 KiB copy,
 *   each the wall time of many back to back divided by their number.
 * On HOST the "device" is host memory and copies are memcpy on a worker thread: the rates
 * are this CPU's memcpy rates, not a bus (result.notes says so).
 *
 * Default run time: a few seconds on an H200 machine, under about 3 s on HOST.
 */
#ifndef STREAMPIPE_PROBE_H
#define STREAMPIPE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parts of the probe, for sp_probe_config.parts. */
enum sp_probe_part {
    SP_PROBE_COPY_RATES = 1u << 0,
    SP_PROBE_CHUNK_SIZES = 1u << 1,
    SP_PROBE_PINNING = 1u << 2,
    SP_PROBE_HOST_COPY = 1u << 3,
    SP_PROBE_OVERHEADS = 1u << 4,
    SP_PROBE_HOST_UNDER_DMA = 1u << 5,
    SP_PROBE_ALL = (1u << 6) - 1u
};

#define SP_PROBE_MAX_REPEATS 64
#define SP_PROBE_MAX_CHUNK_SIZES 16
#define SP_PROBE_MAX_THREAD_COUNTS 12

/* Zero in any field means "the default" (which depends on the backend and `quick`).
 * Sized (streampipe.h, top): SP_PROBE_CONFIG_INIT, or size 0 for the 0.5 layout. */
typedef struct sp_probe_config {
    size_t size;             /* sizeof(sp_probe_config) as built; 0: the 0.5 layout */
    unsigned parts;          /* SP_PROBE_* bits; 0 = SP_PROBE_ALL */
    int quick;               /* 1: 3 repeats and a quarter of the bytes */
    unsigned repeats;        /* timed runs per figure, 1..SP_PROBE_MAX_REPEATS; 0 = 5 */
    size_t copy_bytes;       /* bytes per timed copy, >= 64 KiB; 0 = 256 MiB on CUDA,
                                64 MiB on HOST (quick: 64 MiB, 16 MiB) */
    size_t pin_bytes;        /* bytes per pinning measurement; 0 = copy_bytes */
    size_t min_chunk_bytes;  /* chunk sweep from here, x4 each step; 0 = 64 KiB */
    size_t max_chunk_bytes;  /* up to here and at most copy_bytes; 0 = 64 MiB */
    unsigned max_threads;    /* host copies with 1, 2, 4, .. up to here (<= 1024); 0 = 16.
                                The copy under the engines uses the pipeline's default
                                staging thread count, at most this many */
    unsigned overhead_ops;   /* operations per overhead measurement; 0 = 2000 (quick 500) */
} sp_probe_config;

#define SP_PROBE_CONFIG_INIT {.size = sizeof(sp_probe_config)}

/* Fixed (streampipe.h, top), as is sp_probe_thread_rate. */
typedef struct sp_probe_chunk_rate {
    size_t bytes;            /* size of each copy */
    double h2d_gbps;         /* pinned H2D, back to back */
} sp_probe_chunk_rate;

typedef struct sp_probe_thread_rate {
    unsigned threads;
    double gbps;             /* pageable -> pinned memcpy over that many threads */
} sp_probe_thread_rate;

/* Rates are in GB/s (1e9 bytes per second). A figure of a part not measured is 0.
 * Room to grow (streampipe.h, top). */
typedef struct sp_probe_result {
    sp_backend_kind backend; /* HOST or CUDA */
    unsigned parts;          /* the parts measured */
    unsigned repeats;
    size_t copy_bytes, pin_bytes;
    unsigned overhead_ops;
    double seconds;          /* wall time the probe took */

    /* SP_PROBE_COPY_RATES */
    double h2d_pinned_gbps, d2h_pinned_gbps;
    double h2d_pageable_gbps, d2h_pageable_gbps;
    double both_h2d_gbps, both_d2h_gbps; /* pinned, both directions at once: each way */

    /* SP_PROBE_CHUNK_SIZES */
    size_t n_chunk_sizes;
    sp_probe_chunk_rate chunk[SP_PROBE_MAX_CHUNK_SIZES];

    /* SP_PROBE_PINNING: milliseconds per GiB */
    double alloc_ms_per_gib, free_ms_per_gib;
    double register_ms_per_gib, unregister_ms_per_gib;

    /* SP_PROBE_HOST_COPY */
    size_t n_thread_counts;
    sp_probe_thread_rate host_copy[SP_PROBE_MAX_THREAD_COUNTS];

    /* SP_PROBE_HOST_UNDER_DMA. staging: bytes per second the staging threads copy, half of
     * them pageable -> pinned and half pinned -> pageable, as a pipeline stages a chunk's
     * input and another's output together. dma: pinned h2d + d2h bytes per second, both
     * directions at once. Each alone, then both at the same time (measured over the same
     * stretch of time). Host memory serves about 2 x staging + dma bytes per second: a read
     * and a write per staged byte, one access per byte the engines copy. */
    unsigned under_dma_threads;  /* staging threads */
    double staging_alone_gbps, staging_under_dma_gbps;
    double dma_alone_gbps, dma_under_staging_gbps;

    /* SP_PROBE_OVERHEADS: microseconds per operation */
    double event_record_us;  /* an ordering event */
    double timing_record_us; /* a timing event (a report records two per operation) */
    double queue_wait_us;    /* a wait on an event that has completed */
    double launch_us;        /* an empty launch: see launch_what */
    double small_copy_us;    /* a 4 KiB pinned H2D copy */
    double graph_launch_us;  /* a graph of a 4 KiB h2d, an empty launch and a 4 KiB d2h
                                (graph mode's replay of one chunk), launched back to back:
                                each replay waits for the last, so this is its latency on
                                the device; 0 without graphs */
    double graph_enqueue_us; /* the host's part of each of those launches: the enqueue loop
                                alone, before the queue is synchronized */
    double graph_update_us;  /* pointing such a graph's two copies at other host memory:
                                host time only (graph mode pays it per chunk of pinned
                                memory); 0 without graphs */
    char launch_what[48];    /* "1 us delay kernel" on CUDA, "no-op stage" on HOST */

    char notes[256];         /* what the figures mean on this backend; "" when nothing */
    uint64_t reserved[16];   /* zero; later figures take these */
} sp_probe_result;

/* Runs the probe on ctx (cfg NULL = defaults) and fills *out. The context's queues and
 * memory are the probe's own; nothing of it is left behind. Errors: SP_ERR_INVALID_ARGUMENT
 * (a NULL argument, a value out of range), SP_ERR_OUT_OF_MEMORY, and whatever the backend
 * returns; sp_context_last_error says what failed. */
SP_API sp_status sp_probe_run(sp_context *ctx, const sp_probe_config *cfg, sp_probe_result *out);

/* The least time the copy engines need, by the probe's pinned figures, to move bytes_in to
 * the device and bytes_out back: both directions at once at the both_* rates while both
 * have data, then the rest at the one-way rate. A ceiling to quote a pipeline against (the
 * pipeline moves the same bytes and cannot beat it). 0 when the figures are missing. */
SP_API double sp_probe_copy_seconds(const sp_probe_result *probe, size_t bytes_in,
                                    size_t bytes_out);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_PROBE_H */
