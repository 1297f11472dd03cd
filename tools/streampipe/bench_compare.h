/* Comparisons of outputs with expected values, used by bench_verify.c. */
#ifndef SP_CLI_BENCH_COMPARE_H
#define SP_CLI_BENCH_COMPARE_H

#include <stddef.h>

#include "bench.h"

typedef enum bench_compare_kind {
    BENCH_COMPARE_TOLERANT, /* within the tolerance of the host reference */
    BENCH_COMPARE_EXACT,    /* bit for bit */
    BENCH_COMPARE_FINITE    /* no NaN or infinity (want is unused and may be NULL) */
} bench_compare_kind;

/* The one tolerance for comparing the device with the host reference after `iters` sinmix
 * iterations; *abs_error is |got - want| (NaN, which never passes, when either is NaN). */
int bench_within_tolerance(float got, float want, unsigned iters, double *abs_error);

/* Adds the outcome of comparing got[0..n) with want[0..n) to *check, on `workers` threads. */
void bench_compare_all(bench_compare_kind kind, const float *got, const float *want, size_t n,
                       unsigned iters, unsigned workers, bench_check *check);

/* Adds the outcome of comparing got[index[k]] with want[k], k < n_samples, within the
 * tolerance, to *check; the elements are not counted again in check->checked. */
void bench_compare_samples(const float *got, const size_t *index, const float *want,
                           size_t n_samples, unsigned iters, bench_check *check);

#endif /* SP_CLI_BENCH_COMPARE_H */
