/*
 * test_errors [filter] (HOST): every kind of bad input is refused with the right status and
 * an error text that names the problem, before any work starts and without writing to `out`;
 * stage failures are attributed to the stage and chunk and leave the pipeline usable; the
 * status table, version and NULL-tolerant destroy functions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "scenario.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"

/* ---- the status table, version, names ---------------------------------------------------- */

TEST(status_names_and_messages)
{
    static const struct {
        sp_status status;
        const char *name;
    } table[] = {
        {SP_OK, "SP_OK"},
        {SP_ERR_INVALID_ARGUMENT, "SP_ERR_INVALID_ARGUMENT"},
        {SP_ERR_OUT_OF_MEMORY, "SP_ERR_OUT_OF_MEMORY"},
        {SP_ERR_OUT_OF_DEVICE_MEMORY, "SP_ERR_OUT_OF_DEVICE_MEMORY"},
        {SP_ERR_UNSUPPORTED, "SP_ERR_UNSUPPORTED"},
        {SP_ERR_STAGE_FAILED, "SP_ERR_STAGE_FAILED"},
        {SP_ERR_BACKEND, "SP_ERR_BACKEND"},
        {SP_ERR_DEVICE_LOST, "SP_ERR_DEVICE_LOST"},
        {SP_ERR_CANCELLED, "SP_ERR_CANCELLED"},
        {SP_ERR_WOULD_BLOCK, "SP_ERR_WOULD_BLOCK"},
        {SP_ERR_TIMEOUT, "SP_ERR_TIMEOUT"},
    };
    for (size_t i = 0; i < ARRAY_LEN(table); i++) {
        const char *msg = sp_status_message(table[i].status);
        CHECK_MSG(strcmp(sp_status_name(table[i].status), table[i].name) == 0,
                  "sp_status_name(%d) is \"%s\", want \"%s\"", (int)table[i].status,
                  sp_status_name(table[i].status), table[i].name);
        CHECK(msg != NULL && msg[0] != '\0' && strcmp(msg, "unknown status") != 0);
        for (size_t j = 0; j < i; j++)
            CHECK_MSG(strcmp(msg, sp_status_message(table[j].status)) != 0,
                      "statuses %d and %d share the message \"%s\"", (int)table[i].status,
                      (int)table[j].status, msg);
    }
    static const int unknown[] = {1, 7, -11, -100, 12345, -2147483647 - 1};
    for (size_t i = 0; i < ARRAY_LEN(unknown); i++) {
        CHECK(strcmp(sp_status_name((sp_status)unknown[i]), "SP_UNKNOWN_STATUS") == 0);
        CHECK(strcmp(sp_status_message((sp_status)unknown[i]), "unknown status") == 0);
    }
    return TEST_OK;
}

TEST(version_matches_header)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", SP_VERSION_MAJOR, SP_VERSION_MINOR,
             SP_VERSION_PATCH);
    CHECK_MSG(sp_version() != NULL && strcmp(sp_version(), want) == 0,
              "sp_version() is \"%s\", the header says \"%s\"", sp_version(), want);
    return TEST_OK;
}

TEST(backend_names)
{
    CHECK(strcmp(sp_backend_name(SP_BACKEND_AUTO), "auto") == 0);
    CHECK(strcmp(sp_backend_name(SP_BACKEND_HOST), "host") == 0);
    CHECK(strcmp(sp_backend_name(SP_BACKEND_CUDA), "cuda") == 0);
    return TEST_OK;
}

/* Without a GPU (this machine or CI), CUDA is SP_ERR_UNSUPPORTED with a reason; AUTO falls
 * back to HOST; a later successful open clears the reason. */
