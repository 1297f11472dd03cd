/* The text result of `streampipe bench`: the setup, the timing table, then the pipelined
 * run's own report (the run with the median time). */
#include <stdio.h>

#include "bench.h"
#include "report_out.h"

static void print_chunking(const char *label, const sp_report *report, FILE *out)
{
    char bytes[32];
    fprintf(out, "%s %zu records (%s, %zu chunks)", label, report->chunk_records,
            cli_format_bytes((double)report->chunk_records * sizeof(float), bytes, sizeof bytes),
            report->chunks);
}

void bench_print_job(const bench_plan *plan, FILE *out)
{
    char in[32], outb[32];
    fprintf(out, "streampipe bench (library %s)\n", sp_version());
    if (plan->backend == SP_BACKEND_CUDA)
        fprintf(out, "backend          cuda, device %d\n", plan->device);
    else
        fprintf(out, "backend          host (CPU worker threads, no GPU)\n");
    fprintf(out, "workload         %s%s: %zu float32 records, sinmix iters %u\n",
            plan->workload, plan->workload_changed ? " (changed by options)" : "",
            plan->records, plan->iters);
    fprintf(out, "bytes            in %s, out %s\n",
            cli_format_bytes((double)bench_bytes(plan), in, sizeof in),
            cli_format_bytes((double)bench_bytes(plan), outb, sizeof outb));
    if (plan->copy_kernel)
        fprintf(out, "copies           by kernel on the pipeline's streams (--copy-kernel); "
                "the serial and ceiling runs use the copy engines\n");
    if (plan->notes[0] != '\0')
        fprintf(out, "notes            %s\n", plan->notes);
}

static void print_setup(const bench_plan *plan, const bench_expected *e,
                        const bench_results *r, FILE *out)
{
    const sp_report *pipelined = bench_median_report(&r->traced);
    const sp_report *serial = bench_median_report(&r->serial);
    bench_print_job(plan, out);
    print_chunking("chunk            pipelined", pipelined, out);
    print_chunking("; serial", serial, out);
    fprintf(out, "\ndepth            %u (serial 1)\n", pipelined->depth);
    fprintf(out, "staging threads  %u\n", pipelined->staging_threads);
    fprintf(out, "stage streams    %u; copies %s\n", plan->stage_streams ? plan->stage_streams : 1,
            plan->copy_piece_bytes ? "in pieces" : "whole");
    if (plan->copy_piece_bytes)
        fprintf(out, "copy piece       %zu bytes\n", plan->copy_piece_bytes);
    fprintf(out, "memory           %s (%s); staged in %s, out %s\n",
            bench_memory_name(plan->memory),
            plan->memory == BENCH_MEMORY_PINNED ? "sp_host_alloc" : "malloc",
            pipelined->staged_in ? "yes" : "no", pipelined->staged_out ? "yes" : "no");
    fprintf(out, "seed             %llu\n", plan->seed);
    fprintf(out, "repeats          %u of each run; medians below\n", plan->repeat);
    fprintf(out, "verification     %s: ", bench_check_method_name(e->method));
    bench_describe_check(e, out);
    fprintf(out, "tolerance        %s; max error abs %.3g, rel %.3g; %zu elements checked in "
                 "%.3f s\n", bench_tolerance_text(), r->checks.max_abs_error,
            r->checks.max_rel_error, r->checks.elements_checked, r->checks.verify_s);
}

static double series_extreme(const bench_series *series, int want_max)
{
    double value = series->runs > 0 ? series->seconds[0] : 0.0;
    for (size_t i = 1; i < series->runs; i++)
        if (want_max ? series->seconds[i] > value : series->seconds[i] < value)
            value = series->seconds[i];
    return value;
}

static void print_series(const char *label, const bench_plan *plan, const bench_series *series,
                         FILE *out)
{
    fprintf(out, "%-30s %10.4f %10.4f %10.4f %12.2f\n", label,
            cli_median(series->seconds, series->runs), series_extreme(series, 0),
            series_extreme(series, 1), bench_series_gbps(plan, series));
}

/* The timeline's two costs apart: to the run (makespans, as the library measures them) and
 * after it (reading the events and computing the figures once every queue has drained,
 * which the caller waits for but the GPU does not). The table's rows stay on wall time: it
 * is what the caller of sp_pipeline_run waits for, and the rates and PERF.md's earlier
 * records are on it. */
static void print_timeline(const bench_results *r, FILE *out)
{
    double makespan_s = cli_median(r->traced.makespan, r->traced.runs);
    double read_s = bench_timeline_read_s(r);
    fprintf(out, "timeline cost    %+.2f%% (median makespan with a report vs without)\n",
            100.0 * bench_timeline_cost(r));
    fprintf(out, "timeline read    %.3f ms after the run, %.2f%% of its makespan (median wall "
            "less makespan, runs with a report)\n", 1e3 * read_s,
            makespan_s > 0.0 ? 100.0 * read_s / makespan_s : 0.0);
}

static void print_timings(const bench_plan *plan, const bench_results *r, FILE *out)
{
    double serial_s = cli_median(r->serial.seconds, r->serial.runs);
    double pipelined_s = cli_median(r->pipelined.seconds, r->pipelined.runs);
    double ceiling_gbps = bench_series_gbps(plan, &r->ceiling);
    fprintf(out, "\n%-30s %10s %10s %10s %12s\n", "run", "median s", "min s", "max s",
            "GB/s in+out");
    print_series("serial (sync copy/kernel/copy)", plan, &r->serial, out);
    print_series("pipelined", plan, &r->pipelined, out);
    print_series("pipelined + timeline (report)", plan, &r->traced, out);
    print_series("ceiling (copies only, pinned)", plan, &r->ceiling, out);
    if (r->stream.runs > 0)
        print_series("pipelined, stream mode", plan, &r->stream, out);
    fprintf(out, "\nspeedup          %.2fx (serial / pipelined)\n",
            pipelined_s > 0.0 ? serial_s / pipelined_s : 0.0);
    fprintf(out, "vs ceiling       %.1f%% (pipelined GB/s / ceiling %.2f GB/s)\n",
            ceiling_gbps > 0.0 ? 100.0 * bench_series_gbps(plan, &r->pipelined) / ceiling_gbps
                               : 0.0,
            ceiling_gbps);
    print_timeline(r, out);
    fprintf(out, "host submit      %.2f us per chunk, %.2f of it waiting for a free slot "
            "(median run)\n", bench_submit_us_per_chunk(&r->pipelined),
            bench_wait_us_per_chunk(&r->pipelined));
    if (r->stream.runs == 0)
        return;
    double stream_s = cli_median(r->stream.seconds, r->stream.runs);
    fprintf(out, "graph mode       %.2fx stream mode's speed (%.4f s vs %.4f s); host submit "
            "%.2f us per chunk in stream mode, %.2f of it waiting\n",
            pipelined_s > 0.0 ? stream_s / pipelined_s : 0.0, pipelined_s, stream_s,
            bench_submit_us_per_chunk(&r->stream), bench_wait_us_per_chunk(&r->stream));
}

static void print_pipelined_report(const bench_results *r, FILE *out)
{
    const sp_report *report = bench_median_report(&r->traced);
    fputs("\npipelined run with a report (the median run's):\n", out);
    cli_print_report(report, out);
}

void bench_print_text(const bench_plan *plan, const bench_expected *expected,
                      const bench_results *results, const bench_exports *exports, FILE *out)
{
    print_setup(plan, expected, results, out);
    print_timings(plan, results, out);
    print_pipelined_report(results, out);
    bench_alone_print(results, out);
    bench_exports_print_text(exports, out);
}
