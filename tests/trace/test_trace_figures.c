/* White-box tests of the report's figures (DESIGN.md section 5) on hand-built timelines whose
 * answers are worked out by hand in the comments, and of the trace writers' small helpers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_door.h"
#include "trace/trace_common.h"
#include "harness.h"
#include "streampipe_trace.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

typedef struct engine_spec {
    const char *name;
    sp_engine_kind kind;
    size_t bytes;
} engine_spec;

static void build(sp_timeline *t, const engine_spec *engines, size_t n_engines, size_t chunks)
{
    memset(t, 0, sizeof *t);
    sp_timeline_reset(t, n_engines, chunks);
    for (size_t e = 0; e < n_engines; e++) {
        t->name[e] = engines[e].name;
        t->kind[e] = engines[e].kind;
        t->bytes[e] = engines[e].bytes;
        t->active[e] = 1;
    }
}

static void figures(const sp_timeline *t, double makespan, sp_report *r)
{
    memset(r, 0, sizeof *r);
    r->makespan_s = makespan;
    sp_timeline_figures(t, r);
}

/* Two compute stages whose spans overlap each other, copies partly under them:
 *   h2d  [0,2) [4,6)     A [1,3) [6,7)     B [2,5) [7,9)     d2h [5,6) [8,9.5)
 * compute merged: [1,5) and [6,9) (A c1 and B c1 touch at 7 and merge).
 * hidden: h2d c0 1 ([1,2)), h2d c1 1 ([4,5)), d2h c0 0 (touches only), d2h c1 1 ([8,9))
 *   = 3 of 6.5 copy seconds.
 * busy: h2d 4, A 3, B 5, d2h 2.5 -> bound 5 (B), serial 14.5, efficiency 5 / 9.5.
 * model: per-chunk means 2, 1.5, 2.5, 1.25 -> (2-1) * 2.5 + 7.25 = 9.75. */
TEST(hidden_transfer_with_partial_overlaps)
{
    static const engine_spec engines[] = {{"h2d", SP_ENGINE_H2D, 4000000000u},
                                          {"A", SP_ENGINE_COMPUTE, 100},
                                          {"B", SP_ENGINE_COMPUTE, 100},
                                          {"d2h", SP_ENGINE_D2H, 5000000000u}};
    sp_timeline t;
    build(&t, engines, 4, 2);
    sp_timeline_set(&t, 0, 0, 0, 2);
    sp_timeline_set(&t, 0, 1, 4, 6);
    sp_timeline_set(&t, 1, 0, 1, 3);
    sp_timeline_set(&t, 1, 1, 6, 7);
    sp_timeline_set(&t, 2, 0, 2, 5);
    sp_timeline_set(&t, 2, 1, 7, 9);
    sp_timeline_set(&t, 3, 0, 5, 6);
    sp_timeline_set(&t, 3, 1, 8, 9.5);
    sp_report r;
    figures(&t, 9.5, &r);
    CHECK_MSG(NEAR(r.hidden_transfer, 3.0 / 6.5), "hidden %.6f, want %.6f", r.hidden_transfer,
              3.0 / 6.5);
    CHECK(NEAR(r.bound_s, 5.0));
    CHECK(strcmp(r.bottleneck, "B") == 0);
    CHECK(NEAR(r.efficiency, 5.0 / 9.5));
    CHECK(NEAR(r.serial_s, 14.5));
    CHECK_MSG(NEAR(r.model_s, 9.75), "model %.6f", r.model_s);
    CHECK(NEAR(r.h2d_gbps, 1.0)); /* 4e9 bytes in 4 s */
    CHECK(NEAR(r.d2h_gbps, 2.0)); /* 5e9 bytes in 2.5 s */
    CHECK(NEAR(r.engines[2].max_chunk_s, 3.0));
    sp_timeline_free(&t);
    return TEST_OK;
}

