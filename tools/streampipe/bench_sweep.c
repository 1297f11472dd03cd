/* Lists of --workload, --group-size, --iters, --chunk and --depth: a row per combination
 * (a plain pipeline, or an sp_group of that many pipelines on --device), each with
 * expected values for its records and iters, timed --repeat times without a report and once with one (efficiency,
 * bottleneck) on a pipeline of its own, every element of every output checked
 * (bench_timed_run); then the fastest row, and each row against it. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

/* The expected output depends only on the input, its records and iters: computed again only
 * when they change (workload and iters are the outermost lists, so once per pair). */
static int prepare_expected(const bench_session *s, const bench_plan *setting)
{
    bench_expected *e = s->expected;
    if (e->values != NULL && e->iters == setting->iters && e->records == setting->records)
        return CLI_EXIT_OK;
    bench_expected_free(e);
    int rc = bench_expected_prepare(setting, s->buffers->in, e);
    if (rc != CLI_EXIT_OK)
        return rc;
    bench_progress_clear(s->progress);
    fprintf(stderr, "bench: verification of %zu records at iters %u: %s, reference computed in "
                    "%.3f s on %u threads\n", e->records, e->iters,
            bench_check_method_name(e->method), e->reference_s, e->workers);
    return CLI_EXIT_OK;
}

static void summarize(const bench_session *s, const char *title, bench_sweep_row *row)
{
    row->median_s = cli_median(row->seconds, row->runs);
    row->gbps = bench_gbps(s->plan, row->median_s);
    row->method = s->expected->method;
    char text[256];
    snprintf(text, sizeof text, "row %s: median %.4f s of %zu run%s, efficiency %.1f%%, "
                                "bottleneck %s (outputs verified)",
             title, row->median_s, row->runs, row->runs == 1 ? "" : "s",
             100.0 * row->report.efficiency, row->report.bottleneck);
    bench_progress_note(s->progress, text);
}

/* The row's pipeline, or with a group size its sp_group of that many pipelines on --device:
 * one of the two is left NULL. */
static int create_runner(const bench_session *s, const bench_plan *setting,
                         const sp_stage *sinmix, sp_pipeline **pipeline, sp_group **group)
{
    if (setting->n_devices > 0)
        return bench_create_group(s, sinmix, group);
    return bench_create_pipeline(s->ctx, sinmix, bench_pipeline_config(setting),
                                 "creating the pipeline", pipeline);
}

static int measure_row(const bench_session *s, const bench_plan *setting, const char *title,
                       bench_sweep_row *row, sp_pipeline **pipeline)
{
    *pipeline = NULL;
    sp_group *group = NULL;
    row->params.iters = setting->iters;
    int rc = prepare_expected(s, setting);
    if (rc == CLI_EXIT_OK)
        rc = bench_adopt_serial_output(s, setting, &row->params);
    sp_stage sinmix = bench_sinmix_stage(setting, &row->params);
    if (rc == CLI_EXIT_OK)
        rc = create_runner(s, setting, &sinmix, pipeline, &group);
    row->pipelines = group ? sp_group_size(group) : 1;
    bench_run_spec spec = {group ? "group" : "pipelined", *pipeline, sp_pipeline_run,
                           s->buffers->in, s->buffers->out, 0, group, NULL, NULL};
    if (rc == CLI_EXIT_OK)
        rc = bench_time_repeats(s, &spec, title, row->seconds, &row->runs, &row->report);
    if (rc == CLI_EXIT_OK)
        summarize(s, title, row);
    sp_group_destroy(group);
    return rc;
}

/* The plan with the row's workload and settings; everything else as given. */
static void setting_for(const bench_plan *plan, const bench_sweep_row *row, size_t workload,
                        bench_plan *setting)
{
    bench_plan_workload(plan, workload, setting);
    setting->n_devices = row->group_size;
    for (size_t k = 0; k < row->group_size; k++)
        setting->devices[k] = plan->device;
    setting->iters = row->iters;
    setting->chunk_records = row->set_chunk_records < setting->records ? row->set_chunk_records
                                                                       : setting->records;
    setting->depth = row->set_depth;
}

/* An option's list, or where the option was not given, the workload's one value. */
static cli_list row_list(const cli_list *given, int is_given, unsigned long long value)
{
    cli_list list = {1, 0, {value}};
    return is_given ? *given : list;
}

/* Every combination of the plan's lists, workload outermost, then group size, iters, chunk
 * and depth. */
