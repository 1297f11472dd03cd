/* The timed runs: serial baseline, pipelined run and copy-only ceiling, interleaved so that
 * drift in clocks or temperature touches all three alike. Every output is poisoned before
 * its run and fully verified after it. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "clock.h"
#include "streampipe_ops.h"

typedef sp_status (*run_fn)(sp_pipeline *pipeline, const void *in, size_t n_records, void *out,
                            sp_report *report);

/* One kind of timed run and where its results go. */
typedef struct run_kind {
    const char *name;
    sp_pipeline *pipeline;
    run_fn run;
    const float *in;
    float *out;
    bench_series *series;
    int copy_only;   /* the output must equal the input */
    int with_report; /* ask for a report (and so for per-chunk timing events) */
} run_kind;

typedef struct pipeline_shape {
    size_t n_stages;
    size_t chunk_records;
    unsigned depth;
    unsigned staging_threads;
} pipeline_shape;

static int create_pipeline(sp_context *ctx, const sp_stage *stages, const pipeline_shape *shape,
                           const char *what, sp_pipeline **out)
{
    sp_pipeline_config config;
    memset(&config, 0, sizeof config);
    config.in_record_bytes = sizeof(float);
    config.stages = stages;
    config.n_stages = shape->n_stages;
    config.chunk_records = shape->chunk_records;
    config.depth = shape->depth;
    config.staging_threads = shape->staging_threads;
    sp_status status = sp_pipeline_create(ctx, &config, out);
    if (status != SP_OK)
        return cli_report_failure(what, status, sp_context_last_error(ctx));
    return CLI_EXIT_OK;
}

/* pipelines[0] serial, [1] pipelined, [2] the copy-only ceiling. `params` must outlive them. */
static int create_pipelines(sp_context *ctx, const bench_plan *plan,
                            const sp_sinmix_params *params, sp_pipeline *pipelines[3])
{
    sp_stage sinmix = sp_sinmix_stage(params);
    pipeline_shape serial = {1, plan->serial_chunk_records, 1, 0};
    pipeline_shape pipelined = {1, plan->chunk_records, plan->depth, plan->staging_threads};
    /* The ceiling is what the copy engines reach on pinned memory at the library's own
     * choice of chunk and depth, independent of the user's choices. */
    pipeline_shape ceiling = {0, 0, 0, 0};
    int rc = create_pipeline(ctx, &sinmix, &serial, "creating the serial pipeline",
                             &pipelines[0]);
    if (rc == CLI_EXIT_OK)
        rc = create_pipeline(ctx, &sinmix, &pipelined, "creating the pipeline", &pipelines[1]);
    if (rc == CLI_EXIT_OK)
        rc = create_pipeline(ctx, NULL, &ceiling, "creating the copy-only pipeline",
                             &pipelines[2]);
    return rc;
}

static int time_run(const run_kind *kind, size_t records, unsigned repeat_index)
{
    bench_series *series = kind->series;
    /* 0xFF bytes are NaN: an element the run never writes cannot pass the check. */
    memset(kind->out, 0xFF, records * sizeof *kind->out);
    double start = cli_now_s();
    sp_report *report = kind->with_report ? &series->reports[series->runs] : NULL;
    sp_status status = kind->run(kind->pipeline, kind->in, records, kind->out, report);
    if (!report) { /* the shape of the run, which the library still tells without a report */
        sp_report *shape = &series->reports[series->runs];
        memset(shape, 0, sizeof *shape);
        shape->records = records;
        shape->chunk_records = sp_pipeline_chunk_records(kind->pipeline, records);
        shape->chunks = shape->chunk_records ? (records + shape->chunk_records - 1) /
                                                   shape->chunk_records
                                             : 0;
        shape->depth = sp_pipeline_depth(kind->pipeline);
    }
    double seconds = cli_now_s() - start;
    if (status != SP_OK) {
        char what[64];
        snprintf(what, sizeof what, "%s run %u", kind->name, repeat_index + 1);
        return cli_report_failure(what, status, sp_pipeline_last_error(kind->pipeline));
    }
    series->seconds[series->runs++] = seconds;
    return CLI_EXIT_OK;
}

static void note_check(const bench_check *check, bench_results *results)
{
    results->elements_checked += check->checked;
    if (check->max_abs_error > results->max_abs_error)
        results->max_abs_error = check->max_abs_error;
    if (check->max_rel_error > results->max_rel_error)
        results->max_rel_error = check->max_rel_error;
}

static int verify_run(const run_kind *kind, const bench_plan *plan, bench_expected *expected,
                      unsigned repeat_index, bench_results *results)
{
    bench_check check;
    double start = cli_now_s();
    int bad = kind->copy_only
                  ? bench_check_copy(kind->out, kind->in, plan->records, plan->host_workers,
                                     &check)
                  : bench_check_sinmix(expected, kind->out, plan->records, &check);
    results->verify_s += cli_now_s() - start;
    note_check(&check, results);
    if (bad) {
        char what[64];
        snprintf(what, sizeof what, "%s run %u", kind->name, repeat_index + 1);
        bench_print_mismatches(&check, what, stderr);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

static void print_progress(const run_kind *kinds, size_t n_kinds, unsigned repeat_index,
                           unsigned repeat)
{
    fprintf(stderr, "run %u/%u:", repeat_index + 1, repeat);
    for (size_t k = 0; k < n_kinds; k++) {
        const bench_series *series = kinds[k].series;
        fprintf(stderr, " %s %.4f s%s", kinds[k].name, series->seconds[series->runs - 1],
                k + 1 < n_kinds ? "," : "");
    }
    fputs(" (outputs verified)\n", stderr);
}

int bench_run_all(sp_context *ctx, const bench_plan *plan, bench_buffers *b,
                  bench_expected *expected, bench_results *results)
{
    sp_sinmix_params params = {plan->iters};
    sp_pipeline *pipelines[3] = {NULL, NULL, NULL};
    int rc = create_pipelines(ctx, plan, &params, pipelines);
    results->serial.name = "serial";
    results->pipelined.name = "pipelined";
    results->traced.name = "traced";
    results->ceiling.name = "ceiling";
    /* Serial first: a SAMPLED check adopts the first serial output as the expected one. The
     * pipelined run is timed bare and again with a report, which costs timing events: the
     * two medians side by side show what the per-chunk timeline costs. */
    enum { KINDS = 4 };
    run_kind kinds[KINDS] = {
        {"serial", pipelines[0], sp_pipeline_run_serial, b->in, b->out, &results->serial, 0, 1},
        {"pipelined", pipelines[1], sp_pipeline_run, b->in, b->out, &results->pipelined, 0, 0},
        {"traced", pipelines[1], sp_pipeline_run, b->in, b->out, &results->traced, 0, 1},
        {"ceiling", pipelines[2], sp_pipeline_run, b->ceiling_in, b->ceiling_out,
         &results->ceiling, 1, 1},
    };
    for (unsigned r = 0; r < plan->repeat && rc == CLI_EXIT_OK; r++) {
        for (size_t k = 0; k < KINDS && rc == CLI_EXIT_OK; k++) {
            rc = time_run(&kinds[k], plan->records, r);
            if (rc == CLI_EXIT_OK)
                rc = verify_run(&kinds[k], plan, expected, r, results);
        }
        if (rc == CLI_EXIT_OK)
            print_progress(kinds, KINDS, r, plan->repeat);
    }
    for (size_t k = 0; k < 3; k++)
        sp_pipeline_destroy(pipelines[k]);
    return rc;
}
