/* Checking outputs of the latency command against the host reference, on all CPUs. */
#include <string.h>

#include "bench_compare.h"
#include "latency.h"
#include "par_for.h"
#include "streampipe_ops.h"

#define MAX_WORKERS 256

typedef struct verify_job {
    const float *in;
    const float *got;
    int copy;
    size_t bad[MAX_WORKERS]; /* per worker, so that no counter is shared */
} verify_job;

/* Copies must be bit for bit; sinmix at iters 0 within the bench's tolerance (a few float
 * operations, which the device may contract into FMAs). NaN (the poison) never passes. */
static void verify_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    verify_job *job = arg;
    size_t bad = 0;
    double error;
    for (size_t i = begin; i < end; i++)
        bad += job->copy ? memcmp(&job->got[i], &job->in[i], sizeof(float)) != 0
                         : !bench_within_tolerance(job->got[i], sp_sinmix_one(job->in[i], 0), 0,
                                                   &error);
    job->bad[worker] = bad;
}

size_t latency_mismatches(const float *in, const float *got, size_t n, int copy,
                          unsigned workers)
{
    verify_job job = {in, got, copy, {0}};
    if (workers < 1)
        workers = 1;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    par_for(n, workers, verify_range, &job);
    size_t total = 0;
    for (unsigned w = 0; w < workers; w++)
        total += job.bad[w];
    return total;
}
