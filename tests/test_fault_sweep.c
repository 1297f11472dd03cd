/*
 * test_fault_sweep host|cuda [filter]
 *
 * With the fault backend, counts the backend calls of a clean "create, run, destroy", then
 * fails each of those calls once in turn. Every injected failure must surface as an error
 * status with an error text, leave no queue, event or allocation behind, and leave the
 * context able to run a fresh pipeline correctly. Done over pageable, pinned and registered
 * memory and with a report (timing events). A failure reported as SP_ERR_DEVICE_LOST must
 * make the context lost for good. Exits 77 when the backend is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "scenario.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

/* PATH_STREAMS: pageable memory, each stage on two queues and copies in 20-byte pieces.
 * PATH_KERNEL: copies by kernel (copy_by_kernel) in 20-byte pieces, pinned input read by the
 * kernel directly, pageable output through the staging buffer. */
typedef enum sweep_path {
    PATH_PAGEABLE,
    PATH_REPORT,
    PATH_PINNED,
    PATH_REGISTERED,
    PATH_STREAMS,
    PATH_KERNEL
} sweep_path;

static const char *const path_names[] = {"pageable", "pageable+report", "pinned", "registered",
                                          "streams+pieces", "kernel copies"};

#define SWEEP_CHUNK 16
#define SWEEP_RECORDS (SWEEP_CHUNK * 4 + 5) /* 5 chunks, the last one short */
#define SWEEP_DEPTH 2

typedef struct rig {
    sp_context *ctx;
    sweep_path path;
    mix_chain chain; /* 2 stages, 4 -> 12 -> 3 bytes */
    unsigned char in[SWEEP_RECORDS * 4], out[SWEEP_RECORDS * 3], want[SWEEP_RECORDS * 3];
    test_rng rng;
    unsigned long unreached; /* calls of the clean run that an attempt never made */
} rig;

/* A run with a report records a start event only for operations whose queue was idle when
 * they were enqueued (src/core/run.c, op_start), and asks the backend which ones were; so
 * how many calls it makes depends on timing, and an attempt may end before the clean run's
 * last calls. Every other path makes the same calls every time. */
static int calls_vary(sweep_path path) { return path == PATH_REPORT; }

/* What one attempt saw: the first failure and its text. */
typedef struct attempt {
    sp_status status;
    char error[512];
    unsigned long visible_calls; /* backend calls up to the last call that returns a status */
} attempt;

static void note(attempt *a, sp_status st, const char *text)
{
    if (a->status != SP_OK || st == SP_OK)
        return;
    a->status = st;
    snprintf(a->error, sizeof a->error, "%s", text != NULL ? text : "(null)");
}

static sp_fault_stats fault_stats(const sp_context *ctx)
{
    sp_fault_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_EQ(sp_fault_get_stats(ctx, &stats), SP_OK);
    return stats;
}

/* Arms the failure of call fail_call (0: none). Small random delays on every queue keep work
 * in flight when a failure lands, so a run that returns without draining is caught. Delays
 * are not counted as calls, so the call sequence stays the same. */
static void arm(sp_context *ctx, unsigned long fail_call, sp_status fail_status)
{
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_call = fail_call;
    cfg.fail_status = fail_status;
    cfg.random_delay_us = 100;
    cfg.seed = fail_call;
    CHECK_EQ(sp_fault_set(ctx, &cfg), SP_OK);
}

static unsigned long stage_calls(const mix_chain *chain)
{
    return atomic_load(&chain->stages[0].calls) + atomic_load(&chain->stages[1].calls);
}

/* After a failed run returns, nothing of it may still be running: no stage is called and no
 * copy writes the output (pinned output is written by the copies directly). */
