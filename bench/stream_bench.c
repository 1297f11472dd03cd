/* The streams and sources benchmarks of issue 11, in one process (medians of --repeat):
 *
 *   batches  B batches of M records through one stream, against one sp_pipeline_run over the
 *            same records and chunk, and against B sp_pipeline_run calls (the per-run drain);
 *            transfer workload (sinmix, 0 iterations), pinned memory
 *   source   the seed workload (sinmix 100) from a positional generator source
 *            (sp_pipeline_run_io: values made straight into pinned staging, results copied
 *            straight out of it into a pageable array) against the same values as a pageable
 *            array, and as a pinned one; the source twice: with plain stores and memcpy, and
 *            with sp_copy_nontemporal both ways (as the library's own staging copies)
 *
 * Every output element of every timed run is checked: against the C reference for
 * iterations 0 (bit for bit), and for the source runs against the array run's output (the
 * same kernel on the same values, bit for bit) plus 2^16 sampled elements against the C
 * reference within the bench's tolerance. Prints a table and one JSON line last.
 *
 * usage: stream_bench [--backend host|cuda] [--batches B] [--batch-records M]
 *                     [--source-records N] [--repeat R] [--source-only]
 *                     [--source-chunk RECORDS] [--staging-threads T] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streampipe.h"
#include "streampipe_ops.h"

#include "bench_util.h"

typedef struct bench_args {
    sp_backend_kind backend;
    size_t batches, batch_records, source_records;
    int repeat;
    int source_only;            /* --source-only: skip the batches */
    size_t source_chunk;        /* --source-chunk: records per chunk, source runs; 0 = choose */
    unsigned staging_threads;   /* --staging-threads: of the source runs; 0 = choose */
} bench_args;

/* The generator: record i's value in [-4, 4), a pattern of PATTERN values (a multiplicative
 * hash of the index) repeated. A generator must cost less than the host copy it saves for the
 * comparison to be about that copy: the hash computed per value cost more than a memcpy of
 * the same bytes (0.8 ns a value vectorized, measured in the fifth session; a 64-bit mixing
 * hash made the source 3x slower in the fourth), where copying the cache-resident pattern
 * costs about half a staging copy. The sinmix kernel's work does not depend on the values. */
#define PATTERN 16384u /* values: 64 KiB, resident in L2 */
static float g_pattern[PATTERN];

static void make_pattern(void)
{
    for (uint32_t k = 0; k < PATTERN; k++) {
        uint32_t h = k * 2654435761u;
        g_pattern[k] = (float)(int32_t)(h >> 8) * (8.0f / 16777216.0f) - 4.0f;
    }
}

static float value_of(size_t i) { return g_pattern[i % PATTERN]; }

typedef void (*copy_fn)(void *dst, const void *src, size_t bytes);

/* value_of over [first, first + n) into out, the pattern's pieces copied with `copy`. */
static void fill_values(float *out, size_t first, size_t n, copy_fn copy)
{
    for (size_t done = 0; done < n;) {
        size_t at = (first + done) % PATTERN, len = PATTERN - at;
        if (len > n - done)
            len = n - done;
        copy(out + done, g_pattern + at, len * sizeof(float));
        done += len;
    }
}

