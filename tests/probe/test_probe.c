/*
 * test_probe host|cuda [filter]: sp_probe_run gives a positive, finite figure for everything
 * it was asked to measure and 0 for the rest; refuses bad configurations; fails cleanly (the
 * injected status, nothing left allocated) when any backend call it makes fails; and the
 * ceiling model sp_probe_copy_seconds has known answers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_probe.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static int positive(double x) { return isfinite(x) && x > 0.0; }

/* A probe small enough for a test: 1 MiB copies, 3 repeats, few operations. */
static sp_probe_config small_config(unsigned parts)
{
    sp_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.parts = parts;
    cfg.repeats = 3;
    cfg.copy_bytes = 1 * MIB;
    cfg.pin_bytes = 1 * MIB;
    cfg.max_chunk_bytes = 1 * MIB;
    cfg.max_threads = 4;
    cfg.overhead_ops = 100;
    return cfg;
}

static void check_copy_figures(const sp_probe_result *r)
{
    CHECK(positive(r->h2d_pinned_gbps) && positive(r->d2h_pinned_gbps));
    CHECK(positive(r->h2d_pageable_gbps) && positive(r->d2h_pageable_gbps));
    CHECK(positive(r->both_h2d_gbps) && positive(r->both_d2h_gbps));
    CHECK_EQ(r->n_chunk_sizes, 3); /* 64 KiB, 256 KiB, 1 MiB */
    for (size_t i = 0; i < r->n_chunk_sizes; i++) {
        CHECK_EQ(r->chunk[i].bytes, (64 * KIB) << (2 * i));
        CHECK(positive(r->chunk[i].h2d_gbps));
    }
}

static void check_host_figures(const sp_probe_result *r)
{
    CHECK(positive(r->alloc_ms_per_gib) && positive(r->free_ms_per_gib));
    CHECK(positive(r->register_ms_per_gib) && positive(r->unregister_ms_per_gib));
    CHECK_EQ(r->n_thread_counts, 3); /* 1, 2, 4 */
    for (size_t i = 0; i < r->n_thread_counts; i++) {
        CHECK_EQ(r->host_copy[i].threads, 1u << i);
        CHECK(positive(r->host_copy[i].gbps));
    }
}

/* The staging threads are the pipeline's default count, cut to max_threads (4 here). */
static void check_under_dma_figures(const sp_probe_result *r)
{
    CHECK(r->under_dma_threads >= 1 && r->under_dma_threads <= 4);
    CHECK(positive(r->staging_alone_gbps) && positive(r->staging_under_dma_gbps));
    CHECK(positive(r->dma_alone_gbps) && positive(r->dma_under_staging_gbps));
}

