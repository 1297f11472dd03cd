/* The result of `streampipe bench --sweep`, as text or as one JSON object, from one
 * description: the job, how it was checked, then a row per value of the swept setting.
 * Times in seconds, rates in GB/s (1e9 bytes per second). */
#include "bench.h"

/* The settings every row shares: "chunk 1048576 records" or "chunk chosen". */
static void shared_settings(fig_out *o, const bench_plan *plan, bench_sweep_parameter swept)
{
    int chosen = plan->staging_threads == 0;
    if (swept != BENCH_SWEEP_CHUNK) {
        fig_uint(o, NULL, "chunk", plan->chunk_records ? "%llu records" : "chosen",
                 plan->chunk_records);
        chosen |= plan->chunk_records == 0;
    }
    if (swept != BENCH_SWEEP_DEPTH) {
        fig_uint(o, NULL, "depth", plan->depth ? "%llu" : "chosen", plan->depth);
        chosen |= plan->depth == 0;
    }
    fig_uint(o, NULL, "staging threads", plan->staging_threads ? "%llu" : "chosen",
             plan->staging_threads);
    if (chosen)
        fig_text(o, "", "chosen: the library's choice, which may differ from row to row\n");
}

/* What each method means, in a line: the details are in bench_verify.c. */
static const char *method_meaning(bench_check_method method)
{
    return method == BENCH_CHECK_FULL
               ? "host reference of every element, every run within tolerance"
               : "a serial run checked at sampled indices, then every run bit for bit";
}

static void verification(fig_out *o, const bench_sweep_result *sweep)
{
    fig_group(o, "verification", NULL);
    fig_str(o, "method", "verification", "%s (the method column)", "per row");
    for (int m = BENCH_CHECK_FULL; m <= BENCH_CHECK_SAMPLED; m++)
        fig_text(o, "", "%s: %s\n", bench_check_method_name((bench_check_method)m),
                 method_meaning((bench_check_method)m));
    bench_totals_figures(o, &sweep->checks);
    fig_group_end(o);
}

static const fig_column row_columns[] = {
    {NULL, "", 1, "%s", FIG_STR}, /* '*' on the fastest row */
    {"value", NULL, 0, NULL, FIG_UINT},
    {NULL, "value", -18, "%s", FIG_STR},
    {"default", NULL, 0, NULL, FIG_BOOL},
    {"chosen", NULL, 0, NULL, FIG_BOOL},
    {"best", NULL, 0, NULL, FIG_BOOL},
    {"iters", NULL, 0, NULL, FIG_UINT},
    {"method", "method", -29, "%s", FIG_STR},
    {"seconds", NULL, 0, NULL, FIG_LIST},
    {"median_s", "median s", 10, "%.4f", FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
    {"speedup", "speedup", 8, "%.2fx", FIG_NUM},
    {"chunk_records", NULL, 0, NULL, FIG_UINT},
    {"chunks", "chunks", 8, "%llu", FIG_UINT},
    {"depth", "depth", 6, "%llu", FIG_UINT},
    {"staging_threads", NULL, 0, NULL, FIG_UINT},
    {"report_makespan_s", NULL, 0, NULL, FIG_NUM},
    {"efficiency", "efficiency", 10, "%.1f%%", FIG_PERCENT},
    {"hidden_transfer", NULL, 0, NULL, FIG_NUM},
    {"bottleneck", "bottleneck", 0, "%s", FIG_STR},
};
#define N_ROW_COLUMNS (sizeof row_columns / sizeof row_columns[0])

static void row(fig_out *o, const bench_sweep_result *sweep, size_t index)
{
    const bench_sweep_row *r = &sweep->rows[index];
    const sp_report *report = &r->report;
    char value[40];
    snprintf(value, sizeof value, "%llu%s", r->value, r->is_default ? " default" : "");
    fig_value v[N_ROW_COLUMNS] = {
        {.str = index == sweep->best_row ? "*" : " "}, {.uint = r->value}, {.str = value},
        {.flag = r->is_default},
        {.flag = r->config_value == 0 && sweep->parameter != BENCH_SWEEP_ITERS},
        {.flag = index == sweep->best_row}, {.uint = r->params.iters},
        {.str = bench_check_method_name(r->method)}, {.list = {r->seconds, r->runs}},
        {.num = r->median_s}, {.num = r->gbps}, {.num = r->speedup},
        {.uint = report->chunk_records}, {.uint = report->chunks}, {.uint = report->depth},
        {.uint = report->staging_threads}, {.num = report->makespan_s},
        {.num = report->efficiency}, {.num = report->hidden_transfer},
        {.str = report->bottleneck}};
    fig_row(o, NULL, row_columns, N_ROW_COLUMNS, v);
}

static void rows(fig_out *o, const bench_sweep_result *sweep)
{
    const char *name = bench_sweep_parameter_name(sweep->parameter);
    const bench_sweep_row *best = &sweep->rows[sweep->best_row];
    const bench_sweep_row *default_row = &sweep->rows[sweep->default_row];
    fig_group(o, "sweep", NULL);
    fig_str(o, "parameter", "sweep", "%s", name);
    fig_uint(o, "default", "default", default_row->config_value == 0 &&
             sweep->parameter != BENCH_SWEEP_ITERS ? "%llu (the library's choice)" : "%llu",
             default_row->value);
    fig_text(o, NULL, "\n");
    fig_table(o, "rows", row_columns, N_ROW_COLUMNS);
    for (size_t i = 0; i < sweep->n_rows; i++)
        row(o, sweep, i);
    fig_table_end(o);
    fig_text(o, NULL, "\n");
    fig_uint(o, "best", "* fastest", "%llu", best->value);
    fig_num(o, NULL, "", "%.2fx the default's speed", best->speedup);
    fig_group_end(o);
    fig_text(o, "speedup", "the default row's median / the row's median\n");
    fig_text(o, "efficiency", "bound / makespan of the row's run with a report\n");
}

void bench_sweep_print_result(const bench_plan *plan, const bench_sweep_result *sweep,
                              const bench_exports *exports, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_job_figures(&o, plan);
    shared_settings(&o, plan, sweep->parameter);
    fig_uint(&o, "repeat", "repeats", "%llu runs without a report per value (median below), "
             "then one with a report (efficiency, bottleneck)", plan->repeat);
    verification(&o, sweep);
    rows(&o, sweep);
    bench_exports_figures(&o, exports);
    fig_end(&o);
}
