/*
 * test_normalize_u8 [filter]: the built-in normalize_u8 stage (uint8 -> float32, x * scale +
 * shift). Every one of the 256 inputs against the formula in double precision (the float
 * reference is within half an ulp of each step); the stage descriptor; the stage run through
 * a pipeline on HOST, and on CUDA when a GPU is present (skipped otherwise): records of an
 * odd number of values (the kernel's tail), a short last chunk, host and device ends, fresh
 * random bytes, outputs poisoned, every value compared bit for bit with the reference;
 * elements 0 fails the run with a message instead of running.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contexts.h"
#include "harness.h"
#include "streampipe.h"
#include "streampipe_ops.h"
#include "testbuf.h"

TEST(reference_against_the_formula)
{
    unsigned char in[256];
    float out[256];
    for (int v = 0; v < 256; v++)
        in[v] = (unsigned char)v;
    const float scales[] = {1.0f / 255.0f, 2.0f, -0.0078125f}, shifts[] = {-0.5f, 0.0f, 3.25f};
    for (size_t k = 0; k < ARRAY_LEN(scales); k++) {
        sp_normalize_u8_reference(in, out, 256, scales[k], shifts[k]);
        for (int v = 0; v < 256; v++) {
            float scaled = (float)((double)v * scales[k]); /* each step rounded once */
            float want = (float)((double)scaled + shifts[k]);
            if (!CHECK_MSG(out[v] == want, "x=%d scale %.9g shift %.9g: got %.9g, want %.9g",
                           v, (double)scales[k], (double)shifts[k], (double)out[v],
                           (double)want))
                break;
        }
    }
    CHECK(out[0] == 3.25f); /* the last pair: 0 * scale + 3.25 */
    return TEST_OK;
}

TEST(stage_descriptor)
{
    sp_normalize_u8_params params = {12288, 1.0f / 255.0f, -0.5f};
    sp_stage st = sp_normalize_u8_stage(&params);
    CHECK(st.name != NULL && strcmp(st.name, "normalize_u8") == 0);
    CHECK_EQ(st.out_record_bytes, 12288 * sizeof(float));
    CHECK(st.host != NULL);
    CHECK(st.user == &params);
#ifdef SP_HAVE_CUDA
    CHECK(st.cuda != NULL);
#else
    CHECK(st.cuda == NULL);
#endif
    sp_normalize_u8_params huge = {SIZE_MAX / 2, 1.0f, 0.0f};
    CHECK_EQ(sp_normalize_u8_stage(&huge).out_record_bytes, 0); /* overflow: refused later */
    return TEST_OK;
}

/* ---- through a pipeline ------------------------------------------------------------------ */

#define RECORDS 2501 /* with chunks of 256 records: a short last chunk */
#define ELEMENTS 15  /* odd: the kernel's four-at-a-time path and its tail */

typedef struct ends {
    sp_context *ctx;
    int device; /* 1: the input and output are sp_device_alloc memory */
    unsigned char *in;
    float *out;
} ends;

/* Runs the stage over in (host bytes) into got, through device memory when e->device. */
static sp_status run_ends(sp_pipeline *p, const ends *e, const unsigned char *in, float *got,
                          size_t n)
{
    if (!e->device)
        return sp_pipeline_run(p, in, RECORDS, got, NULL);
    sp_status st = sp_memcpy(e->ctx, e->in, in, n);
    if (st == SP_OK)
        st = sp_memcpy(e->ctx, e->out, got, n * sizeof(float)); /* the poison */
    if (st == SP_OK)
        st = sp_pipeline_run(p, e->in, RECORDS, e->out, NULL);
    if (st == SP_OK)
        st = sp_memcpy(e->ctx, got, e->out, n * sizeof(float));
    return st;
}

static void pipeline_matches_reference(sp_context *ctx, int device, test_rng *rng)
{
    const size_t n = (size_t)RECORDS * ELEMENTS;
    sp_normalize_u8_params params = {ELEMENTS, 1.0f / 255.0f, -0.5f};
    sp_stage stage = sp_normalize_u8_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = ELEMENTS, .stages = &stage, .n_stages = 1,
                              .chunk_records = 256, .depth = 3};
    sp_pipeline *p = NULL;
    ends e = {ctx, device, NULL, NULL};
    unsigned char *in = malloc(n);
    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    harness_context("normalize_u8 on %s, %s ends", sp_backend_name(sp_context_backend(ctx)),
                    device ? "device" : "host");
    if (CHECK(in && want && got) &&
        (!device || (CHECK_STATUS(sp_device_alloc(ctx, n, (void **)&e.in), SP_OK,
                                  sp_context_last_error(ctx)) &&
                     CHECK_STATUS(sp_device_alloc(ctx, n * sizeof(float), (void **)&e.out),
                                  SP_OK, sp_context_last_error(ctx)))) &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)rng_below(rng, 256);
        sp_normalize_u8_reference(in, want, n, params.scale, params.shift);
        memset(got, 0xA5, n * sizeof(float));
        if (CHECK_STATUS(run_ends(p, &e, in, got, n), SP_OK, sp_pipeline_last_error(p)))
            for (size_t i = 0; i < n; i++)
                if (!CHECK_MSG(memcmp(&got[i], &want[i], sizeof(float)) == 0,
                               "value %zu (x=%u): got %.9g, reference %.9g", i, in[i],
                               (double)got[i], (double)want[i]))
                    break;
    }
    sp_pipeline_destroy(p);
    if (e.in)
        sp_device_free(ctx, e.in);
    if (e.out)
        sp_device_free(ctx, e.out);
    free(in);
    free(want);
    free(got);
    harness_context("%s", "");
}

/* elements 0: the stage's output record is empty, so the pipeline refuses it, or its run
 * fails saying why; nothing crashes and nothing is written. */
static void zero_elements_refused(sp_context *ctx)
{
    sp_normalize_u8_params params = {0, 1.0f, 0.0f};
    sp_stage stage = sp_normalize_u8_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1};
    sp_pipeline *p = NULL;
    sp_status st = sp_pipeline_create(ctx, &cfg, &p);
    CHECK_MSG(st != SP_OK, "a stage of 0-byte output records was accepted");
    sp_pipeline_destroy(p);
}

static int pipeline_on(sp_backend_kind kind)
{
    sp_context *ctx = NULL;
    int opened = rig_open_or_skip(kind, &ctx);
    if (opened != TEST_OK)
        return opened;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6e75);
    pipeline_matches_reference(ctx, 0, &rng);
    pipeline_matches_reference(ctx, 1, &rng);
    zero_elements_refused(ctx);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(pipeline_on_host) { return pipeline_on(SP_BACKEND_HOST); }
TEST(pipeline_on_cuda) { return pipeline_on(SP_BACKEND_CUDA); }

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(reference_against_the_formula),
        TEST_ENTRY(stage_descriptor),
        TEST_ENTRY(pipeline_on_host),
        TEST_ENTRY(pipeline_on_cuda),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
