/* Verification of every output element of every timed run, on all CPUs.
 *
 * FULL: the host computes the reference of every element and every run is compared with it
 * under the one tolerance used wherever device results meet the host reference.
 * SAMPLED, for jobs too heavy to recompute on the host: the reference at 2^20 random indices
 * checks the first serial run, and every element of that run must be finite (so a chunk the
 * run never wrote, still holding the NaN poison, is caught). Its output then becomes the
 * expected value of every element of every later run, bit for bit: serial and pipelined runs
 * use the same kernel on the same data, so any difference is a pipelining bug. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"
#include "par_for.h"
#include "streampipe_ops.h"

/* FULL while records * max(iters, 1) is at most this many sinmix steps. */
#define FULL_REFERENCE_LIMIT (1ULL << 32)
#define SAMPLES (1ULL << 20)
#define SHOW_BAD 5 /* mismatches printed before giving up */
#define TOLERANCE_TEXT "|got - want| <= 1e-5 * (1 + iters) * max(1, |want|)"

typedef enum bench_compare_kind {
    BENCH_COMPARE_TOLERANT, /* within the tolerance of the host reference */
    BENCH_COMPARE_SINMIX,   /* the same, with sinmix of `want` (the input) as the reference */
    BENCH_COMPARE_EXACT,    /* bit for bit */
    BENCH_COMPARE_FINITE    /* no NaN or infinity (want is unused and may be NULL) */
} bench_compare_kind;

/* The outcome of checking one run's output. */
typedef struct bench_check {
    size_t checked, mismatches;
    size_t n_shown;
    size_t bad_index[SHOW_BAD];
    float bad_got[SHOW_BAD], bad_want[SHOW_BAD];
    double max_abs_error;   /* against the host reference; 0 for bitwise checks */
    double max_rel_error;   /* |got - want| / max(1, |want|) */
} bench_check;

/* sinf differs in its last bits between the GPU and the C library, and every iteration can
 * carry that forward. *abs_error is |got - want| (NaN when either is NaN: never passes). */
static int within_tolerance(float got, float want, unsigned iters, double *abs_error)
{
    double magnitude = fabs((double)want) > 1.0 ? fabs((double)want) : 1.0;
    *abs_error = fabs((double)got - (double)want);
    return *abs_error <= 1e-5 * (1.0 + iters) * magnitude;
}

/* ---- recording a check ------------------------------------------------------------------ */

static void note_mismatch(bench_check *check, size_t index, float got, float want)
{
    if (check->n_shown < SHOW_BAD) {
        check->bad_index[check->n_shown] = index;
        check->bad_got[check->n_shown] = got;
        check->bad_want[check->n_shown] = want;
        check->n_shown++;
    }
    check->mismatches++;
}

static void note_error(bench_check *check, double abs_error, float want)
{
    if (!isfinite(abs_error))
        return;
    double magnitude = fabs((double)want) > 1.0 ? fabs((double)want) : 1.0;
    if (abs_error > check->max_abs_error)
        check->max_abs_error = abs_error;
    if (abs_error / magnitude > check->max_rel_error)
        check->max_rel_error = abs_error / magnitude;
}

/* Adds `part` to `total`. Parts come in index order, so the first mismatches stay first. */
static void merge_check(bench_check *total, const bench_check *part)
{
    for (size_t k = 0; k < part->n_shown && total->n_shown < SHOW_BAD; k++) {
        total->bad_index[total->n_shown] = part->bad_index[k];
        total->bad_got[total->n_shown] = part->bad_got[k];
        total->bad_want[total->n_shown] = part->bad_want[k];
        total->n_shown++;
    }
    total->mismatches += part->mismatches;
    total->checked += part->checked;
    if (part->max_abs_error > total->max_abs_error)
        total->max_abs_error = part->max_abs_error;
    if (part->max_rel_error > total->max_rel_error)
        total->max_rel_error = part->max_rel_error;
}

/* ---- comparing whole outputs on all CPUs -------------------------------------------------- */

typedef struct compare_job {
    bench_compare_kind kind;
    const float *got;
    const float *want; /* NULL for COMPARE_FINITE */
    unsigned iters;
    bench_check *parts; /* one per worker */
} compare_job;

/* TOLERANT: want[i] is the value; SINMIX: want[i] is the input and sinmix of it the value. */
static void compare_tolerant(const compare_job *job, size_t begin, size_t end, bench_check *check)
{
    for (size_t i = begin; i < end; i++) {
        float want = job->kind == BENCH_COMPARE_SINMIX ? sp_sinmix_one(job->want[i], job->iters)
                                                       : job->want[i];
        double abs_error = 0.0;
        if (!within_tolerance(job->got[i], want, job->iters, &abs_error))
            note_mismatch(check, i, job->got[i], want);
        note_error(check, abs_error, want);
    }
}

