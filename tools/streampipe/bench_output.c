/* The result of `streampipe bench`, as text or as one JSON object (--json), from one
 * description: the job, how it was checked, the timing table, then the pipelined run's own
 * report (the median run's). Times in seconds, rates in GB/s (1e9 bytes per second). */
#include "bench.h"
#include "report_out.h"
#include "stats.h"

void bench_job_figures(fig_out *o, const bench_plan *plan)
{
    static const char *const graph_names[] = {"off", "on", "auto"}; /* sp_graph_mode's */
    char bytes[32];
    cli_tool_figures(o, "streampipe bench");
    fig_str(o, "backend", "backend", plan->backend == SP_BACKEND_CUDA ? "%s" :
            "%s (CPU worker threads, no GPU)", sp_backend_name(plan->backend));
    fig_uint(o, "device", plan->backend == SP_BACKEND_CUDA ? "device" : NULL, "%llu",
             (unsigned long long)plan->device);
    fig_str(o, "workload", "workload", plan->workload_changed ? "%s (changed by options)" : "%s",
            plan->workload);
    fig_bool(o, "workload_changed", NULL, plan->workload_changed, NULL, NULL);
    fig_uint(o, "records", "records", "%llu float32", plan->records);
    fig_uint(o, "iters", "sinmix iters", "%llu", plan->iters);
    fig_uint(o, "bytes_in", NULL, NULL, bench_bytes(plan));
    fig_uint(o, "bytes_out", NULL, NULL, bench_bytes(plan));
    fig_text(o, "bytes", "%s each way\n",
             cli_format_bytes((double)bench_bytes(plan), bytes, sizeof bytes));
    fig_str(o, "memory", "memory", plan->memory == BENCH_MEMORY_PINNED ? "%s (sp_host_alloc)"
            : "%s (malloc)", bench_memory_name(plan->memory));
    fig_uint(o, "seed", "seed", "%llu", plan->seed);
    fig_uint(o, "stage_streams", "stage streams", "%llu",
             plan->stage_streams ? plan->stage_streams : 1);
    fig_uint(o, "copy_piece_bytes", "copy piece", plan->copy_piece_bytes ? "%llu bytes"
             : "%llu (whole copies)", plan->copy_piece_bytes);
    fig_bool(o, "copy_by_kernel", "copies", plan->copy_kernel, "by kernel on the pipeline's "
             "streams (--copy-kernel); the serial and ceiling runs use the copy engines",
             "by the copy engines");
    fig_str(o, "graph", "graph mode", "%s", graph_names[plan->graph]);
    fig_str(o, "notes", plan->notes[0] != '\0' ? "notes" : NULL, "%s", plan->notes);
}

void bench_totals_figures(fig_out *o, const bench_totals *t)
{
    fig_str(o, "tolerance", "tolerance", "%s", bench_tolerance_text());
    fig_num(o, "max_abs_error", "max error abs", "%.3g", t->max_abs_error);
    fig_num(o, "max_rel_error", "max error rel", "%.3g", t->max_rel_error);
    fig_uint(o, "elements_checked", "checked", "%llu elements", t->elements_checked);
    fig_num(o, "verify_s", "checking took", "%.3f s", t->verify_s);
}

void bench_verification_figures(fig_out *o, const bench_expected *e, const bench_totals *t)
{
    fig_group(o, "verification", NULL);
    fig_str(o, "method", "verification", "%s", bench_check_method_name(e->method));
    char about[400];
    fig_text(o, "", "%s\n", bench_check_description(e, about, sizeof about));
    fig_uint(o, "samples", NULL, NULL, e->n_samples);
    fig_num(o, "reference_s", NULL, NULL, e->reference_s);
    fig_uint(o, "reference_threads", NULL, NULL, e->workers);
    bench_totals_figures(o, t);
    fig_group_end(o);
}

static double series_extreme(const bench_series *series, int want_max)
{
    double value = series->runs > 0 ? series->seconds[0] : 0.0;
    for (size_t i = 1; i < series->runs; i++)
        if (want_max ? series->seconds[i] > value : series->seconds[i] < value)
            value = series->seconds[i];
    return value;
}

