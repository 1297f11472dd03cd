/* `streampipe latency`: set-up, the three phases, tear-down. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "latency.h"
#include "par_for.h"

/* The bulk pipeline alone runs this long: many runs of the default size on either backend. */
#define BULK_ALONE_CUDA_S 2.0
#define BULK_ALONE_HOST_S 0.5
/* Untimed requests per request pipeline before the phases, so no first-run cost is timed. */
#define WARM_REQUESTS 8

/* chunk_bytes and depth 0: the library chooses. */
static int make_pipeline(latency_job *j, size_t n_stages, int priority, int copy_by_kernel,
                         size_t piece, size_t chunk_bytes, unsigned depth, sp_pipeline **out)
{
    sp_stage stage = sp_sinmix_stage(&j->params);
    sp_pipeline_config config = {.in_record_bytes = sizeof(float), .stages = &stage,
                                 .n_stages = n_stages, .priority = priority,
                                 .copy_piece_bytes = piece,
                                 .chunk_records = chunk_bytes / sizeof(float), .depth = depth,
                                 .copy_by_kernel = copy_by_kernel};
    sp_status status = sp_pipeline_create(j->ctx, &config, out);
    if (status != SP_OK)
        return cli_report_failure("creating a pipeline", status, sp_context_last_error(j->ctx));
    return CLI_EXIT_OK;
}

static int alloc_bulk(latency_job *j)
{
    size_t records = (size_t)j->options.bulk_records;
    float **buffers[3] = {&j->bulk_in[0], &j->bulk_in[1], &j->bulk_out};
    for (size_t k = 0; k < 3; k++) {
        void *ptr = NULL;
        sp_status status = sp_host_alloc(j->ctx, records * sizeof(float), &ptr);
        *buffers[k] = ptr;
        if (status != SP_OK)
            return cli_report_failure("allocating bulk memory", status,
                                      sp_context_last_error(j->ctx));
    }
    for (size_t k = 0; k < 2; k++)
        bench_fill_input(j->bulk_in[k], records, j->options.seed + k, par_default_workers());
    /* NaN: no element of the first run can pass unless the run wrote it. */
    memset(j->bulk_out, 0xFF, records * sizeof(float));
    j->bulk.in[0] = j->bulk_in[0];
    j->bulk.in[1] = j->bulk_in[1];
    j->bulk.out = j->bulk_out;
    j->bulk.records = records;
    return CLI_EXIT_OK;
}

static int set_up(latency_job *j)
{
    const latency_options *o = &j->options;
    size_t stages = (size_t)o->bulk_stages;
    int rc = make_pipeline(j, 1, 0, 0, 0, 0, 0, &j->request_plain);
    /* Priority orders kernels, not the copy engines: the requests' copies go by kernel too. */
    if (rc == CLI_EXIT_OK)
        rc = make_pipeline(j, 1, LATENCY_HIGH_PRIORITY, o->request_copy_kernel, 0, 0, 0,
                           &j->request_high);
    if (rc == CLI_EXIT_OK)
        rc = make_pipeline(j, stages, 0, 0, 0, 0, 0, &j->bulk_whole);
    if (rc == CLI_EXIT_OK)
        rc = make_pipeline(j, stages, 0, 0, (size_t)o->piece_bytes, (size_t)o->bulk_chunk_bytes,
                           (unsigned)o->bulk_depth, &j->bulk_pieces);
    if (rc == CLI_EXIT_OK)
        rc = alloc_bulk(j);
    if (rc == CLI_EXIT_OK)
        rc = latency_requests_alloc(&j->requests, j->ctx, (size_t)(o->request_bytes /
                                    sizeof(float)), (size_t)o->requests, o->seed);
    return rc;
}

static void tear_down(latency_job *j)
{
    latency_requests_free(&j->requests);
    for (size_t k = 0; k < 2; k++)
        sp_host_free(j->ctx, j->bulk_in[k]);
    sp_host_free(j->ctx, j->bulk_out);
    sp_pipeline_destroy(j->request_plain);
    sp_pipeline_destroy(j->request_high);
    sp_pipeline_destroy(j->bulk_whole);
    sp_pipeline_destroy(j->bulk_pieces);
    sp_context_destroy(j->ctx);
}

/* Runs alternate inputs, so the last run's output is wrong wherever that run wrote nothing. */
static void check_last_bulk_run(latency_job *j)
{
    j->bulk_mismatches += bench_count_mismatches(latency_bulk_last_input(&j->bulk), j->bulk_out,
                                             j->bulk.records, j->options.bulk_stages == 0,
                                             par_default_workers());
    j->bulk_checked++;
}

