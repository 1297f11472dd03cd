/*
 * test_run_io host|cuda [filter]: sp_pipeline_run_io, sources and sinks instead of arrays.
 *
 * Sequential sources giving whole chunks, random short reads and one record at a time, with
 * n_records known and 0 (until the source returns 0, also at once and at a chunk's end):
 * every call on the calling thread, in record order, asking for at least one record; the
 * sink called in record order with whole chunks; the output checked against the reference.
 * Positional sources and sinks (chunks of 512 KiB each way, so the staging threads share
 * them out): every record read and written exactly once, in calls of whole records inside
 * the run, from whichever threads. A source or sink failing at a random record fails the run
 * with SP_ERR_STAGE_FAILED naming it, and the pipeline runs right after; a positional source
 * giving too few records, a sequential one ending early or giving too many, likewise. The
 * report's records, chunks, chunk_records and pinned_bytes. NULL io, read or write, a
 * positional source of unknown length and n_records that overflow are refused. The same on
 * a fault context with random delays on every queue and with one queue delayed at a time.
 * Exits 77 when the backend is absent.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

/* ---- a source and a sink over arrays ------------------------------------------------------- */

typedef enum read_mode { READ_WHOLE, READ_SHORT, READ_ONE, READ_MODES } read_mode;
static const char *const mode_names[] = {"whole", "short reads", "one at a time"};

#define NO_RECORD SIZE_MAX
#define MAX_THREADS 16

typedef struct endpoint {
    const unsigned char *data; /* source: the records it gives */
    unsigned char *out;        /* sink: where the records go */
    size_t rec;
    size_t n;                  /* records it has (source) or may take (sink) */
    int positional;
    read_mode mode;
    size_t fail_at;            /* fail the call that covers this record */
    int too_few;               /* positional: give one record less than asked */
    int too_many;              /* sequential: give one record more than asked */
    size_t end_early;          /* sequential: end (give 0) at this record */
    pthread_t caller;
    /* sequential */
    size_t next;
    test_rng rng;
    /* positional: how often each record was read or written */
    atomic_uchar *seen;
    pthread_mutex_t lock;
    pthread_t threads[MAX_THREADS];
    size_t n_threads;
    atomic_ulong calls;
    atomic_ulong violations;
} endpoint;

static int endpoint_init(endpoint *e, const unsigned char *data, unsigned char *out, size_t rec,
                         size_t n, int positional, read_mode mode, uint64_t seed)
{
    memset(e, 0, sizeof *e);
    e->data = data;
    e->out = out;
    e->rec = rec;
    e->n = n;
    e->positional = positional;
    e->mode = mode;
    e->fail_at = NO_RECORD;
    e->end_early = NO_RECORD;
    e->caller = pthread_self();
    rng_init(&e->rng, seed);
    pthread_mutex_init(&e->lock, NULL);
    e->seen = calloc(n + 1, sizeof *e->seen);
    return CHECK(e->seen != NULL);
}

static void endpoint_free(endpoint *e)
{
    free(e->seen);
    pthread_mutex_destroy(&e->lock);
}

/* The first few contract breaches are reported (what, then the two numbers it names). */
#define VIOLATION(e, fmt, a, b)                                                               \
    do {                                                                                      \
        if (atomic_fetch_add(&(e)->violations, 1) < 3)                                        \
            harness_fail(__FILE__, __LINE__, fmt, (size_t)(a), (size_t)(b));                  \
    } while (0)

