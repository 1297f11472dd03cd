/*
 * test_stream host|cuda [filter]: streams of batches (sp_stream_*) checked record by record.
 *
 * Random scenarios: chunks of 5, 16 and 64 records; depths 1..8; 0..3 mix stages with
 * differing record sizes (or sizes that end where they start, so that batches can be in
 * place), on one or two queues each; max_in_flight 1..8, blocking or nonblocking submits,
 * INPUT_RELEASED asked for or not; batches of 0, 1, 2, 7, 13, 97, chunk-1, chunk, chunk+1 and
 * many chunks' records in pageable, pinned or registered memory chosen per batch, some in
 * place (stream_rig.h says what is checked of each). Then the same on a fault context with
 * random delays on every queue, and with one queue at a time delayed by 1 ms an operation
 * over batches that reuse every slot at least twice, so that a dependency missing between
 * two batches (or within one) becomes a certain wrong record. A batch after a delayed one
 * starts before that one's DONE (the ring does not drain between batches). Graph mode on a
 * stream replays full chunks and gives the right output. Stage scratch (scratch_bytes) is
 * private to each chunk in flight, in runs and streams, with several queues and in graph
 * mode. Exits 77 when the backend is absent.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contexts.h"
#include "harness.h"
#include "stages.h"
#include "stream_rig.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

/* ---- contexts ------------------------------------------------------------------------------ */

static sp_context *open_plain(void) { return rig_open_plain(g_kind); }
static sp_context *open_delayed(uint64_t seed) { return rig_open_delayed(g_kind, seed); }

static sp_fault_stats fault_stats(const sp_context *ctx)
{
    sp_fault_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_EQ(sp_fault_get_stats(ctx, &stats), SP_OK);
    return stats;
}

static void delay_one_queue(sp_context *ctx, const char *queue, unsigned us)
{
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delay_us = us;
    cfg.delay_queue = queue;
    CHECK_EQ(sp_fault_set(ctx, &cfg), SP_OK);
}

static stream_rig *rig_new(void)
{
    stream_rig *r = calloc(1, sizeof *r);
    CHECK(r != NULL);
    return r;
}

/* ---- random scenarios ----------------------------------------------------------------------- */

/* Record sizes: in_rec and each stage's output; in-place shapes come back to in_rec. */
static void random_chain(mix_chain *chain, size_t n_stages, int in_place_shape, test_rng *rng)
{
    static const size_t in_recs[] = {1, 4, 12};
    static const size_t outs[] = {1, 3, 4, 7, 12, 16, 64};
    static const size_t in_place_out[CHAIN_MAX][CHAIN_MAX] = {
        {8, 0, 0, 0}, {12, 8, 0, 0}, {3, 64, 8, 0}, {12, 3, 5, 8}};
    size_t out_recs[CHAIN_MAX] = {0};
    size_t in_rec = 8;
    if (in_place_shape && n_stages > 0) {
        memcpy(out_recs, in_place_out[n_stages - 1], sizeof out_recs);
    } else if (!in_place_shape) {
        in_rec = in_recs[rng_below(rng, ARRAY_LEN(in_recs))];
        for (size_t s = 0; s < CHAIN_MAX; s++)
            out_recs[s] = outs[rng_below(rng, ARRAY_LEN(outs))];
    }
    mix_chain_init(chain, in_rec, n_stages, out_recs, (uint32_t)rng_next(rng));
}

static void random_rig(stream_rig *r, test_rng *rng, size_t max_stages)
{
    static const size_t chunks[] = {5, 16, 64};
    r->chunk = chunks[rng_below(rng, ARRAY_LEN(chunks))];
    r->depth = 1 + (unsigned)rng_below(rng, 8);
    random_chain(&r->chain, rng_below(rng, max_stages + 1), (int)rng_below(rng, 2), rng);
    r->stage_streams = rng_below(rng, 4) == 0 ? 2 : 1;
    r->cfg.max_in_flight = 1 + (unsigned)rng_below(rng, 8);
    r->cfg.nonblocking = (int)rng_below(rng, 2);
    r->cfg.input_released_events = (int)rng_below(rng, 2);
    rig_plan_random(r, 4 + rng_below(rng, 9), rng);
}

