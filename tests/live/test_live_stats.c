/*
 * test_live_stats host [filter]: the live counters (sp_pipeline_stats, sp_stream_stats) read
 * from another thread in a tight loop while a run and a stream go on: every counter only
 * grows within a run, the figures stay within the ring's bounds, and the final counts are
 * the records and bytes that were run (every record counted once per engine). A long run
 * with a report (sampled timing, and the full timeline) shows the GPU engines' busy time and
 * hidden transfer while it goes, and once it has ended the report's figures (HOST has
 * counter events, so timing works without a GPU); a run without a report shows neither.
 * TSan (CI's HOST sanitizer build) sees the reader beside the engine. Exits 77 when the
 * backend is absent.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "streampipe.h"
#include "testbuf.h"

#define CHUNK 256u
#define DEPTH 4u
#define CHUNKS 48u
#define N (CHUNK * CHUNKS)

static sp_backend_kind g_kind;

/* ---- a slow stage: the run lasts long enough for many reads ---------------------------- */

typedef struct slow {
    long fail_chunk; /* -1: none */
    long delay_us;   /* per chunk; 0: 300 */
} slow;

static sp_status slow_double(const sp_chunk *c, void *user)
{
    const slow *s = user;
    struct timespec t = {0, (s->delay_us ? s->delay_us : 300) * 1000}; /* 0.3 ms a chunk */
    nanosleep(&t, NULL);
    if (s->fail_chunk >= 0 && (long)c->index == s->fail_chunk)
        return sp_chunk_fail(c, SP_ERR_INVALID_ARGUMENT, "chunk %zu refused", c->index);
    const float *in = c->in;
    double *out = c->out;
    for (size_t i = 0; i < c->records; i++)
        out[i] = 2.0 * in[i];
    return SP_OK;
}

typedef struct rig {
    sp_context *ctx;
    sp_pipeline *p;
    slow stage;
    float *in;
    double *out;
} rig;

/* 1 when the rig is ready (a failed CHECK says why otherwise): chunks of `chunk` records
 * (0: CHUNK), timed as `mode` in runs with a report, room for n records (0: N). */
static int rig_open_as(rig *r, size_t chunk, sp_timeline_mode mode, size_t n);

static int rig_open(rig *r) { return rig_open_as(r, 0, SP_TIMELINE_SAMPLED, 0); }

static int rig_open_as(rig *r, size_t chunk, sp_timeline_mode mode, size_t n)
{
    memset(r, 0, sizeof *r);
    r->stage.fail_chunk = -1;
    if (!CHECK_EQ(sp_context_create(g_kind, 0, &r->ctx), SP_OK))
        return 0;
    sp_stage st = {.name = "double", .out_record_bytes = 8, .host = slow_double,
                   .user = &r->stage};
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = 4;
    cfg.stages = &st;
    cfg.n_stages = 1;
    cfg.chunk_records = chunk ? chunk : CHUNK;
    cfg.depth = DEPTH;
    cfg.timeline = mode;
    n = n ? n : N;
    r->in = malloc(n * sizeof *r->in); /* pageable: both staging engines work */
    r->out = malloc(n * sizeof *r->out);
    if (!CHECK(r->in && r->out))
        return 0;
    for (size_t i = 0; i < n; i++)
        r->in[i] = (float)i;
    return CHECK_EQ(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK);
}

static void rig_close(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
    free(r->in);
    free(r->out);
}

/* ---- the reader on another thread ------------------------------------------------------ */

typedef struct reader {
    const sp_pipeline *p;   /* one of the two */
    const sp_stream *s;
    atomic_int stop;
    long reads, bad;        /* bad: a read that broke a rule (first one described) */
    char why[160];
    uint64_t seen_run;
    long live_hidden, live_busy; /* reads during a run with hidden transfer known, and with
                                    a GPU engine's busy time measured and above 0 */
} reader;