/* Checks where a call comes from and which records it covers. */
static void note_call(endpoint *e, size_t first, size_t count)
{
    atomic_fetch_add(&e->calls, 1);
    if (count == 0 || first > e->n || count > e->n - first)
        VIOLATION(e, "a call for records [%zu, +%zu) outside the run", first, count);
    if (!e->positional) {
        if (!pthread_equal(pthread_self(), e->caller))
            VIOLATION(e, "a sequential call for records %zu.. on another thread (+%zu)", first,
                      count);
        if (first != e->next)
            VIOLATION(e, "a sequential call from record %zu where %zu was next", first, e->next);
        return;
    }
    pthread_mutex_lock(&e->lock);
    size_t t = 0;
    while (t < e->n_threads && !pthread_equal(e->threads[t], pthread_self()))
        t++;
    if (t == e->n_threads && t < MAX_THREADS)
        e->threads[e->n_threads++] = pthread_self();
    pthread_mutex_unlock(&e->lock);
    for (size_t r = first; r < first + count && r < e->n; r++)
        if (atomic_fetch_add(&e->seen[r], 1) != 0)
            VIOLATION(e, "record %zu came twice (a call of %zu records)", r, count);
}

static int covers(size_t first, size_t count, size_t record)
{
    return record != NO_RECORD && record >= first && record - first < count;
}

static sp_status source_read(void *dst, size_t first, size_t max, size_t *records, void *user)
{
    endpoint *e = user;
    size_t give = max, left = max;
    if (max == 0)
        VIOLATION(e, "a source asked for 0 records from %zu (of %zu)", first, e->n);
    if (!e->positional) {
        size_t end = e->end_early < e->n ? e->end_early : e->n;
        left = first < end ? end - first : 0;
        if (e->mode == READ_ONE)
            give = 1;
        else if (e->mode == READ_SHORT && max > 0)
            give = 1 + rng_below(&e->rng, max);
        if (give > left)
            give = left;
    } else if (e->too_few && max > 0) {
        give = max - 1;
    }
    if (give > 0)
        note_call(e, first, give);
    else
        atomic_fetch_add(&e->calls, 1); /* the end of a sequential source */
    if (covers(first, max, e->fail_at))
        return SP_ERR_BACKEND;
    if (give > 0 && first < e->n && give <= e->n - first)
        memcpy(dst, e->data + first * e->rec, give * e->rec);
    if (!e->positional)
        e->next = first + give;
    if (e->too_many && give == max && left > max)
        give = max + 1; /* claims a record more than there was room for */
    *records = give;
    return SP_OK;
}

static sp_status sink_write(const void *src, size_t first, size_t records, void *user)
{
    endpoint *e = user;
    note_call(e, first, records);
    if (covers(first, records, e->fail_at))
        return SP_ERR_BACKEND;
    if (first <= e->n && records <= e->n - first)
        memcpy(e->out + first * e->rec, src, records * e->rec);
    if (!e->positional)
        e->next = first + records;
    return SP_OK;
}

/* ---- a case: a chain, a source of n records, a sink ---------------------------------------- */

typedef struct io_case {
    size_t n;          /* records the source has */
    int known;         /* io.n_records = n (else 0: until the source ends) */
    int positional;
    read_mode mode;
    size_t chunk;
    unsigned depth;
    size_t n_stages;
    unsigned staging_threads;
} io_case;

static void describe(const io_case *c, const char *prefix)
{
    harness_context("%s n=%zu %s %s %s chunk=%zu depth=%u stages=%zu threads=%u", prefix, c->n,
                    c->known ? "known" : "until-0", c->positional ? "positional" : "sequential",
                    mode_names[c->mode], c->chunk, c->depth, c->n_stages, c->staging_threads);
}

typedef struct io_rig {
    sp_context *ctx;
    mix_chain chain;
    sp_pipeline *p;
    size_t in_rec, out_rec;
    unsigned char *in, *out, *want;
    size_t n;
} io_rig;

