/*
 * test_fault_sweep host|cuda [filter]
 *
 * With the fault backend, counts the backend calls of a clean "create, run, destroy", then
 * fails each of those calls once in turn. Every injected failure must surface as an error
 * status with an error text, leave no queue, event or allocation behind, and leave the
 * context able to run a fresh pipeline correctly. Done over pageable, pinned and registered
 * memory and with a report (timing events). A failure reported as SP_ERR_DEVICE_LOST must
 * make the context lost for good. Then the same with failures that persist (every call from
 * the Nth on fails, as on a device that stopped working), also in graph mode, and queues that
 * cannot be synchronized at all. Exits 77 when the backend is absent.
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
 * kernel directly, pageable output through the staging buffer.
 * PATH_GRAPH: graph mode on pinned memory, depth 4 (groups of 2 chunks), 10 full chunks: two
 * groups captured, each then checked against its stages run directly and replayed, and a
 * short chunk in stream mode. */
typedef enum sweep_path {
    PATH_PAGEABLE,
    PATH_REPORT,
    PATH_PINNED,
    PATH_REGISTERED,
    PATH_STREAMS,
    PATH_KERNEL,
    PATH_GRAPH
} sweep_path;

static const char *const path_names[] = {"pageable", "pageable+report", "pinned", "registered",
                                          "streams+pieces", "kernel copies", "graph"};

#define SWEEP_CHUNK 16
#define SWEEP_RECORDS (SWEEP_CHUNK * 4 + 5) /* 5 chunks, the last one short */
#define SWEEP_DEPTH 2
#define GRAPH_RECORDS (SWEEP_CHUNK * 10 + 5)
#define GRAPH_DEPTH 4
#define MAX_RECORDS GRAPH_RECORDS