/* Pageable both ways, depth 1: the host stages chunk 1's input and chunk 0's output together
 * in one turn, so the two lanes overlap and the host's busy time is their union, not sum.
 *   stage-in  [0,1) [4,6)      h2d [1,2) [6,7)    S [2,3) [7,8)    d2h [3,4) [8,9)
 *   stage-out [4,6) [9,10)
 * host staging: union [0,1) + [4,6) + [9,10) = 4 (the sum would be 6), beating every other
 * engine (2) -> bound 4, bottleneck "host staging", efficiency 4 / 10. No copy overlaps S. */
TEST(host_staging_is_the_bound)
{
    static const engine_spec engines[] = {{"stage-in", SP_ENGINE_STAGE_IN, 10},
                                          {"h2d", SP_ENGINE_H2D, 10},
                                          {"S", SP_ENGINE_COMPUTE, 10},
                                          {"d2h", SP_ENGINE_D2H, 10},
                                          {"stage-out", SP_ENGINE_STAGE_OUT, 10}};
    sp_timeline t;
    build(&t, engines, 5, 2);
    const double spans[5][2][2] = {{{0, 1}, {4, 6}}, {{1, 2}, {6, 7}}, {{2, 3}, {7, 8}},
                                   {{3, 4}, {8, 9}}, {{4, 6}, {9, 10}}};
    for (size_t e = 0; e < 5; e++)
        for (size_t c = 0; c < 2; c++)
            sp_timeline_set(&t, e, c, spans[e][c][0], spans[e][c][1]);
    sp_report r;
    figures(&t, 10, &r);
    CHECK_EQ(r.n_engines, 5);
    CHECK_MSG(NEAR(r.bound_s, 4.0), "bound %.3f, want 4 (the union of the staging lanes)",
              r.bound_s);
    CHECK(strcmp(r.bottleneck, "host staging") == 0);
    CHECK(NEAR(r.efficiency, 0.4));
    CHECK(NEAR(r.hidden_transfer, 0.0));
    CHECK(NEAR(r.serial_s, 3 + 2 + 2 + 2 + 3));
    sp_timeline_free(&t);
    return TEST_OK;
}

/* An inactive engine and an unrecorded span count for nothing; a fully hidden copy is 1. */
TEST(inactive_and_unrecorded_are_ignored)
{
    static const engine_spec engines[] = {{"stage-in", SP_ENGINE_STAGE_IN, 10},
                                          {"h2d", SP_ENGINE_H2D, 2000000000u},
                                          {"S", SP_ENGINE_COMPUTE, 10},
                                          {"d2h", SP_ENGINE_D2H, 10}};
    sp_timeline t;
    build(&t, engines, 4, 2);
    t.active[0] = 0;
    sp_timeline_set(&t, 0, 0, 0, 100); /* inactive: would be the bound */
    sp_timeline_set(&t, 1, 0, 1, 2);   /* h2d c1 left unrecorded */
    sp_timeline_set(&t, 2, 0, 0, 10);
    sp_timeline_set(&t, 2, 1, 10, 12);
    sp_timeline_set(&t, 3, 0, 3, 4);
    sp_timeline_set(&t, 3, 1, 11, 11.5);
    sp_report r;
    figures(&t, 12, &r);
    CHECK_EQ(r.n_engines, 3);
    CHECK(strcmp(r.engines[0].name, "h2d") == 0);
    CHECK(NEAR(r.engines[0].busy_s, 1.0));
    CHECK(NEAR(r.h2d_gbps, 2.0));
    CHECK(NEAR(r.hidden_transfer, 1.0)); /* every copy lies inside S's spans */
    CHECK(NEAR(r.bound_s, 12.0));
    CHECK(NEAR(r.efficiency, 1.0));
    sp_timeline_free(&t);
    return TEST_OK;
}

