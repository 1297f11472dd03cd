/* The memory budget of sp_pipeline_config (max_pinned_bytes, max_device_bytes) on HOST:
 * checked from the HOST allocator's own count of the bytes it holds (at their peak), not
 * from the pipeline's accounting; runs under it compute every element right; a budget that
 * cannot work is refused with a message; user settings are never changed; the change made
 * at create is listed and counted in the stats and the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_door.h"
#include "harness.h"
#include "scenario.h"
#include "stages.h"
#include "testbuf.h"

static sp_context *host_context(void)
{
    sp_context *ctx = NULL;
    CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK);
    return ctx;
}

/* The HOST allocator's peak bytes since the context opened: [0] pinned, [1] device. */
static void allocator_peak(sp_context *ctx, size_t peak[2])
{
    size_t held[2];
    sp_backend_host_memory_held(ctx->impl, held, peak);
}

/* What the default settings of the chain's pipeline hold, from the allocator. */
static void default_memory(const mix_chain *chain, size_t peak[2])
{
    sp_context *ctx = host_context();
    sp_pipeline_config cfg = mix_chain_config(chain, 0, 0);
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    allocator_peak(ctx, peak);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
}

/* A pinned run: input and output from sp_host_alloc, output poisoned, every element checked
 * (position-free stages number records within each chunk: the report says the chunk). */
static void check_pinned_run(sp_context *ctx, sp_pipeline *p, const mix_chain *chain, size_t n,
                             test_rng *rng)
{
    sp_report rep;
    size_t out_rec = mix_chain_out_rec(chain);
    void *in = NULL, *out = NULL;
    unsigned char *want = malloc(n * out_rec);
    CHECK_EQ(sp_host_alloc(ctx, n * chain->in_rec, &in), SP_OK);
    CHECK_EQ(sp_host_alloc(ctx, n * out_rec, &out), SP_OK);
    if (in && out && want) {
        rng_fill(rng, in, n * chain->in_rec);
        memset(out, 0xA5, n * out_rec);
        CHECK_EQ(sp_pipeline_run(p, in, n, out, &rep), SP_OK);
        mix_reference_run(chain->stages, chain->n_stages, chain->in_rec, in, n,
                          rep.chunk_records, want);
        CHECK_MSG(memcmp(out, want, n * out_rec) == 0, "pinned output differs");
    }
    sp_host_free(ctx, in);
    sp_host_free(ctx, out);
    free(want);
}

TEST(quarter_budget_holds_and_runs_right)
{
    mix_chain chain;
    size_t outs[2] = {24, 8};
    mix_chain_init(&chain, 16, 2, outs, (uint32_t)harness_seed());
    size_t full[2];
    default_memory(&chain, full);
    CHECK(full[0] > 0 && full[1] > 0);
    test_rng rng;
    rng_init(&rng, harness_seed());
    for (int mode = 0; mode < 2; mode++) { /* direct, then graph mode */
        sp_context *ctx = host_context();
        sp_pipeline_config cfg = mix_chain_config(&chain, 0, 0);
        cfg.max_pinned_bytes = full[0] / 4;
        cfg.max_device_bytes = full[1] / 4;
        cfg.graph = mode ? SP_GRAPH_ON : SP_GRAPH_OFF;
        if (mode)
            mix_chain_position_free(&chain);
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
        if (p) {
            harness_context("graph %d", mode);
            size_t n = 200000 + rng_below(&rng, 1000);
            if (!mode) /* pageable: run-numbered stages only */
                CHECK_EQ(check_pipeline_run(p, chain.stages, chain.n_stages, 16, n, &rng), SP_OK);
            check_pinned_run(ctx, p, &chain, n, &rng);
            sp_stats st = SP_STATS_INIT;
            CHECK_EQ(sp_pipeline_stats(p, &st), SP_OK);
            CHECK_EQ(st.tune_changes, 1);
            CHECK_HAS(st.tune_reason, "the budget");
            CHECK(st.pinned_bytes <= cfg.max_pinned_bytes);
            sp_tune_change list[4];
            size_t got = 0;
            uint64_t total = 0;
            CHECK_EQ(sp_pipeline_tune_changes(p, list, 4, &got, &total), SP_OK);
            CHECK_EQ(got, 1);
            CHECK_EQ(total, 1);
            CHECK(list[0].to_depth < list[0].from_depth || list[0].to_chunk < list[0].from_chunk);
            sp_report rep;
            void *in = malloc(16 * 10), *out = malloc(8 * 10);
            CHECK_EQ(sp_pipeline_run(p, in, 10, out, &rep), SP_OK);
            CHECK_EQ(rep.tune_changes, 1);
            free(in);
            free(out);
            sp_pipeline_destroy(p);
        }
        size_t peak[2];
        allocator_peak(ctx, peak);
        /* pinned: the test's own sp_host_alloc blocks count there too (the next test) */
        CHECK_MSG(peak[1] <= cfg.max_device_bytes, "device peak %zu over the budget %zu",
                  peak[1], cfg.max_device_bytes);
        sp_context_destroy(ctx);
    }
    harness_context("%s", "");
    return TEST_OK;
}