static void broke(reader *r, const char *rule, unsigned long long a, unsigned long long b)
{
    if (r->bad++ == 0)
        snprintf(r->why, sizeof r->why, "%s (%llu then %llu, read %ld)", rule, a, b, r->reads);
}

static void check_step(reader *r, const sp_stats *was, const sp_stats *now)
{
    if (now->chunks_in_flight > DEPTH)
        broke(r, "more chunks in flight than slots", DEPTH, now->chunks_in_flight);
    if (now->run != was->run)
        return; /* a new run starts from zero */
    if (now->records_done < was->records_done)
        broke(r, "records_done went down", was->records_done, now->records_done);
    if (now->elapsed_s < was->elapsed_s)
        broke(r, "elapsed_s went down", 0, 0);
    if (now->wait_s < was->wait_s)
        broke(r, "wait_s went down", 0, 0);
    if (now->timed_chunks < was->timed_chunks)
        broke(r, "timed_chunks went down", was->timed_chunks, now->timed_chunks);
    if (was->hidden_transfer >= 0.0 && now->hidden_transfer < 0.0)
        broke(r, "hidden transfer known, then unknown", 0, 0);
    for (size_t e = 0; e < now->n_engines && e < was->n_engines; e++) {
        const sp_engine_stats *n = &now->engines[e];
        if (n->records < was->engines[e].records)
            broke(r, "an engine's records went down", was->engines[e].records, n->records);
        /* a GPU engine's busy time is an estimate that a newly timed chunk may move down */
        int host = n->kind == SP_ENGINE_STAGE_IN || n->kind == SP_ENGINE_STAGE_OUT;
        if (host && n->busy_s < was->engines[e].busy_s)
            broke(r, "a staging engine's busy time went down", e, 0);
        if (was->engines[e].busy_measured && !n->busy_measured)
            broke(r, "an engine's busy time measured, then not", e, 0);
    }
}

/* Rules of one read on its own: the GPU engines' figures are sane. */
static void check_read(reader *r, const sp_stats *s)
{
    if (!(s->hidden_transfer == -1.0 || (s->hidden_transfer >= 0.0 && s->hidden_transfer <= 1.0)))
        broke(r, "hidden transfer outside [0, 1] and not -1", 0, 0);
    for (size_t e = 0; e < s->n_engines; e++) {
        const sp_engine_stats *n = &s->engines[e];
        if (!(n->busy_s >= 0.0) || (!n->busy_measured && n->busy_s != 0.0))
            broke(r, "a busy time below 0, or one not measured above 0", e, 0);
        /* each engine runs one chunk at a time here: an estimate far past the time elapsed
           is wrong (the bound is loose: the estimate extrapolates from the chunks timed) */
        if (n->busy_s > 2.0 * s->elapsed_s + 0.05)
            broke(r, "a busy time far past the time elapsed", e, 0);
    }
    if (s->active && s->hidden_transfer >= 0.0)
        r->live_hidden++;
    if (s->active && s->n_engines > 1 && s->engines[1].busy_measured && s->engines[1].busy_s > 0.0)
        r->live_busy++;
}

static void *read_loop(void *arg)
{
    reader *r = arg;
    sp_stats was = SP_STATS_INIT, now = SP_STATS_INIT;
    while (!atomic_load(&r->stop)) {
        now.size = sizeof now;
        sp_status st = r->s ? sp_stream_stats(r->s, &now) : sp_pipeline_stats(r->p, &now);
        if (st != SP_OK)
            broke(r, "the read failed", 0, (unsigned long long)-st);
        check_read(r, &now);
        if (r->reads > 0)
            check_step(r, &was, &now);
        if (now.run > r->seen_run)
            r->seen_run = now.run;
        was = now;
        r->reads++;
    }
    return NULL;
}

static int start_reader(reader *r, pthread_t *t)
{
    return CHECK_EQ(pthread_create(t, NULL, read_loop, r), 0);
}