static void copy_plain(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

static sp_status generate_memcpy(void *dst, size_t first, size_t max, size_t *records, void *user)
{
    (void)user;
    fill_values(dst, first, max, copy_plain);
    *records = max;
    return SP_OK;
}

/* The same values with non-temporal stores: no read of the pinned lines before writing. */
static sp_status generate_nontemporal(void *dst, size_t first, size_t max, size_t *records,
                                    void *user)
{
    (void)user;
    fill_values(dst, first, max, sp_copy_nontemporal);
    *records = max;
    return SP_OK;
}

typedef struct sink_target {
    float *out;
} sink_target;

static sp_status collect_memcpy(const void *src, size_t first, size_t records, void *user)
{
    sink_target *t = user;
    memcpy(t->out + first, src, records * sizeof(float));
    return SP_OK;
}

static sp_status collect_nontemporal(const void *src, size_t first, size_t records, void *user)
{
    sink_target *t = user;
    sp_copy_nontemporal(t->out + first, src, records * sizeof(float));
    return SP_OK;
}

static size_t count_bad(const float *got, const float *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(&got[i], &want[i], sizeof *got) != 0;
    return bad;
}

static int failed(const char *what, sp_status st, const char *why)
{
    fprintf(stderr, "stream_bench: %s: %s: %s\n", what, sp_status_name(st), why);
    return 1;
}

/* ---- batches through a stream ------------------------------------------------------------ */

static sp_status stream_all(sp_pipeline *p, const float *in, float *out, const bench_args *a)
{
    sp_stream_config cfg = {.max_in_flight = 8};
    sp_stream *s = NULL;
    sp_status st = sp_stream_open(p, &cfg, &s);
    size_t taken = 0;
    for (size_t b = 0; st == SP_OK && b < a->batches; b++) {
        size_t off = b * a->batch_records;
        st = sp_stream_submit(s, in + off, a->batch_records, out + off, b);
        while (st == SP_OK && b + 1 - taken >= cfg.max_in_flight) { /* keep submitting */
            sp_stream_event ev;
            st = sp_stream_next(s, &ev, -1.0);
            if (st == SP_OK && ev.kind == SP_EVENT_DONE && (st = ev.status) == SP_OK)
                taken++;
        }
    }
    while (st == SP_OK && taken < a->batches) {
        sp_stream_event ev;
        st = sp_stream_next(s, &ev, -1.0);
        if (st == SP_OK && ev.kind == SP_EVENT_DONE && (st = ev.status) == SP_OK)
            taken++;
    }
    sp_status closed = sp_stream_close(s, NULL);
    return st != SP_OK ? st : closed;
}

static int bench_batches(sp_context *ctx, const bench_args *a, double t[3], size_t *bad)
{
    size_t n = a->batches * a->batch_records;
    sp_sinmix_params params = {.iters = 0};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1,
                              .chunk_records = a->batch_records};
    sp_pipeline *p = NULL;
    float *in = NULL, *out = NULL, *want = malloc(n * sizeof *want);
    sp_status st = sp_pipeline_create(ctx, &cfg, &p);
    if (st == SP_OK)
        st = sp_host_alloc(ctx, n * sizeof *in, (void **)&in);
    if (st == SP_OK)
        st = sp_host_alloc(ctx, n * sizeof *out, (void **)&out);
    if (st != SP_OK || !want)
        return failed("setting up the batches", st, sp_context_last_error(ctx));
    for (size_t i = 0; i < n; i++)
        in[i] = value_of(i ^ 0x5555);
    sp_sinmix_reference(in, want, n, 0);
    double times[3][64];
    *bad = 0;
    for (int r = -1; r < a->repeat && st == SP_OK; r++) { /* r = -1 warms up */
        for (int mode = 0; mode < 3 && st == SP_OK; mode++) {
            memset(out, 0xFF, n * sizeof *out); /* NaN */
            double t0 = now_s();
            if (mode == 0)
                st = sp_pipeline_run(p, in, n, out, NULL);
            else if (mode == 1)
                for (size_t b = 0; st == SP_OK && b < a->batches; b++)
                    st = sp_pipeline_run(p, in + b * a->batch_records, a->batch_records,
                                         out + b * a->batch_records, NULL);
            else
                st = stream_all(p, in, out, a);
            double dt = now_s() - t0;
            *bad += count_bad(out, want, n);
            if (r >= 0)
                times[mode][r] = dt;
        }
    }
    if (st != SP_OK)
        return failed("the batches", st, sp_pipeline_last_error(p));
    for (int mode = 0; mode < 3; mode++)
        t[mode] = median(times[mode], a->repeat);
    sp_host_free(ctx, in);
    sp_host_free(ctx, out);
    sp_pipeline_destroy(p);
    free(want);
    return 0;
}

/* ---- a generator source against arrays ---------------------------------------------------- */

/* The runs compared, in the order they run in each repeat. */
enum { SRC_MEMCPY, SRC_PAGEABLE, SRC_PINNED, SRC_NONTEMPORAL, SRC_MODES };
static const char *const source_mode_names[SRC_MODES] = {
    "source, memcpy both ways", "pageable array", "pinned array",
    "source, sp_copy_nontemporal both ways"};

