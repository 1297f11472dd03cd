/* The text result of `streampipe bench --sweep`: the job, how it was checked, then a row per
 * value of the swept setting. */
#include <stdio.h>

#include "bench.h"

/* "chunk 1048576 records" or "chunk chosen"; returns 1 for a chosen one. */
static int print_setting(const char *name, unsigned long long value, const char *unit,
                         FILE *out)
{
    if (value == 0)
        fprintf(out, "%s chosen", name);
    else
        fprintf(out, "%s %llu%s", name, value, unit);
    return value == 0;
}

/* The settings every row shares. */
static void print_others(const bench_plan *plan, bench_sweep_parameter parameter, FILE *out)
{
    int chosen = 0;
    fputs("settings         ", out);
    if (parameter != BENCH_SWEEP_CHUNK) {
        chosen |= print_setting("chunk", plan->chunk_records, " records", out);
        fputs(", ", out);
    }
    if (parameter != BENCH_SWEEP_DEPTH) {
        chosen |= print_setting("depth", plan->depth, "", out);
        fputs(", ", out);
    }
    chosen |= print_setting("staging threads", plan->staging_threads, "", out);
    fputs(chosen ? " (chosen: the library's choice, which may differ from row to row)\n" : "\n",
          out);
}

/* What each method means, in a line: the details are in bench_verify.c. */
static const char *method_meaning(bench_check_method method)
{
    return method == BENCH_CHECK_FULL
               ? "host reference of every element, every run within tolerance"
               : "a serial run checked at sampled indices, then every run bit for bit";
}

static int all_rows_use(const bench_sweep_result *sweep, bench_check_method method)
{
    for (size_t i = 0; i < sweep->n_rows; i++)
        if (sweep->rows[i].method != method)
            return 0;
    return 1;
}

/* "sampled-reference-then-serial at iters 1000, 2000" for the rows checked with `method`. */
static void print_method_rows(const bench_sweep_result *sweep, bench_check_method method,
                              FILE *out)
{
    fprintf(out, "%s at %s", bench_check_method_name(method),
            bench_sweep_parameter_name(sweep->parameter));
    const char *separator = " ";
    for (size_t i = 0; i < sweep->n_rows; i++) {
        if (sweep->rows[i].method != method)
            continue;
        fprintf(out, "%s%llu", separator, sweep->rows[i].value);
        separator = ", ";
    }
    fprintf(out, " (%s)", method_meaning(method));
}

static void print_verification(const bench_sweep_result *sweep, FILE *out)
{
    const bench_totals *t = &sweep->checks;
    bench_check_method first = sweep->rows[0].method;
    fputs("verification     ", out);
    if (all_rows_use(sweep, first)) {
        fprintf(out, "%s for every row: %s\n", bench_check_method_name(first),
                method_meaning(first));
    } else { /* only an iters sweep changes the method, as the reference grows heavier */
        print_method_rows(sweep, BENCH_CHECK_FULL, out);
        fputs(";\n                 ", out);
        print_method_rows(sweep, BENCH_CHECK_SAMPLED, out);
        fputs("\n", out);
    }
    fprintf(out, "tolerance        %s; max error abs %.3g, rel %.3g; %zu elements checked in "
                 "%.3f s\n", bench_tolerance_text(), t->max_abs_error, t->max_rel_error,
            t->elements_checked, t->verify_s);
}

static void print_setup(const bench_plan *plan, const bench_sweep_result *sweep, FILE *out)
{
    bench_print_job(plan, out);
    const bench_sweep_row *default_row = &sweep->rows[sweep->default_row];
    fprintf(out, "sweep            %s over %zu values; default %llu%s\n",
            bench_sweep_parameter_name(sweep->parameter), sweep->n_rows, default_row->value,
            default_row->config_value == 0 && sweep->parameter != BENCH_SWEEP_ITERS
                ? " (the library's choice)"
                : "");
    print_others(plan, sweep->parameter, out);
    fprintf(out, "memory           %s (%s)\n", bench_memory_name(plan->memory),
            plan->memory == BENCH_MEMORY_PINNED ? "sp_host_alloc" : "malloc");
    fprintf(out, "seed             %llu\n", plan->seed);
    fprintf(out, "repeats          %u run%s without a report per value (median below), then "
                 "one with a report (efficiency, bottleneck)\n",
            plan->repeat, plan->repeat == 1 ? "" : "s");
    print_verification(sweep, out);
}

static void print_row(const bench_sweep_result *sweep, size_t index, FILE *out)
{
    const bench_sweep_row *row = &sweep->rows[index];
    char value[40];
    snprintf(value, sizeof value, "%llu%s", row->value, row->is_default ? " default" : "");
    fprintf(out, "%c %-18s %8zu %6u %10.4f %12.2f %8.2fx %10.1f%%  %s\n",
            index == sweep->best_row ? '*' : ' ', value, row->report.chunks, row->report.depth,
            row->median_s, row->gbps, row->speedup, 100.0 * row->report.efficiency,
            row->report.bottleneck);
}

static void print_table(const bench_sweep_result *sweep, FILE *out)
{
    fprintf(out, "\n  %-18s %8s %6s %10s %12s %9s %11s  %s\n",
            bench_sweep_parameter_name(sweep->parameter), "chunks", "depth", "median s",
            "GB/s in+out", "speedup", "efficiency", "bottleneck");
    for (size_t i = 0; i < sweep->n_rows; i++)
        print_row(sweep, i, out);
    const bench_sweep_row *best = &sweep->rows[sweep->best_row];
    fprintf(out, "\n* fastest       %s %llu, %.2fx the default's speed\n",
            bench_sweep_parameter_name(sweep->parameter), best->value, best->speedup);
    fputs("speedup          the default row's median / the row's median\n"
          "efficiency       bound / makespan of the row's run with a report\n", out);
}

void bench_sweep_print_text(const bench_plan *plan, const bench_sweep_result *sweep,
                            const bench_exports *exports, FILE *out)
{
    print_setup(plan, sweep, out);
    print_table(sweep, out);
    bench_exports_print_text(exports, out);
}
