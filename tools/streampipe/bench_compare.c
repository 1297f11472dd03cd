/* Comparing a run's output with expected values, on all CPUs, and the one tolerance used
 * wherever device results meet the host reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_compare.h"
#include "par_for.h"

#define TOLERANCE_TEXT "|got - want| <= 1e-5 * (1 + iters) * max(1, |want|)"

/* The one tolerance for comparing the device with the host reference: sinf differs in its
 * last bits between the GPU and the C library, and every iteration can carry that forward.
 * *abs_error is |got - want| (NaN when either is NaN, which never passes). */
int bench_within_tolerance(float got, float want, unsigned iters, double *abs_error)
{
    double magnitude = fabs((double)want) > 1.0 ? fabs((double)want) : 1.0;
    *abs_error = fabs((double)got - (double)want);
    return *abs_error <= 1e-5 * (1.0 + iters) * magnitude;
}

/* ---- recording a check ------------------------------------------------------------------ */

static void note_mismatch(bench_check *check, size_t index, float got, float want)
{
    if (check->n_shown < BENCH_SHOW_BAD) {
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
    for (size_t k = 0; k < part->n_shown && total->n_shown < BENCH_SHOW_BAD; k++) {
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

static void compare_tolerant(const compare_job *job, size_t begin, size_t end, bench_check *check)
{
    for (size_t i = begin; i < end; i++) {
        double abs_error = 0.0;
        if (!bench_within_tolerance(job->got[i], job->want[i], job->iters, &abs_error))
            note_mismatch(check, i, job->got[i], job->want[i]);
        note_error(check, abs_error, job->want[i]);
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
    case BENCH_COMPARE_TOLERANT: compare_tolerant(job, begin, end, check); break;
    case BENCH_COMPARE_EXACT: compare_exact(job, begin, end, check); break;
    case BENCH_COMPARE_FINITE: check_finite(job, begin, end, check); break;
    }
    check->checked += end - begin;
}

void bench_compare_all(bench_compare_kind kind, const float *got, const float *want, size_t n,
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

void bench_compare_samples(const float *got, const size_t *index, const float *want,
                           size_t n_samples, unsigned iters, bench_check *check)
{
    bench_check part;
    memset(&part, 0, sizeof part);
    for (size_t k = 0; k < n_samples; k++) {
        size_t i = index[k];
        double abs_error = 0.0;
        if (!bench_within_tolerance(got[i], want[k], iters, &abs_error))
            note_mismatch(&part, i, got[i], want[k]);
        note_error(&part, abs_error, want[k]);
    }
    merge_check(check, &part); /* the elements were already counted as checked */
}

const char *bench_tolerance_text(void)
{
    return TOLERANCE_TEXT;
}
