/*
 * test_device_ends host|cuda [filter]: device memory at either end of a run or a stream batch
 * (sp_device_alloc, sp_memcpy). Every combination of pageable, pinned and device memory in
 * and out, chains of 0 to 2 mix stages, sizes that leave a short last chunk, in place on the
 * device, graph mode asked for, streams, and random delays on every queue (fault backend).
 * Outputs are poisoned before each run and every record is compared with the host reference
 * after copying it back; the report's pcie_bytes and engine names say what crossed. On HOST,
 * device memory is host memory the backend keeps as device blocks. Exits 77 when the backend
 * is absent.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contexts.h"
#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_io.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

#define CHUNK 16
#define POISON 0xC3

typedef enum end_kind { END_PAGEABLE, END_PINNED, END_DEVICE, END_KINDS } end_kind;
static const char *end_name(end_kind k)
{
    return k == END_DEVICE ? "device" : k == END_PINNED ? "pinned" : "pageable";
}

/* One end of a run: its memory, and a host copy to fill or compare. */
typedef struct end {
    end_kind kind;
    sp_context *ctx;
    void *mem;
    size_t bytes;
} end;

static int end_alloc(end *e, sp_context *ctx, end_kind kind, size_t bytes)
{
    e->kind = kind;
    e->ctx = ctx;
    e->bytes = bytes;
    e->mem = NULL;
    sp_status st = kind == END_DEVICE   ? sp_device_alloc(ctx, bytes, &e->mem)
                   : kind == END_PINNED ? sp_host_alloc(ctx, bytes, &e->mem)
                                        : ((e->mem = malloc(bytes)) ? SP_OK : SP_ERR_OUT_OF_MEMORY);
    return CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx));
}

static void end_free(end *e)
{
    if (e->kind == END_DEVICE)
        sp_device_free(e->ctx, e->mem);
    else if (e->kind == END_PINNED)
        sp_host_free(e->ctx, e->mem);
    else
        free(e->mem);
    e->mem = NULL;
}

/* host -> the end's memory, and back (sp_memcpy does every direction). */
static int end_put(end *e, const void *host, size_t bytes)
{
    return CHECK_STATUS(sp_memcpy(e->ctx, e->mem, host, bytes), SP_OK,
                        sp_context_last_error(e->ctx));
}
static int end_get(end *e, void *host, size_t bytes)
{
    return CHECK_STATUS(sp_memcpy(e->ctx, host, e->mem, bytes), SP_OK,
                        sp_context_last_error(e->ctx));
}

static const sp_engine_report *engine_named(const sp_report *r, const char *name)
{
    for (size_t e = 0; e < r->n_engines; e++)
        if (strcmp(r->engines[e].name, name) == 0)
            return &r->engines[e];
    return NULL;
}

/* The report says what crossed PCIe and which copies stayed on the device. */
static void check_report(const sp_report *r, end_kind in, end_kind out, size_t in_bytes,
                         size_t out_bytes, int timed)
{
    CHECK_EQ(r->pcie_bytes, (in == END_DEVICE ? 0 : in_bytes) + (out == END_DEVICE ? 0 : out_bytes));
    CHECK_EQ(r->staged_in, in == END_PAGEABLE);
    CHECK_EQ(r->staged_out, out == END_PAGEABLE);
    if (!timed)
        return;
    CHECK(engine_named(r, in == END_DEVICE ? "d2d in" : "h2d") != NULL);
    CHECK(engine_named(r, out == END_DEVICE ? "d2d out" : "d2h") != NULL);
}

typedef struct job {
    mix_chain chain;
    size_t n, in_rec, out_rec;
    unsigned char *in_host, *want, *got;
} job;

