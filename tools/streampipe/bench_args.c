/* `streampipe bench` options. Every value is checked here; later stages trust them. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "cli.h"

enum bench_option_code {
    OPT_BACKEND = 256, OPT_DEVICE, OPT_WORKLOAD, OPT_RECORDS, OPT_ITERS, OPT_CHUNK, OPT_DEPTH,
    OPT_THREADS, OPT_MEMORY, OPT_REPEAT, OPT_SERIAL_CHUNK, OPT_SEED, OPT_JSON, OPT_HELP
};

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"workload", required_argument, NULL, OPT_WORKLOAD},
    {"records", required_argument, NULL, OPT_RECORDS},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"serial-chunk", required_argument, NULL, OPT_SERIAL_CHUNK},
    {"seed", required_argument, NULL, OPT_SEED},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Records are floats: 2^40 of them is 4 TiB per side, far beyond any host, and keeps every
 * byte count well inside size_t. */
#define MAX_RECORDS (1ULL << 40)

static void print_bench_usage(FILE *out)
{
    fputs("usage: streampipe bench [options]\n\n"
          "Times a float32 sinmix job three ways in one process: the serial baseline (a\n"
          "synchronous copy, kernel, copy per chunk), the pipelined run, and a copy-only run\n"
          "on pinned memory (the copy-engine ceiling). Every output element of every timed\n"
          "run is verified.\n\n"
          "  --backend auto|host|cuda   backend (default auto: CUDA when a GPU is present)\n"
          "  --device N                 GPU index (default 0)\n"
          "  --workload NAME            a preset job (see below)\n"
          "  --records N                records (float32 each)\n"
          "  --iters N                  sinmix iterations per element (compute weight)\n"
          "  --chunk N                  records per chunk, 0 = library's choice\n"
          "  --depth K                  slots in the buffer ring, 0 = library's choice\n"
          "  --threads T                host staging threads, 0 = library's choice\n"
          "  --memory pageable|pinned   user memory: malloc, or sp_host_alloc (default pageable)\n"
          "  --repeat N                 timed runs of each kind; medians are quoted\n"
          "                             (default 5 on cuda, 3 on host)\n"
          "  --serial-chunk N           records per chunk of the serial baseline\n"
          "                             (default 16M records on cuda, else the same as --chunk)\n"
          "  --seed S                   input data seed (default from the clock; printed)\n"
          "  --json                     one JSON object on stdout instead of text\n"
          "  --help                     this text\n\n"
          "Counts take k/M/G suffixes (powers of 1024) or 2^N.\n\n", out);
    bench_print_workloads(out);
}

static int parse_count_option(const char *name, const char *value, unsigned long long min,
                              unsigned long long max, unsigned long long *field)
{
    unsigned long long parsed = 0;
    if (args_parse_count(value, max, &parsed) != 0 || parsed < min)
        return cli_usage_error("--%s: '%s' is not a count in [%llu, %llu]", name, value, min,
                               max);
    *field = parsed;
    return CLI_EXIT_OK;
}

static int parse_backend(const char *value, bench_options *options)
{
    static const char *const names[] = {"auto", "host", "cuda"};
    static const sp_backend_kind kinds[] = {SP_BACKEND_AUTO, SP_BACKEND_HOST, SP_BACKEND_CUDA};
    int index = args_parse_choice(value, names, sizeof names / sizeof names[0]);
    if (index < 0)
        return cli_usage_error("--backend: '%s' is not auto, host or cuda", value);
    options->backend = kinds[index];
    return CLI_EXIT_OK;
}

static int parse_memory(const char *value, bench_options *options)
{
    static const char *const names[] = {"pageable", "pinned"};
    int index = args_parse_choice(value, names, 2);
    if (index < 0)
        return cli_usage_error("--memory: '%s' is not pageable or pinned", value);
    options->memory = index == 0 ? BENCH_MEMORY_PAGEABLE : BENCH_MEMORY_PINNED;
    return CLI_EXIT_OK;
}

static int parse_workload(const char *value, bench_options *options)
{
    options->workload = bench_find_workload(value);
    if (options->workload < 0)
        return cli_usage_error("--workload: unknown workload '%s' (see --help)", value);
    return CLI_EXIT_OK;
}

static int parse_device(const char *value, bench_options *options)
{
    unsigned long long device = 0;
    int rc = parse_count_option("device", value, 0, INT_MAX, &device);
    options->device = (int)device;
    return rc;
}

static int apply_option(int code, const char *value, bench_options *o)
{
    switch (code) {
    case OPT_BACKEND: return parse_backend(value, o);
    case OPT_DEVICE: return parse_device(value, o);
    case OPT_WORKLOAD: return parse_workload(value, o);
    case OPT_RECORDS: return parse_count_option("records", value, 1, MAX_RECORDS, &o->records);
    case OPT_ITERS: return parse_count_option("iters", value, 0, UINT_MAX, &o->iters);
    case OPT_CHUNK: return parse_count_option("chunk", value, 0, MAX_RECORDS, &o->chunk_records);
    case OPT_DEPTH: return parse_count_option("depth", value, 0, SP_MAX_DEPTH, &o->depth);
    case OPT_THREADS:
        return parse_count_option("threads", value, 0, 1024, &o->staging_threads);
    case OPT_MEMORY: return parse_memory(value, o);
    case OPT_REPEAT:
        return parse_count_option("repeat", value, 1, BENCH_MAX_REPEAT, &o->repeat);
    case OPT_SERIAL_CHUNK:
        return parse_count_option("serial-chunk", value, 0, MAX_RECORDS,
                                  &o->serial_chunk_records);
    case OPT_SEED: return parse_count_option("seed", value, 0, BENCH_UNSET - 1, &o->seed);
    case OPT_JSON: o->json = 1; return CLI_EXIT_OK;
    default: return cli_usage_error("internal: unhandled option %d", code);
    }
}

static void set_defaults(bench_options *options)
{
    memset(options, 0, sizeof *options);
    options->backend = SP_BACKEND_AUTO;
    options->workload = -1;
    options->records = BENCH_UNSET;
    options->iters = BENCH_UNSET;
    options->chunk_records = BENCH_UNSET;
    options->serial_chunk_records = BENCH_UNSET;
    options->repeat = BENCH_UNSET;
    options->seed = BENCH_UNSET;
    options->memory = BENCH_MEMORY_PAGEABLE;
}

int bench_parse_args(int argc, char **argv, bench_options *options, int *help_shown)
{
    set_defaults(options);
    *help_shown = 0;
    optind = 1;
    opterr = 0; /* our own messages: getopt would name the program "bench" */
    int code;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (code == 'h' || code == OPT_HELP) {
            print_bench_usage(stdout);
            *help_shown = 1;
            return CLI_EXIT_OK;
        }
        if (code == '?')
            return cli_usage_error("bench: unknown option '%s' (see --help)", argv[optind - 1]);
        if (code == ':')
            return cli_usage_error("bench: option '%s' needs a value", argv[optind - 1]);
        int rc = apply_option(code, optarg, options);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("bench: unexpected argument '%s'", argv[optind]);
    return CLI_EXIT_OK;
}
