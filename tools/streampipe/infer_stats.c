/* Medians of the timed runs of `streampipe infer`. */
#include "infer.h"
#include "stats.h"

double infer_median(const double *values, size_t n) { return cli_median(values, n); }

const sp_report *infer_median_report(const infer_results *results)
{
    if (results->runs == 0 || results->runs > INFER_MAX_REPEAT)
        return NULL;
    return &results->reports[cli_lower_median_index(results->seconds, results->runs)];
}