static int job_make(job *j, test_rng *rng, size_t n_stages, int same_size)
{
    size_t out_recs[2] = {same_size ? 8 : 1 + rng_below(rng, 16), 8};
    mix_chain_init(&j->chain, 8, n_stages, out_recs, (uint32_t)rng_next(rng));
    j->in_rec = 8;
    j->out_rec = mix_chain_out_rec(&j->chain);
    j->n = CHUNK * (3 + rng_below(rng, 5)) + 1 + rng_below(rng, CHUNK - 1);
    j->in_host = malloc(j->n * j->in_rec);
    j->want = malloc(j->n * j->out_rec);
    j->got = malloc(j->n * j->out_rec);
    if (!CHECK(j->in_host && j->want && j->got))
        return 0;
    rng_fill(rng, j->in_host, j->n * j->in_rec);
    mix_reference_run(j->chain.stages, n_stages, j->in_rec, j->in_host, j->n, CHUNK, j->want);
    return 1;
}

static void job_free(job *j)
{
    free(j->in_host);
    free(j->want);
    free(j->got);
}

static sp_pipeline *make_pipeline(sp_context *ctx, job *j, sp_graph_mode graph)
{
    sp_pipeline_config cfg = mix_chain_config(&j->chain, CHUNK, 3);
    cfg.graph = graph;
    sp_pipeline *p = NULL;
    CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx));
    return p;
}

/* One run with `in` and `out` of the given kinds, every record checked. */
static void one_run(sp_context *ctx, test_rng *rng, end_kind ik, end_kind ok, size_t n_stages,
                    sp_graph_mode graph, int timed)
{
    job j;
    if (!job_make(&j, rng, n_stages, 0))
        return;
    harness_context("in %s, out %s, %zu stages, %zu records%s", end_name(ik), end_name(ok),
                    n_stages, j.n, graph == SP_GRAPH_ON ? ", graph on" : "");
    sp_pipeline *p = make_pipeline(ctx, &j, graph);
    end in, out;
    if (p && end_alloc(&in, ctx, ik, j.n * j.in_rec)) {
        if (end_alloc(&out, ctx, ok, j.n * j.out_rec)) {
            memset(j.got, POISON, j.n * j.out_rec);
            if (end_put(&in, j.in_host, j.n * j.in_rec) && end_put(&out, j.got, j.n * j.out_rec)) {
                sp_report rep;
                sp_status st = sp_pipeline_run(p, in.mem, j.n, out.mem, timed ? &rep : NULL);
                if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)) &&
                    end_get(&out, j.got, j.n * j.out_rec)) {
                    compare_records(j.want, j.got, j.n, j.out_rec, "output");
                    if (timed)
                        check_report(&rep, ik, ok, j.n * j.in_rec, j.n * j.out_rec,
                                     graph != SP_GRAPH_ON);
                    if (timed && graph == SP_GRAPH_ON && (ik == END_DEVICE || ok == END_DEVICE))
                        CHECK_HAS(rep.notes, "device-resident end");
                }
            }
            end_free(&out);
        }
        end_free(&in);
    }
    sp_pipeline_destroy(p);
    job_free(&j);
}

