/* The --json result of `streampipe bench --sweep`: the job's fields as in the comparison, then
 * "sweep" with a row per value. Times in seconds, rates in GB/s (1e9 bytes per second). */
#include "bench.h"
#include "json.h"

static void write_verification(json_writer *w, const bench_sweep_result *sweep)
{
    json_object_open(w, "verification");
    json_string(w, "method", "per row");
    json_string(w, "tolerance", bench_tolerance_text());
    bench_json_write_totals(w, &sweep->checks);
    json_object_close(w);
}

static void write_row_runs(json_writer *w, const bench_sweep_row *row)
{
    json_array_open(w, "seconds");
    for (size_t i = 0; i < row->runs; i++)
        json_number(w, NULL, row->seconds[i]);
    json_array_close(w);
    json_number(w, "median_s", row->median_s);
    json_number(w, "gbps", row->gbps);
    json_number(w, "speedup", row->speedup);
}

/* The run with a report: its shape and the figures the text table shows. */
static void write_row_report(json_writer *w, const bench_sweep_row *row)
{
    const sp_report *report = &row->report;
    json_uint(w, "chunk_records", report->chunk_records);
    json_uint(w, "chunks", report->chunks);
    json_uint(w, "depth", report->depth);
    json_uint(w, "staging_threads", report->staging_threads);
    json_number(w, "report_makespan_s", report->makespan_s);
    json_number(w, "efficiency", report->efficiency);
    json_number(w, "hidden_transfer", report->hidden_transfer);
    json_string(w, "bottleneck", report->bottleneck);
}

static void write_row(json_writer *w, const bench_sweep_result *sweep, size_t index)
{
    const bench_sweep_row *row = &sweep->rows[index];
    json_object_open(w, NULL);
    json_uint(w, "value", row->value);
    json_bool(w, "default", row->is_default);
    json_bool(w, "chosen", row->config_value == 0 && sweep->parameter != BENCH_SWEEP_ITERS);
    json_bool(w, "best", index == sweep->best_row);
    json_uint(w, "iters", row->params.iters);
    json_string(w, "method", bench_check_method_name(row->method));
    write_row_runs(w, row);
    write_row_report(w, row);
    json_object_close(w);
}

static void write_sweep(json_writer *w, const bench_sweep_result *sweep)
{
    json_object_open(w, "sweep");
    json_string(w, "parameter", bench_sweep_parameter_name(sweep->parameter));
    json_uint(w, "default", sweep->rows[sweep->default_row].value);
    json_array_open(w, "rows");
    for (size_t i = 0; i < sweep->n_rows; i++)
        write_row(w, sweep, i);
    json_array_close(w);
    json_uint(w, "best", sweep->rows[sweep->best_row].value);
    json_object_close(w);
}

void bench_sweep_print_json(const bench_plan *plan, const bench_sweep_result *sweep,
                            const bench_exports *exports, FILE *out)
{
    json_writer w;
    json_begin(&w, out);
    json_object_open(&w, NULL);
    bench_json_write_plan(&w, plan);
    write_verification(&w, sweep);
    write_sweep(&w, sweep);
    bench_exports_write_json(exports, &w);
    json_object_close(&w);
    json_end(&w);
}