static void check_drained(const mix_chain *chain, const void *out, size_t bytes)
{
    static unsigned char before[sizeof ((rig *)0)->out];
    unsigned long calls = stage_calls(chain);
    memcpy(before, out, bytes);
    struct timespec pause = {0, 3000000L};
    nanosleep(&pause, NULL);
    CHECK_MSG(stage_calls(chain) == calls, "stages ran after the failed run had returned");
    CHECK_MSG(memcmp(before, out, bytes) == 0, "output written after the failed run returned");
}

/* ---- one attempt: memory, create, run, destroy, release ---------------------------------- */

typedef struct run_memory {
    void *in, *out; /* what the run reads and writes */
    void *pinned_in, *pinned_out;
    int registered_in, registered_out;
} run_memory;

static void acquire_memory(rig *r, run_memory *m, attempt *a)
{
    memset(m, 0, sizeof *m);
    m->in = r->in;
    m->out = r->out;
    sp_status st = SP_OK;
    if (r->path == PATH_PINNED || r->path == PATH_KERNEL) {
        st = sp_host_alloc(r->ctx, sizeof r->in, &m->pinned_in);
        if (st == SP_OK && r->path == PATH_PINNED)
            st = sp_host_alloc(r->ctx, sizeof r->out, &m->pinned_out);
        if (st == SP_OK) {
            memcpy(m->pinned_in, r->in, sizeof r->in);
            m->in = m->pinned_in;
            if (r->path == PATH_PINNED)
                m->out = m->pinned_out;
        }
    } else if (r->path == PATH_REGISTERED) {
        st = sp_host_register(r->ctx, r->in, sizeof r->in);
        m->registered_in = st == SP_OK;
        if (st == SP_OK)
            st = sp_host_register(r->ctx, r->out, sizeof r->out);
        m->registered_out = m->registered_in && st == SP_OK;
    }
    note(a, st, sp_context_last_error(r->ctx));
}

/* Unregisters what is still registered; returns the first failure. */
static sp_status unregister_memory(rig *r, run_memory *m)
{
    sp_status first = SP_OK, st;
    if (m->registered_out) {
        st = sp_host_unregister(r->ctx, r->out);
        m->registered_out = st != SP_OK;
        first = st;
    }
    if (m->registered_in) {
        st = sp_host_unregister(r->ctx, r->in);
        m->registered_in = st != SP_OK;
        first = first != SP_OK ? first : st;
    }
    return first;
}

static void release_memory(rig *r, run_memory *m, attempt *a)
{
    note(a, unregister_memory(r, m), sp_context_last_error(r->ctx));
    a->visible_calls = fault_stats(r->ctx).calls; /* what follows returns no status */
    sp_host_free(r->ctx, m->pinned_in);
    sp_host_free(r->ctx, m->pinned_out);
    m->pinned_in = m->pinned_out = NULL;
}

static void attempt_once(rig *r, attempt *a, run_memory *m, int verify)
{
    memset(a, 0, sizeof *a);
    acquire_memory(r, m, a);
    sp_pipeline *p = NULL;
    if (a->status == SP_OK) {
        sp_pipeline_config cfg = mix_chain_config(&r->chain, SWEEP_CHUNK, SWEEP_DEPTH);
        if (r->path == PATH_STREAMS || r->path == PATH_KERNEL)
            cfg.copy_piece_bytes = 20;
        cfg.copy_by_kernel = r->path == PATH_KERNEL;
        note(a, sp_pipeline_create(r->ctx, &cfg, &p), sp_context_last_error(r->ctx));
    }
    if (a->status == SP_OK) {
        sp_report rep;
        memset(m->out, 0xA5, sizeof r->out);
        mix_chain_arm(&r->chain, SWEEP_CHUNK);
        sp_status st = sp_pipeline_run(p, m->in, SWEEP_RECORDS, m->out,
                                       r->path == PATH_REPORT ? &rep : NULL);
        note(a, st, sp_pipeline_last_error(p));
        /* Even when the failed call was a queue_sync of the drain, the run re-syncs that
         * queue before returning: nothing may touch the output afterwards. */
        if (st != SP_OK)
            check_drained(&r->chain, m->out, sizeof r->out);
        if (st == SP_OK && verify) {
            compare_records(r->want, m->out, SWEEP_RECORDS, 3, "output");
            CHECK_EQ(mix_chain_violations(&r->chain), 0);
        }
    }
    sp_pipeline_destroy(p);
    release_memory(r, m, a);
}

