/*
 * test_trace host|cuda [filter]: the trace writers on real runs. A pipeline of mix stages
 * (keep_timeline set) runs with a report; the pipeline and its context are destroyed, then
 * the report's Chrome trace JSON and SVG timeline go to a temporary folder and are read back
 * with cJSON and libxml2 (test_trace_parse.c). Also: what the writers refuse (a report
 * without a timeline, a pipeline that keeps none), a failed write, releasing a report, stage
 * names that need escaping, and the profiler ranges a run opens around each operation it
 * enqueues.
 * SP_TRACE_KEEP=<folder> writes the files there and keeps them, to look at.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_door.h"
#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_trace.h"
#include "test_trace.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

#define IN_REC 8
static const size_t out_recs[CHAIN_MAX] = {12, 20, 8, 16};

typedef struct fixture {
    sp_context *ctx;
    mix_chain chain;
    sp_stage descs[CHAIN_MAX]; /* the chain's stages, renamed when a test asks */
    const char *const *given;  /* the stage names the pipeline got; NULL: the chain's */
    const char *const *names;  /* the names as the files must spell them; NULL: the chain's */
    sp_pipeline *p;
    test_buf in, out;
    size_t n;
    sp_report report;
} fixture;

typedef struct fixture_shape {
    size_t n_stages, n, chunk;
    unsigned depth;
    mem_kind memory;
    const char *const *stage_names; /* NULL: alpha, bravo, ... */
    const char *const *want_names;  /* how the files spell stage_names */
    const unsigned *stage_streams;  /* queues of each stage; NULL: one each */
    int drop_timeline;              /* 1: keep_timeline 0, reports get no timeline */
} fixture_shape;

static int fixture_open(fixture *fx, const fixture_shape *shape)
{
    memset(fx, 0, sizeof *fx);
    fx->n = shape->n;
    fx->given = shape->stage_names;
    fx->names = shape->want_names;
    if (!CHECK(sp_context_create(g_kind, 0, &fx->ctx) == SP_OK))
        return 0;
    mix_chain_init(&fx->chain, IN_REC, shape->n_stages, out_recs, (uint32_t)harness_seed());
    sp_pipeline_config cfg = mix_chain_config(&fx->chain, shape->chunk, shape->depth);
    memcpy(fx->descs, fx->chain.descs, sizeof fx->descs);
    for (size_t s = 0; shape->stage_names && s < shape->n_stages; s++)
        fx->descs[s].name = shape->stage_names[s];
    for (size_t s = 0; shape->stage_streams && s < shape->n_stages; s++)
        fx->descs[s].streams = shape->stage_streams[s];
    cfg.stages = shape->n_stages ? fx->descs : NULL;
    cfg.keep_timeline = !shape->drop_timeline;
    sp_status st = sp_pipeline_create(fx->ctx, &cfg, &fx->p);
    if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(fx->ctx)))
        return 0;
    if (!CHECK(buf_alloc(&fx->in, fx->ctx, shape->memory, fx->n * IN_REC) == SP_OK) ||
        !CHECK(buf_alloc(&fx->out, fx->ctx, shape->memory,
                         fx->n * mix_chain_out_rec(&fx->chain)) == SP_OK))
        return 0;
    test_rng rng;
    rng_init(&rng, harness_seed());
    rng_fill(&rng, fx->in.data, fx->in.bytes);
    return 1;
}

static sp_status fixture_run(fixture *fx, sp_report *report)
{
    sp_status st = sp_pipeline_run(fx->p, fx->in.data, fx->n, fx->out.data, report);
    CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(fx->p));
    return st;
}

/* Everything but the report, which outlives them (its timeline is its own). */
static void fixture_close_handles(fixture *fx)
{
    buf_free(&fx->in);
    buf_free(&fx->out);
    sp_pipeline_destroy(fx->p);
    sp_context_destroy(fx->ctx);
    fx->p = NULL;
    fx->ctx = NULL;
}

static void fixture_close(fixture *fx)
{
    fixture_close_handles(fx);
    sp_report_release(&fx->report);
}