/* Pinned bytes checked apart: no sp_host_alloc of the test's own mixes into the peak. */
TEST(quarter_budget_pinned_peak)
{
    mix_chain chain;
    size_t outs[1] = {40};
    mix_chain_init(&chain, 8, 1, outs, (uint32_t)harness_seed());
    size_t full[2];
    default_memory(&chain, full);
    test_rng rng;
    rng_init(&rng, harness_seed());
    sp_context *ctx = host_context();
    sp_pipeline_config cfg = mix_chain_config(&chain, 0, 0);
    cfg.max_pinned_bytes = full[0] / 4;
    cfg.max_device_bytes = full[1] / 4;
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    if (p) {
        CHECK_EQ(check_pipeline_run(p, chain.stages, 1, 8, 150000, &rng), SP_OK);
        sp_pipeline_destroy(p);
    }
    size_t peak[2];
    allocator_peak(ctx, peak);
    CHECK_MSG(peak[0] <= cfg.max_pinned_bytes && peak[0] > 0, "pinned peak %zu, budget %zu",
              peak[0], cfg.max_pinned_bytes);
    CHECK_MSG(peak[1] <= cfg.max_device_bytes && peak[1] > 0, "device peak %zu, budget %zu",
              peak[1], cfg.max_device_bytes);
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(impossible_budgets_are_refused_saying_why)
{
    mix_chain chain;
    size_t outs[1] = {16};
    mix_chain_init(&chain, 16, 1, outs, 7);
    sp_context *ctx = host_context();
    sp_pipeline *p = NULL;
    sp_pipeline_config cfg = mix_chain_config(&chain, 0, 0);
    cfg.max_pinned_bytes = 100; /* not one slot of one record: 2 x 256 bytes */
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_INVALID_ARGUMENT);
    CHECK(p == NULL);
    CHECK_HAS(sp_context_last_error(ctx), "cannot hold any ring");
    CHECK_HAS(sp_context_last_error(ctx), "max_pinned_bytes 100");
    /* the user's own chunk and depth over the budget: refused, not changed */
    cfg = mix_chain_config(&chain, 100000, 6);
    cfg.max_device_bytes = 1 << 20;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "leave chunk_records or depth at 0");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(user_settings_stay_under_a_budget)
{
    mix_chain chain;
    size_t outs[1] = {16};
    mix_chain_init(&chain, 16, 1, outs, 9);
    sp_context *ctx = host_context();
    test_rng rng;
    rng_init(&rng, harness_seed());
    /* the chunk is the user's: only the depth is cut (2 x 16 B x 10000 = 320000 per slot) */
    sp_pipeline_config cfg = mix_chain_config(&chain, 10000, 0);
    cfg.max_pinned_bytes = 3 * 320000 + 3 * 512;
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    if (p) {
        sp_report rep;
        void *in = calloc(25000, 16), *out = calloc(25000, 16);
        CHECK_EQ(sp_pipeline_run(p, in, 25000, out, &rep), SP_OK);
        CHECK_EQ(rep.slot_records, 10000);
        CHECK_EQ(rep.depth, 3);
        free(in);
        free(out);
        CHECK_EQ(check_pipeline_run(p, chain.stages, 1, 16, 25000, &rng), SP_OK);
        sp_pipeline_destroy(p);
    }
    /* no budget: nothing changed, nothing listed */
    cfg = mix_chain_config(&chain, 0, 0);
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    if (p) {
        size_t got = 1;
        uint64_t total = 1;
        CHECK_EQ(sp_pipeline_tune_changes(p, NULL, 0, &got, &total), SP_OK);
        CHECK_EQ(got, 0);
        CHECK_EQ(total, 0);
        sp_pipeline_destroy(p);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* The chunk the library picks follows the copies (8 MiB of the wider end record), capped by
 * the widest record in between (as the MLP's 64 B in, 1 KiB between: 128K records, not the
 * 8192 that 8 MiB of its widest gave, 3.4x slower at tf32 on the H200; test_core_units has
 * that shape, the mix stages here take records of at most 64 bytes); a run at the pick
 * computes every element right. */
TEST(the_chosen_chunk_follows_the_copies)
{
    struct { size_t in, outs[2], want; } shapes[] = {
        {4, {64, 4}, SP_DEFAULT_CHUNK_BYTES / 4},         /* 16x the old pick, 8 MiB of 64 */
        {8, {64, 2}, SP_DEFAULT_CHUNK_BYTES / 8},         /* the wider end sets it */
        {2, {64, 2}, SP_MAX_CHOSEN_STAGE_BYTES / 64},     /* the middle caps it */
        {16, {24, 8}, SP_DEFAULT_CHUNK_BYTES / 16},       /* the copies set it (was / 24) */
    };
    test_rng rng;
    rng_init(&rng, harness_seed());
    for (size_t k = 0; k < ARRAY_LEN(shapes); k++) {
        mix_chain chain;
        mix_chain_init(&chain, shapes[k].in, 2, shapes[k].outs, (uint32_t)harness_seed());
        sp_context *ctx = host_context();
        sp_pipeline_config cfg = mix_chain_config(&chain, 0, 0);
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
        if (p) {
            CHECK_EQ(p->chunk_capacity, shapes[k].want);
            check_pinned_run(ctx, p, &chain, 5000 + k, &rng);
        }
        sp_pipeline_destroy(p);
        sp_context_destroy(ctx);
    }
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(quarter_budget_holds_and_runs_right),
        TEST_ENTRY(quarter_budget_pinned_peak),
        TEST_ENTRY(impossible_budgets_are_refused_saying_why),
        TEST_ENTRY(user_settings_stay_under_a_budget),
        TEST_ENTRY(the_chosen_chunk_follows_the_copies),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
