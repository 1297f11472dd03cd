/* `streampipe latency` options. Every value is checked here; later stages trust them. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "clock.h"
#include "latency.h"

enum latency_option_code {
    OPT_BACKEND = 256, OPT_DEVICE, OPT_BULK_RECORDS, OPT_BULK_STAGES, OPT_REQUEST_BYTES,
    OPT_REQUESTS, OPT_PIECE, OPT_BULK_CHUNK, OPT_BULK_DEPTH, OPT_REQUEST_COPY, OPT_SEED,
    OPT_JSON, OPT_HELP
};

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"bulk-records", required_argument, NULL, OPT_BULK_RECORDS},
    {"bulk-stages", required_argument, NULL, OPT_BULK_STAGES},
    {"request-bytes", required_argument, NULL, OPT_REQUEST_BYTES},
    {"requests", required_argument, NULL, OPT_REQUESTS},
    {"piece", required_argument, NULL, OPT_PIECE},
    {"bulk-chunk", required_argument, NULL, OPT_BULK_CHUNK},
    {"bulk-depth", required_argument, NULL, OPT_BULK_DEPTH},
    {"request-copy", required_argument, NULL, OPT_REQUEST_COPY},
    {"seed", required_argument, NULL, OPT_SEED},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Floats: 2^34 per side is 64 GiB, past any pinned allocation, and keeps byte counts in
 * size_t. Requests are kept to 1 GiB: they are meant to be small. */
#define MAX_RECORDS (1ULL << 34)
#define MAX_REQUEST_BYTES (1ULL << 30)
#define MAX_REQUESTS (1ULL << 24)

static void print_latency_usage(FILE *out)
{
    fputs("usage: streampipe latency [options]\n\n"
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
          "between two random inputs, so an element a run skipped cannot pass).\n\n"
          "  --backend auto|host|cuda   backend (default auto: CUDA when a GPU is present)\n"
          "  --device N                 GPU index (default 0)\n"
          "  --bulk-records N           floats per bulk run (default 2^28 on cuda, 2^22 on host)\n"
          "  --bulk-stages 0|1          bulk compute: 0 = copies only, 1 = sinmix (default 1)\n"
          "  --request-bytes N          bytes of floats per request (default 1M)\n"
          "  --requests N               timed requests per phase (default 2000 on cuda,\n"
          "                             200 on host)\n"
          "  --piece BYTES              bulk copy pieces in the priority phase (default 4M)\n"
          "  --bulk-chunk BYTES         bulk chunk in the priority phase (default: chosen)\n"
          "  --bulk-depth K             bulk slots in the priority phase (default: chosen)\n"
          "  --request-copy engine|kernel\n"
          "                             how the priority phase's requests copy (default\n"
          "                             kernel; engine: the copy engines, as before)\n"
          "  --seed S                   input data seed (default from the clock; printed)\n"
          "  --json                     one JSON object on stdout instead of text\n"
          "  --help                     this text\n\n"
          "Counts take k/M/G suffixes (powers of 1024) or 2^N.\n", out);
}

static int parse_request_copy(const char *value, latency_options *o)
{
    static const char *const names[] = {"engine", "kernel"};
    int index = args_parse_choice(value, names, 2);
    if (index < 0)
        return cli_usage_error("--request-copy: '%s' is not engine or kernel", value);
    o->request_copy_kernel = index == 1;
    return CLI_EXIT_OK;
}

static int apply_option(int code, const char *value, latency_options *o)
{
    switch (code) {
    case OPT_BACKEND: return args_backend_option(value, &o->backend);
    case OPT_DEVICE: return args_device_option(value, &o->device);
    case OPT_BULK_RECORDS:
        return args_count_option("bulk-records", value, 1, MAX_RECORDS, &o->bulk_records);
    case OPT_BULK_STAGES: return args_count_option("bulk-stages", value, 0, 1, &o->bulk_stages);
    case OPT_REQUEST_BYTES:
        return args_count_option("request-bytes", value, sizeof(float), MAX_REQUEST_BYTES,
                           &o->request_bytes);
    case OPT_REQUESTS: return args_count_option("requests", value, 1, MAX_REQUESTS, &o->requests);
    case OPT_PIECE: return args_count_option("piece", value, 1, ULLONG_MAX, &o->piece_bytes);
    case OPT_BULK_CHUNK:
        return args_count_option("bulk-chunk", value, sizeof(float), 1ULL << 34,
                                 &o->bulk_chunk_bytes);
    case OPT_BULK_DEPTH: return args_count_option("bulk-depth", value, 1, SP_MAX_DEPTH, &o->bulk_depth);
    case OPT_REQUEST_COPY: return parse_request_copy(value, o);
    case OPT_SEED: return args_count_option("seed", value, 0, LATENCY_UNSET - 1, &o->seed);
    case OPT_JSON: o->json = 1; return CLI_EXIT_OK;
    default: return cli_usage_error("internal: unhandled option %d", code);
    }
}

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
    *help_shown = 0;
    optind = 1;
    opterr = 0; /* our own messages: getopt would name the program "latency" */
    int code;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (code == 'h' || code == OPT_HELP) {
            print_latency_usage(stdout);
            *help_shown = 1;
            return CLI_EXIT_OK;
        }
        if (code == '?')
            return cli_usage_error("latency: unknown option '%s' (see --help)",
                                   argv[optind - 1]);
        if (code == ':')
            return cli_usage_error("latency: option '%s' needs a value", argv[optind - 1]);
        int rc = apply_option(code, optarg, o);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("latency: unexpected argument '%s'", argv[optind]);
    if (o->request_bytes % sizeof(float) != 0)
        return cli_usage_error("--request-bytes: %llu is not a whole number of floats",
                               o->request_bytes);
    return CLI_EXIT_OK;
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