static int rig_make(io_rig *r, sp_context *ctx, const io_case *c, test_rng *rng)
{
    static const size_t outs_small[] = {12, 3};
    static const size_t outs_wide[] = {64, 64};
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    int wide = c->positional && c->chunk >= 4096;
    r->in_rec = wide ? 64 : 4;
    mix_chain_init(&r->chain, r->in_rec, c->n_stages, wide ? outs_wide : outs_small,
                   (uint32_t)rng_next(rng));
    r->out_rec = mix_chain_out_rec(&r->chain);
    sp_pipeline_config cfg = mix_chain_config(&r->chain, c->chunk, c->depth);
    cfg.staging_threads = c->staging_threads;
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &r->p), SP_OK, sp_context_last_error(ctx)))
        return 0;
    r->n = c->n;
    r->in = malloc(c->n * r->in_rec + 1);
    r->out = malloc(c->n * r->out_rec + 1);
    r->want = malloc(c->n * r->out_rec + 1);
    if (!CHECK(r->in && r->out && r->want))
        return 0;
    rng_fill(rng, r->in, c->n * r->in_rec);
    mix_reference(r->chain.stages, c->n_stages, r->in_rec, r->in, c->n, 0, r->want);
    memset(r->out, 0xA5, c->n * r->out_rec);
    return 1;
}

static void rig_free(io_rig *r)
{
    sp_pipeline_destroy(r->p);
    free(r->in);
    free(r->out);
    free(r->want);
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static void check_report(const io_rig *r, const io_case *c, const sp_report *rep)
{
    size_t chunks = (c->n + c->chunk - 1) / c->chunk;
    CHECK_EQ(rep->records, c->n);
    CHECK_EQ(rep->chunks, chunks);
    CHECK_EQ(rep->chunk_records, c->chunk);
    CHECK_EQ(rep->depth, c->depth);
    CHECK_EQ(rep->batches, c->n > 0);
    /* the slots' staging, whatever the data's size: 256-byte aligned slots each way */
    CHECK_EQ(rep->pinned_bytes, (size_t)c->depth * (round_up(c->chunk * r->in_rec, 256) +
                                                    round_up(c->chunk * r->out_rec, 256)));
}

/* One run of a case; returns its status. With `check`, the run must succeed and is checked
 * whole: output, calls, report. */
static sp_status run_case(sp_context *ctx, const io_case *c, test_rng *rng, int check,
                          void (*arm)(endpoint *src, endpoint *sink, const io_case *c,
                                      test_rng *rng),
                          char *error, size_t error_size)
{
    io_rig r;
    sp_status st = SP_ERR_INVALID_ARGUMENT;
    if (!rig_make(&r, ctx, c, rng)) {
        rig_free(&r);
        return st;
    }
    endpoint src, sink;
    if (endpoint_init(&src, r.in, NULL, r.in_rec, c->n, c->positional, c->mode, rng_next(rng)) &&
        endpoint_init(&sink, NULL, r.out, r.out_rec, c->n, c->positional, READ_WHOLE, 0)) {
        if (arm)
            arm(&src, &sink, c, rng);
        sp_io io = {.read = source_read, .read_user = &src, .write = sink_write,
                    .write_user = &sink, .n_records = c->known ? c->n : 0,
                    .positional = c->positional};
        sp_report rep;
        memset(&rep, 0xFF, sizeof rep);
        st = sp_pipeline_run_io(r.p, &io, &rep);
        if (error)
            snprintf(error, error_size, "%s", sp_pipeline_last_error(r.p));
        if (check && CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(r.p))) {
            compare_records(r.want, r.out, c->n, r.out_rec, "output");
            CHECK_EQ(src.violations, 0);
            CHECK_EQ(sink.violations, 0);
            check_report(&r, c, &rep);
            CHECK_EQ(mix_chain_violations(&r.chain), 0);
            if (c->positional)
                for (size_t i = 0; i < c->n; i++)
                    if (!CHECK_MSG(atomic_load(&src.seen[i]) == 1 &&
                                       atomic_load(&sink.seen[i]) == 1,
                                   "record %zu read %u and written %u times", i,
                                   (unsigned)atomic_load(&src.seen[i]),
                                   (unsigned)atomic_load(&sink.seen[i])))
                        break;
            if (c->positional && c->chunk >= 4096 && c->staging_threads > 1)
                printf("    positional: reads on %zu threads, writes on %zu\n", src.n_threads,
                       sink.n_threads);
        }
        if (st == SP_OK && !check) /* a run meant to fail that did not: still right? */
            compare_records(r.want, r.out, c->n, r.out_rec, "output");
    }
    endpoint_free(&src);
    endpoint_free(&sink);
    rig_free(&r);
    return st;
}

