/*
 * test_conformance host|cuda [test-name-filter]
 *
 * The same scenarios on every backend: sizes 0, 1, primes, chunk-1, chunk, chunk+1 and many
 * chunks; depths 1..8; 0..4 stages with differing record sizes; pageable, pinned and
 * registered memory; exact in-place runs; the serial baseline. Output is poisoned before each
 * run and every byte compared with the host reference. Then the same under the fault backend
 * with random queue delays, and with one queue at a time delayed heavily, so that a missing
 * RAW or WAR dependency on any slot buffer becomes a certain wrong answer.
 * Exits 77 when the backend is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "scenario.h"
#include "streampipe.h"
#include "streampipe_fault.h"

static sp_backend_kind g_kind;

/* ---- scenario lists: each maps an index to a scenario ------------------------------------ */

typedef void (*scenario_gen)(scenario *sc, size_t i);

static const size_t chunk_sizes[] = {5, 64, 1000};
#define SIZE_CASES 10

static size_t size_case(size_t k, size_t chunk)
{
    static const size_t fixed[] = {0, 1, 2, 7, 97, 1009};
    if (k < ARRAY_LEN(fixed))
        return fixed[k];
    if (k == 6)
        return chunk - 1;
    if (k == 7)
        return chunk;
    if (k == 8)
        return chunk + 1;
    return 37 * chunk + 13;
}

/* Every size with every chunk size; depth, stages, shape and memory rotate. */
static void gen_sizes(scenario *sc, size_t i)
{
    memset(sc, 0, sizeof *sc);
    sc->chunk = chunk_sizes[i / SIZE_CASES];
    sc->n = size_case(i % SIZE_CASES, sc->chunk);
    sc->depth = 1 + (unsigned)(i * 3 % 8);
    sc->n_stages = i % 5;
    scenario_shape(sc, (unsigned)(i % SHAPES));
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->out_kind = (mem_kind)(i / MEM_KINDS % MEM_KINDS);
}
#define N_SIZES (ARRAY_LEN(chunk_sizes) * SIZE_CASES)

/* Every depth 1..8 with every stage count 0..4, 20 chunks (a short last one). */
static void gen_depth_stages(scenario *sc, size_t i)
{
    memset(sc, 0, sizeof *sc);
    sc->depth = 1 + (unsigned)(i / 5);
    sc->n_stages = i % 5;
    sc->chunk = 5;
    sc->n = 97;
    scenario_shape(sc, (unsigned)(i % SHAPES));
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->out_kind = (mem_kind)((i + i / MEM_KINDS) % MEM_KINDS);
}
#define N_DEPTH_STAGES 40

/* Stages on 2 or 3 queues each (chunks of one stage run side by side and may finish out of
 * order) and copies cut into pieces of 1, 13 or 64 bytes, over depths, stage counts, record
 * shapes and memory kinds. */
static void gen_streams_pieces(scenario *sc, size_t i)
{
    static const size_t pieces[] = {0, 1, 13, 64};
    memset(sc, 0, sizeof *sc);
    sc->depth = 1 + (unsigned)(i % 5);
    sc->n_stages = 1 + i % 4;
    sc->streams = 2 + (unsigned)(i % 2);
    sc->copy_piece_bytes = pieces[i / 2 % 4];
    sc->chunk = 7;
    sc->n = i % 3 == 0 ? 6 : 7 * 9 + 4;
    scenario_shape(sc, (unsigned)(i % SHAPES));
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->out_kind = (mem_kind)((i + i / MEM_KINDS) % MEM_KINDS);
}
#define N_STREAMS_PIECES 40

/* Every pair of input and output memory kinds, with 1 and with 3 stages. */
static void gen_memory(scenario *sc, size_t i)
{
    memset(sc, 0, sizeof *sc);
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->out_kind = (mem_kind)(i / MEM_KINDS % MEM_KINDS);
    sc->n_stages = i < 9 ? 1 : 3;
    sc->n = 1009;
    sc->chunk = 64;
    sc->depth = 3;
    scenario_shape(sc, (unsigned)(i % SHAPES));
}
#define N_MEMORY 18

/* out == in on each kind of memory, 0..4 stages. */
static void gen_in_place(scenario *sc, size_t i)
{
    memset(sc, 0, sizeof *sc);
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->n_stages = i / MEM_KINDS;
    sc->n = 1009;
    sc->chunk = 64;
    sc->depth = 1 + (unsigned)(i % 4);
    scenario_shape_in_place(sc);
}
#define N_IN_PLACE 15

