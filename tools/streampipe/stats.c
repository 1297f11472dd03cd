/* Medians and rates of repeated runs; see stats.h. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts a copy of values[0..n) into sorted; 0 when n is out of range. */
static int sorted_copy(const double *values, size_t n, double *sorted)
{
    if (n == 0 || n > CLI_MAX_SAMPLES)
        return 0;
    memcpy(sorted, values, n * sizeof *values);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
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