/* ---- the lists ------------------------------------------------------------------------------ */

static size_t size_case(size_t k, size_t chunk)
{
    static const size_t fixed[] = {0, 1, 7, 97};
    if (k < ARRAY_LEN(fixed))
        return fixed[k];
    switch (k - ARRAY_LEN(fixed)) {
    case 0: return chunk - 1;
    case 1: return chunk;
    case 2: return chunk + 1;
    case 3: return 3 * chunk;
    default: return 5 * chunk + 3;
    }
}
#define SIZE_CASES 9

static void sequential_list(sp_context *ctx, test_rng *rng, const char *what)
{
    static const size_t chunks[] = {5, 64};
    size_t step = harness_quick() ? 2 : 1;
    for (size_t i = 0; i < ARRAY_LEN(chunks) * SIZE_CASES * 2; i += step) {
        io_case c = {0};
        c.chunk = chunks[i / (SIZE_CASES * 2)];
        c.n = size_case(i / 2 % SIZE_CASES, c.chunk);
        c.known = (int)(i % 2) && c.n > 0; /* n_records 0 means "until the source ends" */
        c.mode = (read_mode)(i % READ_MODES);
        c.depth = 1 + (unsigned)(i % 4);
        c.n_stages = i % 3;
        c.staging_threads = 1 + (unsigned)(i % 3);
        describe(&c, what);
        run_case(ctx, &c, rng, 1, NULL, NULL, 0);
    }
}

static void positional_list(sp_context *ctx, test_rng *rng, const char *what)
{
    /* chunks of 8192 records of 64 bytes: 512 KiB each way, shared out over the threads */
    static const io_case cases[] = {
        {3 * 8192 + 100, 1, 1, READ_WHOLE, 8192, 2, 1, 4},
        {8192, 1, 1, READ_WHOLE, 8192, 1, 2, 3},
        {2 * 8192 - 1, 1, 1, READ_WHOLE, 8192, 3, 0, 2},
        {97, 1, 1, READ_WHOLE, 5, 2, 1, 4},
        {1, 1, 1, READ_WHOLE, 5, 1, 2, 2},
        {64 * 5 + 4, 1, 1, READ_WHOLE, 64, 4, 2, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        describe(&cases[i], what);
        run_case(ctx, &cases[i], rng, 1, NULL, NULL, 0);
    }
}

static sp_context *open_delayed(uint64_t seed, const char *queue)
{
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delay_us = queue ? 500 : 20;
    cfg.random_delay_us = queue ? 0 : 150;
    cfg.seed = (unsigned long)seed;
    cfg.delay_queue = queue;
    sp_context *ctx = NULL;
    CHECK_STATUS(sp_context_create_fault(g_kind, 0, &cfg, &ctx), SP_OK, sp_context_last_error(ctx));
    return ctx;
}

static sp_context *open_plain(void)
{
    sp_context *ctx = NULL;
    CHECK_STATUS(sp_context_create(g_kind, 0, &ctx), SP_OK, sp_context_last_error(ctx));
    return ctx;
}

static int lists(int delayed, uint64_t salt)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    sp_context *ctx = delayed ? open_delayed(rng_next(&rng), NULL) : open_plain();
    if (!ctx)
        return TEST_FAIL;
    sequential_list(ctx, &rng, delayed ? "delayed sequential" : "sequential");
    positional_list(ctx, &rng, delayed ? "delayed positional" : "positional");
    sp_context_destroy(ctx);
    if (delayed) {
        static const char *const queues[] = {"h2d", "alpha", "bravo", "d2h"};
        for (size_t q = 0; q < ARRAY_LEN(queues); q++) {
            ctx = open_delayed(0, queues[q]);
            if (!ctx)
                return TEST_FAIL;
            char what[48];
            snprintf(what, sizeof what, "queue %s delayed:", queues[q]);
            for (int positional = 0; positional <= 1; positional++) {
                io_case c = {16 * 7 + 3, 1, positional, READ_SHORT, 16, 2, 2, 2};
                describe(&c, what);
                run_case(ctx, &c, &rng, 1, NULL, NULL, 0);
                c.known = 0;
                c.positional = 0;
                describe(&c, what);
                run_case(ctx, &c, &rng, 1, NULL, NULL, 0);
            }
            sp_context_destroy(ctx);
        }
    }
    harness_context("%s", "");
    return TEST_OK;
}

