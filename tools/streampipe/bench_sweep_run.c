/* One row of a sweep: expected values for its setting, the timed repeats without a report,
 * and one run with a report for the efficiency and the bottleneck. Every run goes through
 * bench_timed_run, so every element of every output is checked here as in the comparison. */
#include <stdio.h>

#include "bench.h"
#include "cli.h"

/* The expected output depends only on the input and iters: chunk and depth sweeps compute it
 * once, an iters sweep for every row. */
static int prepare_expected(const bench_session *s, const bench_plan *setting)
{
    bench_expected *e = s->expected;
    if (e->values != NULL && e->iters == setting->iters)
        return CLI_EXIT_OK;
    bench_expected_free(e);
    int rc = bench_expected_prepare(setting, s->buffers->in, e);
    if (rc != CLI_EXIT_OK)
        return rc;
    bench_progress_clear(s->progress);
    fprintf(stderr, "bench: verification at iters %u: %s, reference computed in %.3f s on %u "
                    "threads\n", e->iters, bench_check_method_name(e->method), e->reference_s,
            e->workers);
    return CLI_EXIT_OK;
}

/* A SAMPLED check adopts the first serial output that passes it as the expected value of
 * every element (bench_verify.c), so a serial run comes before the row's (or the group's)
 * pipelined runs. */
int bench_adopt_serial_output(const bench_session *s, const bench_plan *setting,
                              const sp_sinmix_params *params)
{
    if (s->expected->method != BENCH_CHECK_SAMPLED || s->expected->have_values)
        return CLI_EXIT_OK;
    sp_stage sinmix = sp_sinmix_stage(params);
    sp_pipeline_config config = {.chunk_records = setting->serial_chunk_records, .depth = 1};
    sp_pipeline *serial = NULL;
    int rc = bench_create_pipeline(s->ctx, &sinmix, config, "creating the serial pipeline",
                                   &serial);
    if (rc == CLI_EXIT_OK) {
        bench_run_spec spec = {"serial", serial, sp_pipeline_run_serial, s->buffers->in,
                               s->buffers->out, 0, NULL};
        char label[96];
        snprintf(label, sizeof label, "serial run for the expected output at iters %u",
                 setting->iters);
        double seconds = 0.0;
        rc = bench_timed_run(s, &spec, label, NULL, &seconds);
    }
    sp_pipeline_destroy(serial);
    return rc;
}

static void summarize(const bench_session *s, const char *title, bench_sweep_row *row)
{
    double bytes = 2.0 * (double)bench_bytes(s->plan);
    row->median_s = cli_median(row->seconds, row->runs);
    row->gbps = cli_gbps(bytes, row->median_s);
    row->method = s->expected->method;
    char text[256];
    snprintf(text, sizeof text, "sweep %s: median %.4f s of %zu run%s, efficiency %.1f%%, "
                                "bottleneck %s (outputs verified)",
             title, row->median_s, row->runs, row->runs == 1 ? "" : "s",
             100.0 * row->report.efficiency, row->report.bottleneck);
    bench_progress_note(s->progress, text);
}

int bench_sweep_measure(const bench_session *s, const bench_plan *setting, const char *title,
                        bench_sweep_row *row, sp_pipeline **pipeline)
{
    *pipeline = NULL;
    row->params.iters = setting->iters;
    int rc = prepare_expected(s, setting);
    if (rc == CLI_EXIT_OK)
        rc = bench_adopt_serial_output(s, setting, &row->params);
    sp_stage sinmix = sp_sinmix_stage(&row->params);
    sinmix.streams = setting->stage_streams;
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, &sinmix, bench_pipeline_config(setting),
                                   "creating the pipeline", pipeline);
    bench_run_spec spec = {"pipelined", *pipeline, sp_pipeline_run, s->buffers->in,
                           s->buffers->out, 0, NULL};
    if (rc == CLI_EXIT_OK)
        rc = bench_time_repeats(s, &spec, title, row->seconds, &row->runs, &row->report);
    if (rc == CLI_EXIT_OK)
        summarize(s, title, row);
    return rc;
}