/* Bitwise, so that -0 vs +0 or a different NaN counts: the runs must agree to the bit. */
static void compare_exact(const compare_job *job, size_t begin, size_t end, bench_check *check)
{
    const size_t block = 4096;
    for (size_t start = begin; start < end; start += block) {
        size_t stop = end - start < block ? end : start + block;
        if (memcmp(job->got + start, job->want + start, (stop - start) * sizeof(float)) == 0)
            continue;
        for (size_t i = start; i < stop; i++)
            if (memcmp(&job->got[i], &job->want[i], sizeof(float)) != 0)
                note_mismatch(check, i, job->got[i], job->want[i]);
    }
}

static void check_finite(const compare_job *job, size_t begin, size_t end, bench_check *check)
{
    for (size_t i = begin; i < end; i++)
        if (!isfinite(job->got[i]))
            note_mismatch(check, i, job->got[i], NAN);
}

static void compare_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    const compare_job *job = arg;
    bench_check *check = &job->parts[worker];
    switch (job->kind) {
    case BENCH_COMPARE_TOLERANT:
    case BENCH_COMPARE_SINMIX: compare_tolerant(job, begin, end, check); break;
    case BENCH_COMPARE_EXACT: compare_exact(job, begin, end, check); break;
    case BENCH_COMPARE_FINITE: check_finite(job, begin, end, check); break;
    }
    check->checked += end - begin;
}

static void compare_all(bench_compare_kind kind, const float *got, const float *want, size_t n,
                       unsigned iters, unsigned workers, bench_check *check)
{
    bench_check single;
    bench_check *parts = calloc(workers, sizeof *parts);
    if (parts == NULL) {
        workers = 1; /* slower, not wrong */
        memset(&single, 0, sizeof single);
        parts = &single;
    }
    compare_job job = {kind, got, want, iters, parts};
    par_for(n, workers, compare_range, &job);
    for (unsigned w = 0; w < workers; w++)
        merge_check(check, &parts[w]);
    if (parts != &single)
        free(parts);
}

size_t bench_count_mismatches(const float *in, const float *got, size_t n, int copy,
                              unsigned workers)
{
    bench_check check;
    memset(&check, 0, sizeof check);
    compare_all(copy ? BENCH_COMPARE_EXACT : BENCH_COMPARE_SINMIX, got, in, n, 0, workers,
                &check);
    return check.mismatches;
}

static void compare_samples(const float *got, const size_t *index, const float *want,
                           size_t n_samples, unsigned iters, bench_check *check)
{
    bench_check part;
    memset(&part, 0, sizeof part);
    for (size_t k = 0; k < n_samples; k++) {
        size_t i = index[k];
        double abs_error = 0.0;
        if (!within_tolerance(got[i], want[k], iters, &abs_error))
            note_mismatch(&part, i, got[i], want[k]);
        note_error(&part, abs_error, want[k]);
    }
    merge_check(check, &part); /* the elements were already counted as checked */
}

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
    bench_choose_samples(plan->seed, plan->records, e->sample_index, e->n_samples);
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

static int check_sinmix(bench_expected *e, const float *got, size_t n, bench_check *check)
{
    memset(check, 0, sizeof *check);
    if (e->method == BENCH_CHECK_FULL) {
        compare_all(BENCH_COMPARE_TOLERANT, got, e->values, n, e->iters, e->workers,
                          check);
    } else if (e->have_values) {
        compare_all(BENCH_COMPARE_EXACT, got, e->values, n, e->iters, e->workers, check);
    } else {
        compare_all(BENCH_COMPARE_FINITE, got, NULL, n, e->iters, e->workers, check);
        compare_samples(got, e->sample_index, e->sample_value, e->n_samples, e->iters,
                              check);
        if (check->mismatches == 0) {
            memcpy(e->values, got, n * sizeof *got);
            e->have_values = 1;
        }
    }
    return check->mismatches == 0 ? 0 : -1;
}

static int check_copy(const float *got, const float *in, size_t n, unsigned workers,
                     bench_check *check)
{
    memset(check, 0, sizeof *check);
    compare_all(BENCH_COMPARE_EXACT, got, in, n, 0, workers, check);
    return check->mismatches == 0 ? 0 : -1;
}

const char *bench_tolerance_text(void)
{
    return TOLERANCE_TEXT;
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

static void print_mismatches(const bench_check *check, const char *run, FILE *out)
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

static void add_check(const bench_check *check, double seconds, bench_totals *totals)
{
    totals->elements_checked += check->checked;
    totals->verify_s += seconds;
    if (check->max_abs_error > totals->max_abs_error)
        totals->max_abs_error = check->max_abs_error;
    if (check->max_rel_error > totals->max_rel_error)
        totals->max_rel_error = check->max_rel_error;
}

int bench_check_output(const bench_session *s, const bench_run_spec *spec, const char *label)
{
    const bench_plan *plan = s->plan;
    bench_check check;
    double start = cli_now_s();
    int bad = spec->copy_only
                  ? check_copy(spec->out, spec->in, plan->records, plan->host_workers, &check)
                  : check_sinmix(s->expected, spec->out, plan->records, &check);
    add_check(&check, cli_now_s() - start, s->checks);
    if (!bad)
        return CLI_EXIT_OK;
    bench_progress_clear(s->progress);
    print_mismatches(&check, label, stderr);
    return CLI_EXIT_FAILURE;
}
