/* Clocks, medians and rates of repeated runs; see stats.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

unsigned long long cli_clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long mixed = (unsigned long long)ts.tv_sec * 1000000007ULL ^
                               (unsigned long long)ts.tv_nsec;
    return mixed & 0xFFFFFFFFULL;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cli_sort(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_doubles);
}

/* Sorts a copy of values[0..n) into sorted; 0 when n is out of range. */
static int sorted_copy(const double *values, size_t n, double *sorted)
{
    if (n == 0 || n > CLI_MAX_SAMPLES)
        return 0;
    memcpy(sorted, values, n * sizeof *values);
    cli_sort(sorted, n);
    return 1;
}

double cli_median(const double *values, size_t n)
{
    double sorted[CLI_MAX_SAMPLES];
    if (!sorted_copy(values, n, sorted))
        return 0.0;
    return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

size_t cli_lower_median_index(const double *values, size_t n)
{
    double sorted[CLI_MAX_SAMPLES];
    if (!sorted_copy(values, n, sorted))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (values[i] == sorted[(n - 1) / 2])
            return i;
    return 0;
}

double cli_gbps(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}
