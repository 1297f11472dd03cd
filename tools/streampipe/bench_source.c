/* --source generator: the job's input made by a positional generator source through
 * sp_pipeline_run_io (values written straight into the pinned staging, results copied
 * straight out of it into the job's output array), against the same values as the job's
 * array (--memory) and, when that is pageable, as a pinned array; the source twice: plain
 * stores and memcpy, and sp_copy_nontemporal both ways (as the library's own staging copies).
 * Every element of every output is checked (bench_timed.c). What bench/stream_bench.c's source
 * rows timed, as a bench job. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

/* Record i's value, in [-4, 4): a pattern of PATTERN values (a multiplicative hash of the
 * index) repeated. A generator must cost less than the host copy it saves for the comparison
 * to be about that copy: a hash computed per value cost more than a memcpy of the same bytes,
 * where copying the cache-resident pattern costs about half a staging copy (bench/PERF.md). */
#define PATTERN 16384u /* values: 64 KiB, resident in L2 */
static float pattern[PATTERN];

static void make_pattern(void)
{
    for (uint32_t k = 0; k < PATTERN; k++) {
        uint32_t h = k * 2654435761u;
        pattern[k] = (float)(int32_t)(h >> 8) * (8.0f / 16777216.0f) - 4.0f;
    }
}

typedef void (*copy_fn)(void *dst, const void *src, size_t bytes);

/* Records [first, first + n) of the pattern into out, a piece per pass over it. */
static void fill_values(float *out, size_t first, size_t n, copy_fn copy)
{
    for (size_t done = 0; done < n;) {
        size_t at = (first + done) % PATTERN, len = PATTERN - at;
        len = len > n - done ? n - done : len;
        copy(out + done, pattern + at, len * sizeof(float));
        done += len;
    }
}

static void copy_plain(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

void bench_source_fill(float *in, size_t n)
{
    make_pattern();
    fill_values(in, 0, n, copy_plain);
}

static sp_status generate_plain(void *dst, size_t first, size_t max, size_t *records,
                                void *user)
{
    (void)user;
    fill_values(dst, first, max, copy_plain);
    *records = max;
    return SP_OK;
}

static sp_status generate_nontemporal(void *dst, size_t first, size_t max, size_t *records,
                                      void *user)
{
    (void)user;
    fill_values(dst, first, max, sp_copy_nontemporal);
    *records = max;
    return SP_OK;
}

static sp_status collect_plain(const void *src, size_t first, size_t records, void *user)
{
    memcpy((float *)user + first, src, records * sizeof(float));
    return SP_OK;
}

static sp_status collect_nontemporal(const void *src, size_t first, size_t records, void *user)
{
    sp_copy_nontemporal((float *)user + first, src, records * sizeof(float));
    return SP_OK;
}

/* bench_run_fn's shape: `in` is unused (the generator makes it), `out` is the sink's. */
static sp_status run_source(sp_pipeline *pipeline, size_t n_records, void *out,
                            sp_report *report, int nontemporal)
{
    sp_io io = SP_IO_INIT;
    io.read = nontemporal ? generate_nontemporal : generate_plain;
    io.write = nontemporal ? collect_nontemporal : collect_plain;
    io.write_user = out;
    io.n_records = n_records;
    io.positional = 1;
    return sp_pipeline_run_io(pipeline, &io, report);
}

static sp_status run_source_plain(sp_pipeline *pipeline, const void *in, size_t n_records,
                                  void *out, sp_report *report)
{
    (void)in;
    return run_source(pipeline, n_records, out, report, 0);
}

static sp_status run_source_nontemporal(sp_pipeline *pipeline, const void *in,
                                        size_t n_records, void *out, sp_report *report)
{
    (void)in;
    return run_source(pipeline, n_records, out, report, 1);
}

/* The kinds, in the order they run: the source's, the job's array, a pinned array when the
 * job's is pageable (the ceiling's buffers, which hold the same values), the other source. */
static size_t source_specs(const bench_session *s, sp_pipeline *pipeline,
                           bench_run_spec spec[BENCH_SOURCE_KINDS])
{
    const bench_buffers *b = s->buffers;
    size_t n = 0;
    spec[n++] = (bench_run_spec){"source, memcpy", pipeline, run_source_plain, b->in, b->out,
                                 0, NULL, NULL, NULL};
    spec[n++] = (bench_run_spec){s->plan->memory == BENCH_MEMORY_PINNED ? "pinned array"
                                                                        : "pageable array",
                                 pipeline, sp_pipeline_run, b->in, b->out, 0, NULL, NULL, NULL};
    if (b->ceiling_in != b->in)
        spec[n++] = (bench_run_spec){"pinned array", pipeline, sp_pipeline_run, b->ceiling_in,
                                     b->ceiling_out, 0, NULL, NULL, NULL};
    spec[n++] = (bench_run_spec){"source, nontemporal", pipeline, run_source_nontemporal,
                                 b->in, b->out, 0, NULL, NULL, NULL};
    return n;
}

int bench_source_all(const bench_session *s, bench_source_result *result)
{
    const bench_plan *plan = s->plan;
    sp_sinmix_params params = {plan->iters};
    sp_stage sinmix = bench_sinmix_stage(plan, &params);
    sp_pipeline *pipeline = NULL;
    int rc = bench_adopt_serial_output(s, plan, &params);
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, &sinmix, bench_pipeline_config(plan),
                                   "creating the pipeline", &pipeline);
    bench_run_spec spec[BENCH_SOURCE_KINDS];
    result->n_kinds = source_specs(s, pipeline, spec);
    fprintf(stderr, "bench: a generator source against arrays, %zu kinds, %u runs each + 1 "
                    "with a report\n", result->n_kinds, plan->repeat);
    for (size_t k = 0; k < result->n_kinds && rc == CLI_EXIT_OK; k++)
        rc = bench_time_kind(s, &spec[k], &result->series[k]);
    bench_progress_clear(s->progress);
    sp_pipeline_destroy(pipeline);
    double array_s = result->series[1].median_s;
    for (size_t k = 0; k < result->n_kinds; k++) {
        double median_s = result->series[k].median_s;
        result->vs_array[k] = median_s > 0.0 ? array_s / median_s : 0.0;
    }
    return rc;
}

