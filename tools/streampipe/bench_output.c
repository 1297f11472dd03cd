/* The result of `streampipe bench`, as text or as one JSON object (--json), from one
 * description: the job, how it was checked, the timing table, then the pipelined run's own
 * report (the median run's). Times in seconds, rates in GB/s (1e9 bytes per second). */
#include <string.h>

#include "bench.h"
#include "report_out.h"
#include "stats.h"

static const sp_report *median_report(const bench_series *series)
{
    if (series->runs == 0 || series->runs > BENCH_MAX_REPEAT)
        return NULL;
    return &series->reports[cli_lower_median_index(series->seconds, series->runs)];
}

static double series_gbps(const bench_plan *plan, const bench_series *series)
{
    return bench_gbps(plan, cli_median(series->seconds, series->runs));
}

/* What crossed PCIe per second (the host ends' bytes): in+out with both ends on the host. */
static double series_pcie_gbps(const bench_plan *plan, const bench_series *series)
{
    return cli_gbps((double)bench_pcie_bytes(plan), cli_median(series->seconds, series->runs));
}

/* The median run's host submit time (or, with `waited`, of that the time spent waiting for a
 * free slot) per chunk, in microseconds. */
static double us_per_chunk(const bench_series *series, int waited)
{
    const sp_report *report = median_report(series);
    double seconds = waited ? report->wait_s : report->submit_s;
    return report->chunks > 0 ? 1e6 * seconds / (double)report->chunks : 0.0;
}

/* What the per-chunk timeline costs the run itself: the median makespan with a report over
 * the median without, less 1. */
static double timeline_cost(const bench_results *r)
{
    double traced = cli_median(r->traced.makespan, r->traced.runs);
    double bare = cli_median(r->pipelined.makespan, r->pipelined.runs);
    return bare > 0.0 ? traced / bare - 1.0 : 0.0;
}

/* --timeline-full: the full timeline's cost beside the sampled one's, and how far the
 * sampled figures are from the full ones (median runs' reports; points of a fraction). */
static void full_timeline_figures(fig_out *o, const bench_results *r)
{
    double bare = cli_median(r->pipelined.makespan, r->pipelined.runs);
    double full = cli_median(r->full.makespan, r->full.runs);
    const sp_report *s = median_report(&r->traced), *f = median_report(&r->full);
    fig_percent(o, "full_timeline_cost", "full timeline cost",
                "%+.2f%% (median makespan, every operation timed, vs no report)",
                bare > 0.0 ? full / bare - 1.0 : 0.0);
    fig_uint(o, "timed_chunks", "timed chunks", "%llu (the run with a report)",
             (unsigned long long)s->timed_chunks);
    fig_uint(o, "chunks", "of chunks", "%llu", (unsigned long long)s->chunks);
    fig_num(o, "hidden_transfer_vs_full", "hidden transfer",
            "%+.2f points (with a report vs full timeline)",
            100.0 * (s->hidden_transfer - f->hidden_transfer));
    fig_num(o, "efficiency_vs_full", "efficiency", "%+.2f points (with a report vs full)",
            100.0 * (s->efficiency - f->efficiency));
    /* the estimator alone: each full run's figures against its own sampled windows'
       (sp_report_sampled_figures), where two runs also differ by their own noise */
    double hidden[BENCH_MAX_REPEAT], efficiency[BENCH_MAX_REPEAT];
    size_t n = r->full.runs <= BENCH_MAX_REPEAT ? r->full.runs : BENCH_MAX_REPEAT;
    for (size_t i = 0; i < n; i++) {
        hidden[i] = 100.0 * (r->full_sampled[i].hidden_transfer -
                             r->full.reports[i].hidden_transfer);
        efficiency[i] = 100.0 * (r->full_sampled[i].efficiency - r->full.reports[i].efficiency);
    }
    fig_num(o, "hidden_transfer_vs_full_same_run", "hidden transfer, same run",
            "%+.2f points (median over the full runs: each against its own windows)",
            cli_median(hidden, n));
    fig_num(o, "efficiency_vs_full_same_run", "efficiency, same run",
            "%+.2f points (median over the full runs: each against its own windows)",
            cli_median(efficiency, n));
    fig_num(o, "full_hidden_transfer", NULL, NULL, f->hidden_transfer);
    fig_num(o, "full_efficiency", NULL, NULL, f->efficiency);
    fig_str(o, "full_bottleneck", NULL, "%s", f->bottleneck);
}

/* What reading the timeline costs after the run has drained: wall time less makespan, per
 * run with a report (the two medians may come from different runs), then the median. It
 * also holds the work before the first enqueue, which is small. */
