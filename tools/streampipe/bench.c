/* `streampipe bench`: the whole job in one process, from options to the printed result. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"

static void announce(const bench_plan *plan)
{
    char iters[24] = "each row's";
    if (plan->iters_list.n <= 1 && plan->n_workloads <= 1)
        snprintf(iters, sizeof iters, "%u", plan->iters);
    fprintf(stderr, "bench: %s, workload %s%s: %s%zu records, iters %s, seed %llu, %u repeats\n",
            sp_backend_name(plan->backend), plan->workload,
            plan->workload_changed ? " (changed by options)" : "",
            plan->n_workloads > 1 ? "at most " : "", plan->records, iters,
            plan->seed, plan->repeat);
}

/* Fresh random input, in the ceiling's pinned copy and the device input too: never time on
 * zeros. */
static int fill_input(const bench_plan *plan, bench_buffers *buffers)
{
    double start = cli_now_s();
    size_t bytes = plan->records * sizeof *buffers->in;
    if (plan->source) /* the generator's values: the expected output is of them */
        bench_source_fill(buffers->in, plan->records);
    else
        bench_fill_input(buffers->in, plan->records, plan->seed, plan->host_workers);
    if (buffers->ceiling_in != buffers->in)
        memcpy(buffers->ceiling_in, buffers->in, bytes);
    sp_status status = buffers->device_in ? sp_memcpy(buffers->ctx, buffers->device_in,
                                                      buffers->in, bytes)
                                          : SP_OK;
    if (status != SP_OK)
        return cli_report_failure("copying the input to the device", status,
                                  sp_context_last_error(buffers->ctx));
    fprintf(stderr, "bench: input filled in %.3f s\n", cli_now_s() - start);
    return CLI_EXIT_OK;
}

static int prepare_expected(const bench_plan *plan, const bench_buffers *buffers,
                            bench_expected *expected)
{
    int rc = bench_expected_prepare(plan, buffers->in, expected);
    if (rc == CLI_EXIT_OK)
        fprintf(stderr, "bench: verification %s, reference computed in %.3f s on %u threads\n",
                bench_check_method_name(expected->method), expected->reference_s,
                expected->workers);
    return rc;
}

/* Whichever kind of job the plan asks for: ~0.7 MiB of reports, so on the heap. */
typedef struct job_results {
    bench_results comparison; /* serial, pipelined, traced and ceiling runs side by side */
    bench_sweep_result sweep; /* lists: the pipelined run at each combination */
    bench_group_result group; /* --devices: one sp_group run over several devices */
    bench_batches_result batches; /* --batches: one run against batches through a stream */
    bench_source_result source;   /* --source generator: a generator against arrays */
} job_results;

static int run_kind(bench_session *s)
{
    const bench_plan *plan = s->plan;
    int sweep = !plan->group && plan->rows;
    job_results *r = calloc(1, sizeof *r);
    if (r == NULL)
        return cli_report_failure("allocating the results", SP_ERR_OUT_OF_MEMORY, "");
    s->checks = plan->group     ? &r->group.checks
                : sweep         ? &r->sweep.checks
                : plan->batches ? &r->batches.checks
                : plan->source  ? &r->source.checks
                                : &r->comparison.checks;
    /* The rows make the expected values of each iters as they go. */
    int rc = sweep ? CLI_EXIT_OK : prepare_expected(plan, s->buffers, s->expected);
    if (rc == CLI_EXIT_OK)
        rc = plan->group     ? bench_group_all(s, &r->group)
             : sweep         ? bench_sweep_all(s, &r->sweep)
             : plan->batches ? bench_batches_all(s, &r->batches)
             : plan->source  ? bench_source_all(s, &r->source)
                             : bench_run_all(s, &r->comparison);
    cli_live_end(s->live); /* the panel erased and the endpoint closed before the result */
    if (rc == CLI_EXIT_OK && plan->group)
        bench_group_print_result(plan, s->expected, &r->group, stdout);
    else if (rc == CLI_EXIT_OK && sweep)
        bench_sweep_print_result(plan, &r->sweep, s->exports, stdout);
    else if (rc == CLI_EXIT_OK && plan->batches)
        bench_batches_print_result(plan, s->expected, &r->batches, stdout);
    else if (rc == CLI_EXIT_OK && plan->source)
        bench_source_print_result(plan, s->expected, &r->source, stdout);
    else if (rc == CLI_EXIT_OK)
        bench_print_result(plan, s->expected, &r->comparison, s->exports, stdout);
    free(r);
    return rc;
}

static int run_job(sp_context *ctx, const bench_plan *plan)
{
    bench_buffers buffers;
    bench_expected expected;
    bench_exports exports;
    bench_progress progress;
    memset(&expected, 0, sizeof expected);
    memset(&exports, 0, sizeof exports);
    bench_progress_init(&progress, plan->json);
    cli_live live;
    bench_session session = {ctx, plan, &buffers, &expected, NULL, &progress, &exports, &live};
    int rc = cli_live_start(&live, &plan->live, plan->json);
    progress.panel = cli_live_panel_flag(&live);
    if (rc != CLI_EXIT_OK) {
        cli_live_stop(&live);
        return rc;
    }
    announce(plan);
    rc = bench_buffers_alloc(ctx, plan, &buffers);
    /* Before the input and the reference, which take a while: a bad path fails at once. */
    if (rc == CLI_EXIT_OK)
        rc = bench_exports_open(plan, &exports);
    if (rc == CLI_EXIT_OK)
        rc = fill_input(plan, &buffers);
    if (rc == CLI_EXIT_OK)
        rc = run_kind(&session);
    cli_live_stop(&live);
    if (rc != CLI_EXIT_OK)
        bench_exports_abandon(&exports);
    bench_expected_free(&expected);
    bench_buffers_free(&buffers);
    return rc;
}

int bench_main(int argc, char **argv)
{
    bench_plan plan;
    int rc = bench_parse_args(argc, argv, &plan);
    if (rc != CLI_EXIT_OK)
        return rc;

    sp_context *ctx = NULL;
    rc = cli_open_context(plan.backend, plan.device, &ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    bench_plan_resolve(&plan, sp_context_backend(ctx));
    rc = run_job(ctx, &plan);
    sp_context_destroy(ctx);
    return rc;
}