static const fig_column columns[] = {
    {"name", "", -20, "%s", FIG_STR},
    {"seconds", NULL, 0, NULL, FIG_LIST},
    {"median_s", "median s", 10, "%.4f", FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
    {"vs_array", "of array", 9, "%.3f", FIG_NUM},
    {"chunk_records", "chunk", 10, "%llu", FIG_UINT},
    {"chunks", "chunks", 8, "%llu", FIG_UINT},
    {"depth", "depth", 6, "%llu", FIG_UINT},
    {"pinned_mib", "pinned MiB", 11, "%.1f", FIG_NUM},
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

void bench_source_print_result(const bench_plan *plan, const bench_expected *expected,
                               const bench_source_result *result, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_kinds_begin(&o, plan, expected, &result->checks, "source");
    fig_table(&o, "rows", columns, N_COLUMNS);
    for (size_t k = 0; k < result->n_kinds; k++) {
        const bench_kind_series *r = &result->series[k];
        fig_value v[N_COLUMNS] = {{.str = r->name}, {.list = {r->seconds, r->runs}},
                                  {.num = r->median_s}, {.num = r->gbps},
                                  {.num = result->vs_array[k]},
                                  {.uint = r->report.chunk_records}, {.uint = r->report.chunks},
                                  {.uint = r->report.depth},
                                  {.num = (double)r->report.pinned_bytes / (1 << 20)}};
        fig_row(&o, NULL, columns, N_COLUMNS, v);
    }
    fig_table_end(&o);
    fig_group_end(&o);
    fig_text(&o, NULL, "\n");
    fig_text(&o, "of array", "the job's array's median / the row's (above 1: faster)\n");
    fig_text(&o, "pinned MiB", "pinned staging the pipeline held in the run with a report\n");
    fig_end(&o);
}