static void add_engine(trace_expect *x, const char *name, size_t record_bytes,
                       unsigned streams)
{
    snprintf(x->names[x->n_engines], sizeof x->names[0], "%s", name);
    x->streams[x->n_engines] = streams;
    x->record_bytes[x->n_engines++] = record_bytes;
}

/* The engines of the run, from the pipeline's shape and whether it staged. */
static void expect_from(const fixture *fx, trace_expect *x)
{
    memset(x, 0, sizeof *x);
    const sp_report *r = &fx->report;
    x->records = fx->n;
    x->chunks = r->chunks;
    x->chunk_records = r->chunk_records;
    x->report = r;
    size_t out_rec = mix_chain_out_rec(&fx->chain), cur = IN_REC;
    if (r->staged_in)
        add_engine(x, "stage-in", IN_REC, 1);
    add_engine(x, "h2d", IN_REC, 1);
    for (size_t s = 0; s < fx->chain.n_stages; s++) {
        add_engine(x, fx->names ? fx->names[s] : mix_chain_name(s), cur, fx->descs[s].streams);
        cur = out_recs[s];
    }
    add_engine(x, "d2h", out_rec, 1);
    if (r->staged_out)
        add_engine(x, "stage-out", out_rec, 1);
    snprintf(x->bottleneck, sizeof x->bottleneck, "%s", r->bottleneck);
    for (size_t s = 0; fx->given && s < fx->chain.n_stages; s++)
        if (strcmp(r->bottleneck, fx->given[s]) == 0)
            snprintf(x->bottleneck, sizeof x->bottleneck, "%s", fx->names[s]);
}

/* ---- writing the files and reading them back ---------------------------------------------- */

static char *read_whole_file(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        text = size >= 0 ? malloc((size_t)size + 1) : NULL;
        if (text && fseek(f, 0, SEEK_SET) == 0 && fread(text, 1, (size_t)size, f) == (size_t)size) {
            text[size] = '\0';
            *bytes = (size_t)size;
        } else {
            free(text);
            text = NULL;
        }
    }
    if (f)
        fclose(f);
    return text;
}

typedef sp_status (*write_fn)(const fixture *fx, FILE *f);

static sp_status write_json(const fixture *fx, FILE *f)
{
    return sp_report_write_trace(&fx->report, f);
}
static sp_status write_svg(const fixture *fx, FILE *f) { return sp_report_write_svg(&fx->report, f); }

/* Writes one file into `dir` and reads it back; NULL (after a failed check) on failure. */
static char *write_and_read(const fixture *fx, const char *dir, const char *name, write_fn fn,
                            size_t *bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!CHECK_MSG(f != NULL, "cannot create %s", path))
        return NULL;
    sp_status st = fn(fx, f);
    int closed = fclose(f);
    if (!CHECK_STATUS(st, SP_OK, sp_report_last_error()) || !CHECK(closed == 0))
        return NULL;
    char *text = read_whole_file(path, bytes);
    CHECK_MSG(text != NULL, "cannot read %s back", path);
    if (!getenv("SP_TRACE_KEEP"))
        unlink(path);
    return text;
}

/* Writes both files of fx's report, parses them and checks them against the run. */
static void check_files(const fixture *fx, const char *tag)
{
    char tmp[] = "/tmp/sp_trace_XXXXXX", json_name[96], svg_name[96];
    const char *keep = getenv("SP_TRACE_KEEP");
    const char *dir = keep ? keep : mkdtemp(tmp);
    if (!CHECK_MSG(dir != NULL, "cannot make a temporary folder"))
        return;
    snprintf(json_name, sizeof json_name, "%s-trace.json", tag);
    snprintf(svg_name, sizeof svg_name, "%s-timeline.svg", tag);
    trace_expect x;
    expect_from(fx, &x);
    size_t json_bytes = 0, svg_bytes = 0;
    char *json = write_and_read(fx, dir, json_name, write_json, &json_bytes);
    char *svg = write_and_read(fx, dir, svg_name, write_svg, &svg_bytes);
    if (json)
        check_trace_json(json, &x);
    if (svg)
        check_trace_svg(svg, svg_bytes, &x);
    free(json);
    free(svg);
    if (!keep)
        rmdir(dir);
}