TEST(sources_and_sinks) { return lists(0, 1); }
TEST(sources_and_sinks_delayed) { return lists(1, 2); }

/* ---- failures ------------------------------------------------------------------------------- */

static size_t g_fail_record;

static void arm_source_fail(endpoint *src, endpoint *sink, const io_case *c, test_rng *rng)
{
    (void)sink;
    src->fail_at = g_fail_record = rng_below(rng, c->n);
}

static void arm_sink_fail(endpoint *src, endpoint *sink, const io_case *c, test_rng *rng)
{
    (void)src;
    sink->fail_at = g_fail_record = rng_below(rng, c->n);
}

static void arm_too_few(endpoint *src, endpoint *sink, const io_case *c, test_rng *rng)
{
    (void)sink;
    (void)c;
    (void)rng;
    src->too_few = 1;
}

static void arm_too_many(endpoint *src, endpoint *sink, const io_case *c, test_rng *rng)
{
    (void)sink;
    (void)c;
    (void)rng;
    src->too_many = 1;
}

static void arm_end_early(endpoint *src, endpoint *sink, const io_case *c, test_rng *rng)
{
    (void)sink;
    src->end_early = rng_below(rng, c->n);
}

/* A run meant to fail: SP_ERR_STAGE_FAILED, a text with each of `words`, then the same
 * pipeline's context runs the case right. */
static void fail_case(sp_context *ctx, const io_case *c, test_rng *rng,
                      void (*arm)(endpoint *, endpoint *, const io_case *, test_rng *),
                      const char *const *words, size_t n_words)
{
    char error[512];
    sp_status st = run_case(ctx, c, rng, 0, arm, error, sizeof error);
    if (CHECK_STATUS(st, SP_ERR_STAGE_FAILED, error))
        for (size_t w = 0; w < n_words; w++)
            CHECK_HAS(error, words[w]);
    run_case(ctx, c, rng, 1, NULL, NULL, 0); /* the context is fine (and so is run_io) */
}

/* The same pipeline after a failed run: run_io and sp_pipeline_run are right. */
static void pipeline_after_failure(sp_context *ctx, test_rng *rng, int positional, int sink)
{
    io_case c = {16 * 9 + 5, 1, positional, READ_SHORT, 16, 3, 2, 2};
    describe(&c, sink ? "sink fails, then the same pipeline:" : "source fails, then:");
    io_rig r;
    if (rig_make(&r, ctx, &c, rng)) {
        endpoint src, snk;
        if (endpoint_init(&src, r.in, NULL, r.in_rec, c.n, positional, c.mode, 7) &&
            endpoint_init(&snk, NULL, r.out, r.out_rec, c.n, positional, READ_WHOLE, 0)) {
            (sink ? &snk : &src)->fail_at = 1 + rng_below(rng, c.n - 1);
            sp_io io = {sizeof(sp_io), source_read, &src, sink_write, &snk, c.n, positional, NULL, NULL, NULL};
            CHECK_STATUS(sp_pipeline_run_io(r.p, &io, NULL), SP_ERR_STAGE_FAILED,
                         sp_pipeline_last_error(r.p));
            CHECK_HAS(sp_pipeline_last_error(r.p), sink ? "sink" : "source");
            endpoint_free(&src);
            endpoint_free(&snk);
            if (endpoint_init(&src, r.in, NULL, r.in_rec, c.n, positional, c.mode, 8) &&
                endpoint_init(&snk, NULL, r.out, r.out_rec, c.n, positional, READ_WHOLE, 0)) {
                memset(r.out, 0x5A, c.n * r.out_rec);
                if (CHECK_STATUS(sp_pipeline_run_io(r.p, &io, NULL), SP_OK,
                                 sp_pipeline_last_error(r.p)))
                    compare_records(r.want, r.out, c.n, r.out_rec, "run_io after a failure");
            }
            memset(r.out, 0x5A, c.n * r.out_rec);
            if (CHECK_STATUS(sp_pipeline_run(r.p, r.in, c.n, r.out, NULL), SP_OK,
                             sp_pipeline_last_error(r.p)))
                compare_records(r.want, r.out, c.n, r.out_rec, "a run after a failure");
        }
        endpoint_free(&src);
        endpoint_free(&snk);
    }
    rig_free(&r);
}