static void build_rows(const bench_plan *plan, bench_sweep_result *sweep)
{
    cli_list groups = row_list(&plan->group_list, plan->group_list.n > 0, 0);
    for (size_t w = 0; w < plan->n_workloads; w++) {
        bench_plan setting;
        bench_plan_workload(plan, w, &setting);
        cli_list iters = row_list(&plan->iters_list, plan->iters_given, setting.iters);
        cli_list chunk = row_list(&plan->chunk_list, plan->chunk_given, setting.chunk_records);
        const cli_list *depth = &plan->depth_list;
        for (size_t g = 0; g < groups.n; g++)
            for (size_t i = 0; i < iters.n; i++)
                for (size_t c = 0; c < chunk.n; c++)
                    for (size_t d = 0; d < depth->n && sweep->n_rows < BENCH_MAX_ROWS; d++) {
                        bench_sweep_row *row = &sweep->rows[sweep->n_rows];
                        sweep->workload_of[sweep->n_rows++] = w;
                        row->workload = setting.workload;
                        row->group_size = (unsigned)groups.items[g];
                        row->records = setting.records;
                        row->iters = (unsigned)iters.items[i];
                        row->set_chunk_records = (size_t)chunk.items[c];
                        row->set_depth = (unsigned)depth->items[d];
                    }
    }
}

/* "auto" for the library's choice, else the number. */
static const char *asked(unsigned long long value, char *buf, size_t size)
{
    if (value == 0)
        return "auto";
    snprintf(buf, size, "%llu", value);
    return buf;
}

/* "small iters 10 chunk auto depth 4", "small group 2 iters ...". */
static const char *row_settings(const bench_sweep_row *row, char *buf, size_t size)
{
    char chunk[24], depth[24], group[24] = "";
    if (row->group_size > 0)
        snprintf(group, sizeof group, " group %u", row->group_size);
    snprintf(buf, size, "%s%s iters %u chunk %s depth %s", row->workload, group, row->iters,
             asked(row->set_chunk_records, chunk, sizeof chunk),
             asked(row->set_depth, depth, sizeof depth));
    return buf;
}

static void format_title(const bench_sweep_result *sweep, size_t index, char *title,
                         size_t size)
{
    char settings[80];
    snprintf(title, size, "%s (%zu/%zu)",
             row_settings(&sweep->rows[index], settings, sizeof settings), index + 1,
             sweep->n_rows);
}

/* The fastest row (the first of equals) and every row against it. */
static void compare_rows(bench_sweep_result *sweep)
{
    sweep->best_row = 0;
    for (size_t i = 0; i < sweep->n_rows; i++)
        if (sweep->rows[i].median_s < sweep->rows[sweep->best_row].median_s)
            sweep->best_row = i;
    double best_s = sweep->rows[sweep->best_row].median_s;
    for (size_t i = 0; i < sweep->n_rows; i++) {
        bench_sweep_row *row = &sweep->rows[i];
        row->vs_best = row->median_s > 0.0 ? best_s / row->median_s : 0.0;
    }
}

static int export_best(const bench_session *s, const bench_sweep_result *sweep)
{
    const bench_sweep_row *best = &sweep->rows[sweep->best_row];
    char describes[128], settings[80];
    snprintf(describes, sizeof describes, "the fastest row's run with a report (%s)",
             row_settings(best, settings, sizeof settings));
    return bench_exports_write(s->exports, &best->report, describes);
}

/* Where files are wanted every row's report keeps its run's timeline (keep_timeline); of up
 * to BENCH_MAX_ROWS rows only the fastest so far (the first of equals, as compare_rows picks)
 * keeps it, the others' go at once, their figures kept. */
static void keep_fastest_timeline(bench_sweep_result *sweep, size_t row, size_t *kept)
{
    if (row == *kept)
        return;
    size_t slower = sweep->rows[row].median_s < sweep->rows[*kept].median_s ? *kept : row;
    *kept = slower == row ? *kept : row;
    sp_report_release(&sweep->rows[slower].report);
}

/* Measures every row, each on a pipeline (or group) of its own that goes at once: where files
 * are wanted, the fastest row's are written from its report's timeline. */
static int measure_rows(const bench_session *s, bench_sweep_result *sweep)
{
    size_t kept = 0;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < sweep->n_rows && rc == CLI_EXIT_OK; i++) {
        bench_plan setting;
        char title[112];
        sp_pipeline *pipeline = NULL;
        setting_for(s->plan, &sweep->rows[i], sweep->workload_of[i], &setting);
        format_title(sweep, i, title, sizeof title);
        /* The row's records: its runs, checks and rate are over those. */
        bench_session row_session = *s;
        row_session.plan = &setting;
        /* Nothing before the row's first run draws the line, so anything printed while the
         * row gets ready (a reference, a failure to create its pipeline) starts clean. */
        bench_progress_clear(s->progress);
        rc = measure_row(&row_session, &setting, title, &sweep->rows[i], &pipeline);
        sp_pipeline_destroy(pipeline);
        if (rc == CLI_EXIT_OK)
            keep_fastest_timeline(sweep, i, &kept);
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
    const bench_plan *plan = s->plan;
    memset(sweep, 0, sizeof *sweep);
    build_rows(plan, sweep);
    fprintf(stderr, "bench: %zu rows (workload, group size, iters, chunk, depth), %u runs each + "
                    "1 with a "
                    "report\n", sweep->n_rows, plan->repeat);
    return measure_rows(s, sweep);
}