static void stop_reader(reader *r, pthread_t t)
{
    atomic_store(&r->stop, 1);
    pthread_join(t, NULL);
    CHECK_MSG(r->bad == 0, "%ld of %ld reads broke a rule; first: %s", r->bad, r->reads,
              r->why);
    CHECK(r->reads > 10);
}

/* The counts of a finished run of n records through the rig: each engine's once. */
static void check_final(const sp_stats *s, uint64_t n)
{
    CHECK_EQ(s->active, 0);
    CHECK_EQ(s->records_done, n);
    CHECK_EQ(s->bytes_done, n * 4);
    CHECK_EQ(s->chunks_in_flight, 0);
    CHECK_EQ(s->n_engines, 5);
    const uint64_t record_bytes[5] = {4, 4, 4, 8, 8}; /* what each engine reads */
    for (size_t e = 0; e < 5 && e < s->n_engines; e++) {
        CHECK_EQ(s->engines[e].records, n);
        CHECK_EQ(s->engines[e].bytes, n * record_bytes[e]);
    }
    CHECK(strcmp(s->engines[2].name, "double") == 0);
    CHECK_EQ(s->engines[0].busy_measured, 1);
    CHECK(s->engines[0].busy_s > 0.0 && s->engines[4].busy_s > 0.0);
    CHECK(s->engines[0].busy_s <= s->elapsed_s);
    CHECK(s->pinned_bytes > 0 && s->device_bytes > 0);
}

/* A run without a report times nothing: no GPU engine's busy time, hidden transfer unknown
 * (s is the whole layout). */
static void check_untimed(const sp_stats *s)
{
    for (size_t e = 1; e + 1 < s->n_engines; e++) { /* h2d, the stage, d2h */
        CHECK_EQ(s->engines[e].busy_measured, 0);
        CHECK(s->engines[e].busy_s == 0.0);
    }
    CHECK(s->hidden_transfer == -1.0);
    CHECK_EQ(s->timed_chunks, 0);
}

/* ---- the tests --------------------------------------------------------------------------- */

TEST(nothing_before_the_first_run)
{
    rig r;
    sp_stats s = SP_STATS_INIT;
    if (rig_open(&r) && CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK)) {
        CHECK_EQ(s.run, 0);
        CHECK_EQ(s.records_done, 0);
        CHECK(s.pinned_bytes > 0);
    }
    CHECK_EQ(sp_pipeline_stats(NULL, &s), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_pipeline_stats(r.p, NULL), SP_ERR_INVALID_ARGUMENT);
    rig_close(&r);
    return TEST_OK;
}

TEST(a_run_read_from_another_thread)
{
    rig r;
    reader rd = {0};
    pthread_t t;
    if (!rig_open(&r) || (rd.p = r.p, !start_reader(&rd, &t))) {
        rig_close(&r);
        return TEST_FAIL;
    }
    sp_status st = SP_OK;
    for (int k = 0; k < 3 && st == SP_OK; k++) /* three runs: each starts from zero */
        st = sp_pipeline_run(r.p, r.in, N, r.out, NULL);
    stop_reader(&rd, t);
    CHECK_EQ(st, SP_OK);
    sp_stats s = SP_STATS_INIT;
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
    CHECK_EQ(s.run, 3);
    CHECK_EQ(s.records_total, N);
    CHECK_EQ(s.bytes_total, N * 4);
    CHECK_EQ(s.errors, 0);
    check_final(&s, N);
    /* the scheduler's wait is the report's, counted in whole nanoseconds per turn */
    double wait = sp_pipeline_last_wait_s(r.p);
    CHECK(s.wait_s <= wait + 1e-9 && s.wait_s >= wait - 1e-6 * CHUNKS);
    CHECK(s.elapsed_s >= sp_pipeline_last_makespan_s(r.p));
    CHECK(r.out[N - 1] == 2.0 * (N - 1));
    check_untimed(&s);
    rig_close(&r);
    return TEST_OK;
}

/* ---- a run with a report: the GPU engines while it goes, then the report's figures ------- */