TEST(every_figure_of_a_small_probe)
{
    sp_context *ctx = NULL;
    if (!CHECK(sp_context_create(g_kind, 0, &ctx) == SP_OK))
        return TEST_FAIL;
    sp_probe_config cfg = small_config(0);
    sp_probe_result r;
    sp_status st = sp_probe_run(ctx, &cfg, &r);
    if (CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx))) {
        CHECK_EQ(r.parts, SP_PROBE_ALL);
        CHECK_EQ(r.repeats, 3);
        CHECK_EQ(r.backend, g_kind);
        check_copy_figures(&r);
        check_host_figures(&r);
        check_under_dma_figures(&r);
        CHECK(positive(r.event_record_us) && positive(r.timing_record_us));
        CHECK(positive(r.queue_wait_us) && positive(r.launch_us) && positive(r.small_copy_us));
        CHECK(positive(r.graph_launch_us) && positive(r.graph_update_us)); /* both have graphs */
        CHECK(positive(r.graph_enqueue_us));
        CHECK(strcmp(r.launch_what, g_kind == SP_BACKEND_CUDA ? "1 us delay kernel"
                                                              : "no-op stage") == 0);
        CHECK(positive(r.seconds));
        if (g_kind == SP_BACKEND_HOST)
            CHECK_HAS(r.notes, "memcpy");
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(only_the_parts_asked_for)
{
    sp_context *ctx = NULL;
    if (!CHECK(sp_context_create(g_kind, 0, &ctx) == SP_OK))
        return TEST_FAIL;
    sp_probe_config cfg = small_config(SP_PROBE_OVERHEADS);
    sp_probe_result r;
    if (CHECK_STATUS(sp_probe_run(ctx, &cfg, &r), SP_OK, sp_context_last_error(ctx))) {
        CHECK(positive(r.launch_us));
        CHECK(r.h2d_pinned_gbps == 0.0 && r.alloc_ms_per_gib == 0.0);
        CHECK_EQ(r.n_chunk_sizes, 0);
        CHECK_EQ(r.n_thread_counts, 0);
        CHECK(r.staging_alone_gbps == 0.0 && r.dma_under_staging_gbps == 0.0);
        CHECK_EQ(r.under_dma_threads, 0);
    }
    cfg = small_config(SP_PROBE_HOST_UNDER_DMA); /* needs the copy buffers on its own */
    if (CHECK_STATUS(sp_probe_run(ctx, &cfg, &r), SP_OK, sp_context_last_error(ctx))) {
        check_under_dma_figures(&r);
        CHECK(r.h2d_pinned_gbps == 0.0 && r.launch_us == 0.0);
        CHECK_EQ(r.n_thread_counts, 0);
    }
    cfg = small_config(SP_PROBE_CHUNK_SIZES);
    cfg.min_chunk_bytes = 256 * KIB;
    if (CHECK_STATUS(sp_probe_run(ctx, &cfg, &r), SP_OK, sp_context_last_error(ctx))) {
        CHECK_EQ(r.n_chunk_sizes, 2); /* 256 KiB, 1 MiB */
        CHECK(r.launch_us == 0.0 && r.h2d_pinned_gbps == 0.0);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(refuses_bad_configurations)
{
    sp_context *ctx = NULL;
    if (!CHECK(sp_context_create(g_kind, 0, &ctx) == SP_OK))
        return TEST_FAIL;
    sp_probe_result r;
    CHECK_EQ(sp_probe_run(NULL, NULL, &r), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_probe_run(ctx, NULL, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "out is NULL");
    static const struct {
        const char *what;
        sp_probe_config cfg;
    } bad[] = {
        {"parts", {.parts = 1u << 9}},
        {"repeats", {.repeats = SP_PROBE_MAX_REPEATS + 1}},
        {"copy_bytes", {.copy_bytes = 1000}},
        {"min_chunk_bytes", {.min_chunk_bytes = 8 * MIB, .max_chunk_bytes = 1 * MIB}},
        {"min_chunk_bytes", {.min_chunk_bytes = 100}},
        {"max_threads", {.max_threads = 4096}},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_EQ(sp_probe_run(ctx, &bad[i].cfg, &r), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_context_last_error(ctx), bad[i].what);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* The Nth backend call fails, for N over the probe's calls: the probe returns the injected
 * status and gives back every queue, event and allocation. */
TEST(fails_cleanly_at_any_call)
{
    sp_context *ctx = NULL;
    if (!CHECK(sp_context_create_fault(g_kind, 0, NULL, &ctx) == SP_OK))
        return TEST_FAIL;
    sp_probe_config cfg = small_config(0);
    cfg.repeats = 1;
    cfg.overhead_ops = 4;
    cfg.max_threads = 2;
    sp_probe_result r;
    sp_fault_stats stats;
    CHECK_STATUS(sp_probe_run(ctx, &cfg, &r), SP_OK, sp_context_last_error(ctx));
    sp_fault_get_stats(ctx, &stats);
    unsigned long calls = stats.calls;
    CHECK(calls > 50);
    for (unsigned long n = 1; n <= calls; n += n < 60 ? 1 : 7) {
        sp_fault_config fault = {.fail_call = n};
        sp_fault_set(ctx, &fault);
        sp_status st = sp_probe_run(ctx, &cfg, &r);
        CHECK_MSG(st == SP_ERR_BACKEND, "call %lu failed: the probe returned %s (%s)", n,
                  sp_status_name(st), sp_context_last_error(ctx));
        sp_fault_get_stats(ctx, &stats);
        CHECK_MSG(stats.live_objects == 0, "call %lu failed: %ld objects left", n,
                  stats.live_objects);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* in 4 GB, out 4 GB at 50 GB/s one way and 40 GB/s each way at once: 0.1 s together.
 * in 8 GB: 0.1 s together, then 4 GB alone at 50: 0.18 s. */
TEST(copy_ceiling_model)
{
    sp_probe_result r;
    memset(&r, 0, sizeof r);
    r.h2d_pinned_gbps = r.d2h_pinned_gbps = 50.0;
    r.both_h2d_gbps = r.both_d2h_gbps = 40.0;
    CHECK(fabs(sp_probe_copy_seconds(&r, 4000000000u, 4000000000u) - 0.1) < 1e-12);
    CHECK(fabs(sp_probe_copy_seconds(&r, 8000000000u, 4000000000u) - 0.18) < 1e-12);
    CHECK(fabs(sp_probe_copy_seconds(&r, 4000000000u, 8000000000u) - 0.18) < 1e-12);
    CHECK(fabs(sp_probe_copy_seconds(&r, 5000000000u, 0) - 0.1) < 1e-12);
    r.both_h2d_gbps = 0.0; /* no overlap figures: one after the other */
    CHECK(fabs(sp_probe_copy_seconds(&r, 5000000000u, 5000000000u) - 0.2) < 1e-12);
    r.h2d_pinned_gbps = 0.0;
    CHECK(sp_probe_copy_seconds(&r, 1, 1) == 0.0);
    CHECK(sp_probe_copy_seconds(NULL, 1, 1) == 0.0);
    return TEST_OK;
}

/* The defaults keep to their time budget (about 3 s on HOST, 10 s on an H200). */
TEST(defaults_finish_in_time)
{
    if (harness_quick()) {
        harness_skip_reason("SP_TEST_QUICK: the full-size probe is slow under sanitizers");
        return TEST_SKIP;
    }
    sp_context *ctx = NULL;
    if (!CHECK(sp_context_create(g_kind, 0, &ctx) == SP_OK))
        return TEST_FAIL;
    sp_probe_result r;
    if (CHECK_STATUS(sp_probe_run(ctx, NULL, &r), SP_OK, sp_context_last_error(ctx))) {
        printf("    default probe took %.2f s: h2d %.1f GB/s, d2h %.1f GB/s, 1-thread copy "
               "%.1f GB/s\n",
               r.seconds, r.h2d_pinned_gbps, r.d2h_pinned_gbps, r.host_copy[0].gbps);
        printf("    staging copy (%u threads) alone %.1f GB/s, under the copy engines %.1f; "
               "engines alone %.1f GB/s, under the staging copy %.1f\n",
               r.under_dma_threads, r.staging_alone_gbps, r.staging_under_dma_gbps,
               r.dma_alone_gbps, r.dma_under_staging_gbps);
        /* generous: shared CI machines are slow; the budget itself is checked by hand */
        CHECK_MSG(r.seconds < (g_kind == SP_BACKEND_HOST ? 15.0 : 20.0), "took %.1f s",
                  r.seconds);
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(every_figure_of_a_small_probe),
        TEST_ENTRY(only_the_parts_asked_for),
        TEST_ENTRY(refuses_bad_configurations),
        TEST_ENTRY(fails_cleanly_at_any_call),
        TEST_ENTRY(copy_ceiling_model),
        TEST_ENTRY(defaults_finish_in_time),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
