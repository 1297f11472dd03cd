/* The result of lists of --workload, --group-size, --iters, --chunk and --depth, as text or as one JSON object, from
 * one description: the job, how it was checked, then a row per combination ("sweep":
 * {"rows": [...], "best_row": N}). Times in seconds, rates in GB/s (1e9 bytes per second). */
#include "bench.h"

/* Whether any row leaves its chunk or depth to the library. */
static int any_auto(const bench_plan *plan)
{
    int found = plan->staging_threads == 0;
    for (size_t i = 0; i < plan->chunk_list.n; i++)
        found |= plan->chunk_list.items[i] == 0;
    for (size_t i = 0; i < plan->depth_list.n; i++)
        found |= plan->depth_list.items[i] == 0;
    return found;
}

static void shared_settings(fig_out *o, const bench_plan *plan)
{
    fig_uint(o, NULL, "staging threads", plan->staging_threads ? "%llu" : "auto",
             plan->staging_threads);
    if (any_auto(plan))
        fig_text(o, "", "auto: the library's choice, which may differ from row to row\n");
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
    {"workload", "workload", -9, "%s", FIG_STR},
    {"records", "records", 10, "%llu", FIG_UINT},
    {"group_size", "group", 5, "%llu", FIG_UINT},
    {"pipelines", NULL, 0, NULL, FIG_UINT}, /* what ran: 1, or the group's size */
    {"iters", "iters", 7, "%llu", FIG_UINT},
    {"set_chunk_records", "set chunk", 10, "%llu", FIG_AUTO}, /* as asked */
    {"set_depth", "set depth", 9, "%llu", FIG_AUTO},
    {"best", NULL, 0, NULL, FIG_BOOL},
    {"method", "method", -29, "%s", FIG_STR},
    {"seconds", NULL, 0, NULL, FIG_LIST},
    {"median_s", "median s", 10, "%.4f", FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
    {"vs_best", "of best", 8, "%.1f%%", FIG_PERCENT},
    {"chunk_records", "chunk", 10, "%llu", FIG_UINT}, /* in effect: the report's */
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
    fig_value v[N_ROW_COLUMNS] = {
        {.str = index == sweep->best_row ? "*" : " "}, {.str = r->workload},
        {.uint = r->records}, {.uint = r->group_size}, {.uint = r->pipelines},
        {.uint = r->iters},
        {.uint = r->set_chunk_records}, {.uint = r->set_depth},
        {.flag = index == sweep->best_row}, {.str = bench_check_method_name(r->method)},
        {.list = {r->seconds, r->runs}}, {.num = r->median_s}, {.num = r->gbps},
        {.num = r->vs_best}, {.uint = report->chunk_records}, {.uint = report->chunks},
        {.uint = report->depth}, {.uint = report->staging_threads},
        {.num = report->makespan_s}, {.num = report->efficiency},
        {.num = report->hidden_transfer}, {.str = report->bottleneck}};
    fig_row(o, NULL, row_columns, N_ROW_COLUMNS, v);
}

static void rows(fig_out *o, const bench_sweep_result *sweep)
{
    fig_group(o, "sweep", NULL);
    fig_text(o, NULL, "\n");
    fig_table(o, "rows", row_columns, N_ROW_COLUMNS);
    for (size_t i = 0; i < sweep->n_rows; i++)
        row(o, sweep, i);
    fig_table_end(o);
    fig_uint(o, "best_row", NULL, NULL, sweep->best_row);
    fig_group_end(o);
    fig_text(o, NULL, "\n");
    fig_text(o, "*", "the fastest row (the lowest median)\n");
    fig_text(o, "group", "0: the plain pipeline; N: an sp_group of N pipelines on --device\n");
    fig_text(o, "set chunk, depth", "as asked (auto: the library's); chunk, depth: in effect\n");
    fig_text(o, "of best", "the fastest row's median / the row's median\n");
    fig_text(o, "efficiency", "bound / makespan of the row's run with a report\n");
}

void bench_sweep_print_result(const bench_plan *plan, const bench_sweep_result *sweep,
                              const bench_exports *exports, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_job_figures(&o, plan);
    shared_settings(&o, plan);
    fig_uint(&o, "repeat", "repeats", "%llu runs without a report per row (median below), "
             "then one with a report (efficiency, bottleneck)", plan->repeat);
    verification(&o, sweep);
    rows(&o, sweep);
    bench_exports_figures(&o, exports);
    fig_end(&o);
}
