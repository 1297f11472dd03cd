/* Unit test of HOST graph capture with forks and joins (host_graph.c), through backend.h:
 * queues that join a capture by waiting on an event recorded in it, the rule that every
 * joined queue is joined back before the capture ends, and what is refused meanwhile. The
 * same table runs again through the fault backend with random delays, as the core sees it
 * in the tests. */
#include <string.h>

#include "backend_under_test.h"

enum { QUEUES = 3, BYTES = 4096 };

/* Three queues (0 the origin) and an event for each. */
typedef struct rig {
    backend b;
    sp_bqueue *q[QUEUES];
    sp_bevent *e[QUEUES];
} rig;

static int rig_open(backend b, rig *r)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    int ok = 1;
    for (int k = 0; k < QUEUES; k++) {
        ok &= CHECK_OK(b.ops->queue_create(b.impl, "graph", 0, &r->q[k]));
        ok &= CHECK_OK(b.ops->event_create(b.impl, SP_EVENT_SYNC, &r->e[k]));
    }
    return ok;
}

static void rig_close(rig *r)
{
    for (int k = 0; k < QUEUES; k++) {
        r->b.ops->event_destroy(r->b.impl, r->e[k]);
        r->b.ops->queue_destroy(r->b.impl, r->q[k]);
    }
}

static sp_status fork_to(rig *r, int k)
{
    sp_status st = r->b.ops->event_record(r->b.impl, r->e[0], r->q[0]);
    return st == SP_OK ? r->b.ops->queue_wait(r->b.impl, r->q[k], r->e[0]) : st;
}

static sp_status join_from(rig *r, int k)
{
    sp_status st = r->b.ops->event_record(r->b.impl, r->e[k], r->q[k]);
    return st == SP_OK ? r->b.ops->queue_wait(r->b.impl, r->q[0], r->e[k]) : st;
}

/* A copy on every queue, the branches forked and joined: one launch on the origin does all
 * three copies, and a rebase moves a branch's copy. After the capture the branches are
 * ordinary queues again, and the fork event an ordinary event (HOST's rule; the core never
 * uses an event recorded in a capture outside it). */
static void test_fork_join_replays_every_branch(backend b)
{
    static unsigned char src[QUEUES][BYTES], moved[BYTES], dev[QUEUES][BYTES];
    rig r;
    if (!rig_open(b, &r))
        return;
    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    for (int k = 1; k < QUEUES; k++)
        CHECK_OK(fork_to(&r, k));
    for (int k = 0; k < QUEUES; k++)
        CHECK_OK(b.ops->copy_h2d(b.impl, dev[k], src[k], BYTES, r.q[k]));
    for (int k = 1; k < QUEUES; k++)
        CHECK_OK(join_from(&r, k));
    sp_bgraph *g = NULL;
    CHECK_OK(b.ops->capture_end(b.impl, r.q[0], &g));
    for (int k = 0; k < QUEUES; k++)
        memset(src[k], 0x30 + k, BYTES);
    memset(dev, 0, sizeof dev);
    if (CHECK(g != NULL) && CHECK_OK(b.ops->graph_launch(b.impl, g, r.q[0])) &&
        CHECK_OK(b.ops->queue_sync(b.impl, r.q[0])))
        for (int k = 0; k < QUEUES; k++)
            CHECK(memcmp(dev[k], src[k], BYTES) == 0);
    memset(moved, 0x77, BYTES);
    if (g && CHECK_OK(b.ops->graph_rebase(b.impl, g, 1, src[2], moved, BYTES)) &&
        CHECK_OK(b.ops->graph_launch(b.impl, g, r.q[0])) &&
        CHECK_OK(b.ops->queue_sync(b.impl, r.q[0]))) {
        CHECK(memcmp(dev[2], moved, BYTES) == 0);
        CHECK(memcmp(dev[1], src[1], BYTES) == 0);
    }
    /* the branch runs its own work again, and the fork event is an ordinary event */
    memset(dev[1], 0, BYTES);
    CHECK_OK(b.ops->copy_h2d(b.impl, dev[1], src[1], BYTES, r.q[1]));
    CHECK_OK(b.ops->queue_sync(b.impl, r.q[1]));
    CHECK(memcmp(dev[1], src[1], BYTES) == 0);
    int complete = 0;
    CHECK_OK(b.ops->event_query(b.impl, r.e[0], &complete));
    CHECK(complete);
    b.ops->graph_destroy(b.impl, g);
    rig_close(&r);
}

