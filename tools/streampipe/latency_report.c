/* The latency command's result, as text or as one JSON object, from one description: the
 * setup, a row per phase and the verdict on the targets. */
#include "figures.h"
#include "latency.h"
#include "report_out.h"

/* p99 with priority over p99 alone, and a phase's bulk rate over bulk alone. */
static double p99_ratio(const latency_job *j)
{
    return j->rows[LATENCY_PRIORITY].request.p99_us / j->rows[LATENCY_ALONE].request.p99_us;
}

static double bulk_fraction(const latency_job *j, int phase)
{
    return j->rows[phase].bulk_gbps / j->rows[LATENCY_ALONE].bulk_gbps;
}

static void setup(fig_out *o, const latency_job *j)
{
    const latency_options *opt = &j->options;
    const double mib = 1 << 20;
    cli_tool_figures(o, "latency");
    fig_str(o, "backend", "backend", "%s", sp_backend_name(sp_context_backend(j->ctx)));
    fig_uint(o, "seed", "seed", "%llu", opt->seed);
    fig_uint(o, "requests", "requests", "%llu per phase, one at a time, sinmix iters 0, pinned",
             opt->requests);
    fig_uint(o, "request_bytes", "request bytes", "%llu", opt->request_bytes);
    fig_uint(o, "bulk_records", "bulk records", "%llu float32, back to back, pinned",
             opt->bulk_records);
    fig_uint(o, "bulk_stages", "bulk stages", opt->bulk_stages ? "%llu (sinmix iters 0)"
             : "%llu (copies only)", opt->bulk_stages);
    fig_num(o, "bulk_alone_s", "bulk alone for", "%.1f s", j->bulk_alone_s);
    fig_num(o, "priority", "priority", "%.0f (the requests' pipeline, last phase)",
            LATENCY_HIGH_PRIORITY);
    fig_bool(o, "request_copy_by_kernel", "request copies", opt->request_copy_kernel,
             "by kernel (last phase)", "by the copy engines");
    fig_num(o, NULL, "bulk pieces", "%.2f MiB (last phase)", (double)opt->piece_bytes / mib);
    fig_uint(o, "piece_bytes", NULL, NULL, opt->piece_bytes);
    fig_uint(o, "bulk_chunk_bytes", "bulk chunk", opt->bulk_chunk_bytes ? "%llu bytes (last "
             "phase)" : "chosen", opt->bulk_chunk_bytes);
    fig_uint(o, "bulk_depth", "bulk depth", opt->bulk_depth ? "%llu (last phase)" : "chosen",
             opt->bulk_depth);
}

static const fig_column phase_columns[] = {
    {"phase", "phase", -9, "%s", FIG_STR},
    {"p50_us", "p50 us", 10, "%.1f", FIG_NUM},
    {"p99_us", "p99 us", 10, "%.1f", FIG_NUM},
    {"max_us", "max us", 10, "%.1f", FIG_NUM},
    {"bulk_gbps", "bulk GB/s", 10, "%.2f", FIG_NUM},
    {"bulk_fraction", "of alone", 9, "%.1f%%", FIG_PERCENT},
    {"bulk_runs", "runs", 6, "%llu", FIG_UINT},
};
#define N_PHASE_COLUMNS (sizeof phase_columns / sizeof phase_columns[0])

static void phases(fig_out *o, const latency_job *j)
{
    fig_text(o, NULL, "\n");
    fig_table(o, "phases", phase_columns, N_PHASE_COLUMNS);
    for (int p = 0; p < LATENCY_PHASES; p++) {
        const latency_row *row = &j->rows[p];
        fig_value v[N_PHASE_COLUMNS] = {
            {.str = row->name}, {.num = row->request.p50_us}, {.num = row->request.p99_us},
            {.num = row->request.max_us}, {.num = row->bulk_gbps},
            {.num = bulk_fraction(j, p)}, {.uint = row->bulk_runs}};
        fig_row(o, NULL, phase_columns, N_PHASE_COLUMNS, v);
    }
    fig_table_end(o);
    fig_text(o, NULL, "(alone: the requests and the bulk pipeline were measured apart)\n\n");
}

static void targets(fig_out *o, const latency_job *j)
{
    double ratio = p99_ratio(j), fraction = bulk_fraction(j, LATENCY_PRIORITY);
    fig_group(o, "targets", "targets:");
    fig_num(o, "p99_ratio", "p99 ratio", "%.2fx (with priority / alone; target <= 2x)", ratio);
    fig_bool(o, "p99_met", "", ratio <= LATENCY_P99_TARGET, "met", "NOT met");
    fig_percent(o, "bulk_fraction", "bulk fraction",
                "%.1f%% (with priority / alone; target >= 85%%)", fraction);
    fig_bool(o, "bulk_met", "", fraction >= LATENCY_BULK_TARGET, "met", "NOT met");
    fig_group_end(o);
    fig_group(o, "verified", "verified:");
    fig_uint(o, "requests", "requests", "%llu, every element", j->requests.checked);
    fig_uint(o, "bulk_runs", "bulk runs", "%llu, every element", j->bulk_checked);
    fig_str(o, "bulk_runs_checked", "", "%s", "first of each bulk pipeline, last of each phase");
    fig_uint(o, "mismatches", "mismatches", "%llu", j->requests.mismatches + j->bulk_mismatches);
    fig_group_end(o);
}

void latency_print_result(const latency_job *j, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, j->options.json);
    setup(&o, j);
    phases(&o, j);
    targets(&o, j);
    fig_end(&o);
}