/* ---- the sweep --------------------------------------------------------------------------- */

static rig *rig_new(sweep_path path, uint64_t salt)
{
    static const size_t outs[] = {12, 3};
    rig *r = calloc(1, sizeof *r);
    if (!CHECK(r != NULL))
        return NULL;
    r->path = path;
    rng_init(&r->rng, harness_seed() ^ salt);
    rng_fill(&r->rng, r->in, sizeof r->in);
    mix_chain_init(&r->chain, 4, 2, outs, (uint32_t)rng_next(&r->rng));
    for (size_t s = 0; path == PATH_STREAMS && s < 2; s++)
        r->chain.descs[s].streams = 2;
    mix_reference(r->chain.stages, 2, 4, r->in, SWEEP_RECORDS, 0, r->want);
    return r;
}

/* One injected failure at call k; returns 0 when the sweep should stop (it is broken). */
static int fail_one_call(rig *r, unsigned long k, unsigned long visible, sp_status fail_status,
                         long base_live)
{
    attempt a;
    run_memory m;
    arm(r->ctx, k, fail_status);
    unsigned long injected = fault_stats(r->ctx).injected;
    attempt_once(r, &a, &m, 0);
    int made = fault_stats(r->ctx).injected == injected + 1;
    if (!made && calls_vary(r->path))
        r->unreached++; /* then the attempt must have succeeded, checked below */
    else
        CHECK_MSG(made, "call %lu was never made", k);
    if (made && k <= visible) {
        CHECK_STATUS(a.status, fail_status, a.error);
        CHECK_HAS(a.error, "injected"); /* the backend's reason reaches the error text */
    } else {
        CHECK_STATUS(a.status, SP_OK, a.error); /* a failure in a void cleanup call */
    }
    arm(r->ctx, 0, SP_OK);
    unregister_memory(r, &m); /* an unregister that failed leaves its registration */
    CHECK_EQ(fault_stats(r->ctx).live_objects, base_live);
    unsigned long before = harness_failures();
    attempt_once(r, &a, &m, 1); /* the context still works */
    CHECK_STATUS(a.status, SP_OK, a.error);
    return harness_failures() == before;
}

static int sweep(sweep_path path, sp_status fail_status, uint64_t salt)
{
    rig *r = rig_new(path, salt);
    if (r == NULL)
        return TEST_FAIL;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &r->ctx), SP_OK,
                      sp_last_open_error())) {
        free(r);
        return TEST_FAIL;
    }
    attempt a;
    run_memory m;
    long base_live = fault_stats(r->ctx).live_objects;
    arm(r->ctx, 0, SP_OK);
    attempt_once(r, &a, &m, 1);
    CHECK_STATUS(a.status, SP_OK, a.error);
    unsigned long total = fault_stats(r->ctx).calls;
    CHECK(total >= 10 && a.visible_calls <= total);
    printf("  %s path: %lu backend calls, %lu of them before the last status\n",
           path_names[path], total, a.visible_calls);
    for (unsigned long k = 1; k <= total; k++) {
        harness_context("%s path: failing backend call %lu of %lu with %s", path_names[path], k,
                        total, sp_status_name(fail_status));
        if (!fail_one_call(r, k, a.visible_calls, fail_status, base_live) &&
            getenv("SP_TEST_VERBOSE") == NULL)
            break; /* the first broken call says enough */
    }
    if (r->unreached)
        printf("  %s path: %lu of those calls were past the end of the attempt that was to "
               "fail them\n", path_names[path], r->unreached);
    harness_context("%s", "");
    sp_context_destroy(r->ctx);
    free(r);
    return TEST_OK;
}