static int bench_source(sp_context *ctx, const bench_args *a, double t[SRC_MODES], size_t *bad,
                        double *pinned_mib)
{
    size_t n = a->source_records;
    sp_sinmix_params params = {.iters = 100};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1,
                              .chunk_records = a->source_chunk,
                              .staging_threads = a->staging_threads};
    sp_pipeline *p = NULL;
    float *pageable = malloc(n * sizeof(float)), *out_pageable = malloc(n * sizeof(float));
    float *want = malloc(n * sizeof(float)), *pin_in = NULL, *pin_out = NULL;
    sp_status st = sp_pipeline_create(ctx, &cfg, &p);
    if (st == SP_OK)
        st = sp_host_alloc(ctx, n * sizeof(float), (void **)&pin_in);
    if (st == SP_OK)
        st = sp_host_alloc(ctx, n * sizeof(float), (void **)&pin_out);
    if (st != SP_OK || !pageable || !out_pageable || !want)
        return failed("setting up the source runs", st, sp_context_last_error(ctx));
    for (size_t i = 0; i < n; i++)
        pageable[i] = pin_in[i] = value_of(i);
    sink_target sink = {out_pageable};
    sp_io io = {.read = generate_memcpy, .write = collect_memcpy, .write_user = &sink,
                .n_records = n, .positional = 1};
    sp_io io_nontemporal = io;
    io_nontemporal.read = generate_nontemporal;
    io_nontemporal.write = collect_nontemporal;
    double times[SRC_MODES][64];
    *bad = 0;
    int have_want = 0;
    for (int r = -1; r < a->repeat && st == SP_OK; r++) {
        for (int mode = 0; mode < SRC_MODES && st == SP_OK; mode++) {
            float *out = mode == SRC_PINNED ? pin_out : out_pageable;
            memset(out, 0xFF, n * sizeof(float));
            sp_report report;
            double t0 = now_s();
            if (mode == SRC_MEMCPY || mode == SRC_NONTEMPORAL)
                st = sp_pipeline_run_io(p, mode == SRC_MEMCPY ? &io : &io_nontemporal, &report);
            else
                st = sp_pipeline_run(p, mode == SRC_PAGEABLE ? pageable : pin_in, n, out,
                                     &report);
            double dt = now_s() - t0;
            if (mode == SRC_MEMCPY)
                *pinned_mib = (double)report.pinned_bytes / (1 << 20);
            if (!have_want && st == SP_OK) { /* the first run's output: the expected one */
                memcpy(want, out, n * sizeof(float));
                *bad += sampled_bad(pageable, want, n, params.iters);
                for (size_t i = 0; i < n; i++)
                    *bad += isnan(want[i]);
                have_want = 1;
            }
            *bad += count_bad(out, want, n);
            if (r >= 0)
                times[mode][r] = dt;
        }
    }
    if (st != SP_OK)
        return failed("the source runs", st, sp_pipeline_last_error(p));
    for (int mode = 0; mode < SRC_MODES; mode++)
        t[mode] = median(times[mode], a->repeat);
    sp_host_free(ctx, pin_in);
    sp_host_free(ctx, pin_out);
    sp_pipeline_destroy(p);
    free(pageable);
    free(out_pageable);
    free(want);
    return 0;
}

static void print_batches(const bench_args *a, const char *backend, const double tb[3])
{
    double gb = (double)(a->batches * a->batch_records) * 8.0 / 1e9;
    printf("%zu batches of %zu records (%s), transfer workload, pinned, median of %d:\n",
           a->batches, a->batch_records, backend, a->repeat);
    printf("  one run          %8.2f ms  %6.1f GB/s\n", 1e3 * tb[0], gb / tb[0]);
    printf("  %zu runs       %8.2f ms  %6.1f GB/s  (%.1f us drain+restart per run)\n",
           a->batches, 1e3 * tb[1], gb / tb[1], 1e6 * (tb[1] - tb[0]) / (double)a->batches);
    printf("  one stream       %8.2f ms  %6.1f GB/s  = %.3f of the one run\n", 1e3 * tb[2],
           gb / tb[2], tb[0] / tb[2]);
}

