/* `streampipe infer`: the whole job in one process, from options (checked here; later stages
 * trust them) to the printed result. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "infer.h"
#include "options.h"
#include "par_for.h"

/* 2^34 records is 1 TiB of pixels: far beyond any host, and every byte count fits easily. */
#define MAX_RECORDS (1ULL << 34)

static const cli_option options[] = {
    CLI_REQUIRED("model", "FILE", infer_plan, model_path,
                 "safetensors weights (models/digits_mlp.safetensors)"),
    CLI_REQUIRED("input", "FILE", infer_plan, input_path,
                 "images: N x 64 bytes, grey levels 0..16, row-major\n"
                 "(a regular file, at most 256 MiB)"),
    CLI_STRING("labels", "FILE", infer_plan, labels_path,
               "their labels, one byte per image, 0..9 (optional:\n"
               "accuracy)"),
    CLI_COUNT("replicate", "N", infer_plan, replicate, 1, MAX_RECORDS,
              "stream the images N times over (default 1)"),
    CLI_BACKEND_OPTION(infer_plan),
    CLI_DEVICE_OPTION(infer_plan),
    /* sp_mlp_precision's order: FP32, TF32 */
    CLI_CHOICE("precision", "fp32|tf32", infer_plan, precision,
               "GEMM arithmetic on CUDA (default fp32; HOST is fp32)"),
    CLI_COUNT("repeat", "N", infer_plan, repeat, 1, INFER_MAX_REPEAT,
              "timed runs; the median is quoted (default 5 on cuda,\n3 on host)"),
    CLI_CHUNK_OPTION(infer_plan, chunk, MAX_RECORDS,
                     "records per chunk (default auto, also 0: the library's,\n"
                     "8 MiB of images: 128k)"),
    CLI_DEPTH_OPTION(infer_plan, depth),
    CLI_CHOICE("graph", CLI_GRAPH_NAMES, infer_plan, graph,
               "replay groups of chunks from CUDA graphs (default off)"),
    CLI_COUNT("streams", "N", infer_plan, streams, 1, SP_MAX_STAGE_STREAMS,
              "queues per stage, so that chunks run side by side\n"
              "(default 1; each GEMM chunk has its own workspace)"),
    CLI_STRING("save-predictions", "FILE", infer_plan, predictions_path,
               "the last run's labels, one byte per image (0..9),\n"
               "as --labels holds them, so cmp compares the two\n"
               "(run --stages mlp: writes an int32 per image)"),
    CLI_JSON_OPTION(infer_plan),
};

static const cli_command_options command = {
    "infer",
    "usage: streampipe infer --model FILE --input FILE [options]\n\n"
    "Streams 8x8 digit images through the digits MLP (64-256-256-10, ReLU) as a\n"
    "pipeline of four stages on their own queues: preprocess, fc1, fc2 (GEMMs with\n"
    "bias and ReLU fused) and head (fc3 + argmax). Every label of every timed run is\n"
    "checked against a float64 reference; prints the accuracy, samples per second\n"
    "(median over the repeats) and the overlap figures of the median run.\n\n",
    options, sizeof options / sizeof options[0],
    "\nInput and output live in pinned memory (sp_host_alloc). Counts take k/M/G\n"
    "suffixes (powers of 1024) or 2^N.\n",
    NULL};

static int parse_args(int argc, char **argv, infer_plan *o)
{
    memset(o, 0, sizeof *o);
    o->backend = SP_BACKEND_AUTO;
    o->replicate = 1;
    return cli_parse_options(&command, argc, argv, o);
}

/* The defaults that depend on the backend, and the checked size of the stream. */
static int resolve_plan(infer_plan *plan, sp_backend_kind backend, const infer_data *data)
{
    plan->backend = backend;
    size_t bytes = 0;
    if (__builtin_mul_overflow(data->n, plan->replicate, &plan->records) ||
        __builtin_mul_overflow(plan->records, (size_t)SP_MLP_INPUTS, &bytes))
        return cli_usage_error("infer: %zu images x %zu copies is too many records", data->n,
                               plan->replicate);
    const int cuda = backend == SP_BACKEND_CUDA;
    /* 0 stays 0: the library's pick (sized by the copies, src/core/plan.h), which the report
     * gives as chunk_records */
    if (plan->chunk > plan->records)
        plan->chunk = plan->records;
    if (plan->repeat == 0)
        plan->repeat = cuda ? 5u : 3u;
    plan->tolerance = cuda && plan->precision == SP_MLP_TF32 ? INFER_TF32_TOLERANCE
                                                             : INFER_FP32_TOLERANCE;
    plan->host_workers = par_default_workers();
    return CLI_EXIT_OK;
}

static void announce(const infer_plan *plan, const infer_data *data)
{
    char chunk[32] = "auto";
    if (plan->chunk)
        snprintf(chunk, sizeof chunk, "%zu", plan->chunk);
    fprintf(stderr, "infer: %s, %s: %zu images x %zu = %zu records, chunk %s, %u repeats\n",
            sp_backend_name(plan->backend), sp_mlp_precision_name(plan->precision), data->n,
            plan->replicate, plan->records, chunk, plan->repeat);
}

static int run_job(sp_context *ctx, const infer_plan *plan, const infer_data *data)
{
    infer_results *results = calloc(1, sizeof *results); /* ~0.3 MiB of reports */
    if (results == NULL)
        return cli_report_failure("allocating the results", SP_ERR_OUT_OF_MEMORY, "");
    announce(plan, data);
    int rc = infer_run_all(ctx, plan, data, results);
    if (rc == CLI_EXIT_OK)
        infer_print_result(plan, data, results, stdout);
    free(results);
    return rc;
}

int infer_main(int argc, char **argv)
{
    infer_plan plan;
    int rc = parse_args(argc, argv, &plan);
    if (rc != CLI_EXIT_OK)
        return rc;
    infer_data data;
    rc = infer_data_load(&plan, &data);
    sp_context *ctx = NULL;
    if (rc == CLI_EXIT_OK)
        rc = cli_open_context(plan.backend, plan.device, &ctx);
    if (rc == CLI_EXIT_OK)
        rc = resolve_plan(&plan, sp_context_backend(ctx), &data);
    if (rc == CLI_EXIT_OK)
        rc = run_job(ctx, &plan, &data);
    sp_context_destroy(ctx);
    infer_data_free(&data);
    return rc;
}