static int failures(int delayed, uint64_t salt)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    sp_context *ctx = delayed ? open_delayed(rng_next(&rng), NULL) : open_plain();
    if (!ctx)
        return TEST_FAIL;
    static const char *const source_words[] = {"source", "record"};
    static const char *const sink_words[] = {"sink", "record"};
    static const char *const too_few_words[] = {"positional source", "gave"};
    static const char *const too_many_words[] = {"source", "at most"};
    static const char *const early_words[] = {"source", "ended"};
    size_t rounds = harness_quick() ? 3 : 8;
    for (size_t k = 0; k < rounds; k++) {
        io_case c = {0};
        c.chunk = k % 2 ? 5 : 16;
        c.n = 1 + rng_below(&rng, 12 * c.chunk);
        c.known = 1;
        c.positional = (int)(k % 3 == 2);
        c.mode = (read_mode)(k % READ_MODES);
        c.depth = 1 + (unsigned)(k % 4);
        c.n_stages = k % 3;
        c.staging_threads = 1 + (unsigned)(k % 3);
        describe(&c, "source fails");
        fail_case(ctx, &c, &rng, arm_source_fail, source_words, 2);
        describe(&c, "sink fails");
        fail_case(ctx, &c, &rng, arm_sink_fail, sink_words, 2);
        if (c.positional) {
            describe(&c, "positional source gives too few");
            fail_case(ctx, &c, &rng, arm_too_few, too_few_words, 2);
        } else {
            describe(&c, "sequential source ends early");
            fail_case(ctx, &c, &rng, arm_end_early, early_words, 2);
            if (c.n > c.chunk) {
                describe(&c, "sequential source gives too many");
                fail_case(ctx, &c, &rng, arm_too_many, too_many_words, 2);
            }
        }
        c.known = 0;
        c.positional = 0;
        describe(&c, "source of unknown length fails");
        fail_case(ctx, &c, &rng, arm_source_fail, source_words, 2);
    }
    /* chunks of 512 KiB each way: the staging threads call the positional source and sink
     * for pieces side by side, and several of them fail at once */
    io_case big = {3 * 8192 + 17, 1, 1, READ_WHOLE, 8192, 2, 1, 4};
    describe(&big, "big positional source fails");
    fail_case(ctx, &big, &rng, arm_source_fail, source_words, 2);
    describe(&big, "big positional sink fails");
    fail_case(ctx, &big, &rng, arm_sink_fail, sink_words, 2);
    describe(&big, "big positional source gives too few");
    fail_case(ctx, &big, &rng, arm_too_few, too_few_words, 2);
    for (int positional = 0; positional <= 1; positional++)
        for (int sink = 0; sink <= 1; sink++)
            pipeline_after_failure(ctx, &rng, positional, sink);
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(failing_sources_and_sinks) { return failures(0, 3); }
TEST(failing_sources_and_sinks_delayed) { return failures(1, 4); }

/* ---- bad arguments ---------------------------------------------------------------------------- */