TEST(cuda_absent_is_unsupported)
{
    sp_context *ctx = NULL;
    sp_status st = sp_context_create(SP_BACKEND_CUDA, 0, &ctx);
    if (st == SP_OK) {
        sp_context_destroy(ctx);
        harness_skip_reason("a CUDA device is present");
        return TEST_SKIP;
    }
    /* as sqlite3_open: the failed open yields a handle whose last error says why */
    CHECK_STATUS(st, SP_ERR_UNSUPPORTED, sp_context_last_error(ctx));
    if (CHECK(ctx != NULL)) {
        CHECK_HAS(sp_context_last_error(ctx), "CUDA");
        CHECK_EQ(sp_context_backend(ctx), SP_BACKEND_AUTO);
        /* every call that needs the backend returns the open's status, the reason kept */
        sp_pipeline_config cfg = {.in_record_bytes = 4};
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_UNSUPPORTED);
        CHECK(p == NULL);
        void *mem = NULL;
        CHECK_EQ(sp_host_alloc(ctx, 64, &mem), SP_ERR_UNSUPPORTED);
        CHECK_HAS(sp_context_last_error(ctx), "CUDA");
        sp_host_free(ctx, mem);
    }
    sp_context_destroy(ctx);
    sp_context *any = NULL;
    CHECK_EQ(sp_context_create(SP_BACKEND_AUTO, 0, &any), SP_OK);
    CHECK_EQ(sp_context_backend(any), SP_BACKEND_HOST);
    CHECK_MSG(sp_context_last_error(any)[0] == '\0', "a context that opened has an error: %s",
              sp_context_last_error(any));
    sp_context_destroy(any);
    return TEST_OK;
}

TEST(null_tolerant_destroy_and_null_handles)
{
    sp_context_destroy(NULL);
    sp_pipeline_destroy(NULL);
    sp_host_free(NULL, NULL);
    CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, NULL, NULL), SP_ERR_INVALID_ARGUMENT);
    sp_context *bogus = NULL;
    CHECK_EQ(sp_context_create((sp_backend_kind)42, 0, &bogus), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(bogus), "unknown backend kind 42");
    sp_context_destroy(bogus);
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    CHECK_MSG(sp_context_last_error(ctx)[0] == '\0', "fresh context has error text");
    sp_host_free(ctx, NULL);
    char bytes[16];
    sp_pipeline_config cfg = {.in_record_bytes = 4};
    sp_pipeline *p = NULL;
    void *mem = NULL;
    CHECK_EQ(sp_pipeline_create(NULL, &cfg, &p), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_pipeline_create(ctx, NULL, &p), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "null");
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "null");
    CHECK_EQ(sp_pipeline_run(NULL, bytes, 1, bytes + 8, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_pipeline_run_serial(NULL, bytes, 1, bytes + 8, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_host_alloc(NULL, 64, &mem), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_host_alloc(ctx, 64, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_host_register(NULL, bytes, sizeof bytes), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_host_register(ctx, NULL, 64), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "null");
    CHECK_EQ(sp_fault_set(NULL, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_fault_set(ctx, NULL), SP_ERR_INVALID_ARGUMENT); /* not a fault context */
    CHECK_HAS(sp_context_last_error(ctx), "fault");
    sp_fault_stats stats;
    CHECK_EQ(sp_fault_get_stats(ctx, &stats), SP_ERR_INVALID_ARGUMENT);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- destroy order ------------------------------------------------------------------------ */

#define ORDER_RECORDS 100

/* A pipeline of 1 or 2 mix stages (4 -> 4, or 4 -> 8 -> 4 bytes), on pinned input and
 * output. */
typedef struct order_pipeline {
    mix_chain chain;
    sp_pipeline *p;
    unsigned char *in, *out; /* sp_host_alloc'ed; left to the context's teardown */
    unsigned char want[ORDER_RECORDS * 4];
} order_pipeline;

static int order_open(order_pipeline *o, sp_context *ctx, size_t n_stages, test_rng *rng)
{
    static const size_t outs[2][2] = {{4}, {8, 4}};
    mix_chain_init(&o->chain, 4, n_stages, outs[n_stages - 1], (uint32_t)rng_next(rng));
    sp_pipeline_config cfg = mix_chain_config(&o->chain, 16, 2);
    void *in = NULL, *out = NULL;
    o->p = NULL;
    int ok = CHECK_STATUS(sp_host_alloc(ctx, ORDER_RECORDS * 4, &in), SP_OK,
                          sp_context_last_error(ctx)) &&
             CHECK_STATUS(sp_host_alloc(ctx, ORDER_RECORDS * 4, &out), SP_OK,
                          sp_context_last_error(ctx)) &&
             CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &o->p), SP_OK,
                          sp_context_last_error(ctx));
    o->in = in;
    o->out = out;
    return ok;
}

/* One run of a pipeline that may have outlived its context's handle: still right. */
static void order_run(order_pipeline *o, test_rng *rng)
{
    rng_fill(rng, o->in, ORDER_RECORDS * 4);
    memset(o->out, 0xA5, ORDER_RECORDS * 4);
    mix_reference(o->chain.stages, o->chain.n_stages, 4, o->in, ORDER_RECORDS, 0, o->want);
    if (CHECK_STATUS(sp_pipeline_run(o->p, o->in, ORDER_RECORDS, o->out, NULL), SP_OK,
                     sp_pipeline_last_error(o->p)))
        compare_records(o->want, o->out, ORDER_RECORDS, 4, "output");
}

/* A context and two pipelines destroyed in each of the six orders (a garbage collector uses
 * any), each pipeline run after every destroy while it is left, on pinned memory the context
 * owns. The context lives until its last pipeline is gone, and its teardown then frees what
 * is left (ASan's leak check sees it). Found in issue 16: a pipeline destroyed after its
 * context read the freed context (use-after-free in release_all). */
TEST(contexts_and_pipelines_destroyed_in_any_order)
{
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}; /* 0: the context */
    test_rng rng;
    rng_init(&rng, harness_seed() + 9);
    for (size_t k = 0; k < ARRAY_LEN(orders); k++) {
        harness_context("destroy order %d %d %d (0: the context)", orders[k][0], orders[k][1],
                        orders[k][2]);
        sp_context *ctx = NULL;
        if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
            return TEST_FAIL;
        order_pipeline pipes[2];
        int alive[3] = {1, 1, 1};
        for (size_t i = 0; i < 2; i++)
            alive[i + 1] = order_open(&pipes[i], ctx, i + 1, &rng);
        for (size_t step = 0; step < 3; step++) {
            int gone = orders[k][step];
            if (gone == 0)
                sp_context_destroy(ctx);
            else
                sp_pipeline_destroy(pipes[gone - 1].p);
            alive[gone] = 0;
            for (size_t i = 0; i < 2; i++)
                if (alive[i + 1])
                    order_run(&pipes[i], &rng);
        }
    }
    harness_context("%s", "");
    return TEST_OK;
}

/* ---- bad run arguments ------------------------------------------------------------------- */

/* Bad runs go to a fault context with nothing armed: its call count shows whether any backend
 * work started. */
typedef struct refusal_rig {
    sp_context *ctx;
    unsigned char arena[4096]; /* every pointer of a bad run points in here; none may change */
    unsigned char snapshot[4096];
    test_rng rng;
} refusal_rig;

static unsigned long backend_calls(const sp_context *ctx)
{
    sp_fault_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_EQ(sp_fault_get_stats(ctx, &stats), SP_OK);
    return stats.calls;
}

static sp_pipeline *chain_pipeline(sp_context *ctx, mix_chain *chain, size_t in_rec,
                                   size_t n_stages, const size_t *outs)
{
    mix_chain_init(chain, in_rec, n_stages, outs, 1234);
    sp_pipeline_config cfg = mix_chain_config(chain, 8, 2);
    sp_pipeline *p = NULL;
    CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx));
    return p;
}

