/* --sweep: the rows (the listed values, and the default setting where the list lacks it),
 * each with expected values for its setting, timed --repeat times without a report and once
 * with one (efficiency, bottleneck) on a pipeline of its own, every element of every output
 * checked (bench_timed_run); then the speedups against the default row and the fastest row. */
#include <stdio.h>
#include <string.h>

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

static void summarize(const bench_session *s, const char *title, bench_sweep_row *row)
{
    row->median_s = cli_median(row->seconds, row->runs);
    row->gbps = bench_gbps(s->plan, row->median_s);
    row->method = s->expected->method;
    char text[256];
    snprintf(text, sizeof text, "sweep %s: median %.4f s of %zu run%s, efficiency %.1f%%, "
                                "bottleneck %s (outputs verified)",
             title, row->median_s, row->runs, row->runs == 1 ? "" : "s",
             100.0 * row->report.efficiency, row->report.bottleneck);
    bench_progress_note(s->progress, text);
}

static int measure_row(const bench_session *s, const bench_plan *setting, const char *title,
                        bench_sweep_row *row, sp_pipeline **pipeline)
{
    *pipeline = NULL;
    row->params.iters = setting->iters;
    int rc = prepare_expected(s, setting);
    if (rc == CLI_EXIT_OK)
        rc = bench_adopt_serial_output(s, setting, &row->params);
    sp_stage sinmix = bench_sinmix_stage(setting, &row->params);
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, &sinmix, bench_pipeline_config(setting),
                                   "creating the pipeline", pipeline);
    bench_run_spec spec = {"pipelined", *pipeline, sp_pipeline_run, s->buffers->in,
                           s->buffers->out, 0, NULL, NULL, NULL};
    if (rc == CLI_EXIT_OK)
        rc = bench_time_repeats(s, &spec, title, row->seconds, &row->runs, &row->report);
    if (rc == CLI_EXIT_OK)
        summarize(s, title, row);
    return rc;
}

/* The plan with `value` in place of the swept setting; everything else as given. */
static void setting_for(const bench_plan *plan, bench_sweep_parameter parameter,
                        unsigned long long value, bench_plan *setting)
{
    *setting = *plan;
    switch (parameter) {
    case BENCH_SWEEP_NONE: break;
    case BENCH_SWEEP_CHUNK: setting->chunk_records = (size_t)value; break;
    case BENCH_SWEEP_DEPTH: setting->depth = (unsigned)value; break;
    case BENCH_SWEEP_ITERS: setting->iters = (unsigned)value; break;
    }
}

/* The setting the bench uses without --sweep, as *config (what the pipeline is created with,
 * 0 = the library's choice) and *value (what that comes to): a chosen chunk or depth is asked
 * of a pipeline made with the plan's settings. */
static int resolve_default(const bench_session *s, unsigned long long *config,
                           unsigned long long *value)
{
    const bench_plan *plan = s->plan;
    bench_sweep_parameter parameter = plan->sweep.parameter;
    *config = parameter == BENCH_SWEEP_CHUNK   ? plan->chunk_records
              : parameter == BENCH_SWEEP_DEPTH ? plan->depth
                                               : plan->iters;
    *value = *config;
    if (*config != 0 || parameter == BENCH_SWEEP_ITERS)
        return CLI_EXIT_OK;
    sp_sinmix_params params = {plan->iters};
    sp_stage sinmix = bench_sinmix_stage(plan, &params);
    sp_pipeline *pipeline = NULL;
    int rc = bench_create_pipeline(s->ctx, &sinmix, bench_pipeline_config(plan),
                                   "creating the pipeline", &pipeline);
    if (rc == CLI_EXIT_OK)
        *value = parameter == BENCH_SWEEP_CHUNK
                     ? sp_pipeline_chunk_records(pipeline, plan->records)
                     : sp_pipeline_depth(pipeline);
    sp_pipeline_destroy(pipeline);
    return rc;
}

static void add_row(bench_sweep_result *sweep, unsigned long long config,
                    unsigned long long value, int is_default)
{
    bench_sweep_row *row = &sweep->rows[sweep->n_rows];
    row->config_value = config;
    row->value = value;
    row->is_default = is_default;
    if (is_default)
        sweep->default_row = sweep->n_rows;
    sweep->n_rows++;
}