static const fig_column series_columns[] = {
    {NULL, "run", -30, "%s", FIG_STR},
    {"seconds", NULL, 0, NULL, FIG_LIST},
    {"median_s", "median s", 10, "%.4f", FIG_NUM},
    {NULL, "min s", 10, "%.4f", FIG_NUM},
    {NULL, "max s", 10, "%.4f", FIG_NUM},
    {"makespans", NULL, 0, NULL, FIG_LIST}, /* the library's, sp_pipeline_last_makespan_s */
    {"median_makespan_s", NULL, 0, NULL, FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
    {"chunk_records", "chunk", 10, "%llu", FIG_UINT},
    {"chunks", "chunks", 7, "%llu", FIG_UINT},
    {"depth", "depth", 5, "%llu", FIG_UINT},
    {"submit_us_per_chunk", NULL, 0, NULL, FIG_NUM},
    {"wait_us_per_chunk", NULL, 0, NULL, FIG_NUM},
};
#define N_SERIES_COLUMNS (sizeof series_columns / sizeof series_columns[0])

static void series_row(fig_out *o, const char *label, const bench_plan *plan,
                       const bench_series *s)
{
    const sp_report *median = bench_median_report(s);
    fig_value v[N_SERIES_COLUMNS] = {
        {.str = label}, {.list = {s->seconds, s->runs}},
        {.num = cli_median(s->seconds, s->runs)}, {.num = series_extreme(s, 0)},
        {.num = series_extreme(s, 1)}, {.list = {s->makespan, s->runs}},
        {.num = cli_median(s->makespan, s->runs)}, {.num = bench_series_gbps(plan, s)},
        {.uint = median->chunk_records}, {.uint = median->chunks}, {.uint = median->depth},
        {.num = bench_submit_us_per_chunk(s)}, {.num = bench_wait_us_per_chunk(s)}};
    fig_row(o, s->name, series_columns, N_SERIES_COLUMNS, v);
}

static void timings(fig_out *o, const bench_plan *plan, const bench_results *r)
{
    fig_text(o, NULL, "\n");
    fig_table(o, NULL, series_columns, N_SERIES_COLUMNS);
    series_row(o, "serial (sync copy/kernel/copy)", plan, &r->serial);
    series_row(o, "pipelined", plan, &r->pipelined);
    series_row(o, "pipelined + timeline (report)", plan, &r->traced);
    series_row(o, "ceiling (copies only, pinned)", plan, &r->ceiling);
    if (r->stream.runs > 0)
        series_row(o, "pipelined, stream mode", plan, &r->stream);
    fig_table_end(o);
    fig_text(o, NULL, "\n");
}

/* The ratios between the runs, and the timeline's two costs apart: to the run (makespans, as
 * the library measures them) and after it (reading the events once every queue has drained,
 * which the caller waits for but the GPU does not). The table's rows stay on wall time: it
 * is what the caller of sp_pipeline_run waits for. */
static void ratios(fig_out *o, const bench_plan *plan, const bench_results *r)
{
    double serial_s = cli_median(r->serial.seconds, r->serial.runs);
    double pipelined_s = cli_median(r->pipelined.seconds, r->pipelined.runs);
    double ceiling_gbps = bench_series_gbps(plan, &r->ceiling);
    double makespan_s = cli_median(r->traced.makespan, r->traced.runs);
    double read_s = bench_timeline_read_s(r);
    fig_num(o, "speedup", "speedup", "%.2fx (serial / pipelined)",
            pipelined_s > 0.0 ? serial_s / pipelined_s : 0.0);
    fig_percent(o, "fraction_of_ceiling", "vs ceiling", "%.1f%% (pipelined GB/s / ceiling)",
                ceiling_gbps > 0.0 ? bench_series_gbps(plan, &r->pipelined) / ceiling_gbps
                                   : 0.0);
    fig_percent(o, "timeline_cost", "timeline cost",
                "%+.2f%% (median makespan with a report vs without)", bench_timeline_cost(r));
    fig_num(o, "timeline_read_s", "timeline read",
            "%.6f s after the run (median wall less makespan, runs with a report)", read_s);
    fig_percent(o, NULL, "", "%.2f%% of its makespan",
                makespan_s > 0.0 ? read_s / makespan_s : 0.0);
    fig_num(o, NULL, "host submit", "%.2f us per chunk (median run)",
            bench_submit_us_per_chunk(&r->pipelined));
    fig_num(o, NULL, "", "%.2f of it waiting for a free slot",
            bench_wait_us_per_chunk(&r->pipelined));
    if (r->stream.runs > 0) {
        double stream_s = cli_median(r->stream.seconds, r->stream.runs);
        fig_num(o, "graph_speedup", "graph mode", "%.2fx stream mode's speed",
                pipelined_s > 0.0 ? stream_s / pipelined_s : 0.0);
    }
}

void bench_print_result(const bench_plan *plan, const bench_expected *expected,
                        const bench_results *results, const bench_exports *exports, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_job_figures(&o, plan);
    fig_uint(&o, "repeat", "repeats", "%llu of each run; medians below", plan->repeat);
    bench_verification_figures(&o, expected, &results->checks);
    timings(&o, plan, results);
    ratios(&o, plan, results);
    fig_text(&o, NULL, "\n");
    cli_report_figures(&o, "pipelined run with a report (the median run's):",
                       bench_median_report(&results->traced));
    bench_alone_figures(&o, results);
    bench_exports_figures(&o, exports);
    fig_end(&o);
}
