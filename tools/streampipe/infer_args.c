/* `streampipe infer` options. Every value is checked here; later stages trust them. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "infer.h"

enum infer_option_code {
    OPT_MODEL = 256, OPT_INPUT, OPT_LABELS, OPT_REPLICATE, OPT_BACKEND, OPT_DEVICE,
    OPT_PRECISION, OPT_REPEAT, OPT_CHUNK, OPT_DEPTH, OPT_GRAPH, OPT_STREAMS, OPT_SAVE, OPT_JSON,
    OPT_HELP
};

static const struct option long_options[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"input", required_argument, NULL, OPT_INPUT},
    {"labels", required_argument, NULL, OPT_LABELS},
    {"replicate", required_argument, NULL, OPT_REPLICATE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"save-predictions", required_argument, NULL, OPT_SAVE},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* 2^34 records is 1 TiB of pixels: far beyond any host, and every byte count fits easily. */
#define MAX_RECORDS (1ULL << 34)

static void print_infer_usage(FILE *out)
{
    fputs("usage: streampipe infer --model FILE --input FILE [options]\n\n"
          "Streams 8x8 digit images through the digits MLP (64-256-256-10, ReLU) as a\n"
          "pipeline of four stages on their own queues: preprocess, fc1, fc2 (GEMMs with\n"
          "bias and ReLU fused) and head (fc3 + argmax). Every label of every timed run is\n"
          "checked against a float64 reference; prints the accuracy, samples per second\n"
          "(median over the repeats) and the overlap figures of the median run.\n\n"
          "  --model FILE               safetensors weights (models/digits_mlp.safetensors)\n"
          "  --input FILE               images: N x 64 bytes, grey levels 0..16, row-major\n"
          "                             (a regular file, at most 256 MiB)\n"
          "  --labels FILE              their labels: N bytes, 0..9 (optional: accuracy)\n"
          "  --replicate N              stream the images N times over (default 1)\n"
          "  --backend auto|host|cuda   backend (default auto: CUDA when a GPU is present)\n"
          "  --device N                 GPU index (default 0)\n"
          "  --precision fp32|tf32      GEMM arithmetic on CUDA (default fp32; HOST is fp32)\n"
          "  --repeat N                 timed runs; the median is quoted (default 5 on cuda,\n"
          "                             3 on host)\n"
          "  --chunk N                  records per chunk (default 256k on cuda, 4k on host)\n"
          "  --depth K                  slots in the buffer ring, 0 = library's choice\n"
          "  --graph off|on|auto        replay groups of chunks from CUDA graphs (default off)\n"
          "  --streams N                queues per stage, so that chunks run side by side\n"
          "                             (default 1; each GEMM chunk has its own workspace)\n"
          "  --save-predictions FILE    the last run's labels, one byte per record\n"
          "  --json                     one JSON object on stdout instead of text\n"
          "  --help                     this text\n\n"
          "Input and output live in pinned memory (sp_host_alloc). Counts take k/M/G\n"
          "suffixes (powers of 1024) or 2^N.\n", out);
}

static int parse_precision(const char *value, infer_options *options)
{
    static const char *const names[] = {"fp32", "tf32"};
    int index = args_parse_choice(value, names, 2);
    if (index < 0)
        return cli_usage_error("--precision: '%s' is not fp32 or tf32", value);
    options->precision = index == 0 ? SP_MLP_FP32 : SP_MLP_TF32;
    return CLI_EXIT_OK;
}

static int apply_option(int code, const char *value, infer_options *o)
{
    switch (code) {
    case OPT_MODEL: o->model_path = value; return CLI_EXIT_OK;
    case OPT_INPUT: o->input_path = value; return CLI_EXIT_OK;
    case OPT_LABELS: o->labels_path = value; return CLI_EXIT_OK;
    case OPT_SAVE: o->predictions_path = value; return CLI_EXIT_OK;
    case OPT_REPLICATE:
        return args_count_option("replicate", value, 1, MAX_RECORDS, &o->replicate);
    case OPT_BACKEND: return args_backend_option(value, &o->backend);
    case OPT_DEVICE: return args_device_option(value, &o->device);
    case OPT_PRECISION: return parse_precision(value, o);
    case OPT_REPEAT: return args_count_option("repeat", value, 1, INFER_MAX_REPEAT, &o->repeat);
    case OPT_CHUNK: return args_count_option("chunk", value, 1, MAX_RECORDS, &o->chunk);
    case OPT_DEPTH: return args_count_option("depth", value, 0, SP_MAX_DEPTH, &o->depth);
    case OPT_GRAPH: return args_graph_option(value, &o->graph);
    case OPT_STREAMS:
        return args_count_option("streams", value, 1, SP_MAX_STAGE_STREAMS, &o->streams);
    case OPT_JSON: o->json = 1; return CLI_EXIT_OK;
    default: return cli_usage_error("internal: unhandled option %d", code);
    }
}

int infer_parse_args(int argc, char **argv, infer_options *options, int *help_shown)
{
    memset(options, 0, sizeof *options);
    options->backend = SP_BACKEND_AUTO;
    options->replicate = 1;
    *help_shown = 0;
    optind = 1;
    opterr = 0; /* our own messages: getopt would name the program "infer" */
    int code;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (code == 'h' || code == OPT_HELP) {
            print_infer_usage(stdout);
            *help_shown = 1;
            return CLI_EXIT_OK;
        }
        if (code == '?')
            return cli_usage_error("infer: unknown option '%s' (see --help)", argv[optind - 1]);
        if (code == ':')
            return cli_usage_error("infer: option '%s' needs a value", argv[optind - 1]);
        int rc = apply_option(code, optarg, options);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("infer: unexpected argument '%s'", argv[optind]);
    if (options->model_path == NULL || options->input_path == NULL)
        return cli_usage_error("infer: --model and --input are required (see --help)");
    return CLI_EXIT_OK;
}
