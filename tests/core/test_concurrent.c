/*
 * test_concurrent [filter] (HOST): two pipelines of one context run from two threads at once,
 * many times, every output byte checked; the same under random queue delays; a pipeline whose
 * stage fails on every other run beside one that must never notice; pipelines created and
 * destroyed concurrently. Meant to run under ThreadSanitizer too.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- the context's handle given up while its pipelines run -------------------------------- */

typedef struct orphan {
    sp_pipeline *p;
    mix_chain chain;
    uint64_t seed;
    atomic_int *started;
    atomic_int *handle_gone;
    pthread_t thread;
} orphan;

/* Runs its pipeline, verified, while the main thread destroys the context's handle; destroys
 * the pipeline once the handle is gone, so that one of these threads closes the context. */
static void *run_past_the_handle(void *arg)
{
    orphan *o = arg;
    test_rng rng;
    rng_init(&rng, o->seed);
    harness_context("a pipeline run while its context's handle is destroyed");
    atomic_fetch_add(o->started, 1);
    for (size_t run = 0; run < runs_per_thread(); run++)
        check_pipeline_run(o->p, o->chain.stages, 2, 4, ISOLATION_RECORDS, &rng);
    while (!atomic_load(o->handle_gone))
        sched_yield();
    sp_pipeline_destroy(o->p);
    return NULL;
}

/* sp_context_destroy while two threads run pipelines of the context: they go on running
 * correctly, and the last of their destroys, on either thread, closes the context (found in
 * issue 16: a pipeline destroyed after its context read freed memory). */
TEST(a_context_destroyed_while_its_pipelines_run)
{
    static const size_t outs[] = {12, 3};
    sp_fault_config shaken = {.random_delay_us = 50, .seed = harness_seed() + 9};
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, &shaken, &ctx), SP_OK))
        return TEST_FAIL;
    atomic_int started, handle_gone;
    atomic_init(&started, 0);
    atomic_init(&handle_gone, 0);
    orphan o[THREADS];
    memset(o, 0, sizeof o);
    unsigned made = 0;
    for (unsigned t = 0; t < THREADS; t++) {
        mix_chain_init(&o[t].chain, 4, 2, outs, (uint32_t)(harness_seed() + t));
        sp_pipeline_config cfg = mix_chain_config(&o[t].chain, 32, 2 + t);
        if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &o[t].p), SP_OK,
                          sp_context_last_error(ctx)))
            break;
        o[t].seed = harness_seed() ^ ((uint64_t)t << 40);
        o[t].started = &started;
        o[t].handle_gone = &handle_gone;
        if (!CHECK(pthread_create(&o[t].thread, NULL, run_past_the_handle, &o[t]) == 0)) {
            sp_pipeline_destroy(o[t].p);
            break;
        }
        made++;
    }
    while (atomic_load(&started) < (int)made)
        sched_yield();
    sp_context_destroy(ctx); /* while the runs go on */
    atomic_store(&handle_gone, 1);
    for (unsigned t = 0; t < made; t++)
        pthread_join(o[t].thread, NULL);
    return TEST_OK;
}

/* ---- one pipeline from two threads: refused, not shared ----------------------------------- */

#define SHARED_CHUNK 32
#define SHARED_RECORDS (SHARED_CHUNK * 20)
#define SHARED_DEPTH 2

/* A pipeline of two mix stages (4 -> 12 -> 3 bytes) on a HOST fault context with `faults`;
 * position-free stages when `graph`, so that graph mode can replay them. */
typedef struct shared_rig {
    sp_context *ctx;
    mix_chain chain;
    sp_pipeline *p;
    int graph;
} shared_rig;

