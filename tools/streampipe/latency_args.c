/* `streampipe latency` options. Every value is checked here; later stages trust them. */
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "latency.h"
#include "options.h"

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

int latency_parse_args(int argc, char **argv, latency_options *o, int *help_shown)
{
    set_defaults(o);
    int rc = cli_parse_options(&command, argc, argv, o, help_shown);
    if (rc == CLI_EXIT_OK && !*help_shown && o->request_bytes % sizeof(float) != 0)
        return cli_usage_error("--request-bytes: %llu is not a whole number of floats",
                               o->request_bytes);
    return rc;
}

void latency_resolve(latency_options *o, sp_backend_kind backend)
{
    int cuda = backend == SP_BACKEND_CUDA;
    if (o->bulk_records == LATENCY_UNSET)
        o->bulk_records = cuda ? 1ULL << 28 : 1ULL << 22;
    if (o->requests == LATENCY_UNSET)
        o->requests = cuda ? 2000 : 200;
    if (o->seed == LATENCY_UNSET)
        o->seed = cli_clock_seed();
}