static int run_and_check(const fixture_shape *shape, const char *tag)
{
    fixture fx;
    harness_context("%s: %zu stages, %zu records, chunk %zu, depth %u, %s memory", tag,
                    shape->n_stages, shape->n, shape->chunk, shape->depth,
                    mem_kind_name(shape->memory));
    int ran = fixture_open(&fx, shape) && fixture_run(&fx, &fx.report) == SP_OK;
    fixture_close_handles(&fx); /* the files come from the report alone */
    if (ran && CHECK_MSG(fx.report.timeline != NULL, "keep_timeline gave the report none"))
        check_files(&fx, tag);
    sp_report_release(&fx.report);
    CHECK(fx.report.timeline == NULL);
    sp_report_release(&fx.report); /* a second release: nothing */
    return TEST_OK;
}

/* ---- the files of real runs ----------------------------------------------------------------- */

TEST(pageable_two_stages)
{
    fixture_shape shape = {2, 1000, 64, 3, MEM_PAGEABLE, NULL, NULL, NULL, 0}; /* 16 chunks, staged */
    return run_and_check(&shape, "pageable");
}

TEST(pinned_one_stage_short_last_chunk)
{
    fixture_shape shape = {1, 777, 100, 4, MEM_PINNED, NULL, NULL, NULL, 0}; /* 8 chunks, last 77 */
    return run_and_check(&shape, "pinned");
}

TEST(copies_only)
{
    fixture_shape shape = {0, 500, 50, 2, MEM_PAGEABLE, NULL, NULL, NULL, 0};
    return run_and_check(&shape, "copies");
}

TEST(one_chunk)
{
    fixture_shape shape = {2, 10, 100, 2, MEM_REGISTERED, NULL, NULL, NULL, 0};
    return run_and_check(&shape, "one-chunk");
}

TEST(many_chunks)
{
    fixture_shape shape = {1, 40000, 20, 8, MEM_PAGEABLE, NULL, NULL, NULL, 0}; /* 2000 chunks */
    return run_and_check(&shape, "many");
}

/* A stage on two queues and one on three, beside one on one: their chunks overlap, so each
 * queue gets a lane of its own ("bravo q0", "bravo q1"; a track each in the JSON) with chunk
 * c in lane c mod queues, and the single-queue engines keep one lane under their name. */
TEST(stages_on_several_queues)
{
    static const unsigned streams[] = {1, 2, 3};
    fixture_shape shape = {3, 1000, 50, 4, MEM_PAGEABLE, NULL, NULL, streams, 0}; /* 20 chunks */
    return run_and_check(&shape, "queues");
}

/* Names with markup characters, a byte that is not UTF-8 and a real UTF-8 letter: both files
 * must still parse, and show the names escaped, '?' for the bad byte, the letter kept. */
TEST(stage_names_that_need_escaping)
{
    static const char *const given[] = {"a<b&\"c'\\", "bad \xff byte", "na\xc3\xafve"};
    static const char *const spelled[] = {"a<b&\"c'\\", "bad ? byte", "na\xc3\xafve"};
    fixture_shape shape = {3, 300, 40, 3, MEM_PAGEABLE, given, spelled, NULL, 0};
    return run_and_check(&shape, "names");
}

TEST(serial_run)
{
    fixture fx;
    fixture_shape shape = {2, 600, 100, 3, MEM_PAGEABLE, NULL, NULL, NULL, 0};
    if (fixture_open(&fx, &shape)) {
        sp_status st = sp_pipeline_run_serial(fx.p, fx.in.data, fx.n, fx.out.data, &fx.report);
        fixture_close_handles(&fx);
        if (CHECK_STATUS(st, SP_OK, "sp_pipeline_run_serial"))
            check_files(&fx, "serial");
    }
    fixture_close(&fx);
    return TEST_OK;
}

