/* The bulk pipeline: runs back to back on a thread of its own until told to stop. */
#include <stdio.h>
#include <time.h>

#include "stats.h"
#include "latency.h"

static void record_failure(latency_bulk *b, sp_status status)
{
    b->status = status;
    /* The pipeline's own text: the context's may be rewritten by the request thread. */
    snprintf(b->error, sizeof b->error, "%s", sp_pipeline_last_error(b->pipeline));
}

static void *bulk_loop(void *arg)
{
    latency_bulk *b = arg;
    b->first_start_s = cli_now_s();
    b->last_end_s = b->first_start_s;
    atomic_store(&b->started, 1);
    /* At least one run, even if told to stop at once: a phase always has a throughput. */
    do {
        const float *in = b->in[b->total_runs % 2];
        sp_status status = sp_pipeline_run(b->pipeline, in, b->records, b->out, NULL);
        if (status != SP_OK) {
            record_failure(b, status);
            break;
        }
        b->total_runs++;
        b->runs++;
        b->last_end_s = cli_now_s();
    } while (!atomic_load(&b->stop));
    return NULL;
}

int latency_bulk_start(latency_bulk *b, sp_pipeline *pipeline)
{
    b->pipeline = pipeline;
    b->runs = 0;
    b->status = SP_OK;
    b->error[0] = '\0';
    atomic_store(&b->started, 0);
    atomic_store(&b->stop, 0);
    if (pthread_create(&b->thread, NULL, bulk_loop, b) != 0)
        return -1;
    /* Requests must meet a pipeline already streaming, not its start-up. */
    const struct timespec pause = {0, 100000};
    while (!atomic_load(&b->started))
        nanosleep(&pause, NULL);
    return 0;
}

sp_status latency_bulk_stop(latency_bulk *b)
{
    atomic_store(&b->stop, 1);
    pthread_join(b->thread, NULL);
    return b->status;
}

double latency_bulk_gbps(const latency_bulk *b)
{
    double seconds = b->last_end_s - b->first_start_s;
    double bytes = (double)b->runs * (double)b->records * 2.0 * sizeof(float);
    return b->runs > 0 ? cli_gbps(bytes, seconds) : 0.0;
}

const float *latency_bulk_last_input(const latency_bulk *b)
{
    return b->in[(b->total_runs + 1) % 2];
}