/* Ends a capture that must fail with `want`, and checks the queues are out of it. */
static void end_must_fail(rig *r, sp_status want)
{
    sp_bgraph *g = (sp_bgraph *)r; /* must be reset, not left as it was */
    CHECK_STATUS(r->b.ops->capture_end(r->b.impl, r->q[0], &g), want);
    CHECK(g == NULL);
    for (int k = 0; k < QUEUES; k++)
        CHECK_OK(r->b.ops->queue_sync(r->b.impl, r->q[k]));
}

/* A branch never joined back, and one with work after its join: the capture cannot end. */
static void test_unjoined_branch_fails(backend b)
{
    static unsigned char src[BYTES], dev[BYTES];
    rig r;
    if (!rig_open(b, &r))
        return;
    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(fork_to(&r, 1));
    CHECK_OK(b.ops->copy_h2d(b.impl, dev, src, BYTES, r.q[1]));
    end_must_fail(&r, SP_ERR_UNSUPPORTED);
    CHECK(strstr(sp_backend_error(), "not joined back") != NULL);

    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(fork_to(&r, 1));
    CHECK_OK(join_from(&r, 1));
    CHECK_OK(b.ops->copy_h2d(b.impl, dev, src, BYTES, r.q[1]));
    end_must_fail(&r, SP_ERR_UNSUPPORTED);
    rig_close(&r);
}

static sp_status copy_cell(const sp_chunk *c, void *user)
{
    (void)c;
    unsigned char **cells = user; /* cells[1] = cells[0] */
    *cells[1] = *cells[0];
    return SP_OK;
}

/* Launches take turns with two orders: branches as early as the edges allow, and the origin
 * as early as they allow. Here the branch reads a cell the origin writes, but the fork comes
 * before that write: nothing orders them, and one of two launches must show it. With the
 * fork after the write, every launch is right. */
static void test_unstated_dependency_shows(backend b)
{
    static unsigned char src = 0x5A, dev, seen;
    unsigned char *cells[2] = {&dev, &seen};
    sp_chunk chunk = {0};
    for (int fork_after_write = 0; fork_after_write < 2; fork_after_write++) {
        rig r;
        if (!rig_open(b, &r))
            return;
        CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
        if (fork_after_write)
            CHECK_OK(b.ops->copy_h2d(b.impl, &dev, &src, 1, r.q[0]));
        CHECK_OK(fork_to(&r, 1));
        if (!fork_after_write)
            CHECK_OK(b.ops->copy_h2d(b.impl, &dev, &src, 1, r.q[0]));
        CHECK_OK(b.ops->launch(b.impl, r.q[1], copy_cell, cells, &chunk));
        CHECK_OK(join_from(&r, 1));
        sp_bgraph *g = NULL;
        CHECK_OK(b.ops->capture_end(b.impl, r.q[0], &g));
        int wrong = 0;
        for (int launch = 0; g && launch < 2; launch++) {
            dev = seen = 0;
            CHECK_OK(b.ops->graph_launch(b.impl, g, r.q[0]));
            CHECK_OK(b.ops->queue_sync(b.impl, r.q[0]));
            wrong += seen != src;
        }
        CHECK(fork_after_write ? wrong == 0 : wrong > 0);
        b.ops->graph_destroy(b.impl, g);
        rig_close(&r);
    }
}

/* A queue destroyed during a capture: a branch breaks it; the origin ends it, and the
 * queues that joined are ordinary queues again. */