/* CUDA reads its event times as float milliseconds, so a span's ends fall between
 * nanoseconds, and an operation that waited for the one before it on its queue starts at that
 * one's end (timing.c). Here the backend's times get such fractions, one way on odd
 * nanoseconds and the other on even ones: rounding each event's start and duration apart
 * would then end some events a nanosecond after the next one on their track starts. */
static const sp_backend_ops *g_exact_ops;

static sp_status elapsed_between_ns(void *impl, sp_bevent *from, sp_bevent *to, double *seconds)
{
    sp_status st = g_exact_ops->event_elapsed(impl, from, to, seconds);
    long long ns = llround(*seconds * 1e9);
    *seconds = ((double)ns + (ns % 2 ? 0.6 : 0.4)) * 1e-9;
    return st;
}

TEST(times_between_nanoseconds)
{
    fixture fx;
    fixture_shape shape = {2, 8000, 20, 4, MEM_PAGEABLE, NULL, NULL, NULL, 0}; /* 400 chunks */
    harness_context("times_between_nanoseconds: 400 chunks");
    if (fixture_open(&fx, &shape)) {
        g_exact_ops = fx.ctx->ops;
        sp_backend_ops fractional = *fx.ctx->ops;
        fractional.event_elapsed = elapsed_between_ns;
        fx.ctx->ops = &fractional;
        if (fixture_run(&fx, &fx.report) == SP_OK)
            check_files(&fx, "between-ns");
        fx.ctx->ops = g_exact_ops;
    }
    fixture_close(&fx);
    return TEST_OK;
}

/* ---- what the writers refuse ------------------------------------------------------------- */

/* One of the writers (sp_report_write_trace, _svg) to /dev/null. */
static sp_status to_null_device(sp_status (*write)(const sp_report *, FILE *),
                                const sp_report *report)
{
    FILE *f = fopen("/dev/null", "w");
    sp_status st = write(report, f);
    if (f)
        fclose(f);
    return st;
}

/* A report without a timeline is refused, with a message naming keep_timeline. */
static void check_refused(const sp_report *report)
{
    CHECK_EQ(to_null_device(sp_report_write_trace, report), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_report_last_error(), "keep_timeline");
    CHECK_EQ(to_null_device(sp_report_write_svg, report), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_report_last_error(), "sp_report_write_svg: the report has no timeline");
}

TEST(refuses_a_report_without_a_timeline)
{
    fixture fx;
    fixture_shape shape = {1, 200, 50, 2, MEM_PAGEABLE, NULL, NULL, NULL, 0};
    if (!fixture_open(&fx, &shape)) {
        fixture_close(&fx);
        return TEST_OK;
    }
    CHECK_EQ(sp_report_write_trace(NULL, stdout), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_report_last_error(), "report is NULL");
    CHECK_EQ(sp_report_write_svg(NULL, stdout), SP_ERR_INVALID_ARGUMENT);
    sp_report none;
    memset(&none, 0, sizeof none); /* never run */
    check_refused(&none);
    fixture_run(&fx, &fx.report);
    CHECK_EQ(to_null_device(sp_report_write_trace, &fx.report), SP_OK);
    fixture_run(&fx, NULL); /* the report's timeline is its own: a later run leaves it */
    CHECK_EQ(to_null_device(sp_report_write_trace, &fx.report), SP_OK);
    CHECK_EQ(sp_report_write_trace(&fx.report, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_report_last_error(), "f is NULL");

    sp_report empty;
    CHECK_EQ(sp_pipeline_run(fx.p, fx.in.data, 0, fx.out.data, &empty), SP_OK);
    check_refused(&empty); /* no records: nothing timed */

    sp_report failed;
    memset(&failed, 0, sizeof failed);
    atomic_store(&fx.chain.stages[0].fail_chunk, 2);
    CHECK_EQ(sp_pipeline_run(fx.p, fx.in.data, fx.n, fx.out.data, &failed),
             SP_ERR_STAGE_FAILED);
    check_refused(&failed); /* a failed run fills no report: no partial timeline */
    /* the good run's still writes */
    CHECK_EQ(to_null_device(sp_report_write_trace, &fx.report), SP_OK);
    fixture_close(&fx);
    return TEST_OK;
}

/* keep_timeline 0 (the default): reports carry no timeline, and writing one says why. */
TEST(refuses_when_the_pipeline_keeps_none)
{
    fixture fx;
    fixture_shape shape = {1, 200, 50, 2, MEM_PAGEABLE, NULL, NULL, NULL, 1};
    if (fixture_open(&fx, &shape) && fixture_run(&fx, &fx.report) == SP_OK) {
        CHECK(fx.report.timeline == NULL);
        CHECK(fx.report.timed_chunks > 0); /* timed all the same: the figures are there */
        check_refused(&fx.report);
    }
    fixture_close(&fx);
    return TEST_OK;
}

TEST(keep_timeline_must_be_0_or_1)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = 4;
    cfg.keep_timeline = 2;
    if (CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK)) {
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_context_last_error(ctx), "keep_timeline is 2");
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    sp_report_release(NULL); /* nothing */
    return TEST_OK;
}