static int start_bulk(latency_job *j, sp_pipeline *pipeline)
{
    if (latency_bulk_start(&j->bulk, pipeline) != 0)
        return cli_report_failure("starting the bulk thread", SP_ERR_OUT_OF_MEMORY, NULL);
    return CLI_EXIT_OK;
}

static int stop_bulk(latency_job *j, latency_row *row)
{
    sp_status status = latency_bulk_stop(&j->bulk);
    if (status != SP_OK)
        return cli_report_failure("a bulk run", status, j->bulk.error);
    check_last_bulk_run(j);
    row->bulk_gbps = latency_bulk_gbps(&j->bulk);
    row->bulk_runs = j->bulk.runs;
    return CLI_EXIT_OK;
}

/* One bulk run of each bulk pipeline and a few requests of each request pipeline, all
 * checked, none timed. */
static int warm_up(latency_job *j)
{
    latency_row scratch;
    sp_pipeline *bulk[2] = {j->bulk_whole, j->bulk_pieces};
    int rc = CLI_EXIT_OK;
    for (size_t k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        rc = start_bulk(j, bulk[k]);
        if (rc == CLI_EXIT_OK)
            rc = stop_bulk(j, &scratch);
    }
    if (rc == CLI_EXIT_OK)
        rc = latency_requests_run(&j->requests, j->request_plain, WARM_REQUESTS, 0, NULL);
    if (rc == CLI_EXIT_OK)
        rc = latency_requests_run(&j->requests, j->request_high, WARM_REQUESTS, 0, NULL);
    return rc;
}

static int phase_alone(latency_job *j)
{
    latency_row *row = &j->rows[LATENCY_ALONE];
    int rc = latency_requests_run(&j->requests, j->request_plain, j->requests.count, 1,
                                  &row->request);
    if (rc != CLI_EXIT_OK || (rc = start_bulk(j, j->bulk_whole)) != CLI_EXIT_OK)
        return rc;
    double seconds = j->bulk_alone_s;
    struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
    return stop_bulk(j, row);
}

/* The bulk thread always stops, even after a failed request, so that tear-down is safe. */
static int phase_under_load(latency_job *j, latency_row *row, sp_pipeline *request,
                            sp_pipeline *bulk)
{
    int rc = start_bulk(j, bulk);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = latency_requests_run(&j->requests, request, j->requests.count, 1, &row->request);
    int stop_rc = stop_bulk(j, row);
    return rc != CLI_EXIT_OK ? rc : stop_rc;
}

static int run_phases(latency_job *j)
{
    j->rows[LATENCY_ALONE].name = "alone";
    j->rows[LATENCY_LOAD].name = "load";
    j->rows[LATENCY_PRIORITY].name = "priority";
    int rc = warm_up(j);
    if (rc == CLI_EXIT_OK)
        rc = phase_alone(j);
    if (rc == CLI_EXIT_OK)
        rc = phase_under_load(j, &j->rows[LATENCY_LOAD], j->request_plain, j->bulk_whole);
    if (rc == CLI_EXIT_OK)
        rc = phase_under_load(j, &j->rows[LATENCY_PRIORITY], j->request_high, j->bulk_pieces);
    return rc;
}

static int verdict(const latency_job *j)
{
    if (j->requests.mismatches == 0 && j->bulk_mismatches == 0)
        return CLI_EXIT_OK;
    fprintf(stderr, "streampipe: latency: wrong output: %zu request elements and %zu bulk "
            "elements differ from the host reference\n", j->requests.mismatches,
            j->bulk_mismatches);
    return CLI_EXIT_FAILURE;
}

static int open_context(latency_job *j)
{
    int rc = cli_open_context(j->options.backend, j->options.device, &j->ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    sp_backend_kind backend = sp_context_backend(j->ctx);
    latency_resolve(&j->options, backend);
    j->bulk_alone_s = backend == SP_BACKEND_CUDA ? BULK_ALONE_CUDA_S : BULK_ALONE_HOST_S;
    return CLI_EXIT_OK;
}

int latency_main(int argc, char **argv)
{
    latency_job job;
    memset(&job, 0, sizeof job);
    int help_shown = 0;
    int rc = latency_parse_args(argc, argv, &job.options, &help_shown);
    if (rc != CLI_EXIT_OK || help_shown)
        return rc;
    if ((rc = open_context(&job)) != CLI_EXIT_OK)
        return rc;
    job.params.iters = 0;
    rc = set_up(&job);
    if (rc == CLI_EXIT_OK)
        rc = run_phases(&job);
    if (rc == CLI_EXIT_OK) {
        latency_print_result(&job, stdout);
        rc = verdict(&job);
    }
    tear_down(&job);
    return rc;
}
