/* Structs that grow (streampipe.h, top): sized configs read as their size says, a newer
 * caller's larger struct taken when what this library does not know is zero, stages'
 * reserved words refused when set, reports' reserved words zero; pinned_bytes as documented. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "testbuf.h" /* CHECK_STATUS */

#define RECORDS 1000

static sp_stage copy_stage(void)
{
    sp_stage stage = {.name = "copy", .out_record_bytes = sizeof(float), .host = copy4_host};
    return stage;
}

/* A config as a newer header would lay it out: this one and `extra` bytes after it. */
typedef struct newer_config {
    sp_pipeline_config known;
    unsigned char extra[16];
} newer_config;

static sp_status create_with(sp_context *ctx, const sp_pipeline_config *cfg)
{
    sp_pipeline *p = NULL;
    sp_status st = sp_pipeline_create(ctx, cfg, &p);
    if (st == SP_OK) {
        float in[RECORDS], out[RECORDS];
        for (size_t i = 0; i < RECORDS; i++)
            in[i] = (float)i;
        CHECK_EQ(sp_pipeline_run(p, in, RECORDS, out, NULL), SP_OK);
        CHECK(memcmp(in, out, sizeof in) == 0);
    }
    sp_pipeline_destroy(p);
    return st;
}

/* A HOST context and a pipeline of no stages over float records; 0 (and nothing left open)
 * when either fails. */
static int open_float_pipeline(sp_context **ctx, sp_pipeline **p)
{
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float)};
    if (CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, ctx), SP_OK) &&
        CHECK_EQ(sp_pipeline_create(*ctx, &cfg, p), SP_OK))
        return 1;
    sp_context_destroy(*ctx);
    *ctx = NULL;
    return 0;
}

TEST(pipeline_config_by_its_size)
{
    sp_context *ctx = NULL;
    if (!CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK,
                      sp_context_last_error(ctx)))
        return TEST_FAIL;
    sp_stage stage = copy_stage();
    sp_pipeline_config base = SP_PIPELINE_CONFIG_INIT;
    base.in_record_bytes = sizeof(float);
    base.stages = &stage;
    base.n_stages = 1;
    CHECK_EQ(create_with(ctx, &base), SP_OK);
    sp_pipeline_config zero = base; /* size 0: the 0.5 layout */
    zero.size = 0;
    CHECK_EQ(create_with(ctx, &zero), SP_OK);
    newer_config newer;
    memset(&newer, 0, sizeof newer);
    newer.known = base;
    newer.known.size = sizeof newer; /* fields this library does not know, all zero: taken */
    CHECK_EQ(create_with(ctx, &newer.known), SP_OK);
    newer.extra[5] = 1; /* one of them set: refused, not ignored */
    CHECK_EQ(create_with(ctx, &newer.known), SP_ERR_UNSUPPORTED);
    CHECK_HAS(sp_context_last_error(ctx), "does not know");
    sp_pipeline_config tiny = base;
    tiny.size = 4; /* smaller than the size field */
    CHECK_EQ(create_with(ctx, &tiny), SP_ERR_INVALID_ARGUMENT);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(stage_reserved_words_must_be_zero)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    sp_stage stages[2] = {copy_stage(), copy_stage()};
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = stages, .n_stages = 2};
    CHECK_EQ(create_with(ctx, &cfg), SP_OK);
    stages[1].reserved[2] = 7; /* a newer field this library cannot honour */
    CHECK_EQ(create_with(ctx, &cfg), SP_ERR_UNSUPPORTED);
    CHECK_HAS(sp_context_last_error(ctx), "stage 1");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(stream_config_and_io_by_their_size)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    if (!open_float_pipeline(&ctx, &p))
        return TEST_FAIL;
    struct {
        sp_stream_config known;
        unsigned char extra[8];
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.known.size = sizeof newer;
    newer.known.max_in_flight = 2;
    sp_stream *s = NULL;
    CHECK_EQ(sp_stream_open(p, &newer.known, &s), SP_OK);
    CHECK_EQ(sp_stream_close(s, NULL), SP_OK);
    newer.extra[0] = 1;
    s = NULL;
    CHECK_EQ(sp_stream_open(p, &newer.known, &s), SP_ERR_UNSUPPORTED);
    CHECK(s == NULL);
    CHECK_HAS(sp_pipeline_last_error(p), "does not know");
    sp_io io = SP_IO_INIT;
    io.size = 2; /* smaller than its size field */
    CHECK_EQ(sp_pipeline_run_io(p, &io, NULL), SP_ERR_INVALID_ARGUMENT);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A float pipeline's report of a short run (RECORDS) on a chunk the library chose; 0 when
 * the pipeline cannot be made. The report is poisoned first: the run fills all of it. */
static int short_run_report(sp_context **ctx, sp_pipeline **p, sp_report *report)
{
    if (!open_float_pipeline(ctx, p))
        return 0;
    static float in[RECORDS], out[RECORDS];
    memset(report, 0xab, sizeof *report);
    CHECK_EQ(sp_pipeline_run(*p, in, RECORDS, out, report), SP_OK);
    return 1;
}

TEST(report_reserved_words_are_zero)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    sp_report report;
    if (!short_run_report(&ctx, &p, &report))
        return TEST_FAIL;
    for (size_t k = 0; k < sizeof report.reserved / sizeof report.reserved[0]; k++)
        CHECK_EQ(report.reserved[k], 0);
    CHECK(report.timeline == NULL); /* 0.8 took a reserved word: keep_timeline 0, none */
    for (size_t e = 0; e < report.n_engines; e++)
        CHECK_EQ(report.engines[e].reserved[0] | report.engines[e].reserved[3], 0);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* pinned_bytes is what its comment says: depth slots of slot_records each way. A short run
 * on a chunk the library chose is cut finer than its slots (chunk_records), which the figure
 * used to be read against (the CLI printed "5 slots of <the run's chunk> records"). */
TEST(pinned_bytes_is_depth_times_slot_records)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    sp_report report;
    if (!short_run_report(&ctx, &p, &report))
        return TEST_FAIL;
    size_t slot = sp_pipeline_chunk_records(p, SIZE_MAX);
    size_t slot_bytes = (slot * sizeof(float) + SP_SLOT_ALIGN - 1) / SP_SLOT_ALIGN * SP_SLOT_ALIGN;
    CHECK_EQ(report.slot_records, slot);
    CHECK(report.chunk_records < report.slot_records); /* the case that misled */
    CHECK_EQ(report.pinned_bytes, (size_t)report.depth * 2 * slot_bytes);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(pipeline_config_by_its_size),
        TEST_ENTRY(stage_reserved_words_must_be_zero),
        TEST_ENTRY(stream_config_and_io_by_their_size),
        TEST_ENTRY(report_reserved_words_are_zero),
        TEST_ENTRY(pinned_bytes_is_depth_times_slot_records),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
