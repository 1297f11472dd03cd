/*
 * test_streams host|cuda [filter]: a stage on several queues really uses them, and a failed run
 * drains every one of them before it returns. (Correctness of the bytes with several queues is
 * the conformance suite's streams_pieces.)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

enum { RECORDS = 64, CHUNK = 4, CHUNKS = RECORDS / CHUNK };

/* Which queue ran each chunk: its stream on CUDA, its worker thread on HOST. */
typedef struct queue_log {
    void *stream[CHUNKS];
    pthread_t thread[CHUNKS];
} queue_log;

static sp_status note_queue(const sp_chunk *c, void *user)
{
    queue_log *log = user;
    log->stream[c->index] = c->stream;
    log->thread[c->index] = pthread_self();
    return SP_OK;
}

static int same_queue(const queue_log *log, size_t a, size_t b)
{
    if (g_kind == SP_BACKEND_CUDA)
        return log->stream[a] == log->stream[b];
    return pthread_equal(log->thread[a], log->thread[b]);
}

/* Round robin over 3 queues: chunks 3 apart share one, neighbours never do. */
TEST(chunks_take_turns_on_the_queues)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(g_kind, 0, &ctx), SP_OK))
        return TEST_FAIL;
    static queue_log log;
    memset(&log, 0, sizeof log);
    sp_stage stage = {.name = "noter", .out_record_bytes = 4, .host = note_queue,
                      .cuda = note_queue, .user = &log, .streams = 3};
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1,
                              .chunk_records = CHUNK, .depth = 4};
    sp_pipeline *p = NULL;
    static float in[RECORDS], out[RECORDS];
    if (CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK) &&
        CHECK_EQ(sp_pipeline_run(p, in, RECORDS, out, NULL), SP_OK)) {
        for (size_t i = 0; i + 1 < CHUNKS; i++)
            CHECK_MSG(!same_queue(&log, i, i + 1), "chunks %zu and %zu on one queue", i, i + 1);
        for (size_t i = 0; i + 3 < CHUNKS; i++)
            CHECK_MSG(same_queue(&log, i, i + 3), "chunks %zu and %zu on two queues", i, i + 3);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* HOST: a run that fails at any backend call returns only when nothing of it is left on any
 * queue. Stage 'slow' has two queues, each delayed 4 ms before every operation, so work left
 * behind on the second queue would still be waiting when the next run starts, and would then
 * run as a stray extra call of 'slow' inside that run (a stage call of a failed run is
 * skipped only while that run's failure stands). Depth 2 makes the host wait for chunk 0's
 * d2h before it enqueues chunk 2, so chunk 1's 30 ms on the second queue is under way when a
 * later chunk's enqueue fails, and chunk 3's work sits behind it. */
static atomic_int slow_calls;

/* 'slow' also holds its second queue for 30 ms at chunk 1, so that a failure at chunk 3 finds
 * chunk 3's work still queued behind it there. */
static sp_status counted_copy(const sp_chunk *c, void *user)
{
    memcpy(c->out, c->in, c->records * 4);
    if (user == NULL)
        return SP_OK;
    if (c->index == 1) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add((atomic_int *)user, 1);
    return SP_OK;
}

/* One run that fails at backend call k, then a clean run of the same pipeline, which must call
 * 'slow' exactly once per chunk. Returns 0 when the first run made fewer than k calls. */
static int fail_at(sp_context *ctx, unsigned long k)
{
    enum { N = 4 * CHUNK };
    sp_stage stages[2] = {
        {.name = "slow", .out_record_bytes = 4, .host = counted_copy, .user = &slow_calls,
         .streams = 2},
        {.name = "after", .out_record_bytes = 4, .host = counted_copy},
    };
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = stages, .n_stages = 2,
                              .chunk_records = CHUNK, .depth = 2}; /* the host waits */
    sp_pipeline *p = NULL;
    if (!CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK))
        return 0;
    sp_fault_config fault = {.fail_call = k, .delay_us = 4000, .delay_queue = "slow"};
    sp_fault_set(ctx, &fault);
    static float in[N], out[N];
    sp_status st = sp_pipeline_run(p, in, N, out, NULL);
    sp_fault_stats stats;
    sp_fault_get_stats(ctx, &stats);
    sp_fault_config none = {0};
    sp_fault_set(ctx, &none);
    atomic_store(&slow_calls, 0);
    CHECK_EQ(sp_pipeline_run(p, in, N, out, NULL), SP_OK);
    CHECK_MSG(atomic_load(&slow_calls) == N / CHUNK,
              "after a run failed at call %lu (%s), the next run made %d calls of 'slow' for "
              "%d chunks: work of the failed run was left on a queue", k, sp_status_name(st),
              atomic_load(&slow_calls), N / CHUNK);
    sp_pipeline_destroy(p);
    return stats.calls >= k;
}

TEST(failed_run_drains_every_queue)
{
    if (g_kind != SP_BACKEND_HOST) {
        harness_skip_reason("host stage functions only: a CUDA stage returns before its work");
        return TEST_SKIP;
    }
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create_fault(g_kind, 0, NULL, &ctx), SP_OK))
        return TEST_FAIL;
    for (unsigned long k = 1; k < 200 && fail_at(ctx, k); k++)
        continue;
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(chunks_take_turns_on_the_queues),
        TEST_ENTRY(failed_run_drains_every_queue),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