#define LONG_CHUNK 64u
#define LONG_CHUNKS 640u /* sampled: the first window, 9 middle ones, the last */
#define LONG_N (LONG_CHUNK * LONG_CHUNKS)

/* After a run with a report: the stats' GPU engines agree with the report's engines, hidden
 * transfer and timed chunks. The engines come from the same timed chunks by the same
 * arithmetic (timeline.h: sp_sampled_total, added in the same order), so they agree to
 * rounding: the tolerance is 1e-9 relative, 1e-12 absolute; hidden transfer, which the
 * report takes from the untimed chunks replayed (timeline_replay.c), is handed to the stats
 * as the report is made (sp_stats_final_hidden). */
static void check_against_report(const sp_stats *s, const sp_report *rep, size_t n)
{
    CHECK_EQ(s->records_done, n);
    CHECK_EQ(s->timed_chunks, rep->timed_chunks);
    CHECK(s->timed_chunks > 0 && s->timed_chunks <= rep->chunks);
    CHECK_MSG(fabs(s->hidden_transfer - rep->hidden_transfer) <= 1e-12,
              "hidden transfer: stats %.15g, report %.15g", s->hidden_transfer,
              rep->hidden_transfer);
    CHECK(s->hidden_transfer >= 0.0 && s->hidden_transfer <= 1.0);
    size_t matched = 0;
    for (size_t e = 0; e < s->n_engines; e++) {
        const sp_engine_stats *g = &s->engines[e];
        if (g->kind == SP_ENGINE_STAGE_IN || g->kind == SP_ENGINE_STAGE_OUT)
            continue;
        CHECK_EQ(g->busy_measured, 1);
        for (size_t k = 0; k < rep->n_engines; k++) {
            const sp_engine_report *x = &rep->engines[k];
            if (x->kind != g->kind || strcmp(x->name, g->name) != 0)
                continue;
            matched++;
            CHECK(x->busy_s > 0.0);
            CHECK_MSG(fabs(g->busy_s - x->busy_s) <= 1e-9 * x->busy_s + 1e-12,
                      "%s: stats %.12g s, report %.12g s", g->name, g->busy_s, x->busy_s);
        }
    }
    CHECK_EQ(matched, 3); /* h2d, the stage, d2h */
}

/* One long run with a report in `mode`, read from another thread all along. */
static void timed_run(sp_timeline_mode mode)
{
    rig r;
    reader rd = {0};
    pthread_t t;
    if (!rig_open_as(&r, LONG_CHUNK, mode, LONG_N) || (rd.p = r.p, !start_reader(&rd, &t))) {
        rig_close(&r);
        return;
    }
    r.stage.delay_us = 60;
    memset(r.out, 0xFF, LONG_N * sizeof *r.out); /* poisoned: NaN until written */
    sp_report rep;
    memset(&rep, 0, sizeof rep);
    sp_status st = sp_pipeline_run(r.p, r.in, LONG_N, r.out, &rep);
    stop_reader(&rd, t);
    CHECK_EQ(st, SP_OK);
    sp_stats s = SP_STATS_INIT;
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
    CHECK_EQ(s.active, 0);
    check_against_report(&s, &rep, LONG_N);
    CHECK(rd.live_busy > 0); /* seen while the run went */
    if (mode == SP_TIMELINE_SAMPLED) {
        CHECK(rep.timed_chunks < LONG_CHUNKS); /* sampled indeed */
        CHECK_MSG(rd.live_hidden > 0, "hidden transfer never known during the run");
    } else {
        CHECK_EQ(rep.timed_chunks, LONG_CHUNKS);
    }
    for (size_t i = 0; i < LONG_N; i++)
        if (!CHECK(r.out[i] == 2.0 * (double)i))
            break;
    /* the next run without a report times nothing: the figures go back to unknown */
    CHECK_EQ(sp_pipeline_run(r.p, r.in, LONG_N, r.out, NULL), SP_OK);
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
    check_untimed(&s);
    rig_close(&r);
}

