/* The request side: one small run at a time, each timed on the host clock and verified. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"
#include "latency.h"

static int alloc_pinned(sp_context *ctx, size_t records, float **out)
{
    void *ptr = NULL;
    int rc = cli_host_alloc(ctx, records * sizeof(float), "allocating request memory", &ptr);
    *out = ptr;
    return rc;
}

int latency_requests_alloc(latency_requests *r, sp_context *ctx, size_t records, size_t count,
                           unsigned long long seed)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->records = records;
    r->count = count;
    r->latency_s = calloc(count, sizeof *r->latency_s);
    if (r->latency_s == NULL)
        return cli_report_failure("allocating request timings", SP_ERR_OUT_OF_MEMORY, NULL);
    int rc = alloc_pinned(ctx, records, &r->out);
    for (size_t k = 0; k < LATENCY_INPUT_SETS && rc == CLI_EXIT_OK; k++) {
        rc = alloc_pinned(ctx, records, &r->in[k]);
        /* Seeds apart from the bulk inputs' (seed, seed + 1). */
        if (rc == CLI_EXIT_OK)
            bench_fill_input(r->in[k], records, seed + 2 + k, 1);
    }
    return rc;
}

void latency_requests_free(latency_requests *r)
{
    free(r->latency_s);
    if (r->ctx == NULL) /* never allocated */
        return;
    for (size_t k = 0; k < LATENCY_INPUT_SETS; k++)
        sp_host_free(r->ctx, r->in[k]);
    sp_host_free(r->ctx, r->out);
    memset(r, 0, sizeof *r);
}

/* Nearest rank: the smallest value with at least p of the samples at or below it. */
static double percentile(const double *sorted, size_t n, double p)
{
    size_t rank = (size_t)ceil(p * (double)n);
    return sorted[rank > 0 ? rank - 1 : 0];
}

static void summarize(double *latency_s, size_t n, latency_stats *stats)
{
    cli_sort(latency_s, n);
    stats->p50_us = percentile(latency_s, n, 0.50) * 1e6;
    stats->p99_us = percentile(latency_s, n, 0.99) * 1e6;
    stats->max_us = latency_s[n - 1] * 1e6;
}

int latency_requests_run(latency_requests *r, sp_pipeline *pipeline, size_t n, int times,
                         latency_stats *stats)
{
    for (size_t k = 0; k < n; k++) {
        const float *in = r->in[k % LATENCY_INPUT_SETS];
        /* NaN everywhere: an element the run does not write cannot pass. */
        memset(r->out, 0xFF, r->records * sizeof(float));
        double start = cli_now_s();
        sp_status status = sp_pipeline_run(pipeline, in, r->records, r->out, NULL);
        double elapsed = cli_now_s() - start;
        if (status != SP_OK)
            return cli_report_failure("a request", status, sp_pipeline_last_error(pipeline));
        if (times)
            r->latency_s[k] = elapsed;
        r->mismatches += bench_count_mismatches(in, r->out, r->records, 0, 1);
        r->checked++;
    }
    if (times)
        summarize(r->latency_s, n, stats);
    return CLI_EXIT_OK;
}

