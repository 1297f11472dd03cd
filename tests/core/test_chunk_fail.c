/* sp_chunk_fail: a stage failing with its own message, which the run's error carries as
 * "stage 'NAME' chunk N: MESSAGE", in a run and in a stream; and outside a stage call. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "testbuf.h" /* CHECK_STATUS */
#include "streampipe.h"

#define RECORDS 4096
#define CHUNK 512
#define FAIL_AT 3

/* Copies its floats, and fails chunk FAIL_AT with a message when told to. */
static sp_status picky_copy(const sp_chunk *chunk, void *user)
{
    const int *fail = user;
    if (*fail && chunk->index == FAIL_AT)
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "record %zu is not to my taste",
                             chunk->first_record + 7);
    if (*fail == 2 && chunk->index == FAIL_AT + 1)
        return SP_ERR_BACKEND; /* a later chunk failing without a message */
    memcpy(chunk->out, chunk->in, chunk->records * sizeof(float));
    return SP_OK;
}

typedef struct rig {
    sp_context *ctx;
    sp_pipeline *p;
    int fail;
    float in[RECORDS], out[RECORDS];
} rig;

static int rig_open(rig *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < RECORDS; i++)
        r->in[i] = (float)i;
    sp_stage stage = {.name = "picky", .out_record_bytes = sizeof(float), .cuda = NULL,
                      .host = picky_copy, .user = &r->fail};
    sp_pipeline_config cfg = {.in_record_bytes = sizeof(float), .stages = &stage,
                              .n_stages = 1, .chunk_records = CHUNK, .depth = 2};
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &r->ctx), SP_OK))
        return 0;
    return CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                        sp_context_last_error(r->ctx));
}

static void rig_close(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
}

TEST(message_names_stage_and_chunk)
{
    rig r;
    if (rig_open(&r)) {
        r.fail = 1;
        CHECK_EQ(sp_pipeline_run(r.p, r.in, RECORDS, r.out, NULL), SP_ERR_STAGE_FAILED);
        const char *why = sp_pipeline_last_error(r.p);
        CHECK_HAS(why, "stage 'picky' chunk 3: record 1543 is not to my taste");
        CHECK_HAS(why, "SP_ERR_INVALID_ARGUMENT");
        /* the message is this run's only: a clean run afterwards works and checks out */
        r.fail = 0;
        CHECK_EQ(sp_pipeline_run(r.p, r.in, RECORDS, r.out, NULL), SP_OK);
        CHECK(memcmp(r.in, r.out, sizeof r.in) == 0);
    }
    rig_close(&r);
    return TEST_OK;
}

TEST(first_failure_keeps_its_message)
{
    rig r;
    if (rig_open(&r)) {
        r.fail = 2; /* chunk 3 with a message, chunk 4 without: chunk 3's is the error */
        CHECK_EQ(sp_pipeline_run(r.p, r.in, RECORDS, r.out, NULL), SP_ERR_STAGE_FAILED);
        CHECK_HAS(sp_pipeline_last_error(r.p), "not to my taste");
        CHECK_EQ(sp_pipeline_run_serial(r.p, r.in, RECORDS, r.out, NULL), SP_ERR_STAGE_FAILED);
        CHECK_HAS(sp_pipeline_last_error(r.p), "stage 'picky' chunk 3: record 1543");
    }
    rig_close(&r);
    return TEST_OK;
}

TEST(message_reaches_a_stream)
{
    rig r;
    if (rig_open(&r)) {
        r.fail = 1;
        sp_stream *s = NULL;
        if (CHECK_EQ(sp_stream_open(r.p, NULL, &s), SP_OK)) {
            CHECK_EQ(sp_stream_submit(s, r.in, RECORDS, r.out, 1), SP_OK);
            sp_stream_event ev;
            memset(&ev, 0, sizeof ev);
            CHECK_EQ(sp_stream_next(s, &ev, -1), SP_OK);
            CHECK_EQ(ev.status, SP_ERR_STAGE_FAILED);
            CHECK_HAS(sp_stream_last_error(s), "stage 'picky' chunk 3: record 1543");
            CHECK_EQ(sp_stream_close(s, NULL), SP_ERR_STAGE_FAILED);
        }
    }
    rig_close(&r);
    return TEST_OK;
}

TEST(outside_a_stage_only_returns)
{
    sp_chunk chunk;
    memset(&chunk, 0, sizeof chunk);
    CHECK_EQ(sp_chunk_fail(&chunk, SP_ERR_BACKEND, "nobody hears this"), SP_ERR_BACKEND);
    CHECK_EQ(sp_chunk_fail(&chunk, SP_OK, "%s", "not a failure"), SP_ERR_STAGE_FAILED);
    CHECK_EQ(sp_chunk_fail(NULL, SP_ERR_OUT_OF_MEMORY, "no chunk"), SP_ERR_OUT_OF_MEMORY);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(message_names_stage_and_chunk),
        TEST_ENTRY(first_failure_keeps_its_message),
        TEST_ENTRY(message_reaches_a_stream),
        TEST_ENTRY(outside_a_stage_only_returns),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