/* No compute stage: nothing can hide a copy; a zero makespan gives efficiency 0, not NaN. */
TEST(copies_only_and_zero_makespan)
{
    static const engine_spec engines[] = {{"h2d", SP_ENGINE_H2D, 10}, {"d2h", SP_ENGINE_D2H, 10}};
    sp_timeline t;
    build(&t, engines, 2, 1);
    sp_timeline_set(&t, 0, 0, 0, 1);
    sp_timeline_set(&t, 1, 0, 1, 3);
    sp_report r;
    figures(&t, 0.0, &r);
    CHECK(NEAR(r.hidden_transfer, 0.0));
    CHECK(NEAR(r.efficiency, 0.0));
    CHECK(NEAR(r.bound_s, 2.0));
    CHECK(strcmp(r.bottleneck, "d2h") == 0);
    CHECK(NEAR(r.model_s, 3.0)); /* one chunk: the sum of its engine times */
    sp_timeline_free(&t);
    return TEST_OK;
}

/* 10 records of 12 bytes in chunks of 4: the last chunk holds 2. */
TEST(chunk_records_and_bytes)
{
    static const engine_spec engines[] = {{"h2d", SP_ENGINE_H2D, 120}, {"d2h", SP_ENGINE_D2H, 30}};
    sp_timeline t;
    build(&t, engines, 2, 3);
    t.n_records = 10;
    t.chunk_records = 4;
    CHECK_EQ(sp_timeline_chunk_records(&t, 0), 4);
    CHECK_EQ(sp_timeline_chunk_records(&t, 2), 2);
    CHECK_EQ(sp_timeline_chunk_records(&t, 3), 0);
    CHECK_EQ(sp_timeline_chunk_bytes(&t, 0, 1), 48);
    CHECK_EQ(sp_timeline_chunk_bytes(&t, 0, 2), 24);
    CHECK_EQ(sp_timeline_chunk_bytes(&t, 1, 2), 6);
    sp_timeline_free(&t);
    return TEST_OK;
}

TEST(fixed_numbers_ignore_the_locale)
{
    static const struct {
        double value;
        int decimals;
        const char *want;
    } cases[] = {{1.5, 3, "1.500"},      {123.4567, 2, "123.46"}, {-2.5, 1, "-2.5"},
                 {-0.0004, 3, "0.000"},  {0.0, 0, "0"},           {1e6, 0, "1000000"},
                 {NAN, 2, "0.00"},       {0.05, 6, "0.050000"},   {7.25, 9, "7.250000"}};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        sp_trace_number n = sp_trace_fixed(cases[i].value, cases[i].decimals);
        CHECK_MSG(strcmp(n.text, cases[i].want) == 0, "fixed(%g, %d) is \"%s\", want \"%s\"",
                  cases[i].value, cases[i].decimals, n.text, cases[i].want);
    }
    return TEST_OK;
}

TEST(sizes_for_people)
{
    CHECK(strcmp(sp_trace_size(512).text, "512 B") == 0);
    CHECK(strcmp(sp_trace_size(64 * 1024).text, "64.0 KiB") == 0);
    CHECK(strcmp(sp_trace_size(6710886).text, "6.40 MiB") == 0);
    CHECK(strcmp(sp_trace_size((size_t)1 << 30).text, "1.00 GiB") == 0);
    CHECK(strcmp(sp_trace_size(300u << 20).text, "300 MiB") == 0);
    return TEST_OK;
}

TEST(chunk_colours_are_stable_and_distinct)
{
    char a[8], b[8], again[8];
    for (size_t c = 0; c < 200; c++) {
        sp_trace_chunk_colour(c, a);
        sp_trace_chunk_colour(c + 1, b);
        sp_trace_chunk_colour(c, again);
        CHECK(strlen(a) == 7 && a[0] == '#');
        CHECK_MSG(strcmp(a, again) == 0, "chunk %zu: %s then %s", c, a, again);
        CHECK_MSG(strcmp(a, b) != 0, "chunks %zu and %zu share %s", c, c + 1, a);
    }
    return TEST_OK;
}

/* ---- which run the trace writers describe ------------------------------------------------- */

