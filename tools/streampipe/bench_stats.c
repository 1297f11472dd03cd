/* The figures derived from repeated runs: medians and rates. */

#include "bench.h"
#include "stats.h"

const sp_report *bench_median_report(const bench_series *series)
{
    if (series->runs == 0 || series->runs > BENCH_MAX_REPEAT)
        return NULL;
    return &series->reports[cli_lower_median_index(series->seconds, series->runs)];
}

size_t bench_bytes(const bench_plan *plan)
{
    return plan->records * sizeof(float);
}

double bench_series_gbps(const bench_plan *plan, const bench_series *series)
{
    double bytes = 2.0 * (double)bench_bytes(plan);
    return cli_gbps(bytes, cli_median(series->seconds, series->runs));
}

double bench_submit_us_per_chunk(const bench_series *series)
{
    const sp_report *report = bench_median_report(series);
    return report->chunks > 0 ? 1e6 * report->submit_s / (double)report->chunks : 0.0;
}

double bench_wait_us_per_chunk(const bench_series *series)
{
    const sp_report *report = bench_median_report(series);
    return report->chunks > 0 ? 1e6 * report->wait_s / (double)report->chunks : 0.0;
}

double bench_timeline_cost(const bench_results *r)
{
    double traced = cli_median(r->traced.makespan, r->traced.runs);
    double bare = cli_median(r->pipelined.makespan, r->pipelined.runs);
    return bare > 0.0 ? traced / bare - 1.0 : 0.0;
}

/* Per run, then the median: the wall and makespan medians may come from different runs. */
double bench_timeline_read_s(const bench_results *r)
{
    double after[BENCH_MAX_REPEAT];
    size_t n = r->traced.runs <= BENCH_MAX_REPEAT ? r->traced.runs : BENCH_MAX_REPEAT;
    for (size_t i = 0; i < n; i++)
        after[i] = r->traced.seconds[i] - r->traced.makespan[i];
    return cli_median(after, n);
}
