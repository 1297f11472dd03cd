/* Checking outputs of the latency command against the host reference, on all CPUs. */
#include <math.h>

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

/* The bench's tolerance at iters 0: sinmix is a few float operations, which the device may
 * contract into FMAs. NaN (the poison) never passes. */
static int matches(float got, float want)
{
    double magnitude = fabs((double)want) > 1.0 ? fabs((double)want) : 1.0;
    return fabs((double)got - (double)want) <= 1e-5 * magnitude;
}

static void verify_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    verify_job *job = arg;
    size_t bad = 0;
    for (size_t i = begin; i < end; i++) {
        float want = job->copy ? job->in[i] : sp_sinmix_one(job->in[i], 0);
        if (job->copy ? job->got[i] != want : !matches(job->got[i], want))
            bad++;
    }
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
