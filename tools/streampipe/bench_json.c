/* The --json result of `streampipe bench`: one object on stdout with the same figures as the
 * text, plus every run's time. Times in seconds, rates in GB/s (1e9 bytes per second). */
#include "bench.h"
#include "report_out.h"
#include "json.h"

void bench_json_write_plan(json_writer *w, const bench_plan *plan)
{
    json_string(w, "tool", "streampipe bench");
    json_string(w, "version", sp_version());
    json_string(w, "backend", sp_backend_name(plan->backend));
    json_uint(w, "device", (unsigned long long)plan->device);
    json_string(w, "workload", plan->workload);
    json_bool(w, "workload_changed", plan->workload_changed);
    json_uint(w, "records", plan->records);
    json_uint(w, "iters", plan->iters);
    json_uint(w, "bytes_in", bench_bytes(plan));
    json_uint(w, "bytes_out", bench_bytes(plan));
    json_string(w, "memory", bench_memory_name(plan->memory));
    json_uint(w, "seed", plan->seed);
    json_uint(w, "repeat", plan->repeat);
    json_uint(w, "stage_streams", plan->stage_streams ? plan->stage_streams : 1);
    json_uint(w, "copy_piece_bytes", plan->copy_piece_bytes);
    json_bool(w, "copy_by_kernel", plan->copy_kernel);
    json_string(w, "graph", plan->graph == SP_GRAPH_ON ? "on"
                            : plan->graph == SP_GRAPH_AUTO ? "auto" : "off");
    json_string(w, "notes", plan->notes);
}

void bench_json_write_totals(json_writer *w, const bench_totals *totals)
{
    json_uint(w, "elements_checked", totals->elements_checked);
    json_number(w, "verify_s", totals->verify_s);
    json_number(w, "max_abs_error", totals->max_abs_error);
    json_number(w, "max_rel_error", totals->max_rel_error);
}

static void write_verification(json_writer *w, const bench_expected *e,
                               const bench_results *r)
{
    json_object_open(w, "verification");
    json_string(w, "method", bench_check_method_name(e->method));
    json_string(w, "tolerance", bench_tolerance_text());
    json_uint(w, "samples", e->n_samples);
    json_number(w, "reference_s", e->reference_s);
    json_uint(w, "reference_threads", e->workers);
    bench_json_write_totals(w, &r->checks);
    json_object_close(w);
}

static void write_series(json_writer *w, const bench_plan *plan, const bench_series *series)
{
    const sp_report *median_report = bench_median_report(series);
    json_object_open(w, series->name);
    json_array_open(w, "seconds");
    for (size_t i = 0; i < series->runs; i++)
        json_number(w, NULL, series->seconds[i]);
    json_array_close(w);
    json_number(w, "median_s", cli_median(series->seconds, series->runs));
    json_array_open(w, "makespans"); /* the library's, sp_pipeline_last_makespan_s */
    for (size_t i = 0; i < series->runs; i++)
        json_number(w, NULL, series->makespan[i]);
    json_array_close(w);
    json_number(w, "median_makespan_s", cli_median(series->makespan, series->runs));
    json_number(w, "gbps", bench_series_gbps(plan, series));
    json_uint(w, "chunk_records", median_report->chunk_records);
    json_uint(w, "chunks", median_report->chunks);
    json_uint(w, "depth", median_report->depth);
    json_number(w, "submit_us_per_chunk", bench_submit_us_per_chunk(series));
    json_number(w, "wait_us_per_chunk", bench_wait_us_per_chunk(series));
    json_object_close(w);
}

void bench_print_json(const bench_plan *plan, const bench_expected *expected,
                      const bench_results *results, const bench_exports *exports, FILE *out)
{
    double serial_s = cli_median(results->serial.seconds, results->serial.runs);
    double pipelined_s = cli_median(results->pipelined.seconds, results->pipelined.runs);
    double ceiling_gbps = bench_series_gbps(plan, &results->ceiling);
    json_writer w;
    json_begin(&w, out);
    json_object_open(&w, NULL);
    bench_json_write_plan(&w, plan);
    write_verification(&w, expected, results);
    write_series(&w, plan, &results->serial);
    write_series(&w, plan, &results->pipelined);
    write_series(&w, plan, &results->traced);
    write_series(&w, plan, &results->ceiling);
    if (results->stream.runs > 0) {
        write_series(&w, plan, &results->stream);
        double stream_s = cli_median(results->stream.seconds, results->stream.runs);
        json_number(&w, "graph_speedup", pipelined_s > 0.0 ? stream_s / pipelined_s : 0.0);
    }
    json_number(&w, "speedup", pipelined_s > 0.0 ? serial_s / pipelined_s : 0.0);
    json_number(&w, "fraction_of_ceiling",
                ceiling_gbps > 0.0 ? bench_series_gbps(plan, &results->pipelined) / ceiling_gbps
                                   : 0.0);
    /* as in the text: the cost to the makespan, and the reading after the drain apart */
    json_number(&w, "timeline_cost", bench_timeline_cost(results));
    json_number(&w, "timeline_read_s", bench_timeline_read_s(results));
    cli_json_report(&w, bench_median_report(&results->traced));
    bench_alone_json(&w, results);
    bench_exports_write_json(exports, &w);
    json_object_close(&w);
    json_end(&w);
}