/* Opens, runs every planned batch, closes. */
static void run_rig(stream_rig *r, sp_context *ctx, uint64_t seed)
{
    if (!rig_open(r, ctx, seed))
        return;
    rig_run(r, 0, r->n_batches);
    rig_close(r);
}

static int random_scenarios(sp_context *ctx, const char *what, size_t count, uint64_t salt)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    if (!ctx)
        return TEST_FAIL;
    for (size_t i = 0; i < count; i++) {
        stream_rig *r = rig_new();
        if (!r)
            break;
        random_rig(r, &rng, 3);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s %zu:", what, i);
        rig_describe(r, prefix);
        run_rig(r, ctx, rng_next(&rng));
        free(r);
        if (harness_failures() > 0)
            break; /* the first failing scenario says enough (and its line is printed) */
    }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(random_streams)
{
    return random_scenarios(open_plain(), "random", harness_quick() ? 40 : 150, 1);
}

TEST(random_streams_delayed)
{
    return random_scenarios(open_delayed(harness_seed() ^ 2), "delayed", harness_quick() ? 16 : 60,
                            2);
}

/* ---- one queue delayed -------------------------------------------------------------------- */

/* Batches that use 2K+5 chunks, so every slot is reused at least twice, over batch
 * boundaries: long and short batches, one record, none, a chunk short of a chunk. */
static void plan_targeted(stream_rig *r, size_t combo)
{
    const size_t c = r->chunk, K = r->depth;
    const size_t sizes[] = {c * K + 5, 1, 0, c - 1, c * K + c, 7};
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        size_t m = combo + k;
        int in_place = rig_can_be_in_place(&r->chain) && m % 4 == 3;
        rig_plan(r, sizes[k], (mem_kind)(m % MEM_KINDS), (mem_kind)(m / MEM_KINDS % MEM_KINDS),
                 in_place);
    }
}

static void targeted(sp_context *ctx, size_t n_stages, unsigned depth, size_t combo,
                     test_rng *rng)
{
    const char *queues[CHAIN_MAX + 2];
    size_t n_queues = 0;
    queues[n_queues++] = "h2d";
    for (size_t s = 0; s < n_stages; s++)
        queues[n_queues++] = mix_chain_name(s);
    queues[n_queues++] = "d2h";
    for (size_t q = 0; q < n_queues; q++) {
        stream_rig *r = rig_new();
        if (!r)
            return;
        r->chunk = 16;
        r->depth = depth;
        random_chain(&r->chain, n_stages, (int)((combo + q) % 2), rng);
        r->cfg.max_in_flight = 2 + (unsigned)((combo + q) % 5);
        r->cfg.nonblocking = (int)(q % 2);
        r->cfg.input_released_events = 1;
        plan_targeted(r, combo + q);
        delay_one_queue(ctx, queues[q], 1000);
        unsigned long before = fault_stats(ctx).delays;
        char prefix[64];
        snprintf(prefix, sizeof prefix, "delayed queue %s:", queues[q]);
        rig_describe(r, prefix);
        run_rig(r, ctx, rng_next(rng));
        CHECK_MSG(fault_stats(ctx).delays > before, "no delay reached queue %s", queues[q]);
        free(r);
    }
}

TEST(one_queue_delayed)
{
    static const unsigned depths[] = {1, 2, 3, 6}, quick_depths[] = {1, 3};
    const unsigned *d = harness_quick() ? quick_depths : depths;
    size_t n_depths = harness_quick() ? ARRAY_LEN(quick_depths) : ARRAY_LEN(depths);
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 3);
    sp_context *ctx = NULL;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &ctx), SP_OK,
                      sp_context_last_error(ctx)))
        return TEST_FAIL;
    for (size_t i = 0; i < n_depths; i++)
        for (size_t n_stages = 0; n_stages <= 3; n_stages++)
            targeted(ctx, n_stages, d[i], i + n_stages, &rng);
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- the ring does not drain between batches ---------------------------------------------- */

typedef struct overtake {
    size_t watch_chunk;     /* the second batch's first chunk */
    atomic_long done_then;  /* DONE events taken when its stage ran; -1 before */
} overtake;

static void note_overtake(stream_rig *r, const sp_chunk *c)
{
    overtake *o = r->user;
    if (c->index == o->watch_chunk)
        atomic_store(&o->done_then, (long)atomic_load(&r->done));
}