/* Both run functions refuse (in, n, out) with SP_ERR_INVALID_ARGUMENT and an error text that
 * contains `keyword`, start no backend call, call no stage and change no byte of the arena. */
static void expect_refused(refusal_rig *rig, sp_pipeline *p, mix_chain *chain, const void *in,
                           size_t n, void *out, const char *keyword)
{
    for (int serial = 0; serial < 2; serial++) {
        harness_context("%s run, n=%zu, in=arena%+lld out=arena%+lld, expecting \"%s\"",
                        serial ? "serial" : "pipelined", n,
                        (long long)((uintptr_t)in - (uintptr_t)rig->arena),
                        (long long)((uintptr_t)out - (uintptr_t)rig->arena), keyword);
        rng_fill(&rig->rng, rig->arena, sizeof rig->arena);
        memcpy(rig->snapshot, rig->arena, sizeof rig->arena);
        mix_chain_arm(chain, 0);
        unsigned long calls = backend_calls(rig->ctx);
        sp_status st = serial ? sp_pipeline_run_serial(p, in, n, out, NULL)
                              : sp_pipeline_run(p, in, n, out, NULL);
        CHECK_STATUS(st, SP_ERR_INVALID_ARGUMENT, sp_pipeline_last_error(p));
        CHECK_HAS(sp_pipeline_last_error(p), keyword);
        CHECK_MSG(backend_calls(rig->ctx) == calls, "backend work started before the refusal");
        CHECK_EQ(atomic_load(&chain->stages[0].calls), 0);
        CHECK_MSG(memcmp(rig->snapshot, rig->arena, sizeof rig->arena) == 0,
                  "a refused run wrote memory");
    }
    harness_context("%s", "");
}

