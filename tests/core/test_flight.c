/*
 * test_flight [filter]: the flight recorder (sp_pipeline_config.flight_recorder_s,
 * sp_pipeline_dump_recent; src/core/flight.c, src/trace/flight_json.c) on HOST.
 * - Dumps from another thread in a tight loop while runs go (run it under TSan): every dump
 *   succeeds and is a whole trace; the runs' outputs are every element right.
 * - After the runs: the spans kept are the last run's newest seconds, every engine named,
 *   the GPU spans of the sampled windows' chunks only; the report states the recorder.
 * - Bad input: NULL, a pipeline without a recorder, a path that cannot be written (errno
 *   says why), a negative or NaN flight_recorder_s at creation.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "streampipe.h"
#include "streampipe_trace.h"
#include "testbuf.h"

#define CHUNK 64
#define RECORDS (CHUNK * 300)

static sp_status add_host(const sp_chunk *c, void *user)
{
    (void)user;
    const uint32_t *in = c->in;
    uint32_t *out = c->out;
    for (size_t k = 0; k < c->records; k++)
        out[k] = in[k] * 3u + (uint32_t)(c->first_record + k);
    return SP_OK;
}

static const sp_stage stage = {.name = "add", .out_record_bytes = 4, .host = add_host};

static sp_status make(sp_context *ctx, double seconds, sp_pipeline **p)
{
    sp_pipeline_config cfg = {.size = sizeof cfg, .in_record_bytes = 4, .stages = &stage,
                              .n_stages = 1, .chunk_records = CHUNK, .depth = 4,
                              .flight_recorder_s = seconds};
    return sp_pipeline_create(ctx, &cfg, p);
}

typedef struct dumper {
    const sp_pipeline *p;
    char path[256];
    atomic_int stop;
    unsigned long dumps, failed;
} dumper;

static void *dump_loop(void *arg)
{
    dumper *d = arg;
    while (!atomic_load(&d->stop)) {
        if (sp_pipeline_dump_recent(d->p, d->path) == SP_OK)
            d->dumps++;
        else
            d->failed++;
    }
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[8 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

TEST(dumps_during_runs)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    uint32_t *in = malloc(RECORDS * 4), *out = malloc(RECORDS * 4);
    int ok = CHECK_MSG(in && out, "no memory") &&
             CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK) &&
             CHECK_STATUS(make(ctx, 30.0, &p), SP_OK, sp_context_last_error(ctx));
    dumper d = {.p = p};
    snprintf(d.path, sizeof d.path, "test_flight-%ld.json", (long)harness_seed());
    pthread_t t;
    ok = ok && CHECK_EQ(pthread_create(&t, NULL, dump_loop, &d), 0);
    sp_report report;
    for (int run = 0; ok && run < 3; run++) {
        for (size_t k = 0; k < RECORDS; k++)
            in[k] = (uint32_t)rand();
        memset(out, 0xA5, RECORDS * 4);
        ok = CHECK_STATUS(sp_pipeline_run(p, in, RECORDS, out, &report), SP_OK,
                          sp_pipeline_last_error(p));
        size_t wrong = 0;
        for (size_t k = 0; ok && k < RECORDS; k++)
            wrong += out[k] != in[k] * 3u + (uint32_t)k;
        ok = ok && CHECK_MSG(wrong == 0, "run %d: %zu elements wrong", run, wrong);
    }
    if (p) {
        atomic_store(&d.stop, 1);
        pthread_join(t, NULL);
    }
    if (ok) {
        CHECK_MSG(d.dumps > 0 && d.failed == 0, "%lu dumps, %lu failed", d.dumps, d.failed);
        CHECK_EQ(sp_pipeline_dump_recent(p, d.path), SP_OK);
        const char *text = slurp(d.path);
        ok = CHECK_MSG(text != NULL, "no trace file");
        if (ok) {
            CHECK_HAS(text, "\"otherData\":{\"flight_recorder_s\":30.0");
            CHECK_HAS(text, "\"name\":\"add\"");
            CHECK_HAS(text, "\"name\":\"h2d\"");
            CHECK_HAS(text, "\"run\":3");
            /* stage "add" of the sampled windows only: 300 chunks, windows of 4 at the
             * first, the last and one per 40 in between; three runs kept (30 s) */
            size_t spans = count(text, "\"name\":\"add c");
            CHECK_MSG(spans > 0 && spans <= 3 * 300 / 4, "%zu stage spans kept", spans);
        }
        CHECK_MSG(report.flight_recorder_s == 30.0 && report.flight_recorder_bytes > (1u << 20),
                  "report: %g s, %zu bytes", report.flight_recorder_s,
                  report.flight_recorder_bytes);
    }
    remove(d.path);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    free(out);
    return TEST_OK;
}

TEST(bad_input)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL, *none = NULL, *bad = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    CHECK_EQ(make(ctx, 5.0, &p), SP_OK);
    CHECK_EQ(make(ctx, 0.0, &none), SP_OK);
    CHECK_EQ(sp_pipeline_dump_recent(NULL, "x.json"), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_pipeline_dump_recent(p, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(sp_pipeline_dump_recent(none, "x.json"), SP_ERR_INVALID_ARGUMENT);
    errno = 0;
    CHECK_EQ(sp_pipeline_dump_recent(p, "no-such-dir/sub/x.json"), SP_ERR_BACKEND);
    CHECK_MSG(errno == ENOENT, "errno %d, want ENOENT", errno);
    CHECK_EQ(make(ctx, -1.0, &bad), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(ctx), "flight_recorder_s");
    sp_pipeline_destroy(bad);
    bad = NULL;
    CHECK_EQ(make(ctx, NAN, &bad), SP_ERR_INVALID_ARGUMENT);
    sp_pipeline_destroy(bad);
    sp_pipeline_destroy(p);
    sp_pipeline_destroy(none);
    sp_context_destroy(ctx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(dumps_during_runs),
        TEST_ENTRY(bad_input),
    };
    srand((unsigned)harness_seed());
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