/* Each report keeps its own run's timeline: a second run into another report changes
 * neither's files; figures changed by hand no longer match the bars, and the SVG says so. */
TEST(each_report_keeps_its_own_run)
{
    fixture fx;
    fixture_shape shape = {1, 400, 50, 2, MEM_PAGEABLE, NULL, NULL, NULL, 0};
    if (fixture_open(&fx, &shape) && fixture_run(&fx, &fx.report) == SP_OK) {
        sp_report first = fx.report;
        fx.n = 150;
        memset(&fx.report, 0, sizeof fx.report);
        fixture_run(&fx, &fx.report);
        fixture_close_handles(&fx);
        check_files(&fx, "second");
        sp_report second = fx.report;
        fx.n = 400;
        fx.report = first;
        check_files(&fx, "first");
        sp_report edited = first; /* shares first's timeline: never released itself */
        edited.chunks++;
        CHECK_EQ(to_null_device(sp_report_write_svg, &edited), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_report_last_error(), "not of its timeline's run");
        sp_report_release(&second);
    }
    fixture_close(&fx);
    return TEST_OK;
}

static void *fail_on_a_thread(void *arg)
{
    (void)arg;
    (void)sp_report_write_trace(NULL, stdout);
    return NULL;
}

/* sp_report_last_error is the calling thread's: a failure on another leaves it alone. */
TEST(report_errors_are_per_thread)
{
    FILE *f = fopen("/dev/null", "w");
    sp_report none;
    memset(&none, 0, sizeof none);
    CHECK_EQ(sp_report_write_trace(&none, f), SP_ERR_INVALID_ARGUMENT);
    pthread_t thread;
    if (CHECK(pthread_create(&thread, NULL, fail_on_a_thread, NULL) == 0))
        pthread_join(thread, NULL);
    CHECK_HAS(sp_report_last_error(), "keep_timeline");
    if (f)
        fclose(f);
    return TEST_OK;
}

/* /dev/full accepts the open and fails every flush with ENOSPC. */
TEST(a_failed_write_is_reported)
{
    if (access("/dev/full", W_OK) != 0) {
        harness_skip_reason("no /dev/full here");
        return TEST_SKIP;
    }
    fixture fx;
    fixture_shape shape = {1, 400, 50, 2, MEM_PAGEABLE, NULL, NULL, NULL, 0};
    if (fixture_open(&fx, &shape) && fixture_run(&fx, &fx.report) == SP_OK) {
        FILE *f = fopen("/dev/full", "w");
        if (CHECK(f != NULL)) {
            CHECK_EQ(sp_report_write_trace(&fx.report, f), SP_ERR_BACKEND);
            CHECK_HAS(sp_report_last_error(), "writing the trace failed");
            CHECK_HAS(sp_report_last_error(), "space");
            clearerr(f);
            CHECK_EQ(sp_report_write_svg(&fx.report, f), SP_ERR_BACKEND);
            fclose(f);
        }
    }
    fixture_close(&fx);
    return TEST_OK;
}