TEST(a_sampled_run_shows_the_gpu_engines)
{
    timed_run(SP_TIMELINE_SAMPLED);
    return TEST_OK;
}

TEST(a_fully_timed_run_shows_the_gpu_engines)
{
    timed_run(SP_TIMELINE_EVENTS);
    return TEST_OK;
}

TEST(a_failed_run_counts_one_error)
{
    rig r;
    if (!rig_open(&r)) {
        rig_close(&r);
        return TEST_FAIL;
    }
    r.stage.fail_chunk = 5;
    CHECK_EQ(sp_pipeline_run(r.p, r.in, N, r.out, NULL), SP_ERR_STAGE_FAILED);
    sp_stats s = SP_STATS_INIT;
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
    CHECK_EQ(s.errors, 1);
    CHECK_EQ(s.chunks_in_flight, 0);
    CHECK(s.records_done <= 5 * CHUNK); /* only chunks before the failed one */
    r.stage.fail_chunk = -1;
    CHECK_EQ(sp_pipeline_run(r.p, r.in, N, r.out, NULL), SP_OK);
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
    CHECK_EQ(s.errors, 0); /* the next run starts from zero */
    CHECK_EQ(s.run, 2);
    check_final(&s, N);
    rig_close(&r);
    return TEST_OK;
}

TEST(a_stream_read_from_another_thread)
{
    rig r;
    sp_stream *stream = NULL;
    sp_stream_config cfg = SP_STREAM_CONFIG_INIT;
    cfg.max_in_flight = 3;
    if (!rig_open(&r) || !CHECK_EQ(sp_stream_open(r.p, &cfg, &stream), SP_OK)) {
        rig_close(&r);
        return TEST_FAIL;
    }
    reader rd = {.s = stream};
    pthread_t t;
    int ok = start_reader(&rd, &t);
    enum { BATCHES = 8 };
    size_t per = N / BATCHES, taken = 0;
    sp_stream_event ev;
    for (size_t k = 0; k < BATCHES && ok; k++)
        ok = CHECK_EQ(sp_stream_submit(stream, r.in + k * per, per, r.out + k * per, k), SP_OK);
    while (ok && taken < BATCHES)
        if ((ok = CHECK_EQ(sp_stream_next(stream, &ev, -1), SP_OK)))
            taken += ev.kind == SP_EVENT_DONE;
    if (ok)
        stop_reader(&rd, t);
    sp_stats s = SP_STATS_INIT;
    CHECK_EQ(sp_stream_stats(stream, &s), SP_OK);
    CHECK_EQ(s.active, 1); /* open until closed */
    CHECK_EQ(s.records_total, (uint64_t)per * BATCHES);
    CHECK_EQ(s.batches_in_flight, 0);
    CHECK_EQ(s.records_done, (uint64_t)per * BATCHES);
    CHECK_EQ(sp_stream_stats(NULL, &s), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_stream_close(stream, NULL), SP_OK);
    CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK); /* the stream's, once closed */
    check_final(&s, (uint64_t)per * BATCHES);
    rig_close(&r);
    return TEST_OK;
}

TEST(a_stream_counts_failed_batches)
{
    rig r;
    sp_stream *stream = NULL;
    if (!rig_open(&r) || !CHECK_EQ(sp_stream_open(r.p, NULL, &stream), SP_OK)) {
        rig_close(&r);
        return TEST_FAIL;
    }
    r.stage.fail_chunk = 1; /* the second batch's only chunk */
    sp_stream_event ev;
    for (uint64_t k = 0; k < 3; k++)
        CHECK_EQ(sp_stream_submit(stream, r.in, CHUNK, r.out, k), SP_OK);
    for (int taken = 0, ok = 1; taken < 3 && ok;)
        if ((ok = CHECK_EQ(sp_stream_next(stream, &ev, -1), SP_OK)))
            taken += ev.kind == SP_EVENT_DONE;
    sp_stats s = SP_STATS_INIT;
    CHECK_EQ(sp_stream_stats(stream, &s), SP_OK);
    CHECK_EQ(s.errors, 1); /* the failed one; a cancelled one is none */
    (void)sp_stream_close(stream, NULL);
    rig_close(&r);
    return TEST_OK;
}

