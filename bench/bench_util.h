/* What the benchmark programs of bench/ share: the clock, the median of repeats, and the
 * sampled check of a sinmix output against the C reference. Header-only: each program is one
 * file plus the library. */
#ifndef SP_BENCH_UTIL_H
#define SP_BENCH_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "streampipe_ops.h"

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) (n > 0). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* 1 when got is outside the bench's tolerance of sinmix's C reference value want (iters
 * iterations: the GPU's sinf/cosf drift from the host's by a little each). */
static inline int sinmix_off(float got, float want, unsigned iters)
{
    double mag = fabs((double)want) > 1.0 ? fabs((double)want) : 1.0;
    return !(fabs((double)got - (double)want) <= 1e-5 * (1.0 + iters) * mag);
}

/* Elements of got (n > 0) outside the bench's tolerance of sinmix(in, iters), at 2^16
 * hash-spread indices. */
static inline size_t sampled_bad(const float *in, const float *got, size_t n, unsigned iters)
{
    size_t bad = 0;
    for (size_t k = 0; k < (1u << 16); k++) {
        size_t i = (size_t)((k * 2654435761ull) % n);
        bad += (size_t)sinmix_off(got[i], sp_sinmix_one(in[i], iters), iters);
    }
    return bad;
}

#endif