TEST(bad_run_arguments)
{
    refusal_rig *rig = calloc(1, sizeof *rig);
    if (!CHECK(rig != NULL))
        return TEST_FAIL;
    rng_init(&rig->rng, harness_seed() ^ 31);
    if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, NULL, &rig->ctx), SP_OK)) {
        free(rig);
        return TEST_FAIL;
    }
    static const size_t same[] = {8}, wider[] = {12};
    mix_chain a, b, c;
    sp_pipeline *pa = chain_pipeline(rig->ctx, &a, 8, 1, same);  /* 8 -> 8 */
    sp_pipeline *pb = chain_pipeline(rig->ctx, &b, 4, 1, wider); /* 4 -> 12 */
    sp_pipeline *pc = chain_pipeline(rig->ctx, &c, 1, 1, wider); /* 1 -> 12 */
    unsigned char *m = rig->arena;
    if (pa != NULL && pb != NULL && pc != NULL) {
        expect_refused(rig, pa, &a, NULL, 3, m + 1024, "null");
        expect_refused(rig, pa, &a, m, 3, NULL, "null");
        expect_refused(rig, pa, &a, m, 4, m + 8, "overlap");      /* out one record on */
        expect_refused(rig, pa, &a, m + 64, 4, m + 61, "overlap"); /* out 3 bytes before */
        expect_refused(rig, pa, &a, m, 4, m + 1, "overlap");
        expect_refused(rig, pa, &a, m + 100, 4, m + 80, "overlap"); /* out ends inside in */
        expect_refused(rig, pb, &b, m, 4, m, "overlap");  /* in place, sizes differ */
        expect_refused(rig, pa, &a, m, SIZE_MAX / 8 + 1, m + 2048, "overflow");
        expect_refused(rig, pc, &c, m, SIZE_MAX / 12 + 1, m + 2048, "overflow"); /* out only */
        expect_refused(rig, pa, &a, (const void *)(UINTPTR_MAX - 15), 4, m, "overflow");
        check_pipeline_run(pa, a.stages, 1, 8, 100, &rig->rng); /* still usable */
        check_pipeline_run(pb, b.stages, 1, 4, 100, &rig->rng);
    }
    sp_pipeline_destroy(pa);
    sp_pipeline_destroy(pb);
    sp_pipeline_destroy(pc);
    sp_context_destroy(rig->ctx);
    free(rig);
    return TEST_OK;
}

/* n_records = 0 succeeds, calls no stage, writes nothing; the buffers may then be NULL. */
TEST(zero_records)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    static const size_t outs[] = {12, 8};
    mix_chain chain;
    sp_pipeline *p = chain_pipeline(ctx, &chain, 8, 2, outs);
    unsigned char buf[64], copy[64];
    memset(buf, 0x3C, sizeof buf);
    memcpy(copy, buf, sizeof buf);
    for (int serial = 0; p != NULL && serial < 2; serial++) {
        sp_report rep;
        memset(&rep, 0xFF, sizeof rep);
        mix_chain_arm(&chain, 0);
        sp_status st = serial ? sp_pipeline_run_serial(p, NULL, 0, NULL, &rep)
                              : sp_pipeline_run(p, NULL, 0, NULL, &rep);
        CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p));
        CHECK_EQ(rep.records, 0);
        CHECK_EQ(rep.chunks, 0);
        st = serial ? sp_pipeline_run_serial(p, buf, 0, buf + 1, NULL)
                    : sp_pipeline_run(p, buf, 0, buf + 1, NULL);
        CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p));
        CHECK(memcmp(buf, copy, sizeof buf) == 0);
        CHECK_EQ(atomic_load(&chain.stages[0].calls) + atomic_load(&chain.stages[1].calls), 0);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- bad configurations ------------------------------------------------------------------ */

