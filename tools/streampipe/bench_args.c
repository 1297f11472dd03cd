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
    OPT_THREADS, OPT_MEMORY, OPT_REPEAT, OPT_SERIAL_CHUNK, OPT_SEED, OPT_JSON, OPT_TRACE,
    OPT_SVG, OPT_SWEEP, OPT_SWEEP_VALUES, OPT_STREAMS, OPT_PIECE, OPT_GRAPH, OPT_COPY_KERNEL,
    OPT_HELP
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
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"piece", required_argument, NULL, OPT_PIECE},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"copy-kernel", no_argument, NULL, OPT_COPY_KERNEL},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"serial-chunk", required_argument, NULL, OPT_SERIAL_CHUNK},
    {"seed", required_argument, NULL, OPT_SEED},
    {"json", no_argument, NULL, OPT_JSON},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"svg", required_argument, NULL, OPT_SVG},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"sweep-values", required_argument, NULL, OPT_SWEEP_VALUES},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Records are floats: 2^40 of them is 4 TiB per side, far beyond any host, and keeps every
 * byte count well inside size_t. */
#define MAX_RECORDS (1ULL << 40)

/* The text after a --sweep-values option: parsed once every option is known, because the
 * values' range depends on --sweep, which may come after it. */
typedef struct sweep_texts {
    const char *name;
    const char *values;
} sweep_texts;

static void print_sweep_usage(FILE *out)
{
    fputs("Sweep: for each value, a new pipeline with that setting (the others as given or\n"
          "by default) runs --repeat times without a report (the median is quoted) and once\n"
          "with one (efficiency, bottleneck). Every element of every run is verified; for\n"
          "iters the expected values are recomputed for each value. Speedups are against the\n"
          "default setting, which joins the list when it is missing and is marked 'default';\n"
          "'*' marks the fastest row. With --sweep, --trace and --svg show the fastest row's\n"
          "run with a report. Default values:\n"
          "  chunk  262144,524288,1048576,2097152,4194304,8388608 records\n"
          "  depth  2,3,4,5,6,8\n"
          "  iters  0,10,100,1000 on cuda; 0,1,10,100 on host (a CPU takes minutes at 1000)\n\n",
          out);
}

static void print_progress_usage(FILE *out)
{
    fputs("Progress goes to stderr. When stderr is a terminal, one line (\"[run 2/3] serial\n"
          "0.123 s, ...\") is rewritten in place as runs finish and erased at the end; with\n"
          "--json, with NO_PROGRESS set in the environment, or when stderr is not a terminal,\n"
          "a plain line follows each repeat (each value of a sweep) instead.\n\n", out);
}

