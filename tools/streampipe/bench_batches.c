/* --batches B: the run's records submitted as B batches through one stream (sp_stream_submit
 * of consecutive slices, one ring under all of them), timed beside one sp_pipeline_run of the
 * same records and beside B sp_pipeline_run calls of the same slices (each drains the ring),
 * on the same pipeline, in one process: what cutting work into batches costs. Every element of every output is checked (bench_timed.c), as in the
 * comparison. What bench/stream_bench.c's batches row timed, as a bench job. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"

/* bench_run_fn has no argument for the count, and one job runs at a time. */
static size_t batches_per_run;

static sp_status run_as_batches(sp_pipeline *pipeline, const void *in, size_t n_records,
                                void *out, sp_report *report)
{
    sp_stream_config config = SP_STREAM_CONFIG_INIT;
    config.max_in_flight = 8; /* as bench/stream_bench.c had it */
    sp_stream *stream = NULL;
    sp_status status = sp_stream_open(pipeline, &config, &stream);
    size_t each = n_records / batches_per_run, rest = n_records % batches_per_run, first = 0;
    for (size_t b = 0; b < batches_per_run && status == SP_OK; b++) {
        size_t count = each + (b < rest); /* the first `rest` batches take one more */
        status = sp_stream_submit(stream, (const float *)in + first, count,
                                  (float *)out + first, (uint64_t)b);
        first += count;
    }
    /* Close drains every batch; its status is the first failure of any. */
    sp_status closed = sp_stream_close(stream, report);
    return status != SP_OK ? status : closed;
}

/* The same slices as B sp_pipeline_run calls: what a stream saves is the drain between runs.
 * With a report, the last run's, with the counts and times of all B added up. */
static sp_status run_each_batch(sp_pipeline *pipeline, const void *in, size_t n_records,
                                void *out, sp_report *report)
{
    size_t each = n_records / batches_per_run, rest = n_records % batches_per_run, first = 0;
    sp_report one, sum = {0};
    sp_status status = SP_OK;
    for (size_t b = 0; b < batches_per_run && status == SP_OK; b++) {
        size_t count = each + (b < rest);
        status = sp_pipeline_run(pipeline, (const float *)in + first, count,
                                 (float *)out + first, report ? &one : NULL);
        first += count;
        if (report != NULL && status == SP_OK) {
            sum.records += one.records;
            sum.chunks += one.chunks;
            sum.pcie_bytes += one.pcie_bytes;
            sum.makespan_s += one.makespan_s;
        }
    }
    if (report != NULL && status == SP_OK) {
        *report = one;
        report->records = sum.records;
        report->chunks = sum.chunks;
        report->pcie_bytes = sum.pcie_bytes;
        report->makespan_s = sum.makespan_s;
        report->batches = batches_per_run;
    }
    return status;
}

int bench_batches_all(const bench_session *s, bench_batches_result *result)
{
    const bench_plan *plan = s->plan;
    if (plan->batches > plan->records)
        return cli_usage_error("--batches: %zu batches is more than the %zu records",
                               plan->batches, plan->records);
    batches_per_run = plan->batches;
    result->batches = plan->batches;
    sp_sinmix_params params = {plan->iters};
    sp_stage sinmix = bench_sinmix_stage(plan, &params);
    sp_pipeline *pipeline = NULL;
    int rc = bench_adopt_serial_output(s, plan, &params);
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, &sinmix, bench_pipeline_config(plan),
                                   "creating the pipeline", &pipeline);
    fprintf(stderr, "bench: one run against %zu batches through one stream, %u runs each + 1 "
                    "with a report\n", plan->batches, plan->repeat);
    bench_run_spec run = {"one run", pipeline, sp_pipeline_run, s->buffers->in, s->buffers->out,
                          0, NULL, NULL, NULL};
    bench_run_spec runs = run, stream = run;
    runs.name = "runs";
    runs.run = run_each_batch;
    stream.name = "stream";
    stream.run = run_as_batches;
    if (rc == CLI_EXIT_OK)
        rc = bench_time_kind(s, &run, &result->series[0]);
    if (rc == CLI_EXIT_OK)
        rc = bench_time_kind(s, &runs, &result->series[1]);
    if (rc == CLI_EXIT_OK)
        rc = bench_time_kind(s, &stream, &result->series[2]);
    bench_progress_clear(s->progress);
    sp_pipeline_destroy(pipeline);
    const bench_kind_series *one = &result->series[0];
    for (size_t i = 1; i < BENCH_BATCHES_KINDS; i++) {
        double median_s = result->series[i].median_s;
        result->vs_run[i - 1] = median_s > 0.0 ? one->median_s / median_s : 0.0;
    }
    return rc;
}

static const fig_column columns[] = {
    {"name", "", -8, "%s", FIG_STR},
    {"batches", "batches", 8, "%llu", FIG_UINT},
    {"seconds", NULL, 0, NULL, FIG_LIST},
    {"median_s", "median s", 10, "%.4f", FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
    {"chunk_records", "chunk", 10, "%llu", FIG_UINT},
    {"chunks", "chunks", 8, "%llu", FIG_UINT},
    {"depth", "depth", 6, "%llu", FIG_UINT},
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

void bench_batches_print_result(const bench_plan *plan, const bench_expected *expected,
                                const bench_batches_result *result, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_kinds_begin(&o, plan, expected, &result->checks, "batches");
    fig_table(&o, "rows", columns, N_COLUMNS);
    for (size_t i = 0; i < BENCH_BATCHES_KINDS; i++) {
        const bench_kind_series *r = &result->series[i];
        fig_value v[N_COLUMNS] = {{.str = r->name}, {.uint = i == 0 ? 1 : result->batches},
                                  {.list = {r->seconds, r->runs}}, {.num = r->median_s},
                                  {.num = r->gbps}, {.uint = r->report.chunk_records},
                                  {.uint = r->report.chunks}, {.uint = r->report.depth}};
        fig_row(&o, NULL, columns, N_COLUMNS, v);
    }
    fig_table_end(&o);
    fig_text(&o, NULL, "\n");
    fig_num(&o, "runs_vs_run", "runs", "%.3f of one run's speed (its median / theirs)",
            result->vs_run[0]);
    fig_num(&o, "stream_vs_run", "stream", "%.3f of one run's speed (its median / the "
            "stream's)", result->vs_run[1]);
    fig_group_end(&o);
    fig_end(&o);
}