/* ---- profiler ranges --------------------------------------------------------------------- */

#define MAX_LABELS 4096
static char g_labels[MAX_LABELS][48];
static size_t g_pushes, g_pops;
static int g_depth, g_max_depth;
static const sp_backend_ops *g_real_ops;

static void record_push(void *impl, const char *label)
{
    if (g_pushes < MAX_LABELS)
        snprintf(g_labels[g_pushes], sizeof g_labels[0], "%s", label);
    g_pushes++;
    g_max_depth = ++g_depth > g_max_depth ? g_depth : g_max_depth;
    if (g_real_ops->trace_push) /* CUDA: NVTX still sees them */
        g_real_ops->trace_push(impl, label);
}

static void record_pop(void *impl)
{
    g_pops++;
    g_depth--;
    if (g_real_ops->trace_pop)
        g_real_ops->trace_pop(impl);
}

static size_t count_label(const char *label)
{
    size_t n = 0;
    for (size_t i = 0; i < g_pushes && i < MAX_LABELS; i++)
        n += strcmp(g_labels[i], label) == 0;
    return n;
}

static void check_ranges(const fixture *fx)
{
    CHECK_EQ(g_pushes, g_pops);
    CHECK_EQ(g_max_depth, 1);
    for (size_t c = 0; c < fx->report.chunks; c++) {
        char label[48];
        const char *engines[] = {"h2d", mix_chain_name(0), mix_chain_name(1), "d2h"};
        for (size_t e = 0; e < ARRAY_LEN(engines); e++) {
            snprintf(label, sizeof label, "%s c%zu", engines[e], c);
            CHECK_MSG(count_label(label) == 1, "range \"%s\" opened %zu times, want 1", label,
                      count_label(label));
        }
        snprintf(label, sizeof label, "stage c%zu", c);
        CHECK_MSG(count_label(label) >= 1, "no range \"%s\"", label);
    }
}

/* The run brackets each operation it enqueues with the backend's trace_push/trace_pop: here a
 * table that records them in front of the real one. */
TEST(profiler_ranges_around_each_operation)
{
    fixture fx;
    fixture_shape shape = {2, 300, 50, 3, MEM_PAGEABLE, NULL, NULL, NULL, 0}; /* 6 chunks */
    if (fixture_open(&fx, &shape)) {
        g_real_ops = fx.ctx->ops;
        sp_backend_ops recording = *fx.ctx->ops;
        recording.trace_push = record_push;
        recording.trace_pop = record_pop;
        g_pushes = g_pops = 0;
        g_depth = g_max_depth = 0;
        fx.ctx->ops = &recording;
        if (fixture_run(&fx, &fx.report) == SP_OK)
            check_ranges(&fx);
        fx.ctx->ops = g_real_ops;
    }
    fixture_close(&fx);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(pageable_two_stages),
        TEST_ENTRY(pinned_one_stage_short_last_chunk),
        TEST_ENTRY(copies_only),
        TEST_ENTRY(one_chunk),
        TEST_ENTRY(many_chunks),
        TEST_ENTRY(stages_on_several_queues),
        TEST_ENTRY(stage_names_that_need_escaping),
        TEST_ENTRY(times_between_nanoseconds),
        TEST_ENTRY(serial_run),
        TEST_ENTRY(refuses_a_report_without_a_timeline),
        TEST_ENTRY(refuses_when_the_pipeline_keeps_none),
        TEST_ENTRY(keep_timeline_must_be_0_or_1),
        TEST_ENTRY(each_report_keeps_its_own_run),
        TEST_ENTRY(report_errors_are_per_thread),
        TEST_ENTRY(a_failed_write_is_reported),
        TEST_ENTRY(profiler_ranges_around_each_operation),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