TEST(the_caller_size_bounds_what_is_written)
{
    rig r;
    if (!rig_open(&r)) {
        rig_close(&r);
        return TEST_FAIL;
    }
    CHECK_EQ(sp_pipeline_run(r.p, r.in, N, r.out, NULL), SP_OK);
    unsigned char buf[sizeof(sp_stats) + 16];
    memset(buf, 0xEE, sizeof buf);
    size_t small = offsetof(sp_stats, active); /* size and run only */
    memcpy(buf, &small, sizeof small);
    CHECK_EQ(sp_pipeline_stats(r.p, (sp_stats *)(void *)buf), SP_OK);
    sp_stats got;
    memcpy(&got, buf, sizeof got);
    CHECK_EQ(got.size, small);
    CHECK_EQ(got.run, 1);
    CHECK_EQ(buf[small], 0xEE); /* nothing past the caller's size */
    size_t tiny = 4;
    memcpy(buf, &tiny, sizeof tiny);
    CHECK_EQ(sp_pipeline_stats(r.p, (sp_stats *)(void *)buf), SP_ERR_INVALID_ARGUMENT);
    sp_stats zero; /* size 0: the first layout, whole */
    memset(&zero, 0, sizeof zero);
    CHECK_EQ(sp_pipeline_stats(r.p, &zero), SP_OK);
    CHECK_EQ(zero.size, offsetof(sp_stats, tune_changes)); /* 0.7's first layout ends there */
    check_final(&zero, N);
    sp_stats whole = SP_STATS_INIT; /* the fields appended after it are written when asked */
    CHECK_EQ(sp_pipeline_stats(r.p, &whole), SP_OK);
    CHECK_EQ(whole.size, sizeof whole);
    CHECK_EQ(whole.tune_changes, 0); /* no budget, nothing changed */
    CHECK_EQ(whole.tune_reason[0], '\0');
    rig_close(&r);
    return TEST_OK;
}

/* Pinned input and output: the copy engines read the user's memory, no staging. */
TEST(pinned_memory_stages_nothing)
{
    rig r;
    float *in = NULL;
    double *out = NULL;
    if (rig_open(&r) && CHECK_EQ(sp_host_alloc(r.ctx, N * sizeof *in, (void **)&in), SP_OK) &&
        CHECK_EQ(sp_host_alloc(r.ctx, N * sizeof *out, (void **)&out), SP_OK)) {
        memset(in, 0, N * sizeof *in);
        CHECK_EQ(sp_pipeline_run(r.p, in, N, out, NULL), SP_OK);
        sp_stats s = SP_STATS_INIT;
        CHECK_EQ(sp_pipeline_stats(r.p, &s), SP_OK);
        CHECK_EQ(s.records_done, N);
        CHECK_EQ(s.engines[0].records, 0);
        CHECK_EQ(s.engines[4].records, 0);
        CHECK_EQ(s.engines[1].records, N);
    }
    sp_host_free(r.ctx, in);
    sp_host_free(r.ctx, out);
    rig_close(&r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(nothing_before_the_first_run),
        TEST_ENTRY(a_run_read_from_another_thread),
        TEST_ENTRY(a_sampled_run_shows_the_gpu_engines),
        TEST_ENTRY(a_fully_timed_run_shows_the_gpu_engines),
        TEST_ENTRY(a_failed_run_counts_one_error),
        TEST_ENTRY(a_stream_read_from_another_thread),
        TEST_ENTRY(a_stream_counts_failed_batches),
        TEST_ENTRY(the_caller_size_bounds_what_is_written),
        TEST_ENTRY(pinned_memory_stages_nothing),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