/* With d2h slowed to 5 ms an operation, batch 0 (3 chunks) takes 15 ms to come out; batch 1's
 * first chunk needs only a free slot (depth 8) or batch 0's first chunk to leave (depth 4)
 * and an undelayed h2d, so its stage runs before batch 0's DONE is taken, unless the
 * engine waits for batch 0 to drain (caught by a drain put into stream.c's run_batch). */
TEST(batches_overlap_in_the_ring)
{
    sp_context *ctx = NULL;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &ctx), SP_OK,
                      sp_context_last_error(ctx)))
        return TEST_FAIL;
    static const size_t outs[] = {12};
    for (unsigned depth = 4; depth <= 8; depth += 4) {
        stream_rig *r = rig_new();
        if (!r)
            break;
        overtake o = {.watch_chunk = 3};
        atomic_init(&o.done_then, -1);
        r->chunk = 16;
        r->depth = depth;
        mix_chain_init(&r->chain, 4, 1, outs, 77);
        r->cfg.max_in_flight = 4; /* blocking: a second thread takes each DONE as it comes */
        r->on_chunk = note_overtake;
        r->user = &o;
        rig_plan(r, 3 * 16, MEM_PAGEABLE, MEM_PINNED, 0);
        rig_plan(r, 3 * 16, MEM_PINNED, MEM_PAGEABLE, 0);
        delay_one_queue(ctx, "d2h", 5000);
        rig_describe(r, "overlap:");
        run_rig(r, ctx, harness_seed() ^ 4);
        CHECK_MSG(atomic_load(&o.done_then) == 0, "batch 1's first chunk ran after %ld DONE "
                  "events (the ring drained between batches)", atomic_load(&o.done_then));
        free(r);
    }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- graph mode --------------------------------------------------------------------------- */

/* Depth 4 (groups of 2) and 8 (groups of 4); batches with several groups of full chunks, and
 * short ones between them so that groups start anywhere in the ring. */
static void graph_streams(sp_context *ctx, test_rng *rng, const char *queue)
{
    static const unsigned depths[] = {4, 8};
    for (size_t i = 0; i < ARRAY_LEN(depths); i++) {
        stream_rig *r = rig_new();
        if (!r)
            return;
        r->chunk = 16;
        r->depth = depths[i];
        r->graph = 1;
        random_chain(&r->chain, 1 + i, (int)i, rng);
        r->cfg.max_in_flight = 3;
        r->cfg.nonblocking = (int)i;
        r->cfg.input_released_events = 1;
        const size_t sizes[] = {11 * 16 + 7, 5, 16, 3 * 16, 0, 9 * 16, 33, 11 * 16};
        for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
            mem_kind in = (mem_kind)((k + i) % MEM_KINDS), out = (mem_kind)(k / 2 % MEM_KINDS);
            rig_plan(r, sizes[k], in, out, rig_can_be_in_place(&r->chain) && k == 6);
        }
        char prefix[64];
        snprintf(prefix, sizeof prefix, "graph%s%s:", queue ? " delayed " : "",
                 queue ? queue : "");
        rig_describe(r, prefix);
        if (rig_open(r, ctx, rng_next(rng))) {
            rig_run(r, 0, r->n_batches);
            sp_report rep;
            memset(&rep, 0, sizeof rep);
            /* rig_close checks the counts; the report's graph flag is checked here */
            size_t batches = atomic_load(&r->submitted);
            sp_stream *s = r->s;
            r->s = NULL;
            CHECK_STATUS(sp_stream_close(s, &rep), SP_OK, sp_pipeline_last_error(r->p));
            CHECK_EQ(rep.batches, batches);
            CHECK_EQ(rep.chunks, rig_chunks(r, batches));
            CHECK_MSG(rep.graph == 1, "no chunk of the stream was replayed (notes: %.256s)",
                      rep.notes);
            for (size_t s2 = 0; s2 < r->chain.n_stages; s2++)
                CHECK_EQ(atomic_load(&r->bounds[s2].violations), 0);
            sp_pipeline_destroy(r->p);
        }
        free(r);
    }
}