static void print_bench_usage(FILE *out)
{
    fputs("usage: streampipe bench [options]\n\n"
          "Times a float32 sinmix job three ways in one process: the serial baseline (a\n"
          "synchronous copy, kernel, copy per chunk), the pipelined run, and a copy-only run\n"
          "on pinned memory (the copy-engine ceiling). With --sweep, times the pipelined run\n"
          "at each value of one setting instead. Every output element of every timed run is\n"
          "verified.\n\n"
          "  --backend auto|host|cuda   backend (default auto: CUDA when a GPU is present)\n"
          "  --device N                 GPU index (default 0)\n"
          "  --workload NAME            a preset job (see below)\n"
          "  --records N                records (float32 each)\n"
          "  --iters N                  sinmix iterations per element (compute weight)\n"
          "  --chunk N                  records per chunk, 0 = library's choice; one above\n"
          "                             --records is cut to them (the notes say so)\n"
          "  --depth K                  slots in the buffer ring, 0 = library's choice\n"
          "  --threads T                host staging threads, 0 = library's choice\n"
          "  --streams S                queues the sinmix stage's chunks take turns on\n"
          "                             (concurrent kernels; default 1)\n"
          "  --piece BYTES              enqueue copies in pieces of at most BYTES (default:\n"
          "                             whole chunks)\n"
          "  --graph on|off|auto        replay groups of chunks from CUDA graphs (default\n"
          "                             off); not off: stream mode is timed beside it\n"
          "  --copy-kernel              the pipelined runs copy by a kernel reading and\n"
          "                             writing pinned host memory over PCIe instead of the\n"
          "                             copy engines (copy_by_kernel; the ceiling keeps them)\n"
          "  --memory pageable|pinned   user memory: malloc, or sp_host_alloc (default pageable)\n"
          "  --repeat N                 timed runs of each kind; medians are quoted\n"
          "                             (default 5 on cuda, 3 on host)\n"
          "  --serial-chunk N           records per chunk of the serial baseline\n"
          "                             (default 16M records on cuda, else the same as --chunk)\n"
          "  --seed S                   input data seed (default from the clock; printed)\n"
          "  --json                     one JSON object on stdout instead of text\n"
          "  --trace FILE.json          after the runs, write the Chrome trace (Perfetto,\n"
          "                             chrome://tracing) of the last pipelined run made\n"
          "                             with a report\n"
          "  --svg FILE.svg             write the SVG timeline of that run, with its figures\n"
          "  --sweep chunk|depth|iters  time the pipelined run at each value of one setting\n"
          "  --sweep-values A,B,...     the values to sweep (counts; at most 32)\n"
          "  --help                     this text\n\n"
          "Counts take k/M/G suffixes (powers of 1024) or 2^N.\n\n", out);
    print_sweep_usage(out);
    print_progress_usage(out);
    bench_print_workloads(out);
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

static int apply_option(int code, const char *value, bench_options *o, sweep_texts *sweep)
{
    switch (code) {
    case OPT_BACKEND: return args_backend_option(value, &o->backend);
    case OPT_DEVICE: return args_device_option(value, &o->device);
    case OPT_WORKLOAD: return parse_workload(value, o);
    case OPT_RECORDS: return args_count_option("records", value, 1, MAX_RECORDS, &o->records);
    case OPT_ITERS: return args_count_option("iters", value, 0, UINT_MAX, &o->iters);
    case OPT_CHUNK: return args_count_option("chunk", value, 0, MAX_RECORDS, &o->chunk_records);
    case OPT_DEPTH: return args_count_option("depth", value, 0, SP_MAX_DEPTH, &o->depth);
    case OPT_THREADS:
        return args_count_option("threads", value, 0, 1024, &o->staging_threads);
    case OPT_STREAMS:
        return args_count_option("streams", value, 0, SP_MAX_STAGE_STREAMS, &o->stage_streams);
    case OPT_GRAPH:
        return args_graph_option(value, &o->graph);
    case OPT_PIECE:
        return args_count_option("piece", value, 0, ULLONG_MAX, &o->copy_piece_bytes);
    case OPT_MEMORY: return parse_memory(value, o);
    case OPT_REPEAT:
        return args_count_option("repeat", value, 1, BENCH_MAX_REPEAT, &o->repeat);
    case OPT_SERIAL_CHUNK:
        return args_count_option("serial-chunk", value, 0, MAX_RECORDS,
                                  &o->serial_chunk_records);
    case OPT_SEED: return args_count_option("seed", value, 0, BENCH_UNSET - 1, &o->seed);
    case OPT_COPY_KERNEL: o->copy_kernel = 1; return CLI_EXIT_OK;
    case OPT_JSON: o->json = 1; return CLI_EXIT_OK;
    case OPT_TRACE: o->trace_path = value; return CLI_EXIT_OK;
    case OPT_SVG: o->svg_path = value; return CLI_EXIT_OK;
    case OPT_SWEEP: sweep->name = value; return CLI_EXIT_OK;
    case OPT_SWEEP_VALUES: sweep->values = value; return CLI_EXIT_OK;
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

/* What can only be judged once every option is known. */
static int check_combinations(const bench_options *options, const sweep_texts *sweep)
{
    if (options->trace_path != NULL && options->svg_path != NULL &&
        strcmp(options->trace_path, options->svg_path) == 0)
        return cli_usage_error("bench: --trace and --svg name the same file '%s'",
                               options->trace_path);
    if (sweep->values != NULL && sweep->name == NULL)
        return cli_usage_error("bench: --sweep-values needs --sweep chunk|depth|iters");
    return CLI_EXIT_OK;
}

int bench_parse_args(int argc, char **argv, bench_options *options, int *help_shown)
{
    sweep_texts sweep = {NULL, NULL};
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
        int rc = apply_option(code, optarg, options, &sweep);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("bench: unexpected argument '%s'", argv[optind]);
    int rc = check_combinations(options, &sweep);
    if (rc == CLI_EXIT_OK && sweep.name != NULL)
        rc = bench_sweep_parse(sweep.name, sweep.values, &options->sweep);
    return rc;
}
