/* `streampipe latency`: options (checked here; later stages trust them), set-up, the three
 * phases, tear-down. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"
#include "latency.h"
#include "options.h"
#include "par_for.h"

/* Floats: 2^34 per side is 64 GiB, past any pinned allocation, and keeps byte counts in
 * size_t. Requests are kept to 1 GiB: they are meant to be small. */
#define MAX_RECORDS (1ULL << 34)
#define MAX_REQUEST_BYTES (1ULL << 30)
#define MAX_REQUESTS (1ULL << 24)

static const cli_option options[] = {
    CLI_BACKEND_OPTION(latency_options),
    CLI_DEVICE_OPTION(latency_options),
    CLI_COUNT("bulk-records", "N", latency_options, bulk_records, 1, MAX_RECORDS,
              "floats per bulk run (default 2^28 on cuda, 2^22 on host)"),
    CLI_COUNT("bulk-stages", "0|1", latency_options, bulk_stages, 0, 1,
              "bulk compute: 0 = copies only, 1 = sinmix (default 1)"),
    CLI_COUNT("request-bytes", "N", latency_options, request_bytes, sizeof(float),
              MAX_REQUEST_BYTES, "bytes of floats per request (default 1M)"),
    CLI_COUNT("requests", "N", latency_options, requests, 1, MAX_REQUESTS,
              "timed requests per phase (default 2000 on cuda,\n200 on host)"),
    CLI_COUNT("piece", "BYTES", latency_options, piece_bytes, 1, ULLONG_MAX,
              "bulk copy pieces in the priority phase (default 4M)"),
    CLI_COUNT("bulk-chunk", "BYTES", latency_options, bulk_chunk_bytes, sizeof(float),
              1ULL << 34, "bulk chunk in the priority phase (default: chosen)"),
    CLI_COUNT("bulk-depth", "K", latency_options, bulk_depth, 1, SP_MAX_DEPTH,
              "bulk slots in the priority phase (default: chosen)"),
    CLI_CHOICE("request-copy", "engine|kernel", latency_options, request_copy_kernel,
               "how the priority phase's requests copy (default\n"
               "kernel; engine: the copy engines, as before)"),
    CLI_COUNT("seed", "S", latency_options, seed, 0, LATENCY_UNSET - 1,
              "input data seed (default from the clock; printed)"),
    CLI_JSON_OPTION(latency_options),
};

static const cli_command_options command = {
    "latency",
    "usage: streampipe latency [options]\n\n"
    "Latency under load: a small request pipeline (sinmix, iters 0; one request at a\n"
    "time, each timed on the host clock) beside a bulk pipeline (the 'transfer'\n"
    "workload) run over and over on a thread of its own. Three phases in one process:\n"
    "  alone     requests with no bulk; then the bulk pipeline alone for a fixed time\n"
    "  load      both, default priority, whole copies\n"
    "  priority  both, the request pipeline at priority -5 (highest CUDA priority)\n"
    "            with its copies done by a kernel on its own streams (the copy engines\n"
    "            serve one busy stream until it is empty, whatever the priority), and\n"
    "            the bulk pipeline's copies in pieces of --piece bytes\n"
    "Reported: request p50/p99/max (us), bulk GB/s (in + out) and its fraction of\n"
    "bulk alone; then the targets: p99 with priority <= 2x p99 alone, bulk with\n"
    "priority >= 85% of alone. Targets missed still exit 0; a wrong output exits 1.\n\n"
    "Verification: every element of every request (inputs rotate through 8 random\n"
    "sets; the output is poisoned with NaN before each request); every element of\n"
    "the first bulk run and of the last bulk run of each phase (bulk runs alternate\n"
    "between two random inputs, so an element a run skipped cannot pass).\n\n",
    options, sizeof options / sizeof options[0],
    "\nCounts take k/M/G suffixes (powers of 1024) or 2^N.\n", NULL};

static void set_defaults(latency_options *o)
{
    memset(o, 0, sizeof *o);
    o->backend = SP_BACKEND_AUTO;
    o->bulk_records = LATENCY_UNSET;
    o->bulk_stages = 1;
    o->request_bytes = 1ULL << 20;
    o->requests = LATENCY_UNSET;
    o->piece_bytes = 4ULL << 20;
    o->request_copy_kernel = 1;
    o->seed = LATENCY_UNSET;
}

static int parse_args(int argc, char **argv, latency_options *o)
{
    set_defaults(o);
    int rc = cli_parse_options(&command, argc, argv, o);
    if (rc == CLI_EXIT_OK && o->request_bytes % sizeof(float) != 0)
        return cli_usage_error("--request-bytes: %llu is not a whole number of floats",
                               o->request_bytes);
    return rc;
}

static void resolve(latency_options *o, sp_backend_kind backend)
{
    int cuda = backend == SP_BACKEND_CUDA;
    if (o->bulk_records == LATENCY_UNSET)
        o->bulk_records = cuda ? 1ULL << 28 : 1ULL << 22;
    if (o->requests == LATENCY_UNSET)
        o->requests = cuda ? 2000 : 200;
    if (o->seed == LATENCY_UNSET)
        o->seed = cli_clock_seed();
}

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
    return cli_create_pipeline(j->ctx, &config, "creating a pipeline", out);
}

static int alloc_bulk(latency_job *j)
{
    size_t records = (size_t)j->options.bulk_records;
    float **buffers[3] = {&j->bulk_in[0], &j->bulk_in[1], &j->bulk_out};
    for (size_t k = 0; k < 3; k++) {
        void *ptr = NULL;
        int rc = cli_host_alloc(j->ctx, records * sizeof(float), "allocating bulk memory", &ptr);
        *buffers[k] = ptr;
        if (rc != CLI_EXIT_OK)
            return rc;
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
    resolve(&j->options, backend);
    j->bulk_alone_s = backend == SP_BACKEND_CUDA ? BULK_ALONE_CUDA_S : BULK_ALONE_HOST_S;
    return CLI_EXIT_OK;
}

int latency_main(int argc, char **argv)
{
    latency_job job;
    memset(&job, 0, sizeof job);
    int rc = parse_args(argc, argv, &job.options);
    if (rc != CLI_EXIT_OK)
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
