/*
 * test_cuda_errors: what the CUDA backend does when memory runs out and when the device is
 * lost. Skips (77) without a GPU. The DEVICE_LOST test corrupts this process's CUDA context,
 * so it runs last and nothing may follow it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "streampipe.h"
#include "streampipe_ops.h"

int sp_test_launch_wild_write(void *stream);

static sp_context *open_cuda(void)
{
    sp_context *ctx = NULL;
    if (sp_context_create(SP_BACKEND_CUDA, 0, &ctx) != SP_OK) {
        harness_skip_reason("no CUDA device: %s", sp_context_last_error(ctx));
        sp_context_destroy(ctx); /* a failed open still yields a handle */
        return NULL;
    }
    return ctx;
}

/* A correct run on ctx: the context is still usable. */
static int run_sinmix_ok(sp_context *ctx)
{
    sp_sinmix_params params = {3};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = &stage, .n_stages = 1,
                              .chunk_records = 1000, .depth = 3, .staging_threads = 2};
    sp_pipeline *p = NULL;
    enum { N = 10007 };
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    test_rng rng;
    rng_init(&rng, harness_seed());
    for (size_t i = 0; i < N; i++)
        in[i] = (float)rng_below(&rng, 4001) / 1000.0f - 2.0f;
    memset(out, 0xFF, N * sizeof *out);
    int ok = CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK) &&
             CHECK_EQ(sp_pipeline_run(p, in, N, out, NULL), SP_OK);
    for (size_t i = 0; ok && i < N; i++) {
        float want = sp_sinmix_one(in[i], 3);
        ok = CHECK_MSG(out[i] == out[i] && out[i] - want < 1e-4f && want - out[i] < 1e-4f,
                       "out[%zu] = %g, want %g", i, (double)out[i], (double)want);
    }
    sp_pipeline_destroy(p);
    free(in);
    free(out);
    return ok;
}

TEST(device_memory_exhausted)
{
    sp_context *ctx = open_cuda();
    if (!ctx)
        return TEST_SKIP;
    sp_sinmix_params params = {0};
    sp_stage stage = sp_sinmix_stage(&params);
    /* 2^40 records of 4 bytes per slot: far more than any GPU has */
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = &stage, .n_stages = 1,
                              .chunk_records = (size_t)1 << 40, .depth = 2};
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_OUT_OF_DEVICE_MEMORY);
    CHECK(p == NULL);
    CHECK_HAS(sp_context_last_error(ctx), "device memory");
    run_sinmix_ok(ctx); /* the failed allocation left the context usable */
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(pinned_memory_exhausted)
{
    sp_context *ctx = open_cuda();
    if (!ctx)
        return TEST_SKIP;
    void *mem = NULL;
    CHECK_EQ(sp_host_alloc(ctx, (size_t)1 << 46, &mem), SP_ERR_OUT_OF_MEMORY); /* 64 TiB */
    CHECK(mem == NULL);
    CHECK_HAS(sp_context_last_error(ctx), "pinned");
    run_sinmix_ok(ctx);
    sp_context_destroy(ctx);
    return TEST_OK;
}

static sp_status wild_stage(const sp_chunk *chunk, void *user)
{
    (void)user;
    return sp_test_launch_wild_write(chunk->stream) == 0 ? SP_OK : SP_ERR_BACKEND;
}

static sp_status never_host(const sp_chunk *chunk, void *user)
{
    (void)chunk;
    (void)user;
    return SP_ERR_UNSUPPORTED;
}

TEST(illegal_address_loses_the_device)
{
    sp_context *ctx = open_cuda();
    if (!ctx)
        return TEST_SKIP;
    sp_stage stage = {.name = "wild", .out_record_bytes = sizeof(float), .cuda = wild_stage,
                      .host = never_host};
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = &stage, .n_stages = 1,
                              .chunk_records = 256, .depth = 2};
    sp_pipeline *p = NULL;
    enum { N = 1024 };
    static float in[N], out[N];
    if (!CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK))
        return TEST_FAIL;
    CHECK_EQ(sp_pipeline_run(p, in, N, out, NULL), SP_ERR_DEVICE_LOST);
    CHECK_HAS(sp_context_last_error(ctx), "illegal");
    /* every later call fails at once with the same status */
    CHECK_EQ(sp_pipeline_run(p, in, N, out, NULL), SP_ERR_DEVICE_LOST);
    sp_pipeline *q = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &q), SP_ERR_DEVICE_LOST);
    void *mem = NULL;
    CHECK_EQ(sp_host_alloc(ctx, 4096, &mem), SP_ERR_DEVICE_LOST);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(device_memory_exhausted),
        TEST_ENTRY(pinned_memory_exhausted),
        TEST_ENTRY(illegal_address_loses_the_device), /* last: it breaks the CUDA context */
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