typedef struct rig {
    sp_context *ctx;
    sweep_path path;
    size_t records;
    int persist; /* failures persist: every call from the failed one on fails */
    mix_chain chain; /* 2 stages, 4 -> 12 -> 3 bytes */
    unsigned char in[MAX_RECORDS * 4], out[MAX_RECORDS * 3], want[MAX_RECORDS * 3];
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

/* Arms the failure of call fail_call (0: none), and of every later call when `persist`.
 * Small random delays on every queue keep work in flight when a failure lands, so a run that
 * returns without draining is caught. Delays are not counted as calls, so the call sequence
 * stays the same. */
static void arm_with(sp_context *ctx, unsigned long fail_call, sp_status fail_status,
                     int persist)
{
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_call = fail_call;
    cfg.fail_status = fail_status;
    cfg.fail_persist = persist;
    cfg.random_delay_us = 100;
    cfg.seed = fail_call;
    CHECK_EQ(sp_fault_set(ctx, &cfg), SP_OK);
}

static void arm(sp_context *ctx, unsigned long fail_call, sp_status fail_status)
{
    arm_with(ctx, fail_call, fail_status, 0);
}

static unsigned long stage_calls(const mix_chain *chain)
{
    return atomic_load(&chain->stages[0].calls) + atomic_load(&chain->stages[1].calls);
}

/* After a failed run returns, nothing of it may still be running: no stage is called and no
 * copy writes the output (pinned output is written by the copies directly). The pause is
 * longer than the delays of the operations a run can have in flight (depth x 14 operations
 * of 100 us at most, on 4 queues side by side). */
static void check_drained(const mix_chain *chain, const void *out, size_t bytes)
{
    static unsigned char before[sizeof ((rig *)0)->out];
    unsigned long calls = stage_calls(chain);
    memcpy(before, out, bytes);
    struct timespec pause = {0, 5000000L};
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
    if (r->path == PATH_PINNED || r->path == PATH_KERNEL || r->path == PATH_GRAPH) {
        st = sp_host_alloc(r->ctx, sizeof r->in, &m->pinned_in);
        if (st == SP_OK && r->path != PATH_KERNEL)
            st = sp_host_alloc(r->ctx, sizeof r->out, &m->pinned_out);
        if (st == SP_OK) {
            memcpy(m->pinned_in, r->in, sizeof r->in);
            m->in = m->pinned_in;
            if (r->path != PATH_KERNEL)
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
    int graph = r->path == PATH_GRAPH;
    if (a->status == SP_OK) {
        sp_pipeline_config cfg = mix_chain_config(&r->chain, SWEEP_CHUNK,
                                                  graph ? GRAPH_DEPTH : SWEEP_DEPTH);
        if (r->path == PATH_STREAMS || r->path == PATH_KERNEL)
            cfg.copy_piece_bytes = 20;
        cfg.copy_by_kernel = r->path == PATH_KERNEL;
        cfg.graph = graph ? SP_GRAPH_ON : SP_GRAPH_OFF;
        note(a, sp_pipeline_create(r->ctx, &cfg, &p), sp_context_last_error(r->ctx));
    }
    sp_status st = SP_OK;
    size_t out_bytes = r->records * 3;
    if (a->status == SP_OK) {
        sp_report rep;
        memset(m->out, 0xA5, sizeof r->out);
        mix_chain_arm(&r->chain, SWEEP_CHUNK);
        st = sp_pipeline_run(p, m->in, r->records, m->out,
                             r->path == PATH_REPORT || graph ? &rep : NULL);
        note(a, st, sp_pipeline_last_error(p));
        /* Even when the failed call was a queue_sync of the drain, the run waits for that
         * queue before returning: nothing may touch the output afterwards. */
        if (st != SP_OK && st != SP_ERR_DEVICE_LOST)
            check_drained(&r->chain, m->out, out_bytes);
        if (st == SP_OK && verify) {
            compare_records(r->want, m->out, r->records, 3, "output");
            CHECK_EQ(mix_chain_violations(&r->chain), 0);
            CHECK_MSG(!graph || rep.graph == 1, "graph mode was not used: %s", rep.notes);
        }
    }
    sp_pipeline_destroy(p);
    /* A lost device may leave the run's work going until its pipeline is destroyed
     * (streampipe.h, sp_pipeline_run), not after */
    if (st == SP_ERR_DEVICE_LOST)
        check_drained(&r->chain, m->out, out_bytes);
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
    r->records = path == PATH_GRAPH ? GRAPH_RECORDS : SWEEP_RECORDS;
    rng_init(&r->rng, harness_seed() ^ salt);
    rng_fill(&r->rng, r->in, sizeof r->in);
    mix_chain_init(&r->chain, 4, 2, outs, (uint32_t)rng_next(&r->rng));
    for (size_t s = 0; path == PATH_STREAMS && s < 2; s++)
        r->chain.descs[s].streams = 2;
    if (path == PATH_GRAPH)
        mix_chain_position_free(&r->chain); /* what a replay can repeat */
    mix_reference_run(r->chain.stages, 2, 4, r->in, r->records, SWEEP_CHUNK, r->want);
    return r;
}

/* A fresh context for the rest of a sweep, after one was lost. */
static int replace_context(rig *r, long *base_live)
{
    sp_context_destroy(r->ctx);
    r->ctx = NULL;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    *base_live = fault_stats(r->ctx).live_objects;
    return 1;
}

/* What an attempt whose call k was made to fail (and, with r->persist, every call after it)
 * must return: the injected status with the backend's reason; or, with persisting failures,
 * SP_ERR_DEVICE_LOST saying why, when a queue could not be waited for at all. */
static void check_failed_attempt(const rig *r, const attempt *a, sp_status fail_status)
{
    if (r->persist && a->status == SP_ERR_DEVICE_LOST && fail_status != SP_ERR_DEVICE_LOST) {
        CHECK_HAS(a->error, "lost");
        return;
    }
    CHECK_STATUS(a->status, fail_status, a->error);
    CHECK_HAS(a->error, "injected"); /* the backend's reason reaches the error text */
}

/* One injected failure at call k (from call k on, with r->persist); returns 0 when the sweep
 * should stop (it is broken). A lost context is replaced, so the sweep can go on. */
static int fail_one_call(rig *r, unsigned long k, unsigned long visible, sp_status fail_status,
                         long *base_live)
{
    attempt a;
    run_memory m;
    arm_with(r->ctx, k, fail_status, r->persist);
    unsigned long injected = fault_stats(r->ctx).injected;
    attempt_once(r, &a, &m, 0);
    unsigned long more = fault_stats(r->ctx).injected - injected;
    int made = r->persist ? more >= 1 : more == 1;
    if (!made && calls_vary(r->path))
        r->unreached++; /* then the attempt must have succeeded, checked below */
    else
        CHECK_MSG(made, "call %lu was never made (%lu failures injected)", k, more);
    if (made && k <= visible)
        check_failed_attempt(r, &a, fail_status);
    else
        CHECK_STATUS(a.status, SP_OK, a.error); /* a failure in a void cleanup call */
    arm(r->ctx, 0, SP_OK);
    unregister_memory(r, &m); /* an unregister that failed leaves its registration */
    CHECK_EQ(fault_stats(r->ctx).live_objects, *base_live);
    if (a.status == SP_ERR_DEVICE_LOST && !replace_context(r, base_live))
        return 0;
    unsigned long before = harness_failures();
    attempt_once(r, &a, &m, 1); /* the context still works */
    CHECK_STATUS(a.status, SP_OK, a.error);
    return harness_failures() == before;
}

/* Fails every call of a clean create+run+destroy in turn (from that call on, with persist);
 * with `step` > 1 only every step-th call, to keep sanitizer runs short. */
static int sweep_calls(sweep_path path, sp_status fail_status, uint64_t salt, int persist,
                       unsigned long step)
{
    rig *r = rig_new(path, salt);
    if (r == NULL)
        return TEST_FAIL;
    r->persist = persist;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, NULL, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx))) {
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
    for (unsigned long k = 1; k <= total; k += step) {
        harness_context("%s path: failing backend call %lu of %lu%s with %s", path_names[path],
                        k, total, persist ? " and every later one" : "",
                        sp_status_name(fail_status));
        if (!fail_one_call(r, k, a.visible_calls, fail_status, &base_live) &&
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

static int sweep(sweep_path path, sp_status fail_status, uint64_t salt)
{
    return sweep_calls(path, fail_status, salt, 0, 1);
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
                      sp_context_last_error(r->ctx)))
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
                      sp_context_last_error(r->ctx))) {
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

/* ---- failures that persist ---------------------------------------------------------------- */

/* From call N on every call fails, for each N over a clean create+run+destroy: the run still
 * returns only when nothing of it runs (or says the device is lost), the failure is the
 * injected one, nothing leaks, and with the fault cleared the context runs a fresh pipeline
 * correctly. Found in issue 16: a drain whose syncs fail gave up with copies still writing
 * the output, and a graph's check freed its comparison buffer with a copy into it queued.
 * Quick runs (sanitizers) take every other N. */
static unsigned long persist_step(void) { return harness_quick() ? 2 : 1; }

static int persist(sweep_path path, uint64_t salt)
{
    return sweep_calls(path, SP_ERR_BACKEND, salt, 1, persist_step());
}

TEST(persist_pageable) { return persist(PATH_PAGEABLE, 11); }
TEST(persist_with_report) { return persist(PATH_REPORT, 12); }
TEST(persist_pinned) { return persist(PATH_PINNED, 13); }
TEST(persist_registered) { return persist(PATH_REGISTERED, 14); }
TEST(persist_graph) { return persist(PATH_GRAPH, 15); }

/* A rig whose every queue_sync fails (and every queue_drain too, when `drains_fail`), with
 * every queue slowed down by 1 ms an operation, on pageable input and pinned output: the
 * host's turns then wait only for the h2d copies, so the run's d2h copies are still queued
 * when its drain begins. */
static rig *unsyncable_rig(int drains_fail, run_memory *m, sp_pipeline **p)
{
    rig *r = rig_new(PATH_PAGEABLE, 21);
    if (r == NULL)
        return NULL;
    sp_fault_config cfg = {.delay_us = 1000,
                           .fail_op = drains_fail ? "queue_sync,queue_drain" : "queue_sync"};
    memset(m, 0, sizeof *m);
    m->in = r->in;
    int ok = CHECK_STATUS(sp_context_create_fault(g_kind, 0, &cfg, &r->ctx), SP_OK,
                          sp_context_last_error(r->ctx)) &&
             CHECK_STATUS(sp_host_alloc(r->ctx, sizeof r->out, &m->pinned_out), SP_OK,
                          sp_context_last_error(r->ctx));
    sp_pipeline_config pc = mix_chain_config(&r->chain, SWEEP_CHUNK, SWEEP_DEPTH);
    if (ok && !CHECK_STATUS(sp_pipeline_create(r->ctx, &pc, p), SP_OK,
                            sp_context_last_error(r->ctx)))
        ok = 0;
    m->out = m->pinned_out;
    if (!ok) {
        sp_host_free(r->ctx, m->pinned_out);
        sp_context_destroy(r->ctx);
        free(r);
        return NULL;
    }
    memset(m->out, 0xA5, sizeof r->out);
    mix_chain_arm(&r->chain, SWEEP_CHUNK);
    return r;
}

/* Every sync fails, but the HOST backend can always wait for its queues: the run fails with
 * the sync's error and returns only once nothing of it runs. Found in issue 16: it returned
 * SP_ERR_BACKEND ("draining a queue") after asking twice, and about 500 bytes of the output
 * were written after the return. Then the context, not lost, runs the pipeline again. */
TEST(syncs_that_always_fail_still_drain)
{
    run_memory m;
    sp_pipeline *p = NULL;
    rig *r = unsyncable_rig(0, &m, &p);
    if (r == NULL)
        return TEST_FAIL;
    sp_status st = sp_pipeline_run(p, m.in, r->records, m.out, NULL);
    CHECK_STATUS(st, SP_ERR_BACKEND, sp_pipeline_last_error(p));
    CHECK_HAS(sp_pipeline_last_error(p), "draining a queue");
    CHECK_HAS(sp_pipeline_last_error(p), "injected");
    check_drained(&r->chain, m.out, r->records * 3);
    CHECK_EQ(sp_fault_set(r->ctx, NULL), SP_OK);
    memset(m.out, 0x5A, sizeof r->out);
    if (CHECK_STATUS(sp_pipeline_run(p, m.in, r->records, m.out, NULL), SP_OK,
                     sp_pipeline_last_error(p)))
        compare_records(r->want, m.out, r->records, 3, "output of the run after");
    sp_pipeline_destroy(p);
    sp_host_free(r->ctx, m.pinned_out);
    sp_context_destroy(r->ctx);
    free(r);
    return TEST_OK;
}

/* Neither syncs nor drains work (a device that cannot be waited for): the run cannot show
 * that its copies have stopped, so it returns SP_ERR_DEVICE_LOST saying why, the context is
 * lost, and the output is left alone once the pipeline is destroyed (streampipe.h). */
TEST(queues_that_cannot_be_waited_for_lose_the_context)
{
    run_memory m;
    sp_pipeline *p = NULL;
    rig *r = unsyncable_rig(1, &m, &p);
    if (r == NULL)
        return TEST_FAIL;
    sp_status st = sp_pipeline_run(p, m.in, r->records, m.out, NULL);
    CHECK_STATUS(st, SP_ERR_DEVICE_LOST, sp_pipeline_last_error(p));
    CHECK_HAS(sp_pipeline_last_error(p), "draining a queue: fault injected");
    CHECK_HAS(sp_pipeline_last_error(p), "queue_drain");
    CHECK_HAS(sp_pipeline_last_error(p), "until the pipeline is destroyed");
    sp_pipeline_destroy(p);
    check_drained(&r->chain, m.out, r->records * 3);
    CHECK_EQ(sp_fault_set(r->ctx, NULL), SP_OK);
    p = NULL;
    sp_pipeline_config pc = mix_chain_config(&r->chain, SWEEP_CHUNK, SWEEP_DEPTH);
    CHECK_STATUS(sp_pipeline_create(r->ctx, &pc, &p), SP_ERR_DEVICE_LOST,
                 sp_context_last_error(r->ctx));
    sp_pipeline_destroy(p);
    sp_host_free(r->ctx, m.pinned_out);
    CHECK_EQ(fault_stats(r->ctx).live_objects, 0);
    sp_context_destroy(r->ctx);
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
        TEST_ENTRY(persist_pageable),
        TEST_ENTRY(persist_with_report),
        TEST_ENTRY(persist_pinned),
        TEST_ENTRY(persist_registered),
        TEST_ENTRY(persist_graph),
        TEST_ENTRY(syncs_that_always_fail_still_drain),
        TEST_ENTRY(queues_that_cannot_be_waited_for_lose_the_context),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