TEST(graph_mode_streams)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 5);
    sp_context *ctx = open_plain();
    if (!ctx)
        return TEST_FAIL;
    graph_streams(ctx, &rng, NULL);
    sp_context_destroy(ctx);
    ctx = open_delayed(harness_seed() ^ 6);
    if (!ctx)
        return TEST_FAIL;
    graph_streams(ctx, &rng, NULL);
    static const char *const queues[] = {"graph", "h2d", "d2h", "alpha"};
    for (size_t q = 0; q < ARRAY_LEN(queues); q++) {
        delay_one_queue(ctx, queues[q], 500);
        graph_streams(ctx, &rng, queues[q]);
    }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- scratch -------------------------------------------------------------------------------- */

#define SCRATCH_BYTES 200
#define SCRATCH_MAX_IN_USE 64

/* A stage that copies its records and, meanwhile, fills its scratch with a pattern of its
 * own chunk, holds it a while and checks it is still there; scratch pointers in use are
 * listed, so two chunks in flight with one scratch show even when the pattern survives. */
typedef struct scratch_stage {
    size_t rec;
    unsigned hold_us;
    pthread_mutex_t lock;
    void *in_use[SCRATCH_MAX_IN_USE];
    size_t n_in_use;
    atomic_ulong calls, missing, shared, clobbered;
} scratch_stage;

static void scratch_init(scratch_stage *st, size_t rec, unsigned hold_us)
{
    memset(st, 0, sizeof *st);
    st->rec = rec;
    st->hold_us = hold_us;
    pthread_mutex_init(&st->lock, NULL);
}

static void scratch_take(scratch_stage *st, void *scratch)
{
    pthread_mutex_lock(&st->lock);
    for (size_t k = 0; k < st->n_in_use; k++)
        if (st->in_use[k] == scratch)
            atomic_fetch_add(&st->shared, 1);
    if (st->n_in_use < SCRATCH_MAX_IN_USE)
        st->in_use[st->n_in_use++] = scratch;
    pthread_mutex_unlock(&st->lock);
}

static void scratch_give(scratch_stage *st, void *scratch)
{
    pthread_mutex_lock(&st->lock);
    for (size_t k = 0; k < st->n_in_use; k++)
        if (st->in_use[k] == scratch) {
            st->in_use[k] = st->in_use[--st->n_in_use];
            break;
        }
    pthread_mutex_unlock(&st->lock);
}

static sp_status scratch_host(const sp_chunk *c, void *user)
{
    scratch_stage *st = user;
    atomic_fetch_add(&st->calls, 1);
    memcpy(c->out, c->in, c->records * st->rec);
    if (!c->scratch) {
        atomic_fetch_add(&st->missing, 1);
        return SP_OK;
    }
    scratch_take(st, c->scratch);
    unsigned char *w = c->scratch;
    unsigned char seed = (unsigned char)(c->index * 37u + c->first_record);
    for (size_t j = 0; j < SCRATCH_BYTES; j++)
        w[j] = (unsigned char)(seed + j * 31u);
    struct timespec hold = {0, (long)st->hold_us * 1000L};
    nanosleep(&hold, NULL);
    for (size_t j = 0; j < SCRATCH_BYTES; j++)
        if (w[j] != (unsigned char)(seed + j * 31u)) {
            atomic_fetch_add(&st->clobbered, 1);
            break;
        }
    scratch_give(st, c->scratch);
    return SP_OK;
}

static sp_stage scratch_desc(scratch_stage *st, unsigned streams)
{
    sp_stage d;
    memset(&d, 0, sizeof d);
    d.name = "scratchy";
    d.out_record_bytes = st->rec;
    d.host = scratch_host;
    d.user = st;
    d.streams = streams;
    d.scratch_bytes = SCRATCH_BYTES;
    return d;
}

static void check_scratch(scratch_stage *st, unsigned long want_calls)
{
    if (want_calls)
        CHECK_EQ(atomic_load(&st->calls), want_calls);
    CHECK_MSG(atomic_load(&st->missing) == 0, "%lu chunks had no scratch",
              atomic_load(&st->missing));
    CHECK_MSG(atomic_load(&st->shared) == 0, "%lu chunks were given a scratch in use",
              atomic_load(&st->shared));
    CHECK_MSG(atomic_load(&st->clobbered) == 0, "%lu chunks' scratch was written by another",
              atomic_load(&st->clobbered));
}

