/*
 * test_timing_infer [filter]: the per-operation times of a run with a report, where an
 * operation gets a start event only when its queue is idle as it is enqueued and otherwise
 * starts as the last of what it waits for ends (src/core/submit_direct.c, op_start).
 *
 * HOST backend with fault delays on one queue, so that queues are busy for certain. Every
 * operation must start no earlier than the end of the previous operation on its queue (for
 * a stage on several queues, the chunk `streams` before) and of the operations it waits for
 * (RAW, WAR), and no later than it ends; a delayed operation must span at least the delays
 * that follow its start, and a delayed engine be busy no longer than every delay queued on
 * it (with slack); busy queues must have their starts inferred, and an operation enqueued
 * on an idle queue must have a real start event. The tests were seen to fail with the
 * inference broken in a scratch copy: no inference, inference everywhere, the previous
 * operation, the RAW or the WAR left out, the neighbouring queue's chunk taken as the
 * previous operation.
 * Also the backend entry it rests on, event_query, on HOST and through the fault backend;
 * and the makespan the pipeline keeps of its last run (sp_pipeline_last_makespan_s) in
 * every run kind, with a report and without.
 * White-box: the spans and the "start inferred" flags are read from the pipeline.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/fault/fault_backend.h"
#include "core_door.h"
#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

#define DELAY_US 4000u
#define DELAY_S (DELAY_US * 1e-6)
#define CHUNK 8
#define EPS 1e-7 /* seconds: the host clock is monotonic; this only absorbs rounding */
/* Sleeps overrun and threads wake late: by up to 15 ms for one operation on a 2-core
 * machine busy with compilers. Allowed per operation, on average, on top of the delays
 * queued for it; the order checks, which are exact, are what catch a start inferred too
 * early. */
#define SLACK_S 0.010

/* A pipeline of copy stages named alpha, bravo... on a fault context that delays the queue
 * named `delayed` by DELAY_US before every operation. */
typedef struct rig {
    sp_context *ctx;
    sp_pipeline *p;
    sp_stage stages[2];
    test_buf in, out;
    size_t chunks;
    sp_report report;
} rig;

static int rig_open(rig *r, size_t n_stages, unsigned streams, unsigned depth, size_t chunks,
                    mem_kind in_kind, mem_kind out_kind, const char *delayed)
{
    static const char *const names[] = {"alpha", "bravo"};
    memset(r, 0, sizeof *r);
    r->chunks = chunks;
    sp_fault_config fault = {.delay_us = DELAY_US, .delay_queue = delayed};
    if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, &fault, &r->ctx), SP_OK))
        return 0;
    for (size_t s = 0; s < n_stages; s++)
        r->stages[s] = (sp_stage){.name = names[s], .out_record_bytes = 4, .host = copy4_host,
                                  .streams = streams};
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = r->stages, .n_stages = n_stages,
                              .chunk_records = CHUNK, .depth = depth};
    size_t bytes = chunks * CHUNK * 4;
    return CHECK_EQ(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK) &&
           CHECK_EQ(buf_alloc(&r->in, r->ctx, in_kind, bytes), SP_OK) &&
           CHECK_EQ(buf_alloc(&r->out, r->ctx, out_kind, bytes), SP_OK);
}

static void rig_close(rig *r)
{
    buf_free(&r->in);
    buf_free(&r->out);
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
}

/* One run with a report; the copy stages must hand the input through unchanged. */
static int rig_run(rig *r)
{
    for (size_t k = 0; k < r->in.bytes; k++)
        r->in.data[k] = (unsigned char)(k * 7 + 3);
    buf_poison(&r->out, 0xA5);
    if (!CHECK_STATUS(sp_pipeline_run(r->p, r->in.data, r->chunks * CHUNK, r->out.data,
                                      &r->report),
                      SP_OK, sp_pipeline_last_error(r->p)))
        return 0;
    return compare_records(r->in.data, r->out.data, r->chunks * CHUNK, 4, "output") == 0;
}

/* ---- what the timeline must show ------------------------------------------------------- */

static size_t gpu_engines(const rig *r) { return r->p->n_stages + 2; }

static sp_span span(const rig *r, size_t g, size_t i)
{
    const sp_timeline *t = &r->p->timeline;
    return t->spans[SP_TL_GPU(g) * t->chunks + i];
}

/* The layout of timing.c: one flag per (chunk, engine), chunk-major. */
static int inferred(const rig *r, size_t g, size_t i)
{
    return r->p->timing.inferred[i * gpu_engines(r) + g];
}

/* The dependency rules of pipeline.h, written out again rather than taken from the core,
 * so that a wrong rule there shows here. Returns the number of waits (RAW, WAR). */
