/* Medians of the timed runs of `streampipe infer`. */
#include <stdlib.h>
#include <string.h>

#include "infer.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double infer_median(const double *values, size_t n)
{
    double sorted[INFER_MAX_REPEAT];
    if (n == 0 || n > INFER_MAX_REPEAT)
        return 0.0;
    memcpy(sorted, values, n * sizeof *values);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

const sp_report *infer_median_report(const infer_results *results)
{
    double sorted[INFER_MAX_REPEAT];
    size_t n = results->runs;
    if (n == 0 || n > INFER_MAX_REPEAT)
        return NULL;
    memcpy(sorted, results->seconds, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    for (size_t i = 0; i < n; i++)
        if (results->seconds[i] == sorted[(n - 1) / 2])
            return &results->reports[i];
    return &results->reports[0];
}