/* A pipelined run, then the serial baseline on the same pipeline. */
static void gen_serial(scenario *sc, size_t i)
{
    gen_sizes(sc, i * 7 % N_SIZES);
    sc->serial = 1;
}
#define N_SERIAL 8

/* Copies by kernel (copy_by_kernel): every pair of memory kinds (pinned and registered memory
 * is read and written by the kernel directly, pageable through the staging buffers); record
 * sizes of 1, 4 and 12 bytes so that chunks and pieces start at odd offsets (the CUDA kernel's
 * byte head and tail, and its bytewise path when host and device offsets differ mod 16); sizes
 * around the chunk; 0..4 stages; pieces; in place. The last two move megabytes per copy, past
 * what one pass of the kernel's grid covers. */
#define N_KERNEL_COPIES 36
static void gen_kernel_copies(scenario *sc, size_t i)
{
    static const size_t pieces[] = {0, 0, 13, 4096};
    memset(sc, 0, sizeof *sc);
    sc->copy_by_kernel = 1;
    sc->chunk = chunk_sizes[i % ARRAY_LEN(chunk_sizes)];
    sc->n = size_case(i / ARRAY_LEN(chunk_sizes) % SIZE_CASES, sc->chunk);
    sc->depth = 1 + (unsigned)(i * 5 % 6);
    sc->n_stages = i % 5;
    sc->copy_piece_bytes = pieces[i / MEM_KINDS % ARRAY_LEN(pieces)];
    sc->in_kind = (mem_kind)(i % MEM_KINDS);
    sc->out_kind = (mem_kind)(i / MEM_KINDS % MEM_KINDS);
    if (i >= N_KERNEL_COPIES - 2) { /* 2M+ records, the library's chunk: copies of MiBs */
        sc->n = ((size_t)1 << 21) + 13;
        sc->chunk = 0;
        sc->n_stages = 1;
        sc->copy_piece_bytes = 0;
    }
    if (i % 12 == 11)
        scenario_shape_in_place(sc);
    else
        scenario_shape(sc, (unsigned)(i % SHAPES));
}

/* The library chooses chunk size and depth; staging threads 0..4. */
static void gen_defaults(scenario *sc, size_t i)
{
    memset(sc, 0, sizeof *sc);
    sc->n = 200003;
    sc->n_stages = 1 + i % 2;
    scenario_shape(sc, 0);
    sc->staging_threads = (unsigned)i;
    sc->in_kind = MEM_PAGEABLE;
    sc->out_kind = i % 2 ? MEM_PINNED : MEM_PAGEABLE;
}
#define N_DEFAULTS 5

static void run_list(sp_context *ctx, const char *what, scenario_gen gen, size_t count,
                     test_rng *rng)
{
    size_t step = harness_quick() && count > 8 ? 3 : 1;
    for (size_t i = 0; i < count; i += step) {
        scenario sc;
        gen(&sc, i);
        scenario_describe(&sc, what);
        scenario_run(ctx, &sc, rng);
    }
    harness_context("%s", "");
}

/* ---- contexts ---------------------------------------------------------------------------- */

static sp_context *open_plain(void)
{
    sp_context *ctx = NULL;
    sp_status st = sp_context_create(g_kind, 0, &ctx);
    CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx));
    return ctx;
}

static sp_context *open_fault(const sp_fault_config *cfg)
{
    sp_context *ctx = NULL;
    sp_status st = sp_context_create_fault(g_kind, 0, cfg, &ctx);
    CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx));
    return ctx;
}

static unsigned long fault_delays(const sp_context *ctx)
{
    sp_fault_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_EQ(sp_fault_get_stats(ctx, &stats), SP_OK);
    return stats.delays;
}

/* ---- plain runs -------------------------------------------------------------------------- */

static int plain_list(const char *what, scenario_gen gen, size_t count, uint64_t salt)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    sp_context *ctx = open_plain();
    if (ctx == NULL)
        return TEST_FAIL;
    CHECK_EQ(sp_context_backend(ctx), g_kind);
    run_list(ctx, what, gen, count, &rng);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(sizes) { return plain_list("sizes", gen_sizes, N_SIZES, 1); }