TEST(sweep_pageable) { return sweep(PATH_PAGEABLE, SP_ERR_BACKEND, 1); }
TEST(sweep_with_report) { return sweep(PATH_REPORT, SP_ERR_BACKEND, 2); }
TEST(sweep_pinned) { return sweep(PATH_PINNED, SP_ERR_BACKEND, 3); }
TEST(sweep_registered) { return sweep(PATH_REGISTERED, SP_ERR_BACKEND, 4); }
TEST(sweep_streams_and_pieces) { return sweep(PATH_STREAMS, SP_ERR_BACKEND, 6); }
TEST(sweep_kernel_copies) { return sweep(PATH_KERNEL, SP_ERR_BACKEND, 7); }

/* ---- device lost ------------------------------------------------------------------------- */

/* Call k fails with SP_ERR_DEVICE_LOST: the attempt reports it, and from then on the context
 * refuses everything with SP_ERR_DEVICE_LOST at once. */
static void device_lost_at(rig *r, unsigned long k, unsigned long visible)
{
    attempt a;
    run_memory m;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &r->ctx), SP_OK,
                      sp_last_open_error()))
        return;
    arm(r->ctx, k, SP_ERR_DEVICE_LOST);
    attempt_once(r, &a, &m, 0);
    if (fault_stats(r->ctx).injected == 0 && calls_vary(r->path)) {
        r->unreached++;
        CHECK_STATUS(a.status, SP_OK, a.error);
    } else if (k <= visible) {
        CHECK_STATUS(a.status, SP_ERR_DEVICE_LOST, a.error);
        arm(r->ctx, 0, SP_OK);
        sp_pipeline_config cfg = mix_chain_config(&r->chain, SWEEP_CHUNK, SWEEP_DEPTH);
        sp_pipeline *p = NULL;
        void *mem = NULL;
        CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &p), SP_ERR_DEVICE_LOST,
                     sp_context_last_error(r->ctx));
        CHECK(p == NULL);
        sp_pipeline_destroy(p);
        CHECK_STATUS(sp_host_alloc(r->ctx, 64, &mem), SP_ERR_DEVICE_LOST,
                     sp_context_last_error(r->ctx));
        if (mem != NULL)
            sp_host_free(r->ctx, mem);
    }
    CHECK_EQ(fault_stats(r->ctx).live_objects, 0);
    sp_context_destroy(r->ctx);
    r->ctx = NULL;
}

TEST(sweep_device_lost)
{
    rig *r = rig_new(PATH_REPORT, 5);
    if (r == NULL)
        return TEST_FAIL;
    attempt a;
    run_memory m;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &r->ctx), SP_OK,
                      sp_last_open_error())) {
        free(r);
        return TEST_FAIL;
    }
    attempt_once(r, &a, &m, 1);
    unsigned long total = fault_stats(r->ctx).calls, visible = a.visible_calls;
    sp_context_destroy(r->ctx);
    for (unsigned long k = 1; k <= total; k++) {
        unsigned long before = harness_failures();
        harness_context("failing backend call %lu of %lu with SP_ERR_DEVICE_LOST", k, total);
        device_lost_at(r, k, visible);
        if (harness_failures() != before && getenv("SP_TEST_VERBOSE") == NULL)
            break;
    }
    if (r->unreached)
        printf("  %lu of those calls were past the end of the attempt that was to fail them\n",
               r->unreached);
    harness_context("%s", "");
    free(r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(sweep_pageable),
        TEST_ENTRY(sweep_with_report),
        TEST_ENTRY(sweep_pinned),
        TEST_ENTRY(sweep_registered),
        TEST_ENTRY(sweep_streams_and_pieces),
        TEST_ENTRY(sweep_kernel_copies),
        TEST_ENTRY(sweep_device_lost),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