static size_t deps_of(const rig *r, size_t g, size_t i, size_t *prev, size_t wait_g[2],
                      size_t wait_i[2])
{
    size_t M = r->p->n_stages, K = r->p->depth, n = 0;
    size_t apart = g >= 1 && g <= M ? r->p->stage_streams[g - 1] : 1;
    *prev = i >= apart ? i - apart : SIZE_MAX;
    if (g > 0) {
        wait_g[n] = g - 1;
        wait_i[n++] = i;
    }
    if (g <= M && i >= K) {
        wait_g[n] = g + 1;
        wait_i[n++] = i - K;
    }
    return n;
}

/* Starts after every dependency ended and no later than its own end. */
static void check_order(const rig *r)
{
    for (size_t i = 0; i < r->chunks; i++)
        for (size_t g = 0; g < gpu_engines(r); g++) {
            sp_span s = span(r, g, i);
            size_t prev, wg[2], wi[2];
            size_t n = deps_of(r, g, i, &prev, wg, wi);
            harness_context("engine %zu chunk %zu: [%.6f, %.6f] s, start %s", g, i, s.start,
                            s.end, inferred(r, g, i) ? "inferred" : "recorded");
            CHECK_MSG(s.start >= 0.0 && s.start <= s.end + EPS, "starts after it ends");
            if (prev != SIZE_MAX)
                CHECK_MSG(s.start >= span(r, g, prev).end - EPS,
                          "starts before chunk %zu on its queue ended at %.6f", prev,
                          span(r, g, prev).end);
            for (size_t k = 0; k < n; k++)
                CHECK_MSG(s.start >= span(r, wg[k], wi[k]).end - EPS,
                          "starts before engine %zu chunk %zu, which it waits for, ended at "
                          "%.6f", wg[k], wi[k], span(r, wg[k], wi[k]).end);
        }
    harness_context("%s", "");
}

/* Engine g is delayed before each of its queued operations. After its start come at least
 * the delays before the work and before the end event; a start inferred early could also
 * take in those before each wait, none more. Checks the first per operation (sleeps are
 * never short) and returns the engine's total of the second, plus slack: a bound for its
 * busy time. */
static double check_delayed_spans(const rig *r, size_t g)
{
    double most = 0.0;
    for (size_t i = 0; i < r->chunks; i++) {
        sp_span s = span(r, g, i);
        size_t prev, wg[2], wi[2];
        size_t waits = deps_of(r, g, i, &prev, wg, wi);
        most += (double)(waits + 2) * DELAY_S + SLACK_S;
        CHECK_MSG(s.end - s.start >= 2 * DELAY_S - EPS,
                  "engine %zu chunk %zu (start %s) took %.6f s, less than the %.6f s of its "
                  "delays after its start", g, i, inferred(r, g, i) ? "inferred" : "recorded",
                  s.end - s.start, 2 * DELAY_S);
    }
    return most;
}

static size_t count_inferred(const rig *r, size_t g)
{
    size_t n = 0;
    for (size_t i = 0; i < r->chunks; i++)
        n += (size_t)inferred(r, g, i);
    return n;
}

static const sp_engine_report *engine_named(const sp_report *rep, const char *name)
{
    for (size_t e = 0; e < rep->n_engines; e++)
        if (strcmp(rep->engines[e].name, name) == 0)
            return &rep->engines[e];
    CHECK_MSG(0, "no engine '%s' in the report", name);
    return NULL;
}

/* The busy time's upper bound rests on sleeps overrunning by less than SLACK_S per
 * operation on average, which a loaded 2-core machine breaks now and then (once by 16 ms over
 * 10 chunks, with compilers beside it). A start inferred too early inflates every run alike,
 * so the bound counts only when BOUND_TRIES runs in a row break it; the order and lower-bound
 * checks, which no load can break, count in every run. Checks the last run of r on engine g
 * (report name `name`); may run r again. */
#define BOUND_TRIES 3
static void check_busy(rig *r, size_t g, const char *name)
{
    for (int attempt = 1;; attempt++) {
        check_order(r);
        double most = check_delayed_spans(r, g);
        const sp_engine_report *e = engine_named(&r->report, name);
        if (e == NULL)
            return;
        CHECK_MSG(e->busy_s >= 2 * DELAY_S * (double)r->chunks - EPS,
                  "%s was busy %.6f s for %zu chunks of at least 2 delays of %.6f s", name,
                  e->busy_s, r->chunks, DELAY_S);
        if (e->busy_s <= most || attempt == BOUND_TRIES) {
            CHECK_MSG(e->busy_s <= most,
                      "%s was busy %.6f s for %zu chunks; its delays allow at most %.6f (in "
                      "%d runs in a row)", name, e->busy_s, r->chunks, most, BOUND_TRIES);
            return;
        }
        if (!rig_run(r))
            return;
    }
}