static int shared_open(shared_rig *r, const sp_fault_config *faults, int graph, uint64_t seed)
{
    static const size_t outs[] = {12, 3};
    memset(r, 0, sizeof *r);
    r->graph = graph;
    if (!CHECK_STATUS(sp_context_create_fault(SP_BACKEND_HOST, 0, faults, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    mix_chain_init(&r->chain, 4, 2, outs, (uint32_t)seed);
    if (graph)
        mix_chain_position_free(&r->chain);
    sp_pipeline_config cfg = mix_chain_config(&r->chain, SHARED_CHUNK, SHARED_DEPTH);
    cfg.graph = graph ? SP_GRAPH_ON : SP_GRAPH_OFF;
    return CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                        sp_context_last_error(r->ctx));
}

static void shared_close(shared_rig *r)
{
    sp_pipeline_destroy(r->p);
    if (r->ctx != NULL) {
        sp_fault_stats stats;
        CHECK_EQ(sp_fault_get_stats(r->ctx, &stats), SP_OK);
        CHECK_EQ(stats.live_objects, 0); /* nothing of a refused call was left behind */
    }
    sp_context_destroy(r->ctx);
}

/* One caller's buffers: random input, poisoned output and the reference. */
typedef struct shared_io {
    unsigned char in[SHARED_RECORDS * 4], out[SHARED_RECORDS * 3], want[SHARED_RECORDS * 3];
} shared_io;

static void shared_io_fill(const shared_rig *r, shared_io *io, test_rng *rng)
{
    rng_fill(rng, io->in, sizeof io->in);
    memset(io->out, 0xA5, sizeof io->out);
    mix_reference_run(r->chain.stages, 2, 4, io->in, SHARED_RECORDS,
                      r->graph ? SHARED_CHUNK : 0, io->want);
}

/* Whether the output is still all poison: a refused call must not have written it. */
static int untouched(const shared_io *io)
{
    for (size_t k = 0; k < sizeof io->out; k++)
        if (io->out[k] != 0xA5)
            return 0;
    return 1;
}

typedef struct background_run {
    shared_rig *rig;
    shared_io *io;
    sp_status status;
    atomic_int done;
    pthread_t thread;
} background_run;

static void *run_in_background(void *arg)
{
    background_run *b = arg;
    b->status = sp_pipeline_run(b->rig->p, b->io->in, SHARED_RECORDS, b->io->out, NULL);
    atomic_store(&b->done, 1);
    return NULL;
}

/* Waits (up to 10 s) until the background run has called its first stage. */
static int wait_until_started(const shared_rig *r, const background_run *b)
{
    struct timespec pause = {0, 100000L};
    for (int k = 0; k < 100000; k++) {
        if (atomic_load(&r->chain.stages[0].calls) > 0 || atomic_load(&b->done))
            return CHECK_MSG(!atomic_load(&b->done), "the run ended before it could be raced");
        nanosleep(&pause, NULL);
    }
    return CHECK_MSG(0, "the run never started");
}

/* While a run is under way on another thread (stage alpha slowed down to 2 ms an operation:
 * 20 chunks take 160 ms), a second sp_pipeline_run and a sp_pipeline_run_serial of the same
 * pipeline fail at once with SP_ERR_INVALID_ARGUMENT, say why in the context's text, and
 * touch neither their output nor the pipeline's text; a destroy then does nothing. The run
 * under way is right, and the pipeline is destroyed after it. Found in issue 16: both runs
 * returned SP_OK, the outputs wrong in 199 of 200 runs. */
TEST(a_second_call_while_a_run_is_under_way_is_refused)
{
    static shared_io first, second;
    sp_fault_config slow = {.delay_us = 2000, .delay_queue = "alpha"};
    shared_rig r;
    test_rng rng;
    rng_init(&rng, harness_seed() + 6);
    if (!shared_open(&r, &slow, 0, rng_next(&rng))) {
        shared_close(&r);
        return TEST_FAIL;
    }
    shared_io_fill(&r, &first, &rng);
    shared_io_fill(&r, &second, &rng);
    background_run b;
    memset(&b, 0, sizeof b);
    b.rig = &r;
    b.io = &first;
    atomic_init(&b.done, 0);
    if (!CHECK(pthread_create(&b.thread, NULL, run_in_background, &b) == 0)) {
        shared_close(&r);
        return TEST_FAIL;
    }
    if (wait_until_started(&r, &b)) {
        CHECK_STATUS(sp_pipeline_run(r.p, second.in, SHARED_RECORDS, second.out, NULL),
                     SP_ERR_INVALID_ARGUMENT, sp_context_last_error(r.ctx));
        CHECK_HAS(sp_context_last_error(r.ctx), "sp_pipeline_run: the pipeline is already "
                                                "running on another thread");
        CHECK_STATUS(sp_pipeline_run_serial(r.p, second.in, SHARED_RECORDS, second.out, NULL),
                     SP_ERR_INVALID_ARGUMENT, sp_context_last_error(r.ctx));
        CHECK_HAS(sp_context_last_error(r.ctx), "sp_pipeline_run_serial");
        sp_pipeline_destroy(r.p);
        CHECK_HAS(sp_context_last_error(r.ctx), "sp_pipeline_destroy: the pipeline is already "
                                                "running on another thread");
        CHECK_MSG(!atomic_load(&b.done), "the run ended while it was being raced: slow it down");
        CHECK_MSG(untouched(&second), "a refused call wrote its output");
        CHECK_MSG(sp_pipeline_last_error(r.p)[0] == '\0', "a refused call wrote the "
                  "pipeline's error text: \"%s\"", sp_pipeline_last_error(r.p));
    }
    pthread_join(b.thread, NULL);
    if (CHECK_STATUS(b.status, SP_OK, sp_pipeline_last_error(r.p)))
        compare_records(first.want, first.out, SHARED_RECORDS, 3, "the run under way");
    CHECK_EQ(sp_fault_set(r.ctx, NULL), SP_OK);
    CHECK_EQ(check_pipeline_run(r.p, r.chain.stages, 2, 4, SHARED_RECORDS, &rng), SP_OK);
    shared_close(&r);
    return TEST_OK;
}

typedef struct racer {
    shared_rig *rig;
    unsigned id;
    uint64_t seed;
    atomic_int *go; /* both threads start together */
    atomic_ulong *refused;
    pthread_t thread;
    int started;
} racer;

/* One call of run `run` on the shared pipeline (thread 1: every other run serial). */
static sp_status race_call(const racer *w, size_t run, shared_io *io)
{
    sp_pipeline *p = w->rig->p;
    if (w->id == 1 && run % 2 == 1)
        return sp_pipeline_run_serial(p, io->in, SHARED_RECORDS, io->out, NULL);
    return sp_pipeline_run(p, io->in, SHARED_RECORDS, io->out, NULL);
}

/* Runs one shared pipeline again and again: each call either succeeds with the right output
 * or is refused without writing it, and a refused run is tried again a while later (so that
 * both threads get runs through, not one all refusals). */
static void *race_runs(void *arg)
{
    racer *w = arg;
    test_rng rng;
    rng_init(&rng, w->seed);
    shared_io *io = malloc(sizeof *io);
    harness_context("thread %u racing for one pipeline%s", w->id,
                    w->rig->graph ? " (graph)" : "");
    while (!atomic_load(w->go))
        sched_yield();
    int broken = io == NULL;
    for (size_t run = 0; !broken && run < runs_per_thread(); run++) {
        shared_io_fill(w->rig, io, &rng);
        sp_status st = race_call(w, run, io);
        for (int tries = 1; st == SP_ERR_INVALID_ARGUMENT && tries < 10000; tries++) {
            atomic_fetch_add(w->refused, 1ul);
            broken = !CHECK_MSG(untouched(io), "run %zu was refused but wrote its output", run);
            struct timespec pause = {0, (long)rng_below(&rng, 3000000)};
            nanosleep(&pause, NULL);
            st = race_call(w, run, io);
        }
        if (!broken)
            broken = !CHECK_STATUS(st, SP_OK, "(the pipeline's text is the other thread's)") ||
                     compare_records(io->want, io->out, SHARED_RECORDS, 3, "output") != 0;
    }
    free(io);
    return NULL;
}

/* Two threads run one pipeline at once, with random delays so that runs overlap: every run
 * is right or refused, and some are refused. In graph mode too, where sharing also mixed up
 * the two runs' captures (found in issue 16). */
static int race_for_one_pipeline(int graph, uint64_t salt)
{
    sp_fault_config shaken = {.random_delay_us = 100, .seed = harness_seed() + salt};
    shared_rig r;
    if (!shared_open(&r, &shaken, graph, harness_seed() + salt)) {
        shared_close(&r);
        return TEST_FAIL;
    }
    atomic_int go;
    atomic_init(&go, 0);
    atomic_ulong refused;
    atomic_init(&refused, 0ul);
    racer w[THREADS];
    memset(w, 0, sizeof w);
    for (unsigned t = 0; t < THREADS; t++) {
        w[t].rig = &r;
        w[t].id = t;
        w[t].seed = harness_seed() ^ salt ^ ((uint64_t)t << 40);
        w[t].go = &go;
        w[t].refused = &refused;
        w[t].started = CHECK(pthread_create(&w[t].thread, NULL, race_runs, &w[t]) == 0);
    }
    atomic_store(&go, 1);
    for (unsigned t = 0; t < THREADS; t++)
        if (w[t].started)
            pthread_join(w[t].thread, NULL);
    CHECK_MSG(atomic_load(&refused) > 0, "no call was refused: the runs never overlapped");
    printf("  %zu runs, %lu calls refused\n", THREADS * runs_per_thread(),
           atomic_load(&refused));
    test_rng rng;
    rng_init(&rng, harness_seed() + salt);
    CHECK_EQ(sp_fault_set(r.ctx, NULL), SP_OK);
    shared_io *io = malloc(sizeof *io);
    if (CHECK(io != NULL)) { /* the pipeline is fine after */
        shared_io_fill(&r, io, &rng);
        if (CHECK_STATUS(sp_pipeline_run(r.p, io->in, SHARED_RECORDS, io->out, NULL), SP_OK,
                         sp_pipeline_last_error(r.p)))
            compare_records(io->want, io->out, SHARED_RECORDS, 3, "output after the race");
    }
    free(io);
    shared_close(&r);
    return TEST_OK;
}

TEST(one_pipeline_raced_for_by_two_threads) { return race_for_one_pipeline(0, 7); }
TEST(one_graph_pipeline_raced_for_by_two_threads) { return race_for_one_pipeline(1, 8); }

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(two_pipelines_one_context),
        TEST_ENTRY(two_pipelines_under_delays),
        TEST_ENTRY(two_graph_pipelines_under_delays),
        TEST_ENTRY(failing_pipeline_beside_a_clean_one),
        TEST_ENTRY(create_run_destroy_concurrently),
        TEST_ENTRY(a_context_destroyed_while_its_pipelines_run),
        TEST_ENTRY(a_second_call_while_a_run_is_under_way_is_refused),
        TEST_ENTRY(one_pipeline_raced_for_by_two_threads),
        TEST_ENTRY(one_graph_pipeline_raced_for_by_two_threads),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
