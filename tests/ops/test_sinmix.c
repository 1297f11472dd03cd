/*
 * test_sinmix [filter]: the built-in sinmix stage. Spot values of the reference worked out by
 * hand; the reference against a double-precision model of the formula; the stage run through
 * a pipeline on HOST, and on CUDA when a GPU is present (skipped otherwise), against
 * sp_sinmix_reference within a tolerance that grows with iters.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contexts.h"
#include "harness.h"
#include "streampipe.h"
#include "streampipe_ops.h"
#include "testbuf.h"

TEST(reference_spot_values)
{
    CHECK(sp_sinmix_one(0.0f, 0) == 0.0f);
    CHECK(sp_sinmix_one(1.0f, 0) == 0.6f);   /* 0.5 + 0.1 */
    CHECK(sp_sinmix_one(10.0f, 0) == 15.0f); /* 5 + 10 */
    CHECK(sp_sinmix_one(0.0f, 100) == 0.0f); /* sin(0) = 0 keeps 0 fixed */
    /* x = 2, iters = 1: v = 1 + 0.4 = 1.4, then 1.4 + sin(0.014) = 1.4139995427 */
    float v = sp_sinmix_one(2.0f, 1);
    CHECK_MSG(fabsf(v - 1.4139995f) < 1e-6f, "sp_sinmix_one(2, 1) = %.9g", (double)v);
    /* x = -20, iters = 2: v = -10 + 40 = 30; 30 + sin(0.3) = 30.2955202;
     * + sin(0.302955202) = 30.5938623 */
    v = sp_sinmix_one(-20.0f, 2);
    CHECK_MSG(fabsf(v - 30.5938623f) < 2e-5f, "sp_sinmix_one(-20, 2) = %.9g", (double)v);
    return TEST_OK;
}

static double model(double x, unsigned iters)
{
    double v = x * 0.5 + x * x * 0.1;
    for (unsigned k = 0; k < iters; k++)
        v += sin(v * 0.01);
    return v;
}

static double tolerance(double ref, unsigned iters)
{
    return (1.0 + iters) * 4.0 * FLT_EPSILON * fmax(1.0, fabs(ref));
}

TEST(reference_matches_model_and_runs_in_place)
{
    enum { N = 4096 };
    static float in[N], out[N], again[N];
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 61);
    for (size_t i = 0; i < N; i++)
        in[i] = (float)((double)rng_below(&rng, 2000001) / 10000.0 - 100.0);
    static const unsigned iters[] = {0, 1, 5, 40};
    for (size_t t = 0; t < ARRAY_LEN(iters); t++) {
        sp_sinmix_reference(in, out, N, iters[t]);
        for (size_t i = 0; i < N; i++) {
            double want = model(in[i], iters[t]);
            if (!CHECK_MSG(fabs(out[i] - want) <= tolerance(want, iters[t]),
                           "x=%.9g iters=%u: %.9g, model %.9g", (double)in[i], iters[t],
                           (double)out[i], want))
                break;
            CHECK(out[i] == sp_sinmix_one(in[i], iters[t]));
        }
        memcpy(again, in, sizeof in);
        sp_sinmix_reference(again, again, N, iters[t]);
        CHECK(memcmp(again, out, sizeof out) == 0);
    }
    return TEST_OK;
}

TEST(stage_descriptor)
{
    sp_sinmix_params params = {3};
    sp_stage st = sp_sinmix_stage(&params);
    CHECK(st.name != NULL && st.name[0] != '\0');
    CHECK_EQ(st.out_record_bytes, sizeof(float));
    CHECK(st.host != NULL);
    CHECK(st.user == &params);
#ifdef SP_HAVE_CUDA
    CHECK(st.cuda != NULL);
#else
    CHECK(st.cuda == NULL);
#endif
    return TEST_OK;
}

/* ---- through a pipeline ------------------------------------------------------------------ */

#define PIPE_N 100003 /* prime: a short last chunk */

/* Runs sinmix over `in` (out-of-place, then in place) and compares with the reference. */
static void pipeline_matches_reference(sp_context *ctx, const float *in, unsigned iters)
{
    sp_sinmix_params params = {iters};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = &stage, .n_stages = 1,
                              .chunk_records = 4096, .depth = 3};
    sp_pipeline *p = NULL;
    float *want = malloc(PIPE_N * sizeof(float)), *got = malloc(PIPE_N * sizeof(float));
    harness_context("sinmix iters=%u on %s", iters, sp_backend_name(sp_context_backend(ctx)));
    if (CHECK(want != NULL && got != NULL) &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        sp_sinmix_reference(in, want, PIPE_N, iters);
        for (int in_place = 0; in_place < 2; in_place++) {
            if (in_place)
                memcpy(got, in, PIPE_N * sizeof(float));
            else
                memset(got, 0xA5, PIPE_N * sizeof(float));
            sp_status st = sp_pipeline_run(p, in_place ? got : in, PIPE_N, got, NULL);
            if (!CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)))
                continue;
            for (size_t i = 0; i < PIPE_N; i++)
                if (!CHECK_MSG(fabs((double)got[i] - want[i]) <= tolerance(want[i], iters),
                               "element %zu (x=%.9g, %s): got %.9g, reference %.9g", i,
                               (double)in[i], in_place ? "in place" : "out of place",
                               (double)got[i], (double)want[i]))
                    break;
        }
    }
    sp_pipeline_destroy(p);
    free(want);
    free(got);
    harness_context("%s", "");
}

static int pipeline_on(sp_backend_kind kind)
{
    sp_context *ctx = NULL;
    int opened = rig_open_or_skip(kind, &ctx);
    if (opened != TEST_OK)
        return opened;
    float *in = malloc(PIPE_N * sizeof(float));
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 62);
    if (CHECK(in != NULL)) {
        for (size_t i = 0; i < PIPE_N; i++)
            in[i] = (float)((double)rng_below(&rng, 2000001) / 10000.0 - 100.0);
        in[0] = 0.0f;
        in[1] = 1.0f;
        in[2] = -1.0f;
        static const unsigned iters[] = {0, 1, 8, 64};
        for (size_t t = 0; t < ARRAY_LEN(iters); t++)
            pipeline_matches_reference(ctx, in, iters[t]);
    }
    free(in);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(pipeline_on_host) { return pipeline_on(SP_BACKEND_HOST); }
TEST(pipeline_on_cuda) { return pipeline_on(SP_BACKEND_CUDA); }

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(reference_spot_values),
        TEST_ENTRY(reference_matches_model_and_runs_in_place),
        TEST_ENTRY(stage_descriptor),
        TEST_ENTRY(pipeline_on_host),
        TEST_ENTRY(pipeline_on_cuda),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