static double timeline_read_s(const bench_results *r)
{
    double after[BENCH_MAX_REPEAT];
    size_t n = r->traced.runs <= BENCH_MAX_REPEAT ? r->traced.runs : BENCH_MAX_REPEAT;
    for (size_t i = 0; i < n; i++)
        after[i] = r->traced.seconds[i] - r->traced.makespan[i];
    return cli_median(after, n);
}

void bench_job_figures(fig_out *o, const bench_plan *plan)
{
    static const char *const graph_names[] = {"off", "on", "auto"}; /* sp_graph_mode's */
    char bytes[32];
    unsigned long long each_way = plan->records * sizeof(float);
    cli_tool_figures(o, "bench");
    fig_str(o, "backend", "backend", plan->backend == SP_BACKEND_CUDA ? "%s" :
            "%s (CPU worker threads, no GPU)", sp_backend_name(plan->backend));
    fig_uint(o, "device", plan->backend == SP_BACKEND_CUDA ? "device" : NULL, "%llu",
             (unsigned long long)plan->device);
    fig_str(o, "workload", "workload", plan->workload_changed ? "%s (changed by options)" : "%s",
            plan->workload);
    fig_bool(o, "workload_changed", NULL, plan->workload_changed, NULL, NULL);
    if (plan->n_workloads > 1) /* each row's in the table; these, the buffers' */
        fig_uint(o, "records", "records", "%llu float32 at most (each row's: the table)",
                 plan->records);
    else
        fig_uint(o, "records", "records", "%llu float32", plan->records);
    if (plan->iters_list.n > 1 || plan->n_workloads > 1) /* each row's, in the table */
        fig_text(o, "sinmix iters", "each row's\n");
    else
        fig_uint(o, "iters", "sinmix iters", "%llu", plan->iters);
    fig_uint(o, "bytes_in", NULL, NULL, each_way);
    fig_uint(o, "bytes_out", NULL, NULL, each_way);
    fig_text(o, "bytes", "%s each way\n",
             cli_format_bytes((double)each_way, bytes, sizeof bytes));
    fig_str(o, "memory", "memory", plan->memory == BENCH_MEMORY_PINNED ? "%s (sp_host_alloc)"
            : "%s (malloc)", bench_memory_name(plan->memory));
    fig_str(o, "in", "input", plan->in_device ? "%s (sp_device_alloc)" : "%s (--memory)",
            plan->in_device ? "device" : "host");
    fig_str(o, "out", "output", plan->out_device ? "%s (sp_device_alloc)" : "%s (--memory)",
            plan->out_device ? "device" : "host");
    fig_uint(o, "pcie_bytes", "pcie bytes", "%llu per run (the host ends'; every report "
             "checked)", bench_pcie_bytes(plan));
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
    {"pcie_gbps", "PCIe GB/s", 10, "%.2f", FIG_NUM},
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
    const sp_report *median = median_report(s);
    fig_value v[N_SERIES_COLUMNS] = {
        {.str = label}, {.list = {s->seconds, s->runs}},
        {.num = cli_median(s->seconds, s->runs)}, {.num = series_extreme(s, 0)},
        {.num = series_extreme(s, 1)}, {.list = {s->makespan, s->runs}},
        {.num = cli_median(s->makespan, s->runs)}, {.num = series_gbps(plan, s)},
        {.num = series_pcie_gbps(plan, s)}, {.uint = median->chunk_records}, {.uint = median->chunks}, {.uint = median->depth},
        {.num = us_per_chunk(s, 0)}, {.num = us_per_chunk(s, 1)}};
    fig_row(o, s->name, series_columns, N_SERIES_COLUMNS, v);
}