static void expect_bad_config(sp_context *ctx, const sp_pipeline_config *cfg, sp_status want,
                              const char *keyword, const char *keyword2)
{
    sp_pipeline *p = NULL;
    sp_status st = sp_pipeline_create(ctx, cfg, &p);
    CHECK_STATUS(st, want, sp_context_last_error(ctx));
    CHECK(p == NULL);
    sp_pipeline_destroy(p);
    CHECK_HAS(sp_context_last_error(ctx), keyword);
    if (keyword2 != NULL)
        CHECK_HAS(sp_context_last_error(ctx), keyword2);
}

TEST(bad_configs)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    static const size_t outs[] = {12, 3, 8, 8};
    mix_chain chain;
    mix_chain_init(&chain, 4, 3, outs, 99);
    sp_pipeline_config cfg = mix_chain_config(&chain, 16, 2);

    cfg.in_record_bytes = 0;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "record", NULL);
    cfg.in_record_bytes = 4;
    chain.descs[1].out_record_bytes = 0;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "bravo", "record");
    chain.descs[1].out_record_bytes = 3;
    cfg.stages = NULL;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "null", NULL);
    cfg.stages = chain.descs;
    cfg.depth = SP_MAX_DEPTH + 1;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "depth", NULL);
    cfg.depth = 2;
    chain.descs[2].host = NULL; /* a stage lacking this backend's function */
    expect_bad_config(ctx, &cfg, SP_ERR_UNSUPPORTED, "charlie", "host");
    chain.descs[2] = mix_stage_desc(&chain.stages[2]);
    chain.descs[0].streams = SP_MAX_STAGE_STREAMS + 1;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "alpha", "streams");
    chain.descs[0].streams = 0;

    sp_stage many[SP_MAX_STAGES + 1];
    for (size_t s = 0; s < ARRAY_LEN(many); s++)
        many[s] = chain.descs[0];
    cfg.stages = many;
    cfg.n_stages = SP_MAX_STAGES + 1;
    expect_bad_config(ctx, &cfg, SP_ERR_INVALID_ARGUMENT, "stages", NULL);
    CHECK_EQ(atomic_load(&chain.stages[0].calls), 0);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* The largest accepted configuration: SP_MAX_STAGES stages, SP_MAX_DEPTH slots. */
TEST(largest_config_works)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 41);
    mix_stage stages[SP_MAX_STAGES];
    sp_stage descs[SP_MAX_STAGES];
    size_t rec = 5;
    for (size_t s = 0; s < SP_MAX_STAGES; s++) {
        char name[16];
        size_t out = 1 + (s * 7 + 3) % 20;
        snprintf(name, sizeof name, "s%zu", s);
        mix_stage_init(&stages[s], name, rec, out, (uint32_t)(s * 977 + 1));
        descs[s] = mix_stage_desc(&stages[s]);
        rec = out;
    }
    sp_pipeline_config cfg = {.in_record_bytes = 5, .stages = descs, .n_stages = SP_MAX_STAGES,
                              .chunk_records = 3, .depth = SP_MAX_DEPTH};
    sp_pipeline *p = NULL;
    if (CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        check_pipeline_run(p, stages, SP_MAX_STAGES, 5, 3 * SP_MAX_DEPTH * 2 + 1, &rng);
        check_pipeline_run(p, stages, SP_MAX_STAGES, 5, 7, &rng);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- a stage that fails ------------------------------------------------------------------ */

/* "chunk <k>" not followed by another digit. */
static int names_chunk(const char *text, size_t k)
{
    char want[32];
    int len = snprintf(want, sizeof want, "chunk %zu", k);
    for (const char *s = strstr(text, want); s != NULL; s = strstr(s + 1, want))
        if (s[len] < '0' || s[len] > '9')
            return 1;
    return 0;
}

static unsigned long total_calls(const mix_chain *chain)
{
    unsigned long n = 0;
    for (size_t s = 0; s < chain->n_stages; s++)
        n += atomic_load(&chain->stages[s].calls);
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

#define FAIL_CHUNK 10
#define FAIL_RECORDS 83 /* 9 chunks, the last one short */

/* Stage `pos` fails at chunk k: SP_ERR_STAGE_FAILED naming the stage and the chunk, nothing
 * left running, and the pipeline runs correctly once the stage is mended. */
static void stage_failure_case(sp_context *ctx, unsigned depth, size_t pos, long k, int serial,
                               test_rng *rng)
{
    static const size_t outs[] = {12, 3, 8};
    mix_chain chain;
    mix_chain_init(&chain, 4, 3, outs, (uint32_t)rng_next(rng));
    sp_pipeline_config cfg = mix_chain_config(&chain, FAIL_CHUNK, depth);
    sp_pipeline *p = NULL;
    harness_context("stage %s fails at chunk %ld, depth %u%s", chain.stages[pos].name, k, depth,
                    serial ? ", serial run" : "");
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)))
        return;
    unsigned char in[FAIL_RECORDS * 4], out[FAIL_RECORDS * 8];
    rng_fill(rng, in, sizeof in);
    atomic_store(&chain.stages[pos].fail_chunk, k);
    sp_status st = serial ? sp_pipeline_run_serial(p, in, FAIL_RECORDS, out, NULL)
                          : sp_pipeline_run(p, in, FAIL_RECORDS, out, NULL);
    CHECK_STATUS(st, SP_ERR_STAGE_FAILED, sp_pipeline_last_error(p));
    CHECK_HAS(sp_pipeline_last_error(p), chain.stages[pos].name);
    CHECK_MSG(names_chunk(sp_pipeline_last_error(p), (size_t)k), "no \"chunk %ld\" in \"%s\"", k,
              sp_pipeline_last_error(p));
    CHECK_HAS(sp_context_last_error(ctx), chain.stages[pos].name);
    CHECK_MSG(atomic_load(&chain.stages[pos].calls) <= (unsigned long)k + 1 + depth,
              "the failing stage was called %lu times: submitting did not stop",
              atomic_load(&chain.stages[pos].calls));
    unsigned long calls = total_calls(&chain);
    sleep_ms(20);
    CHECK_MSG(total_calls(&chain) == calls, "stages still ran after the failed run returned");
    atomic_store(&chain.stages[pos].fail_chunk, -1);
    check_pipeline_run(p, chain.stages, 3, 4, FAIL_RECORDS, rng);
    sp_pipeline_destroy(p);
}