static int every_combination(sp_context *ctx, uint64_t salt)
{
    if (!ctx)
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    for (int ik = 0; ik < END_KINDS; ik++)
        for (int ok = 0; ok < END_KINDS; ok++)
            for (size_t stages = 0; stages <= 2; stages++)
                one_run(ctx, &rng, (end_kind)ik, (end_kind)ok, stages, SP_GRAPH_OFF,
                        stages != 1);
    one_run(ctx, &rng, END_DEVICE, END_DEVICE, 1, SP_GRAPH_ON, 1);
    one_run(ctx, &rng, END_DEVICE, END_PINNED, 2, SP_GRAPH_ON, 1);
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

static sp_context *open_plain(void) { return rig_open_plain(g_kind); }
static sp_context *open_delayed(uint64_t seed) { return rig_open_delayed(g_kind, seed); }

TEST(every_combination_of_ends) { return every_combination(open_plain(), 1); }
TEST(every_combination_of_ends_delayed)
{
    return every_combination(open_delayed(harness_seed() ^ 2), 2);
}

/* In place on the device: in == out, equal record sizes. */
TEST(in_place_on_the_device)
{
    sp_context *ctx = open_plain();
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 3);
    job j;
    if (!ctx || !job_make(&j, &rng, 2, 1))
        return TEST_FAIL;
    sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
    end buf;
    if (p && end_alloc(&buf, ctx, END_DEVICE, j.n * j.in_rec)) {
        if (end_put(&buf, j.in_host, j.n * j.in_rec) &&
            CHECK_STATUS(sp_pipeline_run(p, buf.mem, j.n, buf.mem, NULL), SP_OK,
                         sp_pipeline_last_error(p)) &&
            end_get(&buf, j.got, j.n * j.out_rec))
            compare_records(j.want, j.got, j.n, j.out_rec, "in place");
        end_free(&buf);
    }
    sp_pipeline_destroy(p);
    job_free(&j);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A stream's batches alternate device and host ends; each checked when its DONE comes. */
TEST(stream_batches_with_device_ends)
{
    sp_context *ctx = open_plain();
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 4);
    enum { N = 6 };
    job j[N];
    end in[N], out[N];
    if (!ctx)
        return TEST_FAIL;
    size_t first = 0;
    for (int k = 0; k < N; k++) {
        job_make(&j[k], &rng, 1, 0);
        j[k].chain = j[0].chain; /* one pipeline: one chain */
        j[k].out_rec = j[0].out_rec;
        free(j[k].want);
        free(j[k].got);
        j[k].want = malloc(j[k].n * j[k].out_rec);
        j[k].got = malloc(j[k].n * j[k].out_rec);
        mix_reference(j[k].chain.stages, 1, j[k].in_rec, j[k].in_host, j[k].n, first, j[k].want);
        first += j[k].n;
    }
    sp_pipeline *p = make_pipeline(ctx, &j[0], SP_GRAPH_OFF);
    sp_stream *s = NULL;
    CHECK_STATUS(sp_stream_open(p, NULL, &s), SP_OK, sp_pipeline_last_error(p));
    for (int k = 0; s && k < N; k++) {
        end_alloc(&in[k], ctx, k % 2 ? END_DEVICE : END_PAGEABLE, j[k].n * j[k].in_rec);
        end_alloc(&out[k], ctx, k % 3 ? END_DEVICE : END_PINNED, j[k].n * j[k].out_rec);
        memset(j[k].got, POISON, j[k].n * j[k].out_rec);
        end_put(&in[k], j[k].in_host, j[k].n * j[k].in_rec);
        end_put(&out[k], j[k].got, j[k].n * j[k].out_rec);
        CHECK_STATUS(sp_stream_submit(s, in[k].mem, j[k].n, out[k].mem, (uint64_t)k), SP_OK,
                     sp_stream_last_error(s));
    }
    for (int k = 0; s && k < N; k++) {
        sp_stream_event ev;
        if (!CHECK_EQ(sp_stream_next(s, &ev, 30.0), SP_OK) || !CHECK_EQ(ev.status, SP_OK))
            break;
        CHECK_EQ(ev.tag, (uint64_t)k);
        end_get(&out[k], j[k].got, j[k].n * j[k].out_rec);
        compare_records(j[k].want, j[k].got, j[k].n, j[k].out_rec, "batch");
    }
    CHECK_EQ(sp_stream_close(s, NULL), SP_OK);
    for (int k = 0; k < N; k++) {
        end_free(&in[k]);
        end_free(&out[k]);
        job_free(&j[k]);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

#ifdef SP_HAVE_CUDA
/* Records of `got` that differ from `want` (no check: the early reader is meant to). */
static size_t differing(const unsigned char *want, const unsigned char *got, size_t n,
                        size_t rec)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(want + i * rec, got + i * rec, rec) != 0;
    return bad;
}

/* The consumer's copy of `out` into `check`, on its own stream, waited for. */
static int consumer_reads(void *consumer, void *check, const void *out, size_t bytes)
{
    return CHECK_EQ(sp_test_copy_async(check, out, bytes, consumer), 0) &&
           CHECK_EQ(sp_test_stream_sync(consumer), 0);
}

/* d2h's queue delayed 3 ms an operation on the GPU: a consumer that reads `out` without the
 * hand-off sees the poison (which shows the test can fail), one that reads after HANDED_OFF
 * sees every record. */
static void hand_off_on_cuda(sp_context *ctx, job *j, test_rng *rng)
{
    (void)rng;
    sp_pipeline *p = make_pipeline(ctx, j, SP_GRAPH_OFF);
    sp_stream *s = NULL;
    void *consumer = NULL, *check = NULL;
    end in, out;
    size_t in_bytes = j->n * j->in_rec, out_bytes = j->n * j->out_rec;
    if (!p || !CHECK_EQ(sp_stream_open(p, NULL, &s), SP_OK) ||
        !CHECK_EQ(sp_test_stream_new(&consumer), 0) ||
        !CHECK_EQ(sp_host_alloc(ctx, out_bytes, &check), SP_OK) ||
        !end_alloc(&in, ctx, END_DEVICE, in_bytes))
        return;
    if (end_alloc(&out, ctx, END_DEVICE, out_bytes)) {
        unsigned char *poison = malloc(out_bytes);
        memset(poison, POISON, out_bytes);
        end_put(&in, j->in_host, in_bytes);
        end_put(&out, poison, out_bytes);
        sp_stream_event ev;
        /* without the hand-off: read at once */
        CHECK_EQ(sp_stream_submit(s, in.mem, j->n, out.mem, 1), SP_OK);
        if (consumer_reads(consumer, check, out.mem, out_bytes))
            CHECK_MSG(differing(j->want, check, j->n, j->out_rec) > 0,
                      "a consumer reading at once saw the whole output: the test cannot fail");
        CHECK_EQ(sp_stream_next(s, &ev, 30.0), SP_OK);
        CHECK_EQ(ev.kind, SP_EVENT_DONE);
        end_put(&out, poison, out_bytes);
        /* with it: the stream's second batch, its records numbered from n */
        unsigned char *want2 = malloc(out_bytes);
        mix_reference(j->chain.stages, j->chain.n_stages, j->in_rec, j->in_host, j->n, j->n,
                      want2);
        CHECK_EQ(sp_stream_submit_to(s, in.mem, j->n, out.mem, 2, consumer), SP_OK);
        if (CHECK_EQ(sp_stream_next(s, &ev, 30.0), SP_OK) &&
            CHECK_EQ(ev.kind, SP_EVENT_HANDED_OFF) && CHECK_EQ(ev.tag, 2) &&
            consumer_reads(consumer, check, out.mem, out_bytes))
            compare_records(want2, check, j->n, j->out_rec, "what the consumer read");
        free(want2);
        if (CHECK_EQ(sp_stream_next(s, &ev, 30.0), SP_OK))
            CHECK(ev.kind == SP_EVENT_DONE && ev.status == SP_OK);
        /* refused: no stream, an output in host memory */
        CHECK_EQ(sp_stream_submit_to(s, in.mem, j->n, out.mem, 3, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(sp_stream_submit_to(s, in.mem, j->n, check, 3, consumer),
                 SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_stream_last_error(s), "not device memory");
        free(poison);
        end_free(&out);
    }
    end_free(&in);
    CHECK_EQ(sp_stream_close(s, NULL), SP_OK);
    sp_host_free(ctx, check);
    sp_test_stream_free(consumer);
    sp_pipeline_destroy(p);
}
#endif

TEST(hand_off_to_a_consumer_stream)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 7);
    if (g_kind == SP_BACKEND_HOST) { /* no native streams: refused, saying so */
        sp_context *ctx = open_plain();
        job j;
        if (!ctx || !job_make(&j, &rng, 1, 0))
            return TEST_FAIL;
        sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
        sp_stream *s = NULL;
        int dummy;
        if (p && CHECK_EQ(sp_stream_open(p, NULL, &s), SP_OK)) {
            CHECK_EQ(sp_stream_submit_to(s, j.in_host, j.n, j.got, 1, &dummy),
                     SP_ERR_UNSUPPORTED);
            CHECK_HAS(sp_stream_last_error(s), "CUDA stream");
            CHECK_EQ(sp_stream_close(s, NULL), SP_OK);
        }
        sp_pipeline_destroy(p);
        job_free(&j);
        sp_context_destroy(ctx);
        return TEST_OK;
    }
#ifdef SP_HAVE_CUDA
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delay_us = 3000;
    cfg.delay_queue = "d2h";
    sp_context *ctx = NULL;
    job j;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, &cfg, &ctx), SP_OK,
                      sp_context_last_error(ctx)) ||
        !job_make(&j, &rng, 1, 0))
        return TEST_FAIL;
    hand_off_on_cuda(ctx, &j, &rng);
    job_free(&j);
    sp_context_destroy(ctx);