static void timings(fig_out *o, const bench_plan *plan, const bench_results *r)
{
    fig_text(o, NULL, "\n");
    fig_table(o, NULL, series_columns, N_SERIES_COLUMNS);
    series_row(o, "serial (sync copy/kernel/copy)", plan, &r->serial);
    series_row(o, "pipelined", plan, &r->pipelined);
    series_row(o, "pipelined + timeline (report)", plan, &r->traced);
    series_row(o, plan->in_device || plan->out_device ? "ceiling (copies, same ends)"
               : "ceiling (copies only, pinned)", plan, &r->ceiling);
    if (r->stream.runs > 0)
        series_row(o, "pipelined, stream mode", plan, &r->stream);
    if (r->full.runs > 0)
        series_row(o, "pipelined + full timeline", plan, &r->full);
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
    double ceiling_gbps = series_gbps(plan, &r->ceiling);
    double makespan_s = cli_median(r->traced.makespan, r->traced.runs);
    double read_s = timeline_read_s(r);
    fig_num(o, "speedup", "speedup", "%.2fx (serial / pipelined)",
            pipelined_s > 0.0 ? serial_s / pipelined_s : 0.0);
    fig_percent(o, "fraction_of_ceiling", "vs ceiling", "%.1f%% (pipelined GB/s / ceiling)",
                ceiling_gbps > 0.0 ? series_gbps(plan, &r->pipelined) / ceiling_gbps
                                   : 0.0);
    fig_percent(o, "timeline_cost", "timeline cost",
                "%+.2f%% (median makespan with a report vs without)", timeline_cost(r));
    fig_num(o, "timeline_read_s", "timeline read",
            "%.6f s after the run (median wall less makespan, runs with a report)", read_s);
    fig_percent(o, NULL, "", "%.2f%% of its makespan",
                makespan_s > 0.0 ? read_s / makespan_s : 0.0);
    fig_num(o, NULL, "host submit", "%.2f us per chunk (median run)",
            us_per_chunk(&r->pipelined, 0));
    fig_num(o, NULL, "", "%.2f of it waiting for a free slot",
            us_per_chunk(&r->pipelined, 1));
    if (r->full.runs > 0)
        full_timeline_figures(o, r);
    if (r->stream.runs > 0) {
        double stream_s = cli_median(r->stream.seconds, r->stream.runs);
        fig_num(o, "graph_speedup", "graph mode", "%.2fx stream mode's speed",
                pipelined_s > 0.0 ? stream_s / pipelined_s : 0.0);
    }
}

/* Each GPU engine's total in the pipelined run beside the same engine's total in the serial
 * run of the same process, where every step ran by itself: the check that the report's bound
 * and efficiency describe the work as it runs alone (issue 4), not only as it overlaps. */
static const sp_engine_report *find(const sp_report *r, const char *name)
{
    for (size_t k = 0; k < r->n_engines && k < SP_MAX_ENGINES; k++)
        if (strncmp(r->engines[k].name, name, sizeof r->engines[k].name) == 0)
            return &r->engines[k];
    return NULL;
}

static int on_gpu(const sp_engine_report *e)
{
    return e->kind == SP_ENGINE_H2D || e->kind == SP_ENGINE_COMPUTE || e->kind == SP_ENGINE_D2H;
}

/* The median runs' reports; 0 when either has no engine times (graph mode). */
static int reports(const bench_results *r, const sp_report **over, const sp_report **alone)
{
    *over = median_report(&r->traced);
    *alone = median_report(&r->serial);
    return (*over)->n_engines > 0 && (*alone)->n_engines > 0;
}

/* JSON: the serial run's GPU engine totals; text: beside the pipelined run's. */
static void alone_figures(fig_out *o, const bench_results *r)
{
    const sp_report *over, *alone;
    if (!reports(r, &over, &alone))
        return;
    fig_group(o, "engines_alone_s", NULL);
    for (size_t k = 0; k < alone->n_engines && k < SP_MAX_ENGINES; k++)
        if (on_gpu(&alone->engines[k]))
            fig_num(o, alone->engines[k].name, NULL, NULL, alone->engines[k].busy_s);
    fig_group_end(o);
    fig_text(o, NULL, "\nengine totals overlapped vs alone (the serial run: each step by "
             "itself):\n  %-16s %12s %12s %9s\n", "engine", "pipelined s", "alone s", "change");
    for (size_t k = 0; k < over->n_engines && k < SP_MAX_ENGINES; k++) {
        const sp_engine_report *e = &over->engines[k], *a = find(alone, e->name);
        if (on_gpu(e) && a && a->busy_s > 0.0)
            fig_text(o, NULL, "  %-16s %12.4f %12.4f %+8.1f%%\n", e->name, e->busy_s, a->busy_s,
                     100.0 * (e->busy_s / a->busy_s - 1.0));
    }
}

void bench_kinds_begin(fig_out *o, const bench_plan *plan, const bench_expected *expected,
                       const bench_totals *checks, const char *name)
{
    bench_job_figures(o, plan);
    fig_uint(o, "repeat", "repeats", "%llu runs of each kind without a report (median below), "
             "then one with a report", plan->repeat);
    bench_verification_figures(o, expected, checks);
    fig_group(o, name, NULL);
    fig_text(o, NULL, "\n");
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
                       median_report(&results->traced));
    cli_tune_figures(&o, &results->tune);
    alone_figures(&o, results);
    bench_exports_figures(&o, exports);
    fig_end(&o);
}