TEST(stage_failure_is_attributed_and_recoverable)
{
    static const long chunks[] = {0, 1, 4, 8};
    static const unsigned depths[] = {1, 3};
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 51);
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    for (size_t d = 0; d < ARRAY_LEN(depths); d++)
        for (size_t pos = 0; pos < 3; pos++)
            for (size_t k = 0; k < ARRAY_LEN(chunks); k++)
                stage_failure_case(ctx, depths[d], pos, chunks[k], 0, &rng);
    for (size_t pos = 0; pos < 3; pos++)
        stage_failure_case(ctx, 2, pos, chunks[pos + 1], 1, &rng);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* The same, with every queue delayed at random, so the failure lands while other chunks are
 * in flight in other stages. */
TEST(stage_failure_under_delays)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 52);
    sp_fault_config cfg = {.delay_us = 20, .random_delay_us = 200};
    cfg.seed = (unsigned long)rng_next(&rng);
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, &cfg, &ctx), SP_OK))
        return TEST_FAIL;
    for (size_t pos = 0; pos < 3; pos++)
        for (long k = 0; k < 9; k += 4)
            stage_failure_case(ctx, 3, pos, k, 0, &rng);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* ---- pinned and registered memory -------------------------------------------------------- */

/* Runs a copy-only pipeline over `in`; returns report.staged_in (-1 when the run failed). */
static int staged_in(sp_pipeline *p, const unsigned char *in, size_t n)
{
    unsigned char *out = malloc(n * 4);
    sp_report rep;
    memset(&rep, 0, sizeof rep);
    if (!CHECK(out != NULL))
        return -1;
    memset(out, 0xA5, n * 4);
    sp_status st = sp_pipeline_run(p, in, n, out, &rep);
    int staged = -1;
    if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p))) {
        CHECK(memcmp(in, out, n * 4) == 0);
        staged = rep.staged_in;
    }
    free(out);
    return staged;
}

/* ---- a lost device outranks a stage failure ------------------------------------------------ */

/* Stage 'slow' fails at chunk 0 after 20 ms on its worker; meanwhile the main thread enqueues
 * later chunks, and one of those calls is made to report a lost device. Whichever call that
 * is, the context must end up lost and the run must say so. */
static sp_status slow_failing_copy(const sp_chunk *c, void *user)
{
    (void)user;
    if (c->index == 0) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        return SP_ERR_INVALID_ARGUMENT;
    }
    memcpy(c->out, c->in, c->records * 8);
    return SP_OK;
}