TEST(depth_stages) { return plain_list("depth_stages", gen_depth_stages, N_DEPTH_STAGES, 2); }
TEST(memory_kinds) { return plain_list("memory", gen_memory, N_MEMORY, 3); }
TEST(in_place) { return plain_list("in_place", gen_in_place, N_IN_PLACE, 4); }
TEST(serial) { return plain_list("serial", gen_serial, N_SERIAL, 5); }
TEST(defaults) { return plain_list("defaults", gen_defaults, N_DEFAULTS, 6); }
TEST(streams_pieces)
{
    return plain_list("streams_pieces", gen_streams_pieces, N_STREAMS_PIECES, 8);
}
TEST(kernel_copies)
{
    return plain_list("kernel_copies", gen_kernel_copies, N_KERNEL_COPIES, 9);
}

/* With copy_by_kernel every host<->device copy of sp_pipeline_run goes through copy_kernel
 * (staged or not) and none through the engines' copy_h2d/copy_d2h; without it, none does. So
 * a copy_kernel that copies the wrong bytes cannot hide behind the engines in the tests above. */
/* One run of a fresh pipeline (1 stage, 300 records in chunks of 64) with every call of
 * backend operation `op` failing; its status must be `want`. */
static void run_failing_op(sp_context *ctx, const char *op, int by_kernel, mem_kind kind,
                           sp_status want, test_rng *rng)
{
    static const size_t outs[] = {12};
    const size_t n = 300;
    harness_context("failing every %s, copy_by_kernel %d, %s memory", op, by_kernel,
                    mem_kind_name(kind));
    mix_chain chain;
    mix_chain_init(&chain, 4, 1, outs, (uint32_t)rng_next(rng));
    sp_pipeline_config cfg = mix_chain_config(&chain, 64, 2);
    cfg.copy_by_kernel = by_kernel;
    sp_pipeline *p = NULL;
    test_buf in, out;
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)))
        return;
    if (CHECK_STATUS(buf_alloc(&in, ctx, kind, n * 4), SP_OK, sp_context_last_error(ctx))) {
        if (CHECK_STATUS(buf_alloc(&out, ctx, kind, n * 12), SP_OK,
                         sp_context_last_error(ctx))) {
            rng_fill(rng, in.data, in.bytes);
            sp_fault_config fail;
            memset(&fail, 0, sizeof fail);
            fail.fail_op = op;
            CHECK_EQ(sp_fault_set(ctx, &fail), SP_OK);
            sp_status st = sp_pipeline_run(p, in.data, n, out.data, NULL);
            CHECK_EQ(sp_fault_set(ctx, NULL), SP_OK);
            if (CHECK_STATUS(st, want, sp_pipeline_last_error(p)) && want != SP_OK)
                CHECK_HAS(sp_pipeline_last_error(p), "injected");
            buf_free(&out);
        }
        buf_free(&in);
    }
    sp_pipeline_destroy(p);
}

TEST(kernel_copies_replace_engines)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 10);
    sp_context *ctx = open_fault(NULL);
    if (ctx == NULL)
        return TEST_FAIL;
    for (int k = 0; k < MEM_KINDS; k++) {
        mem_kind kind = (mem_kind)k;
        run_failing_op(ctx, "copy_kernel", 1, kind, SP_ERR_BACKEND, &rng);
        run_failing_op(ctx, "copy_kernel", 0, kind, SP_OK, &rng);
        run_failing_op(ctx, "copy_h2d", 1, kind, SP_OK, &rng);
        run_failing_op(ctx, "copy_d2h", 1, kind, SP_OK, &rng);
        run_failing_op(ctx, "copy_h2d", 0, kind, SP_ERR_BACKEND, &rng);
    }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* One pipeline, runs of different lengths one after another (state must not leak between
 * runs: a short last chunk, then a longer run; an empty run in the middle). */
