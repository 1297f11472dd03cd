/* Verification of every output element of every timed run.
 *
 * FULL: the host computes the reference of every element (on all CPUs) and every run is
 * compared with it under the tolerance (bench_compare.c).
 * SAMPLED, for jobs too heavy to recompute on the host: the reference at 2^20 random indices
 * checks the first serial run, and every element of that run must be finite (so a chunk the
 * run never wrote, still holding the NaN poison, is caught). Its output then becomes the
 * expected value of every element of every later run, bit for bit: serial and pipelined runs
 * use the same kernel on the same data, so any difference is a pipelining bug. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_compare.h"
#include "cli.h"
#include "clock.h"
#include "par_for.h"
#include "rng.h"
#include "streampipe_ops.h"

/* FULL while records * max(iters, 1) is at most this many sinmix steps. */
#define FULL_REFERENCE_LIMIT (1ULL << 32)
#define SAMPLES (1ULL << 20)
/* Sample indices come from a stream of the seed that input blocks never use. */
#define SAMPLE_STREAM (~0ULL)

/* ---- expected values ---------------------------------------------------------------------- */

typedef struct reference_job {
    const float *in;
    const size_t *index; /* NULL: element i is in[i]; else in[index[i]] */
    float *out;
    unsigned iters;
} reference_job;

static void reference_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    const reference_job *job = arg;
    (void)worker;
    if (job->index == NULL) {
        sp_sinmix_reference(job->in + begin, job->out + begin, end - begin, job->iters);
        return;
    }
    for (size_t k = begin; k < end; k++)
        job->out[k] = sp_sinmix_one(job->in[job->index[k]], job->iters);
}

/* Every index when there are few records; otherwise random ones (repeats do no harm). */
static void choose_samples(const bench_plan *plan, size_t *index, size_t n_samples)
{
    rng r = rng_seeded(plan->seed, SAMPLE_STREAM);
    for (size_t k = 0; k < n_samples; k++)
        index[k] = n_samples == plan->records ? k : (size_t)rng_below(&r, plan->records);
}

static int prepare_sampled(const bench_plan *plan, const float *in, bench_expected *e)
{
    e->n_samples = plan->records < SAMPLES ? plan->records : (size_t)SAMPLES;
    /* calloc checks count * size for overflow. */
    e->sample_index = calloc(e->n_samples, sizeof *e->sample_index);
    e->sample_value = calloc(e->n_samples, sizeof *e->sample_value);
    /* Room for the first serial output now, so adopting it later cannot fail. */
    e->values = calloc(plan->records, sizeof *e->values);
    if (e->sample_index == NULL || e->sample_value == NULL || e->values == NULL)
        return -1;
    choose_samples(plan, e->sample_index, e->n_samples);
    reference_job job = {in, e->sample_index, e->sample_value, plan->iters};
    par_for(e->n_samples, e->workers, reference_range, &job);
    return 0;
}

static int prepare_full(const bench_plan *plan, const float *in, bench_expected *e)
{
    e->values = calloc(plan->records, sizeof *e->values);
    if (e->values == NULL)
        return -1;
    reference_job job = {in, NULL, e->values, plan->iters};
    par_for(plan->records, e->workers, reference_range, &job);
    e->have_values = 1;
    return 0;
}

int bench_expected_prepare(const bench_plan *plan, const float *in, bench_expected *e)
{
    memset(e, 0, sizeof *e);
    e->iters = plan->iters;
    e->workers = plan->host_workers;
    e->records = plan->records;
    unsigned long long steps_per_record = plan->iters > 0 ? plan->iters : 1;
    e->method = plan->records <= FULL_REFERENCE_LIMIT / steps_per_record ? BENCH_CHECK_FULL
                                                                          : BENCH_CHECK_SAMPLED;
    double start = cli_now_s();
    int rc = e->method == BENCH_CHECK_FULL ? prepare_full(plan, in, e)
                                           : prepare_sampled(plan, in, e);
    e->reference_s = cli_now_s() - start;
    if (rc != 0)
        return cli_report_failure("allocating host memory for the expected output",
                                  SP_ERR_OUT_OF_MEMORY, "");
    return CLI_EXIT_OK;
}

void bench_expected_free(bench_expected *e)
{
    free(e->values);
    free(e->sample_index);
    free(e->sample_value);
    memset(e, 0, sizeof *e);
}

/* ---- checks -------------------------------------------------------------------------------- */

int bench_check_sinmix(bench_expected *e, const float *got, size_t n, bench_check *check)
{
    memset(check, 0, sizeof *check);
    if (e->method == BENCH_CHECK_FULL) {
        bench_compare_all(BENCH_COMPARE_TOLERANT, got, e->values, n, e->iters, e->workers,
                          check);
    } else if (e->have_values) {
        bench_compare_all(BENCH_COMPARE_EXACT, got, e->values, n, e->iters, e->workers, check);
    } else {
        bench_compare_all(BENCH_COMPARE_FINITE, got, NULL, n, e->iters, e->workers, check);
        bench_compare_samples(got, e->sample_index, e->sample_value, e->n_samples, e->iters,
                              check);
        if (check->mismatches == 0) {
            memcpy(e->values, got, n * sizeof *got);
            e->have_values = 1;
        }
    }
    return check->mismatches == 0 ? 0 : -1;
}

int bench_check_copy(const float *got, const float *in, size_t n, unsigned workers,
                     bench_check *check)
{
    memset(check, 0, sizeof *check);
    bench_compare_all(BENCH_COMPARE_EXACT, got, in, n, 0, workers, check);
    return check->mismatches == 0 ? 0 : -1;
}

const char *bench_check_method_name(bench_check_method method)
{
    return method == BENCH_CHECK_FULL ? "full-reference" : "sampled-reference-then-serial";
}

const char *bench_check_description(const bench_expected *e, char *buf, size_t size)
{
    if (e->method == BENCH_CHECK_FULL)
        snprintf(buf, size, "host reference of every element (%.3f s on %u threads); every "
                 "element of every run within tolerance", e->reference_s, e->workers);
    else
        snprintf(buf, size, "host reference at %zu %s indices (%.3f s on %u threads) checks "
                 "the first serial run, all of whose elements must be finite; that output is "
                 "the expected value of every element of every later run, bit for bit",
                 e->n_samples, e->n_samples == e->records ? "(all)" : "random",
                 e->reference_s, e->workers);
    return buf;
}

void bench_print_mismatches(const bench_check *check, const char *run, FILE *out)
{
    fprintf(out, "streampipe: verification failed: %s: %zu of %zu elements wrong\n", run,
            check->mismatches, check->checked);
    for (size_t k = 0; k < check->n_shown; k++) {
        double want = (double)check->bad_want[k];
        fprintf(out, "  [%zu] got %.9g, want ", check->bad_index[k], (double)check->bad_got[k]);
        /* Expected values are always finite; NaN marks a finiteness check with no value. */
        if (isnan(want))
            fputs("a finite value\n", out);
        else
            fprintf(out, "%.9g\n", want);
    }
}