TEST(bad_arguments)
{
    sp_context *ctx = open_plain();
    if (!ctx)
        return TEST_FAIL;
    static const size_t outs[] = {8};
    mix_chain chain;
    mix_chain_init(&chain, 8, 1, outs, 1);
    sp_pipeline_config cfg = mix_chain_config(&chain, 16, 2);
    sp_pipeline *p = NULL;
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        sp_context_destroy(ctx);
        return TEST_FAIL;
    }
    endpoint e;
    static unsigned char data[8];
    if (endpoint_init(&e, data, data, 8, 1, 0, READ_WHOLE, 1)) {
        sp_io good = {sizeof(sp_io), source_read, &e, sink_write, &e, 1, 0, NULL, NULL, NULL};
        sp_io no_read = good, no_write = good, positional_unknown = good, huge = good;
        no_read.read = NULL;
        no_write.write = NULL;
        positional_unknown.positional = 1;
        positional_unknown.n_records = 0;
        huge.n_records = SIZE_MAX / 4;
        CHECK_EQ(sp_pipeline_run_io(NULL, &good, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(sp_pipeline_run_io(p, NULL, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "io is NULL");
        CHECK_STATUS(sp_pipeline_run_io(p, &no_read, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "read");
        CHECK_STATUS(sp_pipeline_run_io(p, &no_write, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "write");
        CHECK_STATUS(sp_pipeline_run_io(p, &positional_unknown, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "positional");
        CHECK_STATUS(sp_pipeline_run_io(p, &huge, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), "overflow");
        CHECK_EQ(e.calls, 0);
        CHECK_EQ(atomic_load(&chain.stages[0].calls), 0);
        endpoint_free(&e);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A source of unknown length and the library's chunk: whole chunks (a run of unknown length
 * is not short), however few records come. */
static void unknown_length_default_chunk(sp_context *ctx, test_rng *rng)
{
    static const size_t outs[] = {4};
    mix_chain chain;
    mix_chain_init(&chain, 4, 1, outs, (uint32_t)rng_next(rng));
    sp_pipeline_config cfg = mix_chain_config(&chain, 0, 3);
    sp_pipeline *p = NULL;
    harness_context("unknown length, the library's chunk");
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)))
        return;
    const size_t n = 1000;
    unsigned char *in = malloc(n * 4), *out = malloc(n * 4), *want = malloc(n * 4);
    endpoint src, sink;
    if (CHECK(in && out && want) && endpoint_init(&src, in, NULL, 4, n, 0, READ_SHORT, 3) &&
        endpoint_init(&sink, NULL, out, 4, n, 0, READ_WHOLE, 0)) {
        rng_fill(rng, in, n * 4);
        mix_reference(chain.stages, 1, 4, in, n, 0, want);
        sp_io io = {sizeof(sp_io), source_read, &src, sink_write, &sink, 0, 0, NULL, NULL, NULL};
        sp_report rep;
        memset(&rep, 0xFF, sizeof rep);
        if (CHECK_STATUS(sp_pipeline_run_io(p, &io, &rep), SP_OK, sp_pipeline_last_error(p))) {
            compare_records(want, out, n, 4, "output");
            CHECK_EQ(rep.records, n);
            CHECK_EQ(rep.chunks, 1);
            CHECK_EQ(rep.chunk_records, sp_pipeline_chunk_records(p, (size_t)1 << 40));
        }
        endpoint_free(&src);
        endpoint_free(&sink);
    }
    free(in);
    free(out);
    free(want);
    sp_pipeline_destroy(p);
}

/* A source of unknown length that is empty: a run of nothing, and a report that says so. */
TEST(unknown_length_reports)
{
    sp_context *ctx = open_plain();
    if (!ctx)
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 5);
    for (int stages = 0; stages <= 1; stages++) {
        io_case c = {0, 0, 0, READ_WHOLE, 16, 2, (size_t)stages, 1};
        describe(&c, "empty");
        run_case(ctx, &c, &rng, 1, NULL, NULL, 0);
    }
    unknown_length_default_chunk(ctx, &rng);
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(sources_and_sinks),
        TEST_ENTRY(sources_and_sinks_delayed),
        TEST_ENTRY(failing_sources_and_sinks),
        TEST_ENTRY(failing_sources_and_sinks_delayed),
        TEST_ENTRY(bad_arguments),
        TEST_ENTRY(unknown_length_reports),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