TEST(varying_lengths)
{
    static const size_t lengths[] = {1009, 0, 1, 192, 7, 2381, 63, 64, 65, 2};
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 7);
    sp_context *ctx = open_plain();
    if (ctx == NULL)
        return TEST_FAIL;
    for (size_t i = 0; i < 4; i++) {
        scenario sc;
        memset(&sc, 0, sizeof sc);
        sc.n = 2381;
        sc.chunk = 64;
        sc.depth = 1 + (unsigned)(i * 2);
        sc.n_stages = i + 1;
        scenario_shape(&sc, (unsigned)i);
        sc.in_kind = (mem_kind)(i % MEM_KINDS);
        sc.out_kind = (mem_kind)((i + 1) % MEM_KINDS);
        sc.runs = (int)ARRAY_LEN(lengths);
        sc.run_sizes = lengths;
        scenario_run(ctx, &sc, &rng);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- random delays ----------------------------------------------------------------------- */

static int fault_list(const char *what, scenario_gen gen, size_t count, uint64_t salt)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delay_us = 50;
    cfg.random_delay_us = 250;
    cfg.seed = (unsigned long)rng_next(&rng);
    sp_context *ctx = open_fault(&cfg);
    if (ctx == NULL)
        return TEST_FAIL;
    run_list(ctx, what, gen, count, &rng);
    CHECK_MSG(fault_delays(ctx) > 0, "the fault backend delayed nothing");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(delayed_sizes) { return fault_list("delayed sizes", gen_sizes, N_SIZES, 11); }
TEST(delayed_depth_stages)
{
    return fault_list("delayed depth_stages", gen_depth_stages, N_DEPTH_STAGES, 12);
}
TEST(delayed_memory_kinds) { return fault_list("delayed memory", gen_memory, N_MEMORY, 13); }
TEST(delayed_in_place) { return fault_list("delayed in_place", gen_in_place, N_IN_PLACE, 14); }
TEST(delayed_kernel_copies)
{
    return fault_list("delayed kernel_copies", gen_kernel_copies, N_KERNEL_COPIES, 16);
}
TEST(delayed_streams_pieces)
{
    return fault_list("delayed streams_pieces", gen_streams_pieces, N_STREAMS_PIECES, 15);
}

/* ---- one queue delayed heavily ----------------------------------------------------------- */

/* Long enough that an undelayed writer finishes K+1 chunks first, so a writer that does not
 * wait for the reader of chunk i-K (WAR) or a reader that does not wait for the writer (RAW)
 * certainly sees the wrong chunk's bytes. */
#define TARGET_DELAY_US 1000u

/* Memory kinds and whether a report is asked for. How far the host runs ahead differs: with
 * pinned output and no report it never waits for a chunk, so writers run furthest ahead of a
 * slow reader; with pageable input only, it waits for each h2d K chunks back (the WAR on the
 * input staging); with pageable output or a report, for each d2h K chunks back. */
typedef struct io_combo {
    mem_kind in, out;
    int report;
} io_combo;

static const io_combo combos[] = {
    {MEM_PINNED, MEM_PINNED, 0},   {MEM_PAGEABLE, MEM_PINNED, 0}, {MEM_PAGEABLE, MEM_PAGEABLE, 0},
    {MEM_PINNED, MEM_PAGEABLE, 1}, {MEM_PINNED, MEM_PINNED, 1},   {MEM_PAGEABLE, MEM_PINNED, 1},
};

/* The queues of a pipeline with n_stages stages; is_queue[t] = 0 for names that may not be
 * backend queues (host-side staging), which need not receive delays. */
static size_t delay_targets(const scenario *sc, const char **names, int *is_queue)
{
    size_t n_stages = sc->n_stages;
    size_t k = 0;
    names[k] = "h2d";
    is_queue[k++] = 1;
    for (size_t s = 0; s < n_stages; s++) {
        names[k] = mix_chain_name(s);
        is_queue[k++] = 1;
    }
    names[k] = "d2h";
    is_queue[k++] = 1;
    names[k] = "stage-in";
    is_queue[k++] = 0;
    names[k] = "stage-out";
    is_queue[k++] = 0;
    if (scenario_graph()) { /* the slot queues that replay graphs, when there are replays */
        names[k] = "graph";
        is_queue[k++] = scenario_graph_replays(sc);
    }
    return k;
}

/* 2K+3 chunks of 16 records, the last one short: every slot is reused at least twice. */
static void targeted_scenario(scenario *sc, size_t n_stages, unsigned depth, size_t combo,
                              int copy_by_kernel)
{
    memset(sc, 0, sizeof *sc);
    sc->copy_by_kernel = copy_by_kernel;
    sc->n_stages = n_stages;
    sc->depth = depth;
    sc->chunk = 16;
    sc->n = 16 * (2 * (size_t)depth + 3) - 3;
    sc->runs = 1;
    sc->no_report = !combos[combo].report;
    scenario_shape(sc, (unsigned)((n_stages + combo) % SHAPES));
    sc->in_kind = combos[combo].in;
    sc->out_kind = combos[combo].out;
}

static void run_targeted(sp_context *ctx, const scenario *sc, test_rng *rng)
{
    const char *names[CHAIN_MAX + 5];
    int is_queue[CHAIN_MAX + 5];
    size_t count = delay_targets(sc, names, is_queue);
    for (size_t t = 0; t < count; t++) {
        sp_fault_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.delay_us = TARGET_DELAY_US;
        cfg.delay_queue = names[t];
        CHECK_EQ(sp_fault_set(ctx, &cfg), SP_OK);
        unsigned long before = fault_delays(ctx);
        char prefix[48];
        snprintf(prefix, sizeof prefix, "delayed queue %s:", names[t]);
        scenario_describe(sc, prefix);
        scenario_run(ctx, sc, rng);
        if (is_queue[t])
            CHECK_MSG(fault_delays(ctx) > before, "no delay reached queue \"%s\"", names[t]);
    }
    harness_context("%s", "");
}

static int one_queue_delayed(size_t n_stages, int copy_by_kernel)
{
    static const unsigned depths[] = {1, 2, 3, 6}, quick_depths[] = {1, 3};
    const unsigned *d = harness_quick() ? quick_depths : depths;
    size_t n_depths = harness_quick() ? ARRAY_LEN(quick_depths) : ARRAY_LEN(depths);
    test_rng rng;
    rng_init(&rng, harness_seed() ^ (20 + n_stages + 10 * (size_t)copy_by_kernel));
    sp_context *ctx = open_fault(NULL);
    if (ctx == NULL)
        return TEST_FAIL;
    for (size_t i = 0; i < n_depths; i++)
        for (size_t combo = 0; combo < ARRAY_LEN(combos); combo++) {
            scenario sc;
            targeted_scenario(&sc, n_stages, d[i], combo, copy_by_kernel);
            run_targeted(ctx, &sc, &rng);
        }
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(one_queue_delayed_0_stages) { return one_queue_delayed(0, 0); }
TEST(one_queue_delayed_1_stage) { return one_queue_delayed(1, 0); }
TEST(one_queue_delayed_2_stages) { return one_queue_delayed(2, 0); }
TEST(one_queue_delayed_3_stages) { return one_queue_delayed(3, 0); }
TEST(one_queue_delayed_4_stages) { return one_queue_delayed(4, 0); }
/* The kernel copies run on the h2d and d2h queues: the same dependencies must hold. */
TEST(one_queue_delayed_kernel_copies_0_stages) { return one_queue_delayed(0, 1); }
TEST(one_queue_delayed_kernel_copies_2_stages) { return one_queue_delayed(2, 1); }

/* ---- main -------------------------------------------------------------------------------- */

static const test_case tests[] = {
    TEST_ENTRY(sizes),
    TEST_ENTRY(depth_stages),
    TEST_ENTRY(memory_kinds),
    TEST_ENTRY(in_place),
    TEST_ENTRY(serial),
    TEST_ENTRY(defaults),
    TEST_ENTRY(varying_lengths),
    TEST_ENTRY(streams_pieces),
    TEST_ENTRY(kernel_copies),
    TEST_ENTRY(kernel_copies_replace_engines),
    TEST_ENTRY(delayed_sizes),
    TEST_ENTRY(delayed_depth_stages),
    TEST_ENTRY(delayed_memory_kinds),
    TEST_ENTRY(delayed_streams_pieces),
    TEST_ENTRY(delayed_in_place),
    TEST_ENTRY(delayed_kernel_copies),
    TEST_ENTRY(one_queue_delayed_0_stages),
    TEST_ENTRY(one_queue_delayed_1_stage),
    TEST_ENTRY(one_queue_delayed_2_stages),
    TEST_ENTRY(one_queue_delayed_3_stages),
    TEST_ENTRY(one_queue_delayed_4_stages),
    TEST_ENTRY(one_queue_delayed_kernel_copies_0_stages),
    TEST_ENTRY(one_queue_delayed_kernel_copies_2_stages),
};

/* SP_TEST_GRAPH=1 runs every scenario in graph mode. */
int main(int argc, char **argv)
{
    const char *graph = getenv("SP_TEST_GRAPH");
    scenario_set_graph(graph != NULL && strcmp(graph, "1") == 0);
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