/* ---- the tests ------------------------------------------------------------------------- */

/* bravo (stage 2) is slow, and the host runs ahead: it waits only for h2d to free each
 * pageable input's staging buffer, and output is pinned. So bravo's queue is busy as each of
 * its operations is enqueued, alpha waits for bravo to free its buffer (WAR) and d2h for
 * bravo's output (RAW). Run twice, so the second run reuses recorded events. */
TEST(busy_queue_starts_are_inferred)
{
    rig r;
    if (!rig_open(&r, 2, 1, 2, 10, MEM_PAGEABLE, MEM_PINNED, "bravo")) {
        rig_close(&r);
        return TEST_FAIL;
    }
    for (int run = 0; run < 2 && rig_run(&r); run++) {
        CHECK_MSG(count_inferred(&r, 2) >= r.chunks / 2,
                  "only %zu of %zu operations on the busy queue had their start inferred",
                  count_inferred(&r, 2), r.chunks);
        check_busy(&r, 2, "bravo");
    }
    rig_close(&r);
    return TEST_OK;
}

/* A stage on two queues: the previous operation on a queue is the chunk two before, never
 * the neighbour running beside it on the other queue (a start taken from the neighbour's end
 * would leave the operation shorter than its own delays). */
TEST(stage_on_two_queues)
{
    rig r;
    if (!rig_open(&r, 1, 2, 4, 12, MEM_PINNED, MEM_PINNED, "alpha")) {
        rig_close(&r);
        return TEST_FAIL;
    }
    if (rig_run(&r)) {
        check_order(&r);
        check_delayed_spans(&r, 1);
        CHECK_MSG(count_inferred(&r, 1) >= r.chunks / 2,
                  "only %zu of %zu operations on the busy queues had their start inferred",
                  count_inferred(&r, 1), r.chunks);
    }
    rig_close(&r);
    return TEST_OK;
}

/* Depth 1 and pageable output: the host enqueues h2d(i) only after d2h(i-1) has completed
 * and it has copied that output out, so h2d's queue and everything h2d waits for are idle
 * by then. Its start must be a real event, after d2h(i-1) ended; a start inferred from
 * h2d(i-1) and alpha(i-1) would fall before it, d2h being slow. */
TEST(idle_queue_gets_a_start_event)
{
    rig r;
    if (!rig_open(&r, 1, 1, 1, 6, MEM_PAGEABLE, MEM_PAGEABLE, "d2h")) {
        rig_close(&r);
        return TEST_FAIL;
    }
    if (rig_run(&r)) {
        check_busy(&r, 2, "d2h");
        for (size_t i = 0; i < r.chunks; i++) {
            CHECK_MSG(!inferred(&r, 0, i), "h2d chunk %zu: start inferred on an idle queue", i);
            if (i > 0)
                CHECK_MSG(span(&r, 0, i).start >= span(&r, 2, i - 1).end - EPS,
                          "h2d chunk %zu starts at %.6f, before d2h chunk %zu ended at %.6f",
                          i, span(&r, 0, i).start, i - 1, span(&r, 2, i - 1).end);
        }
    }
    rig_close(&r);
    return TEST_OK;
}

/* ---- the makespan the library keeps --------------------------------------------------- */

typedef sp_status (*run_fn)(sp_pipeline *, const void *, size_t, void *, sp_report *);

/* One checked run of the rig's data through `p`; returns the pipeline's last makespan and
 * the caller's wall time around the call in *wall. */
static double makespan_of(rig *r, sp_pipeline *p, run_fn run, sp_report *report, double *wall)
{
    for (size_t k = 0; k < r->in.bytes; k++)
        r->in.data[k] = (unsigned char)(k * 5 + 1);
    buf_poison(&r->out, 0x5A);
    double t = sp_now();
    sp_status st = run(p, r->in.data, r->chunks * CHUNK, r->out.data, report);
    *wall = sp_now() - t;
    if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)))
        compare_records(r->in.data, r->out.data, r->chunks * CHUNK, 4, "output");
    return sp_pipeline_last_makespan_s(p);
}

/* Every queue delayed, so that each run kind lasts at least the delays of one of its
 * queues. For stream, serial and graph runs, with a report and without, the pipeline's last
 * makespan must lie between those delays and the wall time around the call, and with a
 * report equal the report's: taken after the drain, before the events are read (were it
 * taken after, it would differ from the report's). A run that does not start reads 0. */
