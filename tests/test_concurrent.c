/*
 * test_concurrent [filter] (HOST): two pipelines of one context run from two threads at once,
 * many times, every output byte checked; the same under random queue delays; a pipeline whose
 * stage fails on every other run beside one that must never notice; pipelines created and
 * destroyed concurrently. Meant to run under ThreadSanitizer too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "scenario.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"

#define THREADS 2
#define MAX_RUNS 64
#define CAPACITY 3000 /* records per buffer; each run moves a random number up to this */

typedef struct worker {
    sp_context *ctx;
    unsigned id;
    unsigned round;
    uint64_t seed;
    pthread_t thread;
} worker;

static size_t runs_per_thread(void) { return harness_quick() ? 12 : MAX_RUNS; }

/* Thread w->id of round w->round: its own shape, depth, chunk and memory kinds. */
static void *verified_runs(void *arg)
{
    worker *w = arg;
    test_rng rng;
    rng_init(&rng, w->seed);
    size_t sizes[MAX_RUNS];
    for (size_t r = 0; r < MAX_RUNS; r++)
        sizes[r] = r % 8 == 0 ? 0 : rng_below(&rng, CAPACITY + 1);
    unsigned k = w->id + THREADS * w->round;
    scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.n = CAPACITY;
    sc.chunk = 16 + 37 * (size_t)k;
    sc.depth = 1 + k % 5;
    sc.n_stages = 1 + k % CHAIN_MAX;
    scenario_shape(&sc, k);
    sc.in_kind = (mem_kind)(k % MEM_KINDS);
    sc.out_kind = (mem_kind)((k / MEM_KINDS + 1) % MEM_KINDS);
    sc.runs = (int)runs_per_thread();
    sc.run_sizes = sizes;
    scenario_run(w->ctx, &sc, &rng);
    return NULL;
}

static void run_threads(sp_context *ctx, void *(*fn)(void *), unsigned round, uint64_t salt)
{
    worker w[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        w[t] = (worker){ctx, t, round, harness_seed() ^ salt ^ ((uint64_t)t << 40), 0};
        if (!CHECK(pthread_create(&w[t].thread, NULL, fn, &w[t]) == 0))
            w[t].ctx = NULL;
    }
    for (unsigned t = 0; t < THREADS; t++)
        if (w[t].ctx != NULL)
            pthread_join(w[t].thread, NULL);
}

TEST(two_pipelines_one_context)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    for (unsigned round = 0; round < 4; round++)
        run_threads(ctx, verified_runs, round, 1);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* Two rounds of verified_runs on a context with random delays on every queue; graph mode
 * (scenario_set_graph) while they run when `graph` is set. */
static int runs_under_delays(int graph, uint64_t salt)
{
    sp_fault_config cfg = {.delay_us = 10, .random_delay_us = 100};
    cfg.seed = (unsigned long)(harness_seed() + salt);
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, &cfg, &ctx), SP_OK))
        return TEST_FAIL;
    scenario_set_graph(graph);
    for (unsigned round = 0; round < 2; round++)
        run_threads(ctx, verified_runs, round, salt);
    scenario_set_graph(0);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(two_pipelines_under_delays) { return runs_under_delays(0, 2); }

/* The same in graph mode: each thread's pipeline replays its own graphs on its own slot
 * queues while the other's do too. */
TEST(two_graph_pipelines_under_delays) { return runs_under_delays(1, 5); }

/* ---- a failing neighbour ----------------------------------------------------------------- */

#define ISOLATION_RECORDS 333

/* Thread 0: stage "bravo" fails at chunk 2 on every other run. Thread 1: never fails. Each
 * sees only its own pipeline's outcome and text. */
static void *isolated_runs(void *arg)
{
    worker *w = arg;
    static const size_t outs[] = {12, 3};
    test_rng rng;
    rng_init(&rng, w->seed);
    mix_chain chain;
    mix_chain_init(&chain, 4, 2, outs, (uint32_t)rng_next(&rng));
    sp_pipeline_config cfg = mix_chain_config(&chain, 32, 2 + w->id);
    sp_pipeline *p = NULL;
    harness_context("thread %u of the isolation test", w->id);
    if (!CHECK_STATUS(sp_pipeline_create(w->ctx, &cfg, &p), SP_OK, sp_context_last_error(w->ctx)))
        return NULL;
    unsigned char in[ISOLATION_RECORDS * 4], out[ISOLATION_RECORDS * 3];
    for (size_t r = 0; r < runs_per_thread(); r++) {
        int fail = w->id == 0 && r % 2 == 0;
        atomic_store(&chain.stages[1].fail_chunk, fail ? 2 : -1);
        if (!fail) {
            check_pipeline_run(p, chain.stages, 2, 4, ISOLATION_RECORDS, &rng);
            continue;
        }
        rng_fill(&rng, in, sizeof in);
        sp_status st = sp_pipeline_run(p, in, ISOLATION_RECORDS, out, NULL);
        CHECK_STATUS(st, SP_ERR_STAGE_FAILED, sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "bravo");
    }
    sp_pipeline_destroy(p);
    return NULL;
}

TEST(failing_pipeline_beside_a_clean_one)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    run_threads(ctx, isolated_runs, 0, 3);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- pipelines and pinned memory made and freed concurrently ----------------------------- */

static void *create_run_destroy(void *arg)
{
    worker *w = arg;
    test_rng rng;
    rng_init(&rng, w->seed);
    size_t rounds = runs_per_thread() / 2;
    for (size_t i = 0; i < rounds; i++) {
        scenario sc;
        memset(&sc, 0, sizeof sc);
        sc.n = 1 + rng_below(&rng, 400);
        sc.chunk = 1 + rng_below(&rng, 64);
        sc.depth = 1 + (unsigned)rng_below(&rng, 8);
        sc.n_stages = rng_below(&rng, CHAIN_MAX + 1);
        scenario_shape(&sc, (unsigned)rng_below(&rng, SHAPES));
        sc.in_kind = (mem_kind)rng_below(&rng, MEM_KINDS);
        sc.out_kind = (mem_kind)rng_below(&rng, MEM_KINDS);
        sc.runs = 1;
        scenario_describe(&sc, w->id == 0 ? "thread 0" : "thread 1");
        scenario_run(w->ctx, &sc, &rng);
    }
    return NULL;
}

TEST(create_run_destroy_concurrently)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    run_threads(ctx, create_run_destroy, 0, 4);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(two_pipelines_one_context),
        TEST_ENTRY(two_pipelines_under_delays),
        TEST_ENTRY(two_graph_pipelines_under_delays),
        TEST_ENTRY(failing_pipeline_beside_a_clean_one),
        TEST_ENTRY(create_run_destroy_concurrently),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