/* The listed values in their order, the default inserted before the first larger value when
 * it is not listed (so an ascending list stays ascending). */
static void build_rows(const bench_sweep_request *request, unsigned long long config,
                       unsigned long long value, bench_sweep_result *sweep)
{
    int placed = 0;
    for (size_t i = 0; i < request->n_values; i++)
        placed |= request->values[i] == value;
    for (size_t i = 0; i < request->n_values; i++) {
        unsigned long long listed = request->values[i];
        if (!placed && value < listed) {
            add_row(sweep, config, value, 1);
            placed = 1;
        }
        add_row(sweep, listed, listed, listed == value);
    }
    if (!placed)
        add_row(sweep, config, value, 1);
}

static void format_title(const bench_sweep_result *sweep, size_t index, char *title,
                         size_t size)
{
    const bench_sweep_row *row = &sweep->rows[index];
    snprintf(title, size, "%s %llu%s (%zu/%zu)", bench_sweep_parameter_name(sweep->parameter),
             row->value, row->is_default ? " default" : "", index + 1, sweep->n_rows);
}

/* The fastest row (the first of equals) and every row's speedup over the default row. */
static void compare_rows(bench_sweep_result *sweep)
{
    double default_s = sweep->rows[sweep->default_row].median_s;
    sweep->best_row = 0;
    for (size_t i = 0; i < sweep->n_rows; i++) {
        bench_sweep_row *row = &sweep->rows[i];
        row->speedup = row->median_s > 0.0 ? default_s / row->median_s : 0.0;
        if (row->median_s < sweep->rows[sweep->best_row].median_s)
            sweep->best_row = i;
    }
}

static int export_best(const bench_session *s, const bench_sweep_result *sweep)
{
    const bench_sweep_row *best = &sweep->rows[sweep->best_row];
    char describes[96];
    snprintf(describes, sizeof describes, "the fastest row's run with a report (%s %llu)",
             bench_sweep_parameter_name(sweep->parameter), best->value);
    return bench_exports_write(s->exports, &best->report, describes);
}

/* Measures every row, each on a pipeline of its own that goes at once: where files are
 * wanted, each row's report keeps its run's timeline (keep_timeline), and the fastest
 * row's is written from it. */
static int measure_rows(const bench_session *s, bench_sweep_result *sweep)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < sweep->n_rows && rc == CLI_EXIT_OK; i++) {
        bench_plan setting;
        char title[96];
        sp_pipeline *pipeline = NULL;
        setting_for(s->plan, sweep->parameter, sweep->rows[i].config_value, &setting);
        format_title(sweep, i, title, sizeof title);
        /* Nothing before the row's first run draws the line, so anything printed while the
         * row gets ready (a reference, a failure to create its pipeline) starts clean. */
        bench_progress_clear(s->progress);
        rc = measure_row(s, &setting, title, &sweep->rows[i], &pipeline);
        sp_pipeline_destroy(pipeline);
    }
    bench_progress_clear(s->progress);
    if (rc == CLI_EXIT_OK)
        compare_rows(sweep);
    if (rc == CLI_EXIT_OK && bench_exports_wanted(s->exports))
        rc = export_best(s, sweep);
    for (size_t i = 0; i < sweep->n_rows; i++)
        sp_report_release(&sweep->rows[i].report); /* the figures stay, for the table */
    return rc;
}

int bench_sweep_all(const bench_session *s, bench_sweep_result *sweep)
{
    unsigned long long config = 0, value = 0;
    memset(sweep, 0, sizeof *sweep);
    sweep->parameter = s->plan->sweep.parameter;
    int rc = resolve_default(s, &config, &value);
    if (rc != CLI_EXIT_OK)
        return rc;
    build_rows(&s->plan->sweep, config, value, sweep);
    fprintf(stderr, "bench: sweeping %s over %zu values, %u runs each + 1 with a report\n",
            bench_sweep_parameter_name(sweep->parameter), sweep->n_rows, s->plan->repeat);
    return measure_rows(s, sweep);
}