/* sp_pipeline_run with a mix stage, the scratch stage and another mix stage. */
static void scratch_run(sp_context *ctx, unsigned depth, unsigned streams, int graph,
                        test_rng *rng)
{
    static const size_t outs[] = {12, 8};
    mix_chain chain;
    mix_chain_init(&chain, 4, 2, outs, (uint32_t)rng_next(rng));
    if (graph)
        mix_chain_position_free(&chain);
    scratch_stage st;
    scratch_init(&st, 12, 200);
    sp_stage stages[3] = {chain.descs[0], scratch_desc(&st, streams), chain.descs[1]};
    sp_pipeline_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.in_record_bytes = 4;
    cfg.stages = stages;
    cfg.n_stages = 3;
    cfg.chunk_records = 16;
    cfg.depth = depth;
    cfg.graph = graph ? SP_GRAPH_ON : SP_GRAPH_OFF;
    harness_context("scratch run: depth %u streams %u%s", depth, streams, graph ? " graph" : "");
    const size_t n = 16 * (3 * depth + 2) + 5, chunks = (n + 15) / 16;
    unsigned char *in = malloc(n * 4), *out = malloc(n * 8), *want = malloc(n * 8);
    sp_pipeline *p = NULL;
    if (CHECK(in && out && want) &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        rng_fill(rng, in, n * 4);
        mix_reference_run(chain.stages, 2, 4, in, n, 16, want);
        memset(out, 0xA5, n * 8);
        if (CHECK_STATUS(sp_pipeline_run(p, in, n, out, NULL), SP_OK, sp_pipeline_last_error(p)))
            compare_records(want, out, n, 8, "output");
        check_scratch(&st, graph ? 0 : chunks);
        sp_pipeline_destroy(p);
    }
    free(in);
    free(out);
    free(want);
    pthread_mutex_destroy(&st.lock);
}

/* A stream with the scratch stage after its chain. */
static void scratch_stream(sp_context *ctx, unsigned depth, unsigned streams, int graph,
                           test_rng *rng)
{
    static const size_t outs[] = {12};
    stream_rig *r = rig_new();
    if (!r)
        return;
    scratch_stage st;
    scratch_init(&st, 12, 200);
    r->chunk = 16;
    r->depth = depth;
    r->graph = graph;
    mix_chain_init(&r->chain, 4, 1, outs, (uint32_t)rng_next(rng));
    r->tail = scratch_desc(&st, streams);
    r->cfg.max_in_flight = 3;
    const size_t sizes[] = {16 * depth + 3, 1, 2 * 16 * depth, 17, 0, 4 * 16};
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++)
        rig_plan(r, sizes[k], (mem_kind)(k % MEM_KINDS), (mem_kind)((k + 1) % MEM_KINDS), 0);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "scratch stream: tail streams %u:", streams);
    rig_describe(r, prefix);
    run_rig(r, ctx, rng_next(rng));
    check_scratch(&st, graph ? 0 : rig_chunks(r, r->n_batches));
    pthread_mutex_destroy(&st.lock);
    free(r);
}

static int scratch_tests(sp_context *ctx, uint64_t salt)
{
    if (g_kind != SP_BACKEND_HOST) {
        sp_context_destroy(ctx);
        harness_skip_reason("the scratch stage checks its scratch from the host");
        return TEST_SKIP;
    }
    if (!ctx)
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    static const unsigned depths[] = {1, 3, 4};
    for (size_t i = 0; i < ARRAY_LEN(depths); i++)
        for (unsigned streams = 1; streams <= 3; streams += 2) {
            scratch_run(ctx, depths[i], streams, 0, &rng);
            scratch_stream(ctx, depths[i], streams, 0, &rng);
        }
    scratch_run(ctx, 4, 1, 1, &rng);
    scratch_run(ctx, 8, 3, 1, &rng);
    scratch_stream(ctx, 4, 1, 1, &rng);
    scratch_stream(ctx, 8, 3, 1, &rng);
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(scratch_is_private_to_each_chunk) { return scratch_tests(open_plain(), 7); }
TEST(scratch_is_private_to_each_chunk_delayed)
{
    return scratch_tests(open_delayed(harness_seed() ^ 8), 8);
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(random_streams),
        TEST_ENTRY(random_streams_delayed),
        TEST_ENTRY(one_queue_delayed),
        TEST_ENTRY(batches_overlap_in_the_ring),
        TEST_ENTRY(graph_mode_streams),
        TEST_ENTRY(scratch_is_private_to_each_chunk),
        TEST_ENTRY(scratch_is_private_to_each_chunk_delayed),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