static void test_queue_destroyed_during_capture(backend b)
{
    static unsigned char src[BYTES], dev[BYTES];
    rig r;
    if (!rig_open(b, &r))
        return;
    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(fork_to(&r, 1));
    b.ops->queue_destroy(b.impl, r.q[1]);
    CHECK_OK(b.ops->queue_create(b.impl, "graph", 0, &r.q[1]));
    end_must_fail(&r, SP_ERR_UNSUPPORTED);
    CHECK(strstr(sp_backend_error(), "destroyed") != NULL);

    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(fork_to(&r, 2));
    b.ops->queue_destroy(b.impl, r.q[0]);
    r.q[0] = NULL;
    memset(src, 0x42, BYTES);
    CHECK_OK(b.ops->copy_h2d(b.impl, dev, src, BYTES, r.q[2]));
    CHECK_OK(b.ops->queue_sync(b.impl, r.q[2]));
    CHECK(memcmp(dev, src, BYTES) == 0);
    int complete = 0;
    CHECK_OK(b.ops->event_query(b.impl, r.e[0], &complete));
    CHECK_OK(b.ops->queue_create(b.impl, "graph", 0, &r.q[0]));
    rig_close(&r);
}

/* capture_end belongs to the origin; a joined queue asking is refused and changes nothing
 * (HOST's rule: CUDA refuses it too, with cudaErrorStreamCaptureUnmatched). */
static void test_end_on_branch_refused(backend b)
{
    rig r;
    if (!rig_open(b, &r))
        return;
    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(fork_to(&r, 1));
    sp_bgraph *g = NULL;
    CHECK_STATUS(b.ops->capture_end(b.impl, r.q[1], &g), SP_ERR_INVALID_ARGUMENT);
    CHECK_OK(join_from(&r, 1));
    CHECK_OK(b.ops->capture_end(b.impl, r.q[0], &g));
    CHECK(g != NULL);
    b.ops->graph_destroy(b.impl, g);
    rig_close(&r);
}

/* Waiting on an event recorded outside the capture, or asking the host about one recorded
 * in it, breaks the capture. */
static void test_outside_events_break_the_capture(backend b)
{
    rig r;
    if (!rig_open(b, &r))
        return;
    CHECK_OK(b.ops->event_record(b.impl, r.e[2], r.q[2]));
    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_STATUS(b.ops->queue_wait(b.impl, r.q[0], r.e[2]), SP_ERR_UNSUPPORTED);
    end_must_fail(&r, SP_ERR_UNSUPPORTED);

    CHECK_OK(b.ops->capture_begin(b.impl, r.q[0]));
    CHECK_OK(b.ops->event_record(b.impl, r.e[0], r.q[0]));
    int complete = 0;
    CHECK_STATUS(b.ops->event_query(b.impl, r.e[0], &complete), SP_ERR_UNSUPPORTED);
    CHECK_STATUS(b.ops->event_sync(b.impl, r.e[0]), SP_ERR_UNSUPPORTED);
    end_must_fail(&r, SP_ERR_UNSUPPORTED);
    rig_close(&r);
}

/* ---- the list ---------------------------------------------------------------------------- */

/* Each test on HOST, and through the fault backend with random delays, as the core sees it in
 * the tests. */
static const sp_fault_config jitter = {.random_delay_us = 200, .seed = 7};

#define ON_HOST_AND_FAULT(name)                                                                \
    TEST(host_##name) { return run_on_host(test_##name); }                                      \
    TEST(fault_##name) { return run_on_fault(test_##name, &jitter, 1); }

ON_HOST_AND_FAULT(fork_join_replays_every_branch)
ON_HOST_AND_FAULT(unjoined_branch_fails)
ON_HOST_AND_FAULT(end_on_branch_refused)
ON_HOST_AND_FAULT(unstated_dependency_shows)
ON_HOST_AND_FAULT(queue_destroyed_during_capture)
ON_HOST_AND_FAULT(outside_events_break_the_capture)

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(host_fork_join_replays_every_branch),
        TEST_ENTRY(host_unjoined_branch_fails),
        TEST_ENTRY(host_end_on_branch_refused),
        TEST_ENTRY(host_unstated_dependency_shows),
        TEST_ENTRY(host_queue_destroyed_during_capture),
        TEST_ENTRY(host_outside_events_break_the_capture),
        TEST_ENTRY(fault_fork_join_replays_every_branch),
        TEST_ENTRY(fault_unjoined_branch_fails),
        TEST_ENTRY(fault_end_on_branch_refused),
        TEST_ENTRY(fault_unstated_dependency_shows),
        TEST_ENTRY(fault_queue_destroyed_during_capture),
        TEST_ENTRY(fault_outside_events_break_the_capture),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