static sp_status plain_copy(const sp_chunk *c, void *user)
{
    (void)user;
    memcpy(c->out, c->in, c->records * 8);
    return SP_OK;
}

TEST(device_lost_outranks_a_stage_failure)
{
    static unsigned char in[8 * 400], out[8 * 400];
    unsigned long calls = harness_quick() ? 30 : 60;
    for (unsigned long k = 1; k <= calls; k++) {
        sp_context *ctx = NULL;
        if (!CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, NULL, &ctx), SP_OK))
            return TEST_FAIL;
        sp_stage stages[2] = {{.name = "slow", .out_record_bytes = 8, .host = slow_failing_copy},
                              {.name = "copy", .out_record_bytes = 8, .host = plain_copy}};
        sp_pipeline_config cfg = {.in_record_bytes = 8, .stages = stages, .n_stages = 2,
                                  .chunk_records = 100, .depth = 1, .staging_threads = 1};
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
        sp_fault_config fault = {.fail_call = k, .fail_status = SP_ERR_DEVICE_LOST};
        sp_fault_set(ctx, &fault);
        sp_status st = p ? sp_pipeline_run(p, in, 400, out, NULL) : SP_ERR_INVALID_ARGUMENT;
        sp_fault_stats stats;
        sp_fault_get_stats(ctx, &stats);
        void *mem = NULL;
        if (stats.injected) {
            harness_context("fault at call %lu", k);
            CHECK_EQ(st, SP_ERR_DEVICE_LOST);
            CHECK_EQ(sp_host_alloc(ctx, 64, &mem), SP_ERR_DEVICE_LOST);
        } else {
            CHECK_EQ(st, SP_ERR_STAGE_FAILED);
        }
        sp_host_free(ctx, mem);
        sp_pipeline_destroy(p);
        sp_context_destroy(ctx);
    }
    harness_context("%s", "");
    return TEST_OK;
}

TEST(host_memory_registration)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    sp_pipeline_config cfg = {.in_record_bytes = 4, .chunk_records = 16, .depth = 2};
    sp_pipeline *p = NULL;
    enum { N = 100 };
    unsigned char *plain = malloc(N * 4);
    void *pinned = NULL;
    if (CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)) &&
        CHECK(plain != NULL) &&
        CHECK_STATUS(sp_host_alloc(ctx, N * 4, &pinned), SP_OK, sp_context_last_error(ctx))) {
        memset(plain, 0x11, N * 4);
        memset(pinned, 0x22, N * 4);
        CHECK_EQ(staged_in(p, plain, N), 1);
        CHECK_EQ(staged_in(p, pinned, N), 0);
        CHECK_EQ(sp_host_register(ctx, plain, N * 2), SP_OK); /* only the first half */
        CHECK_EQ(staged_in(p, plain, N), 1);
        CHECK_EQ(sp_host_unregister(ctx, plain), SP_OK);
        CHECK_EQ(sp_host_register(ctx, plain, N * 4), SP_OK);
        CHECK_EQ(staged_in(p, plain, N), 0);
        CHECK_EQ(sp_host_unregister(ctx, plain), SP_OK);
        CHECK_EQ(staged_in(p, plain, N), 1);
        /* already pinned: accepted and left as it is */
        CHECK_EQ(sp_host_register(ctx, pinned, N * 4), SP_OK);
        CHECK_EQ(sp_host_unregister(ctx, pinned), SP_OK);
        CHECK_EQ(staged_in(p, pinned, N), 0);
    }
    sp_host_free(ctx, pinned);
    free(plain);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(status_names_and_messages),
        TEST_ENTRY(version_matches_header),
        TEST_ENTRY(backend_names),
        TEST_ENTRY(cuda_absent_is_unsupported),
        TEST_ENTRY(null_tolerant_destroy_and_null_handles),
        TEST_ENTRY(contexts_and_pipelines_destroyed_in_any_order),
        TEST_ENTRY(bad_run_arguments),
        TEST_ENTRY(zero_records),
        TEST_ENTRY(bad_configs),
        TEST_ENTRY(largest_config_works),
        TEST_ENTRY(stage_failure_is_attributed_and_recoverable),
        TEST_ENTRY(stage_failure_under_delays),
        TEST_ENTRY(device_lost_outranks_a_stage_failure),
        TEST_ENTRY(host_memory_registration),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