/* Fails from chunk `*fail_from` on (SIZE_MAX: never). */
static sp_status copy_or_fail(const sp_chunk *chunk, void *user)
{
    if (chunk->index >= *(const size_t *)user)
        return SP_ERR_INVALID_ARGUMENT;
    memcpy(chunk->out, chunk->in, chunk->records * 4);
    return SP_OK;
}

/* A run whose stage fails from chunk `chunk` on. */
static sp_status run_failing_at(sp_pipeline *p, size_t *fail_from, size_t chunk,
                                const void *in, size_t n, void *out, sp_report *report)
{
    *fail_from = chunk;
    sp_status st = sp_pipeline_run(p, in, n, out, report);
    *fail_from = SIZE_MAX;
    return st;
}

static sp_status trace_to_null_device(const sp_report *report)
{
    FILE *f = fopen("/dev/null", "w");
    sp_status st = f ? sp_report_write_trace(report, f) : SP_ERR_BACKEND;
    if (f)
        fclose(f);
    return st;
}

/* A good timed run into `good`, then `bad` into a zeroed `report`: the bad run hands out no
 * timeline, and the good run's report still writes its own. */
#define CHECK_NO_TIMELINE(p, bad)                                                            \
    do {                                                                                   \
        sp_report_release(&good);                                                          \
        CHECK_EQ(sp_pipeline_run(p, buf, N, out, &good), SP_OK);                           \
        CHECK_EQ(trace_to_null_device(&good), SP_OK);                                      \
        memset(&report, 0, sizeof report);                                                 \
        CHECK(bad != SP_OK);                                                               \
        CHECK_MSG(report.timeline == NULL && trace_to_null_device(&report) ==              \
                                                 SP_ERR_INVALID_ARGUMENT,                  \
                  "%s handed its report a timeline", #bad);                                \
        CHECK_EQ(trace_to_null_device(&good), SP_OK);                                      \
    } while (0)

/* A timed run that was rejected or failed gives no timeline to write (the header's promise),
 * whatever the reason: the writers must not pass off another run as this one. */
TEST(rejected_or_failed_runs_leave_no_timeline)
{
    enum { N = 64 };
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    static unsigned char buf[N * 4 + 4], out[N * 4];
    size_t fail_from = SIZE_MAX;
    sp_stage copy = {.name = "copy", .out_record_bytes = 4, .host = copy_or_fail,
                     .user = &fail_from};
    sp_pipeline_config cfg = {.size = sizeof cfg, .in_record_bytes = 4, .stages = &copy,
                              .n_stages = 1, .chunk_records = 16, .depth = 2,
                              .keep_timeline = 1};
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    sp_report good, report;
    memset(&good, 0, sizeof good);
    if (CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK)) {
        CHECK_NO_TIMELINE(p, sp_pipeline_run(p, buf, N, buf + 4, &report)); /* overlap */
        CHECK_NO_TIMELINE(p, sp_pipeline_run(p, NULL, N, out, &report));
        CHECK_NO_TIMELINE(p, sp_pipeline_run_serial(p, buf, N, buf + 4, &report));
        CHECK_NO_TIMELINE(p, sp_pipeline_run(p, buf, SIZE_MAX, out, &report)); /* too big */
        CHECK_NO_TIMELINE(p, run_failing_at(p, &fail_from, 2, buf, N, out, &report));
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    CHECK_EQ(trace_to_null_device(&good), SP_OK); /* the pipeline is gone, the report stays */
    sp_report_release(&good);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(hidden_transfer_with_partial_overlaps),
        TEST_ENTRY(host_staging_is_the_bound),
        TEST_ENTRY(inactive_and_unrecorded_are_ignored),
        TEST_ENTRY(copies_only_and_zero_makespan),
        TEST_ENTRY(chunk_records_and_bytes),
        TEST_ENTRY(fixed_numbers_ignore_the_locale),
        TEST_ENTRY(sizes_for_people),
        TEST_ENTRY(chunk_colours_are_stable_and_distinct),
        TEST_ENTRY(rejected_or_failed_runs_leave_no_timeline),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