static void print_source(const bench_args *a, const double ts[SRC_MODES], double pinned_mib)
{
    printf("seed workload, %zu records, chunk %zu, %u staging threads (0: chosen), median of "
           "%d (source held %.1f MiB pinned):\n", a->source_records, a->source_chunk,
           a->staging_threads, a->repeat, pinned_mib);
    for (int mode = 0; mode < SRC_MODES; mode++)
        printf("  %-40s %8.2f ms  %.2fx the pageable array\n", source_mode_names[mode],
               1e3 * ts[mode], ts[SRC_PAGEABLE] / ts[mode]);
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){SP_BACKEND_AUTO, 1000, 1u << 18, (size_t)1 << 27, 5, 0, 0, 0};
    for (int i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--source-only") == 0) {
            a->source_only = 1;
            i--;
            continue;
        }
        if (i + 1 >= argc)
            return 0;
        if (strcmp(argv[i], "--backend") == 0)
            a->backend = strcmp(argv[i + 1], "host") == 0 ? SP_BACKEND_HOST : SP_BACKEND_CUDA;
        else if (strcmp(argv[i], "--batches") == 0)
            a->batches = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--batch-records") == 0)
            a->batch_records = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--source-records") == 0)
            a->source_records = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--repeat") == 0)
            a->repeat = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--source-chunk") == 0)
            a->source_chunk = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--staging-threads") == 0)
            a->staging_threads = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else
            return 0;
    }
    return a->batches > 0 && a->batch_records > 0 && a->source_records > 0 && a->repeat > 0 &&
           a->repeat <= 64;
}

int main(int argc, char **argv)
{
    make_pattern();
    bench_args a;
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: stream_bench [--backend host|cuda] [--batches B] "
                "[--batch-records M] [--source-records N] [--repeat R (1..64)] [--source-only] "
                "[--source-chunk RECORDS] [--staging-threads T]\n");
        return 64;
    }
    sp_context *ctx = NULL;
    sp_status st = sp_context_create(a.backend, 0, &ctx);
    if (st != SP_OK) { /* a failed open still yields a handle, whose error says why */
        int rc = failed("opening the backend", st, sp_context_last_error(ctx));
        sp_context_destroy(ctx);
        return rc;
    }
    double tb[3] = {0}, ts[SRC_MODES], pinned_mib = 0;
    size_t bad_b = 0, bad_s = 0;
    int rc = a.source_only ? 0 : bench_batches(ctx, &a, tb, &bad_b);
    if (rc == 0)
        rc = bench_source(ctx, &a, ts, &bad_s, &pinned_mib);
    if (rc == 0) {
        const char *backend = sp_backend_name(sp_context_backend(ctx));
        if (!a.source_only)
            print_batches(&a, backend, tb);
        print_source(&a, ts, pinned_mib);
        printf("bad elements: %zu (batches), %zu (source)\n", bad_b, bad_s);
        printf("{\"tool\":\"stream_bench\",\"backend\":\"%s\",\"batches\":%zu,\"batch_records\":"
               "%zu,\"one_run_s\":%.6f,\"many_runs_s\":%.6f,\"stream_s\":%.6f,"
               "\"stream_vs_one_run\":%.4f,\"source_records\":%zu,\"source_s\":%.6f,"
               "\"pageable_s\":%.6f,\"pinned_s\":%.6f,\"source_vs_pageable\":%.4f,"
               "\"source_memcpy_s\":%.6f,\"source_memcpy_vs_pageable\":%.4f,"
               "\"pinned_mib\":%.2f,\"bad_elements\":%zu}\n",
               backend, a.source_only ? 0 : a.batches, a.batch_records, tb[0], tb[1], tb[2],
               tb[2] > 0 ? tb[0] / tb[2] : 0.0, a.source_records, ts[SRC_NONTEMPORAL],
               ts[SRC_PAGEABLE], ts[SRC_PINNED], ts[SRC_PAGEABLE] / ts[SRC_NONTEMPORAL],
               ts[SRC_MEMCPY], ts[SRC_PAGEABLE] / ts[SRC_MEMCPY], pinned_mib,
               bad_b + bad_s);
        rc = bad_b + bad_s ? 1 : 0;
    }
    sp_context_destroy(ctx);
    return rc;
}
