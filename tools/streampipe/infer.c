/* `streampipe infer`: the whole job in one process, from options to the printed result. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "infer.h"
#include "par_for.h"

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
    /* CUDA: 256k records is 16 MiB of pixels per copy (full PCIe rate, DESIGN.md section 6)
     * and few enough chunks to keep the pipeline's fill and drain short. */
    size_t chunk = plan->chunk ? plan->chunk : cuda ? (size_t)256 << 10 : 4096;
    plan->chunk = chunk < plan->records ? chunk : plan->records;
    if (plan->repeat == 0)
        plan->repeat = cuda ? 5u : 3u;
    plan->tolerance = cuda && plan->precision == SP_MLP_TF32 ? INFER_TF32_TOLERANCE
                                                             : INFER_FP32_TOLERANCE;
    plan->host_workers = par_default_workers();
    return CLI_EXIT_OK;
}

static void announce(const infer_plan *plan, const infer_data *data)
{
    fprintf(stderr, "infer: %s, %s: %zu images x %zu = %zu records, chunk %zu, %u repeats\n",
            sp_backend_name(plan->backend), sp_mlp_precision_name(plan->precision), data->n,
            plan->replicate, plan->records, plan->chunk, plan->repeat);
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
    int help_shown = 0;
    int rc = infer_parse_args(argc, argv, &plan, &help_shown);
    if (rc != CLI_EXIT_OK || help_shown)
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
