/* The timed part of `streampipe infer`: the stages and the pipeline built once, the stream in
 * pinned memory, one warm-up run (cuBLASLt picks its algorithms, pages are touched), then the
 * timed runs, each with its output poisoned first and every label checked after. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stats.h"
#include "infer.h"

/* Everything a run needs, released together. */
typedef struct infer_job {
    sp_context *ctx;
    sp_mlp_stages *stages;
    sp_pipeline *pipeline;
    unsigned char *in;  /* pinned: records x SP_MLP_INPUTS */
    int32_t *out;       /* pinned: records */
} infer_job;

static void job_release(infer_job *job)
{
    sp_pipeline_destroy(job->pipeline);
    sp_host_free(job->ctx, job->in);
    sp_host_free(job->ctx, job->out);
    sp_mlp_stages_destroy(job->stages); /* after the pipeline, before the context */
}

static int job_build(const infer_plan *plan, const infer_data *data, infer_job *job)
{
    sp_status st = sp_mlp_stages_create(job->ctx, data->model, plan->precision,
                                        &job->stages);
    if (st != SP_OK) {
        int rc = cli_report_failure("setting up the MLP stages", st,
                                    sp_mlp_stages_last_error(job->stages));
        sp_mlp_stages_destroy(job->stages);
        job->stages = NULL;
        return rc;
    }
    sp_stage stages[SP_MLP_STAGES];
    memcpy(stages, sp_mlp_stages_list(job->stages), sizeof stages);
    for (size_t s = 0; s < SP_MLP_STAGES; s++)
        stages[s].streams = plan->streams;
    sp_pipeline_config config = {.in_record_bytes = SP_MLP_INPUTS,
                                 .stages = stages,
                                 .n_stages = SP_MLP_STAGES,
                                 .chunk_records = plan->chunk,
                                 .depth = plan->depth,
                                 .graph = plan->graph};
    const char *what = "allocating the pinned stream";
    int rc = cli_create_pipeline(job->ctx, &config, "creating the pipeline", &job->pipeline);
    if (rc == CLI_EXIT_OK)
        rc = cli_host_alloc(job->ctx, plan->records * SP_MLP_INPUTS, what, (void **)&job->in);
    if (rc == CLI_EXIT_OK)
        rc = cli_host_alloc(job->ctx, plan->records * sizeof(int32_t), what,
                            (void **)&job->out);
    return rc;
}

static int report_wrong(const infer_plan *plan, const infer_data *data, const int32_t *labels,
                        const infer_check *check, const char *which)
{
    fprintf(stderr, "streampipe: %s: %zu of %zu labels differ from the float64 reference beyond "
            "the %s tolerance %g:\n", which, check->wrong, check->checked,
            sp_mlp_precision_name(plan->precision), plan->tolerance);
    size_t shown = 0;
    for (size_t r = check->first_wrong; r < plan->records && shown < INFER_SHOW_BAD; r++) {
        size_t image = r % data->n;
        if (infer_label_acceptable(data, image, labels[r], plan->tolerance))
            continue;
        fprintf(stderr, "  record %zu (image %zu): label %d, reference %d\n", r, image,
                labels[r], data->reference[image]);
        shown++;
    }
    return CLI_EXIT_FAILURE;
}

/* One run, poisoned before and checked after. `report` may be NULL (the warm-up). */
static int run_once(const infer_plan *plan, const infer_data *data, infer_job *job,
                    const char *which, double *seconds, sp_report *report, infer_check *check)
{
    memset(job->out, 0xff, plan->records * sizeof(int32_t)); /* -1: never a valid label */
    double start = cli_now_s();
    sp_status st = sp_pipeline_run(job->pipeline, job->in, plan->records, job->out, report);
    *seconds = cli_now_s() - start;
    if (st != SP_OK) /* a stage's own reason is in the pipeline's error (sp_chunk_fail) */
        return cli_report_failure(which, st, sp_pipeline_last_error(job->pipeline));
    infer_verify(data, job->out, plan->records, plan->tolerance, plan->host_workers, check);
    if (check->wrong > 0)
        return report_wrong(plan, data, job->out, check, which);
    return CLI_EXIT_OK;
}

static int save_predictions(const char *path, const int32_t *labels, size_t records)
{
    FILE *f = fopen(path, "wb");
    unsigned char buf[1 << 16];
    size_t done = 0;
    while (f != NULL && done < records) {
        size_t n = records - done < sizeof buf ? records - done : sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)labels[done + i]; /* checked: 0..9 */
        if (fwrite(buf, 1, n, f) != n)
            break;
        done += n;
    }
    int failed = f == NULL || done < records;
    if (f != NULL && fclose(f) != 0)
        failed = 1;
    if (failed) {
        fprintf(stderr, "streampipe: writing the predictions to '%s' failed\n", path);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

static int timed_runs(const infer_plan *plan, const infer_data *data, infer_job *job,
                      infer_results *results)
{
    double warm_s = 0.0;
    int rc = run_once(plan, data, job, "the warm-up run", &warm_s, NULL, &results->check);
    for (unsigned i = 0; rc == CLI_EXIT_OK && i < plan->repeat; i++) {
        rc = run_once(plan, data, job, "a timed run", &results->seconds[i], &results->reports[i],
                      &results->check);
        if (results->check.near_ties > results->near_ties_max)
            results->near_ties_max = results->check.near_ties;
        results->runs = i + 1;
    }
    return rc;
}

int infer_run_all(sp_context *ctx, const infer_plan *plan, const infer_data *data,
                  infer_results *results)
{
    infer_job job = {.ctx = ctx};
    double start = cli_now_s();
    int rc = job_build(plan, data, &job);
    results->setup_s = cli_now_s() - start;
    if (rc == CLI_EXIT_OK) {
        start = cli_now_s();
        infer_replicate(data, job.in, plan->records, plan->host_workers);
        results->fill_s = cli_now_s() - start;
        rc = timed_runs(plan, data, &job, results);
    }
    if (rc == CLI_EXIT_OK && plan->predictions_path != NULL)
        rc = save_predictions(plan->predictions_path, job.out, plan->records);
    job_release(&job);
    return rc;
}
