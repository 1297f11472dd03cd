/*
 * basic.c: the smallest complete streampipe program.
 *
 * It streams a million floats through the built-in sinmix stage and a stage of its own,
 * checks every result against plain C, and prints what the run's report says about overlap.
 * Copy it, then change the stages and the data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "streampipe.h"
#include "streampipe_ops.h"

#define RECORDS ((size_t)1 << 20)      /* one float per record */
#define CHUNK_RECORDS ((size_t)1 << 16) /* 16 chunks, so there is something to overlap */

/* Our own stage: out = in * scale + offset. */
typedef struct affine_params {
    float scale;
    float offset;
} affine_params;

/* The HOST backend calls this on the stage's worker thread, once per chunk, and the work is
 * done when it returns. A CUDA version would instead launch a kernel on chunk->stream from a
 * .cu file and return at once. */
static sp_status affine_on_host(const sp_chunk *chunk, void *user)
{
    const affine_params *params = user;
    const float *in = chunk->in;
    float *out = chunk->out;
    for (size_t i = 0; i < chunk->records; i++)
        out[i] = in[i] * params->scale + params->offset;
    return SP_OK;
}

static int fail(const char *what, sp_status status, const char *why)
{
    fprintf(stderr, "basic: %s failed: %s: %s\n", what, sp_status_name(status), why);
    return 1;
}

/* Every output against the same arithmetic in plain C. The GPU's sinf may differ from the C
 * library's in the last bits, hence a tolerance rather than ==. */
static size_t count_wrong(const float *in, const float *out, unsigned iters,
                          const affine_params *affine)
{
    size_t wrong = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        float want = sp_sinmix_one(in[i], iters);
        if (affine != NULL)
            want = want * affine->scale + affine->offset;
        if (!(fabsf(out[i] - want) <= 1e-4f * fmaxf(1.0f, fabsf(want))))
            wrong++;
    }
    return wrong;
}

static void print_report(const sp_report *report)
{
    printf("%zu records in %zu chunks, depth %u: %.4f s\n", report->records, report->chunks,
           report->depth, report->makespan_s);
    printf("bound %.4f s, efficiency %.0f%%, transfer hidden %.0f%%, bottleneck %s\n",
           report->bound_s, 100.0 * report->efficiency, 100.0 * report->hidden_transfer,
           report->bottleneck);
    if (report->notes[0] != '\0')
        printf("notes: %s\n", report->notes);
}

/* Stage parameters are read during runs, so they must outlive the pipeline. */
static const sp_sinmix_params sinmix = {.iters = 20};
static affine_params affine = {.scale = 0.5f, .offset = 1.0f};

/* sinmix, then our stage when the backend can run it. The config and stages are copied, so
 * they may live on the stack. */
static sp_status make_pipeline(sp_context *ctx, int with_affine, sp_pipeline **out)
{
    sp_stage stages[2] = {
        sp_sinmix_stage(&sinmix),
        {.name = "affine", .out_record_bytes = sizeof(float), .host = affine_on_host,
         .user = &affine},
    };
    sp_pipeline_config config = {
        .in_record_bytes = sizeof(float),
        .stages = stages,
        .n_stages = with_affine ? 2 : 1,
        .chunk_records = CHUNK_RECORDS, /* depth and staging threads: 0 = let it choose */
    };
    return sp_pipeline_create(ctx, &config, out);
}

static int run_and_check(sp_pipeline *pipeline, int with_affine)
{
    /* Ordinary malloc memory works: the pipeline stages it through pinned buffers. For the
     * fastest copies allocate with sp_host_alloc instead. */
    float *in = malloc(RECORDS * sizeof *in);
    float *out = malloc(RECORDS * sizeof *out);
    if (in == NULL || out == NULL) {
        free(in);
        free(out);
        return fail("malloc", SP_ERR_OUT_OF_MEMORY, "no memory for the data");
    }
    for (size_t i = 0; i < RECORDS; i++)
        in[i] = (float)(i % 4001) / 1000.0f - 2.0f;

    sp_report report;
    sp_status status = sp_pipeline_run(pipeline, in, RECORDS, out, &report);
    int rc = 0;
    if (status != SP_OK) {
        rc = fail("sp_pipeline_run", status, sp_pipeline_last_error(pipeline));
    } else {
        size_t wrong = count_wrong(in, out, sinmix.iters, with_affine ? &affine : NULL);
        printf("%zu of %zu outputs wrong\n", wrong, RECORDS);
        print_report(&report);
        rc = wrong != 0;
    }
    free(in);
    free(out);
    return rc;
}

int main(void)
{
    /* AUTO: the GPU when the library was built with CUDA and one is present, else the CPU. */
    sp_context *ctx = NULL;
    sp_status status = sp_context_create(SP_BACKEND_AUTO, 0, &ctx);
    if (status != SP_OK) { /* a failed open still yields a handle, whose error says why */
        int failed = fail("sp_context_create", status, sp_context_last_error(ctx));
        sp_context_destroy(ctx);
        return failed;
    }
    printf("backend: %s\n", sp_backend_name(sp_context_backend(ctx)));

    /* Our stage has no CUDA function, so on a GPU the pipeline runs sinmix alone. */
    int with_affine = sp_context_backend(ctx) == SP_BACKEND_HOST;
    sp_pipeline *pipeline = NULL;
    status = make_pipeline(ctx, with_affine, &pipeline);
    int rc = status == SP_OK ? run_and_check(pipeline, with_affine)
                             : fail("sp_pipeline_create", status, sp_context_last_error(ctx));

    sp_pipeline_destroy(pipeline); /* destroy functions accept NULL */
    sp_context_destroy(ctx);
    return rc;
}