TEST(last_makespan_of_every_run_kind)
{
    rig r;
    sp_pipeline *graph = NULL;
    int ok = rig_open(&r, 1, 1, 4, 8, MEM_PINNED, MEM_PAGEABLE, ""); /* "": every queue */
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = r.stages, .n_stages = 1,
                              .chunk_records = CHUNK, .depth = 4, .graph = SP_GRAPH_ON};
    if (!ok || !CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &graph), SP_OK)) {
        rig_close(&r);
        return TEST_FAIL;
    }
    double chunks = (double)r.chunks;
    const struct {
        const char *name;
        sp_pipeline *p;
        run_fn run;
        double at_least; /* its delays one after another: h2d's; h2d, stage, d2h's; one */
    } kinds[] = {{"stream", r.p, sp_pipeline_run, chunks * DELAY_S},
                 {"serial", r.p, sp_pipeline_run_serial, 3 * chunks * DELAY_S},
                 {"graph", graph, sp_pipeline_run, DELAY_S}};
    for (size_t k = 0; k < ARRAY_LEN(kinds); k++)
        for (int with_report = 0; with_report < 2; with_report++) {
            harness_context("%s run %s a report", kinds[k].name, with_report ? "with" : "without");
            sp_report rep;
            memset(&rep, 0, sizeof rep);
            double wall;
            double m = makespan_of(&r, kinds[k].p, kinds[k].run, with_report ? &rep : NULL,
                                   &wall);
            CHECK_MSG(m >= kinds[k].at_least - EPS && m <= wall + EPS,
                      "last makespan %.6f s, outside [%.6f, %.6f] (its delays, the wall time)",
                      m, kinds[k].at_least, wall);
            if (with_report)
                CHECK_MSG(m == rep.makespan_s, "last makespan %.9f s, the report's %.9f s", m,
                          rep.makespan_s);
            if (with_report && kinds[k].p == graph)
                CHECK_MSG(rep.graph == 1, "no graph (notes: %s)", rep.notes);
        }
    harness_context("%s", "");
    CHECK_EQ(sp_pipeline_run(r.p, r.in.data, 0, r.out.data, NULL), SP_OK);
    CHECK(sp_pipeline_last_makespan_s(r.p) == 0.0 && sp_pipeline_last_submit_s(r.p) == 0.0);
    double wall;
    CHECK(makespan_of(&r, r.p, sp_pipeline_run, NULL, &wall) > 0.0);
    CHECK_EQ(sp_pipeline_run(r.p, NULL, 1, r.out.data, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK(sp_pipeline_last_makespan_s(r.p) == 0.0 && sp_pipeline_last_makespan_s(NULL) == 0.0);
    sp_pipeline_destroy(graph);
    rig_close(&r);
    return TEST_OK;
}

/* The backend entry the inference rests on, on HOST and through the fault backend: an event
 * never recorded is complete, one recorded behind a delay is not until the delay is over. */
static void query_one_backend(const sp_backend_ops *ops, void *impl)
{
    sp_bqueue *q = NULL;
    sp_bevent *e = NULL;
    int complete = -1;
    if (CHECK_EQ(ops->queue_create(impl, "q", 0, &q), SP_OK) &&
        CHECK_EQ(ops->event_create(impl, SP_EVENT_TIMING, &e), SP_OK)) {
        CHECK(ops->event_query(impl, e, &complete) == SP_OK && complete == 1);
        CHECK_EQ(ops->queue_delay(impl, q, 50000), SP_OK);
        CHECK_EQ(ops->event_record(impl, e, q), SP_OK);
        CHECK(ops->event_query(impl, e, &complete) == SP_OK && complete == 0);
        CHECK_EQ(ops->event_sync(impl, e), SP_OK);
        CHECK(ops->event_query(impl, e, &complete) == SP_OK && complete == 1);
        CHECK_EQ(ops->event_query(impl, NULL, &complete), SP_ERR_INVALID_ARGUMENT);
    }
    ops->event_destroy(impl, e);
    if (q)
        ops->queue_destroy(impl, q);
}

TEST(event_query_answers)
{
    const sp_backend_ops *host = sp_backend_host_ops();
    void *impl = NULL;
    if (!CHECK_EQ(host->open(0, &impl), SP_OK))
        return TEST_FAIL;
    query_one_backend(host, impl);
    void *fault = NULL;
    if (CHECK_EQ(sp_fault_open(host, impl, NULL, &fault), SP_OK)) {
        query_one_backend(sp_backend_fault_ops(), fault);
        sp_backend_fault_ops()->close(fault); /* closes the host backend too */
    } else {
        host->close(impl);
    }
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(event_query_answers),
        TEST_ENTRY(busy_queue_starts_are_inferred),
        TEST_ENTRY(stage_on_two_queues),
        TEST_ENTRY(idle_queue_gets_a_start_event),
        TEST_ENTRY(last_makespan_of_every_run_kind),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