#endif
    return TEST_OK;
}

/* sp_memcpy in every direction, and what it refuses. */
TEST(memcpy_every_way)
{
    sp_context *ctx = open_plain();
    if (!ctx)
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 5);
    enum { B = 4096 + 13 };
    unsigned char src[B], back[B];
    rng_fill(&rng, src, B);
    void *d1 = NULL, *d2 = NULL, *pin = NULL;
    CHECK_EQ(sp_device_alloc(ctx, B, &d1), SP_OK);
    CHECK_EQ(sp_device_alloc(ctx, B, &d2), SP_OK);
    CHECK_EQ(sp_host_alloc(ctx, B, &pin), SP_OK);
    if (d1 && d2 && pin) {
        CHECK_EQ(sp_memcpy(ctx, d1, src, B), SP_OK);  /* host to device */
        CHECK_EQ(sp_memcpy(ctx, d2, d1, B), SP_OK);   /* device to device */
        CHECK_EQ(sp_memcpy(ctx, pin, d2, B), SP_OK);  /* device to pinned host */
        CHECK_EQ(sp_memcpy(ctx, back, pin, B), SP_OK); /* host to host */
        CHECK_EQ(memcmp(src, back, B), 0);
        CHECK_EQ(sp_memcpy(ctx, d1, (char *)d1 + 8, 64), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_context_last_error(ctx), "overlap");
        CHECK_EQ(sp_memcpy(ctx, NULL, src, 1), SP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(sp_memcpy(ctx, d1, src, 0), SP_OK);
    }
    void *none = NULL;
    CHECK_EQ(sp_device_alloc(ctx, 0, &none), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_device_alloc(ctx, 1, NULL), SP_ERR_INVALID_ARGUMENT);
    sp_device_free(ctx, d1);
    sp_device_free(ctx, d2);
    sp_device_free(ctx, NULL);
    sp_host_free(ctx, pin);
    CHECK_EQ(sp_memcpy(NULL, back, src, 1), SP_ERR_INVALID_ARGUMENT);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A range that begins in a device block and runs past it is refused, touching nothing (HOST
 * only: on CUDA what lies past an allocation is the driver's to say). */
TEST(a_range_partly_device_is_refused)
{
    if (g_kind != SP_BACKEND_HOST) {
        harness_skip_reason("%s", "HOST only: past a CUDA allocation may be another one");
        return TEST_SKIP;
    }
    sp_context *ctx = open_plain();
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 6);
    job j;
    if (!ctx || !job_make(&j, &rng, 1, 0))
        return TEST_FAIL;
    sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
    void *dev = NULL, *host = malloc(2 * j.n * j.in_rec);
    CHECK_EQ(sp_device_alloc(ctx, j.n * j.in_rec, &dev), SP_OK);
    if (p && dev && host) {
        /* the second half of the records lies past the device block */
        char *start = (char *)dev + (j.n / 2) * j.in_rec;
        CHECK_EQ(sp_pipeline_run(p, start, j.n, host, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_pipeline_last_error(p), "more than one kind");
    }
    free(host);
    sp_device_free(ctx, dev);
    sp_pipeline_destroy(p);
    job_free(&j);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- run_io with memory at one end (sp_io.in, sp_io.out) -------------------------------- */

/* A source or sink over a host array: positional (exact pieces), or sequential giving at
 * most 5 records a call (short reads). */
typedef struct array_io {
    unsigned char *data;
    size_t rec;
    size_t n;
} array_io;

static sp_status array_read(void *dst, size_t first, size_t max, size_t *records, void *user)
{
    array_io *a = user;
    size_t take = first >= a->n ? 0 : a->n - first < max ? a->n - first : max;
    memcpy(dst, a->data + first * a->rec, take * a->rec);
    *records = take;
    return SP_OK;
}

static sp_status array_read_short(void *dst, size_t first, size_t max, size_t *records,
                                  void *user)
{
    return array_read(dst, first, max < 5 ? max : 5, records, user);
}

static sp_status array_write(const void *src, size_t first, size_t records, void *user)
{
    array_io *a = user;
    memcpy(a->data + first * a->rec, src, records * a->rec);
    return SP_OK;
}

/* A source into `out` of kind ok, or `in` of kind ik into a sink (source = 0); every record
 * checked, and what crossed PCIe. */
static void io_run(sp_context *ctx, test_rng *rng, int source, end_kind kind, int positional)
{
    job j;
    if (!job_make(&j, rng, 1 + rng_below(rng, 2), 0))
        return;
    harness_context("run_io: %s %s, %s, %zu records", source ? "source into" : "sink from",
                    end_name(kind), positional ? "positional" : "sequential", j.n);
    sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
    size_t in_bytes = j.n * j.in_rec, out_bytes = j.n * j.out_rec;
    end mem;
    memset(j.got, POISON, out_bytes);
    if (p && end_alloc(&mem, ctx, kind, source ? out_bytes : in_bytes)) {
        array_io a = {source ? j.in_host : j.got, source ? j.in_rec : j.out_rec, j.n};
        sp_io io = SP_IO_INIT;
        io.n_records = j.n;
        io.positional = positional;
        if (source) {
            io.read = positional ? array_read : array_read_short;
            io.read_user = &a;
            io.out = mem.mem;
        } else {
            io.in = mem.mem;
            io.write = array_write;
            io.write_user = &a;
        }
        sp_report rep;
        if (end_put(&mem, source ? (const void *)j.got : j.in_host, source ? out_bytes : in_bytes) &&
            CHECK_STATUS(sp_pipeline_run_io(p, &io, &rep), SP_OK, sp_pipeline_last_error(p)) &&
            (!source || end_get(&mem, j.got, out_bytes))) {
            compare_records(j.want, j.got, j.n, j.out_rec, "output");
            CHECK_EQ(rep.pcie_bytes, source ? in_bytes + (kind == END_DEVICE ? 0 : out_bytes)
                                            : (kind == END_DEVICE ? 0 : in_bytes) + out_bytes);
        }
        end_free(&mem);
    }
    sp_pipeline_destroy(p);
    job_free(&j);
}

static int io_every_end(sp_context *ctx, uint64_t salt)
{
    if (!ctx)
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ salt);
    for (int kind = 0; kind < END_KINDS; kind++)
        for (int positional = 0; positional <= 1; positional++) {
            io_run(ctx, &rng, 1, (end_kind)kind, positional);
            io_run(ctx, &rng, 0, (end_kind)kind, positional);
        }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(run_io_with_memory_at_one_end) { return io_every_end(open_plain(), 7); }
TEST(run_io_with_memory_at_one_end_delayed) { return io_every_end(open_delayed(harness_seed() ^ 8), 8); }

/* A file straight into device memory: sp_file_io with no output, its sp_io's sink replaced
 * by a device buffer. */
TEST(a_file_into_device_memory)
{
    sp_context *ctx = open_plain();
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 9);
    job j;
    if (!ctx || !job_make(&j, &rng, 2, 0))
        return TEST_FAIL;
    char path[] = "/tmp/sp_device_ends_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, j.in_host, j.n * j.in_rec) == (ssize_t)(j.n * j.in_rec));
    close(fd);
    sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
    sp_file_io_config cfg = SP_FILE_IO_CONFIG_INIT;
    cfg.input = path;
    cfg.in_record_bytes = j.in_rec;
    cfg.out_record_bytes = j.out_rec;
    sp_file_io *f = NULL;
    end dev;
    memset(j.got, POISON, j.n * j.out_rec);
    if (p && CHECK_STATUS(sp_file_io_open(&cfg, &f), SP_OK, sp_file_io_last_error(f)) &&
        end_alloc(&dev, ctx, END_DEVICE, j.n * j.out_rec)) {
        sp_io io = *sp_file_io_get(f);
        CHECK(io.write == NULL && io.positional && io.n_records == j.n);
        io.out = dev.mem;
        sp_report rep;
        if (end_put(&dev, j.got, j.n * j.out_rec) &&
            CHECK_STATUS(sp_pipeline_run_io(p, &io, &rep), SP_OK, sp_pipeline_last_error(p)) &&
            end_get(&dev, j.got, j.n * j.out_rec)) {
            compare_records(j.want, j.got, j.n, j.out_rec, "file to device");
            CHECK_EQ(rep.pcie_bytes, j.n * j.in_rec);
        }
        CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
        end_free(&dev);
    }
    sp_file_io_close(f);
    cfg.journal = 1; /* a journal needs an output */
    CHECK_EQ(sp_file_io_open(&cfg, &f), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_file_io_last_error(f), "journal");
    sp_file_io_close(f);
    unlink(path);
    sp_pipeline_destroy(p);
    job_free(&j);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* Ends given twice or not at all are refused before anything runs. */
TEST(run_io_ends_checked)
{
    sp_context *ctx = open_plain();
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 10);
    job j;
    if (!ctx || !job_make(&j, &rng, 1, 0))
        return TEST_FAIL;
    sp_pipeline *p = make_pipeline(ctx, &j, SP_GRAPH_OFF);
    array_io a = {j.in_host, j.in_rec, j.n};
    sp_io good = SP_IO_INIT;
    good.read = array_read;
    good.read_user = &a;
    good.write = array_write;
    good.write_user = &a;
    good.n_records = j.n;
    sp_io both_in = good, no_out = good, both_memory = good, unknown_length = good;
    both_in.in = j.in_host;
    no_out.write = NULL;
    both_memory.read = NULL;
    both_memory.write = NULL;
    both_memory.in = j.in_host;
    both_memory.out = j.got;
    unknown_length.write = NULL;
    unknown_length.out = j.got;
    unknown_length.n_records = 0;
    const struct {
        const sp_io *io;
        const char *says;
    } cases[] = {{&both_in, "one of io->read and io->in"},
                 {&no_out, "one of io->write and io->out"},
                 {&both_memory, "sp_pipeline_run"},
                 {&unknown_length, "needs n_records"}};
    for (size_t k = 0; p && k < ARRAY_LEN(cases); k++) {
        CHECK_STATUS(sp_pipeline_run_io(p, cases[k].io, NULL), SP_ERR_INVALID_ARGUMENT,
                     sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), cases[k].says);
    }
    sp_pipeline_destroy(p);
    job_free(&j);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(every_combination_of_ends),
        TEST_ENTRY(every_combination_of_ends_delayed),
        TEST_ENTRY(in_place_on_the_device),
        TEST_ENTRY(stream_batches_with_device_ends),
        TEST_ENTRY(memcpy_every_way),
        TEST_ENTRY(a_range_partly_device_is_refused),
        TEST_ENTRY(hand_off_to_a_consumer_stream),
        TEST_ENTRY(run_io_with_memory_at_one_end),
        TEST_ENTRY(run_io_with_memory_at_one_end_delayed),
        TEST_ENTRY(a_file_into_device_memory),
        TEST_ENTRY(run_io_ends_checked),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
