/* White-box tests of the core's pure parts: the planner, the timeline figures on hand-built
 * timelines with known answers, and the staging pool; and of src/util's whole-file reader,
 * which the model loader and the CLI share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_door.h"
#include "harness.h"
#include "util/read_file.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

TEST(plan_defaults)
{
    CHECK_EQ(sp_plan_default_chunk(4, 4, 1), (8u << 20) / 4);
    CHECK_EQ(sp_plan_default_chunk(SP_DEFAULT_CHUNK_BYTES * 2, 0, 1), 1); /* never 0 */
    CHECK_EQ(sp_plan_default_chunk(0, 0, 0), SP_DEFAULT_CHUNK_BYTES);
    /* the MLP's shape: 64 bytes in (4 out), 1 KiB between its GEMMs: sized by the copies,
     * 8 MiB in, not by the GEMMs' records (8192 records, 3.4x slower at tf32) */
    CHECK_EQ(sp_plan_default_chunk(64, 1024, 1), (size_t)128 << 10);
    /* ... and with its 4 stages, a long chain: twice that (fp32 7% faster on the H200) */
    CHECK_EQ(sp_plan_default_chunk(64, 1024, SP_LONG_CHAIN_STAGES), (size_t)256 << 10);
    CHECK_EQ(sp_plan_default_chunk(64, 1024, SP_LONG_CHAIN_STAGES - 1), (size_t)128 << 10);
    /* a wide buffer in between caps it: 128 MiB of it at most (256 for a long chain) */
    CHECK_EQ(sp_plan_default_chunk(4, 4096, 1), SP_MAX_CHOSEN_STAGE_BYTES / 4096);
    CHECK_EQ(sp_plan_default_chunk(4, 4096, SP_LONG_CHAIN_STAGES),
             SP_MAX_CHOSEN_STAGE_BYTES / 4096 * 2);
    CHECK_EQ(sp_plan_default_chunk(4, SP_MAX_CHOSEN_STAGE_BYTES + 1, 1), 1);
    /* the widest is never below the ends */
    CHECK_EQ(sp_plan_default_chunk(64, 4, 1), (size_t)128 << 10);
    CHECK_EQ(sp_plan_default_depth(0), 4);
    CHECK_EQ(sp_plan_default_depth(1), 5);
    CHECK_EQ(sp_plan_default_depth(16), 8);
    /* graph mode: four groups of 2 MiB in + out for small chunks */
    CHECK_EQ(sp_plan_default_graph_depth(1, (size_t)128 << 10), 64);
    CHECK_EQ(sp_plan_default_graph_depth(1, (size_t)256 << 10), 32);
    CHECK_EQ(sp_plan_default_graph_depth(1, (size_t)1 << 20), 16);
    CHECK_EQ(sp_plan_default_graph_depth(1, (size_t)2 << 20), 16);
    CHECK_EQ(sp_plan_default_graph_depth(1, 64), 64);
    CHECK_EQ(sp_plan_default_graph_depth(1, ((size_t)2 << 20) + 1), 5);
    return TEST_OK;
}

TEST(plan_cuts_runs)
{
    sp_run_plan plan;
    sp_plan_run(10, 3, 0, 4, 4, &plan); /* explicit chunk: used as given */
    CHECK_EQ(plan.chunk_records, 3);
    CHECK_EQ(plan.chunks, 4);
    sp_plan_run(0, 3, 0, 4, 4, &plan);
    CHECK_EQ(plan.chunks, 0);
    /* chosen: a short run is cut into 2*depth chunks, but never below 1 MiB per chunk */
    size_t cap = sp_plan_default_chunk(4, 4, 1);
    sp_plan_run(cap * 2, cap, 1, 4, 4, &plan);
    CHECK_EQ(plan.chunk_records, (1u << 20) / 4 > cap * 2 / 8 ? (1u << 20) / 4 : cap * 2 / 8);
    CHECK_EQ(plan.chunks, (cap * 2 + plan.chunk_records - 1) / plan.chunk_records);
    sp_plan_run(100, cap, 1, 4, 4, &plan); /* tiny run: one chunk of the floor size */
    CHECK_EQ(plan.chunks, 1);
    sp_plan_run(cap * 100, cap, 1, 4, 4, &plan); /* long run: full chunks */
    CHECK_EQ(plan.chunk_records, cap);
    return TEST_OK;
}

/* A compressed input decoded in the ring: SP_RING_DECODE_BLOCKS whole blocks a chunk (1024
 * blocks a batch decoded at a third of 4096's rate), the whole input when smaller, at most
 * SP_RING_DECODE_MAX_STAGE_BYTES of the widest record. */
TEST(plan_ring_decode_chunk)
{
    size_t per = 65536 / 4; /* 64 KiB blocks of float32 records */
    CHECK_EQ(sp_plan_ring_decode_chunk(per, 0, 4), SP_RING_DECODE_BLOCKS * per);
    CHECK_EQ(sp_plan_ring_decode_chunk(per, (size_t)1 << 32, 4), SP_RING_DECODE_BLOCKS * per);
    CHECK_EQ(sp_plan_default_chunk(4, 4, 1) / per, 128); /* what the default holds */
    /* a smaller input: one chunk of it, rounded up to whole blocks */
    CHECK_EQ(sp_plan_ring_decode_chunk(per, 10 * per + 1, 4), 11 * per);
    CHECK_EQ(sp_plan_ring_decode_chunk(per, 3, 4), per);
    /* 4 MiB blocks (lz4's default): 512 MiB of float32 records, 128 blocks */
    size_t big = ((size_t)4 << 20) / 4;
    CHECK_EQ(sp_plan_ring_decode_chunk(big, 0, 4), SP_RING_DECODE_MAX_STAGE_BYTES / 4);
    /* a wide boundary caps it, in whole blocks, never below one */
    CHECK_EQ(sp_plan_ring_decode_chunk(1024, 0, 1024),
             SP_RING_DECODE_MAX_STAGE_BYTES / 1024 / 1024 * 1024);
    CHECK_EQ(sp_plan_ring_decode_chunk(big, 0, 1 << 20), big);
    CHECK_EQ(sp_plan_ring_decode_chunk(0, 0, 0), SP_RING_DECODE_BLOCKS);
    return TEST_OK;
}

TEST(size_arithmetic)
{
    int overflow = 0;
    CHECK_EQ(sp_mul_size(3, 5, &overflow), 15);
    CHECK_EQ(overflow, 0);
    sp_mul_size(SIZE_MAX / 2 + 1, 2, &overflow);
    CHECK_EQ(overflow, 1);
    char buf[64];
    CHECK(sp_ranges_overlap(buf, 10, buf + 9, 10));
    CHECK(!sp_ranges_overlap(buf, 10, buf + 10, 10));
    CHECK(sp_ranges_overlap(buf + 5, 1, buf, 10));
    CHECK(!sp_ranges_overlap(buf, 0, buf, 10));
    return TEST_OK;
}

/* h2d, one compute stage, d2h, two chunks:
 *   h2d   [0,1) [1,2)        compute [1,3) [3,5)       d2h [3,4) [5,6)
 * busy: h2d 2, compute 4, d2h 2; makespan 6 -> bound 4 (compute), efficiency 2/3.
 * copies under compute: h2d [1,2) fully, d2h [3,4) fully, h2d [0,1) and d2h [5,6) not: 2/4. */
static void two_chunk_timeline(sp_timeline *t)
{
    memset(t, 0, sizeof *t);
    sp_timeline_reset(t, 3, 2);
    const char *names[3] = {"h2d", "stage", "d2h"};
    sp_engine_kind kinds[3] = {SP_ENGINE_H2D, SP_ENGINE_COMPUTE, SP_ENGINE_D2H};
    for (size_t e = 0; e < 3; e++) {
        t->name[e] = names[e];
        t->kind[e] = kinds[e];
        t->active[e] = 1;
        t->bytes[e] = 1000000000;
    }
    sp_timeline_set(t, 0, 0, 0, 1);
    sp_timeline_set(t, 0, 1, 1, 2);
    sp_timeline_set(t, 1, 0, 1, 3);
    sp_timeline_set(t, 1, 1, 3, 5);
    sp_timeline_set(t, 2, 0, 3, 4);
    sp_timeline_set(t, 2, 1, 5, 6);
}

TEST(timeline_figures_known_answer)
{
    sp_timeline t;
    two_chunk_timeline(&t);
    sp_report r;
    memset(&r, 0, sizeof r);
    r.makespan_s = 6.0;
    sp_timeline_figures(&t, &r);
    CHECK_EQ(r.n_engines, 3);
    CHECK(NEAR(r.engines[0].busy_s, 2.0));
    CHECK(NEAR(r.engines[1].busy_s, 4.0));
    CHECK(NEAR(r.engines[1].max_chunk_s, 2.0));
    CHECK(NEAR(r.bound_s, 4.0));
    CHECK(NEAR(r.efficiency, 4.0 / 6.0));
    CHECK(NEAR(r.serial_s, 8.0));
    CHECK(NEAR(r.hidden_transfer, 0.5));
    CHECK(NEAR(r.model_s, 1 * 2.0 + (1.0 + 2.0 + 1.0))); /* (N-1)*max + sum of means */
    CHECK(NEAR(r.h2d_gbps, 0.5));                        /* 1e9 bytes over 2 s */
    CHECK(strcmp(r.bottleneck, "stage") == 0);
    sp_timeline_free(&t);
    return TEST_OK;
}

/* engines x chunks spans whose bytes wrap size_t: refused before anything is written. */
TEST(timeline_reset_refuses_wrapping_sizes)
{
    sp_timeline t;
    memset(&t, 0, sizeof t);
    size_t chunks = ((size_t)1 << 58) + 1; /* x 4 engines x 16 bytes wraps to 64 bytes */
    CHECK(sp_timeline_reset(&t, 4, chunks) != SP_OK);
    CHECK_EQ(t.capacity, 0);
    CHECK(sp_timeline_reset(&t, SIZE_MAX, 2) != SP_OK);
    CHECK_EQ(t.capacity, 0);
    sp_timeline_free(&t);
    return TEST_OK;
}

/* huge_run(p, buf, serial): a timed in-place run of 2^58 + 1 one-byte records in chunks of
 * one over a buffer of 64 bytes must fail before it touches a byte: the timeline's size
 * wraps. (The serial run copies chunk by chunk as soon as its timeline is there.) */
static void huge_run(sp_pipeline *p, unsigned char *buf, int serial)
{
    size_t n = ((size_t)1 << 58) + 1;
    sp_report report;
    sp_status st = serial ? sp_pipeline_run_serial(p, buf, n, buf, &report)
                          : sp_pipeline_run(p, buf, n, buf, &report);
    CHECK_MSG(st == SP_ERR_OUT_OF_MEMORY || st == SP_ERR_INVALID_ARGUMENT,
              "%s run returned %s: %s", serial ? "serial" : "stream", sp_status_name(st),
              sp_pipeline_last_error(p));
    CHECK_HAS(sp_pipeline_last_error(p), "timeline");
}

TEST(timed_run_of_wrapping_chunk_count_fails_cleanly)
{
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    sp_pipeline_config cfg = {.in_record_bytes = 1, .chunk_records = 1, .depth = 2};
    if (CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK)) {
        unsigned char buf[64];
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (unsigned char)i;
        huge_run(p, buf, 0);
        huge_run(p, buf, 1);
        /* A timeline that had taken the wrapped size as its capacity would now be written
         * past its end (ASan sees it) by an ordinary run of 64 chunks. */
        sp_report report;
        CHECK_EQ(sp_pipeline_run(p, buf, sizeof buf, buf, &report), SP_OK);
        CHECK_EQ(report.chunks, sizeof buf);
        for (size_t i = 0; i < sizeof buf; i++)
            CHECK_EQ(buf[i], i);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A chunk whose buffers' bytes overflow is refused when the pipeline is created, with the
 * reason, before anything is allocated (the CLI cuts chunks to the records; a library user
 * gets this). */
TEST(pipeline_refuses_a_chunk_whose_bytes_overflow)
{
    sp_context *ctx = NULL;
    if (!CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK))
        return TEST_FAIL;
    size_t chunks[] = {SIZE_MAX, SIZE_MAX / 4 + 1, SIZE_MAX / 8};
    for (size_t i = 0; i < ARRAY_LEN(chunks); i++) {
        sp_pipeline_config cfg = {.in_record_bytes = 4, .chunk_records = chunks[i], .depth = 2};
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_ERR_INVALID_ARGUMENT);
        CHECK(p == NULL);
        CHECK_HAS(sp_context_last_error(ctx), "overflows");
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* stage-in and stage-out copied together in [0,1) and again in [1,2): the host was busy for
 * 2 s, not 4; with a GPU engine of 1.5 s, host staging is the bound. */
TEST(host_staging_counts_the_union)
{
    sp_timeline t;
    memset(&t, 0, sizeof t);
    sp_timeline_reset(&t, 3, 2);
    const char *names[3] = {"stage-in", "h2d", "stage-out"};
    sp_engine_kind kinds[3] = {SP_ENGINE_STAGE_IN, SP_ENGINE_H2D, SP_ENGINE_STAGE_OUT};
    for (size_t e = 0; e < 3; e++) {
        t.name[e] = names[e];
        t.kind[e] = kinds[e];
        t.active[e] = 1;
    }
    sp_timeline_set(&t, 0, 0, 0, 1);
    sp_timeline_set(&t, 0, 1, 1, 2);
    sp_timeline_set(&t, 2, 0, 0, 1);
    sp_timeline_set(&t, 2, 1, 1, 2);
    sp_timeline_set(&t, 1, 0, 1, 1.75);
    sp_timeline_set(&t, 1, 1, 2, 2.75);
    sp_report r;
    memset(&r, 0, sizeof r);
    r.makespan_s = 2.75;
    sp_timeline_figures(&t, &r);
    CHECK(NEAR(r.bound_s, 2.0));
    CHECK(strcmp(r.bottleneck, "host staging") == 0);
    CHECK(NEAR(r.efficiency, 2.0 / 2.75));
    sp_timeline_free(&t);
    return TEST_OK;
}

/* A stage on two streams ran chunks 0 and 1 side by side in [0,2) and [1,3): it was busy
 * for 3 s of wall time, though its chunks took 4 s of work. */
TEST(multi_stream_stage_counts_wall_time)
{
    sp_timeline t;
    memset(&t, 0, sizeof t);
    sp_timeline_reset(&t, 1, 2);
    t.name[0] = "stage";
    t.kind[0] = SP_ENGINE_COMPUTE;
    t.active[0] = 1;
    t.streams[0] = 2;
    sp_timeline_set(&t, 0, 0, 0, 2);
    sp_timeline_set(&t, 0, 1, 1, 3);
    sp_report r;
    memset(&r, 0, sizeof r);
    r.makespan_s = 3.0;
    sp_timeline_figures(&t, &r);
    CHECK(NEAR(r.engines[0].busy_s, 3.0));
    CHECK(NEAR(r.bound_s, 3.0));
    CHECK(NEAR(r.serial_s, 4.0)); /* no overlap at all: the work, one chunk after the other */
    CHECK(NEAR(r.efficiency, 1.0));
    sp_timeline_free(&t);
    return TEST_OK;
}

TEST(span_coverage)
{
    sp_span merged[2] = {{1, 2}, {3, 5}};
    CHECK(NEAR(sp_span_covered((sp_span){0, 6}, merged, 2), 3.0));
    CHECK(NEAR(sp_span_covered((sp_span){1.5, 3.5}, merged, 2), 1.0));
    CHECK(NEAR(sp_span_covered((sp_span){5, 6}, merged, 2), 0.0));
    return TEST_OK;
}

TEST(staging_pool_copies_every_byte)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t sizes[] = {0, 1, 4095, 512 * 1024 - 1, 512 * 1024 + 17, (3u << 20) + 5};
    unsigned threads[] = {1, 2, 4, 7};
    size_t max = (3u << 20) + 5;
    unsigned char *src = malloc(max), *dst = malloc(max);
    for (size_t t = 0; t < ARRAY_LEN(threads); t++) {
        sp_staging_pool *pool = NULL;
        CHECK_EQ(sp_staging_pool_create(threads[t], &pool), SP_OK);
        CHECK_EQ(sp_staging_pool_threads(pool), threads[t]);
        for (int round = 0; round < 20; round++) {
            size_t n = sizes[rng_below(&rng, ARRAY_LEN(sizes))];
            rng_fill(&rng, src, max);
            memset(dst, 0xA5, max);
            sp_staging_pool_copy(pool, dst, src, n);
            CHECK_MSG(memcmp(dst, src, n) == 0, "threads %u: %zu bytes differ", threads[t], n);
            if (n < max)
                CHECK_MSG(dst[n] == 0xA5, "threads %u: wrote past %zu bytes", threads[t], n);
        }
        sp_staging_pool_destroy(pool);
    }
    free(src);
    free(dst);
    return TEST_OK;
}

/* The hand-over between the caller and the workers, as the pipeline uses it: two copies at
 * once, back to back, and with pauses shorter and longer than the workers spin (so both the
 * spinning and the sleeping hand-over run), every byte checked and nothing written past. A
 * worker that read a plan while it was being rewritten, or a caller that returned before the
 * last piece landed, shows as a wrong byte. */
TEST(staging_pool_handoffs_under_pauses)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 11);
    enum { MAX = (1u << 20) + 4096 };
    unsigned char *src = malloc(2 * MAX), *dst = malloc(2 * MAX + 2);
    const unsigned pauses_us[] = {0, 0, 0, 20, 150, 1500};
    sp_staging_pool *pool = NULL;
    CHECK_EQ(sp_staging_pool_create(4, &pool), SP_OK);
    int rounds = harness_quick() ? 150 : 600;
    for (int round = 0; pool && round < rounds; round++) {
        size_t a = 256 * 1024 + rng_below(&rng, MAX - 256 * 1024);
        size_t b = rng_below(&rng, MAX);
        rng_fill(&rng, src, a + b);
        memset(dst, 0xA5, 2 * MAX + 2);
        sp_copy copies[2] = {{.dst = dst, .src = src, .bytes = a},
                             {.dst = dst + a + 1, .src = src + a, .bytes = b}};
        CHECK_EQ(sp_staging_pool_copy_many(pool, copies, 2), SP_OK);
        CHECK_MSG(memcmp(dst, src, a) == 0, "round %d: first copy (%zu bytes) differs", round, a);
        CHECK_MSG(memcmp(dst + a + 1, src + a, b) == 0, "round %d: second copy differs", round);
        CHECK_MSG(dst[a] == 0xA5 && dst[a + 1 + b] == 0xA5, "round %d: wrote past a copy", round);
        unsigned pause = pauses_us[rng_below(&rng, ARRAY_LEN(pauses_us))];
        struct timespec nap = {0, (long)pause * 1000};
        if (pause)
            nanosleep(&nap, NULL);
        if (harness_failures())
            break;
    }
    sp_staging_pool_destroy(pool);
    free(src);
    free(dst);
    return TEST_OK;
}

/* Every head alignment and tail length around the streaming threshold, bytes past the end
 * untouched. */
TEST(copy_nontemporal_every_alignment)
{
    enum { MAX = 256 * 1024 + 200 };
    unsigned char *src = malloc(MAX), *dst = malloc(MAX + 64);
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 7);
    rng_fill(&rng, src, MAX);
    size_t sizes[] = {0, 1, 63, 65536 - 1, 65536, 65536 + 1, 65536 + 63, 200000, 256 * 1024};
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++)
        for (size_t shift = 0; shift < 16; shift++) {
            size_t n = sizes[k];
            memset(dst, 0x5A, MAX + 64);
            sp_copy_nontemporal(dst + shift, src + (15 - shift), n);
            CHECK_MSG(memcmp(dst + shift, src + (15 - shift), n) == 0, "n=%zu shift=%zu", n,
                      shift);
            CHECK_MSG(dst[shift + n] == 0x5A, "n=%zu shift=%zu: wrote past the end", n, shift);
            if (shift > 0)
                CHECK_MSG(dst[shift - 1] == 0x5A, "n=%zu shift=%zu: wrote before", n, shift);
        }
    free(src);
    free(dst);
    return TEST_OK;
}

/* ---- src/util/read_file.c ------------------------------------------------------------------ */

/* A fresh folder under TMPDIR (or /tmp) for the files of one test. */
static int make_scratch(char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/sp_read_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    return CHECK(mkdtemp(dir) != NULL);
}

static int write_file(const char *path, const unsigned char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!CHECK_MSG(f != NULL, "cannot create %s", path))
        return 0;
    int ok = CHECK(fwrite(bytes, 1, n, f) == n);
    return CHECK(fclose(f) == 0) && ok;
}

/* `path` is refused as `want`, the reason holding `says`, and *bytes and *size untouched. */
static void expect_refused(const char *path, size_t max_bytes, sp_read_result want,
                           const char *says)
{
    unsigned char sentinel = 0;
    unsigned char *bytes = &sentinel;
    size_t size = 12345;
    char why[512] = "";
    harness_context("reading %s", path);
    CHECK_EQ(sp_read_regular_file("test", path, max_bytes, &bytes, &size, why, sizeof why), want);
    CHECK_HAS(why, says);
    CHECK_HAS(why, path); /* the reason names the file */
    CHECK(bytes == &sentinel);
    CHECK_EQ(size, 12345);
    /* no buffer for the reason is allowed too */
    CHECK_EQ(sp_read_regular_file("test", path, max_bytes, &bytes, &size, NULL, 0), want);
    harness_context("%s", "");
}

/* A file is read whole, up to and at max_bytes; an empty one gives an empty buffer. */
TEST(read_file_reads_whole_files)
{
    char dir[512], path[600];
    if (!make_scratch(dir, sizeof dir))
        return TEST_FAIL;
    snprintf(path, sizeof path, "%s/data", dir);
    unsigned char data[3000];
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x4ead);
    rng_fill(&rng, data, sizeof data);
    size_t sizes[] = {0, 1, sizeof data};
    for (size_t k = 0; k < ARRAY_LEN(sizes) && write_file(path, data, sizes[k]); k++) {
        unsigned char *bytes = NULL;
        size_t size = 99999;
        char why[512] = "";
        CHECK_EQ(sp_read_regular_file("test", path, sizes[k], &bytes, &size, why, sizeof why),
                 SP_READ_OK);
        CHECK_MSG(why[0] == '\0', "a reason was written on success: %s", why);
        CHECK_EQ(size, sizes[k]);
        CHECK(bytes != NULL);
        CHECK_MSG(bytes == NULL || memcmp(bytes, data, sizes[k]) == 0, "%zu bytes differ",
                  sizes[k]);
        free(bytes);
    }
    CHECK(unlink(path) == 0);
    CHECK(rmdir(dir) == 0);
    return TEST_OK;
}

/* Each refusal with its kind and a reason naming the file; a FIFO at once, not waited on (the
 * test's short timeout turns a hang into a failure). */
TEST(read_file_refuses_what_cannot_work)
{
    char dir[512], path[600];
    if (!make_scratch(dir, sizeof dir))
        return TEST_FAIL;
    snprintf(path, sizeof path, "%s/missing", dir);
    expect_refused(path, 100, SP_READ_CANNOT_OPEN, "cannot open the test file");
    expect_refused(path, 100, SP_READ_CANNOT_OPEN, "No such file or directory");
    expect_refused(dir, 100, SP_READ_NOT_REGULAR, "is not a regular file (it is a directory)");
    snprintf(path, sizeof path, "%s/fifo", dir);
    if (CHECK(mkfifo(path, 0600) == 0)) {
        expect_refused(path, 100, SP_READ_NOT_REGULAR, "is not a regular file (it is a FIFO)");
        CHECK(unlink(path) == 0);
    }
    expect_refused("/dev/null", 100, SP_READ_NOT_REGULAR, "(it is a character device)");
    snprintf(path, sizeof path, "%s/eleven", dir);
    if (write_file(path, (const unsigned char *)"eleven byte", 11)) {
        expect_refused(path, 10, SP_READ_TOO_BIG, "has 11 bytes; over 10 are refused");
        expect_refused(path, 0, SP_READ_TOO_BIG, "has 11 bytes; over 0 are refused");
        CHECK(unlink(path) == 0);
    }
    CHECK(rmdir(dir) == 0);
    return TEST_OK;
}

/* A file whose contents do not match fstat's size fails instead of being cut: /proc files say
 * 0 bytes and have more, so the read past the end finds some. */
TEST(read_file_refuses_a_file_that_changed_size)
{
    struct stat info;
    if (stat("/proc/self/stat", &info) != 0 || !S_ISREG(info.st_mode) || info.st_size != 0) {
        harness_skip_reason("no /proc/self/stat of 0 bytes here");
        return TEST_SKIP;
    }
    expect_refused("/proc/self/stat", 100, SP_READ_SIZE_CHANGED, "changed size while it was read");
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(plan_defaults),
        TEST_ENTRY(plan_cuts_runs),
        TEST_ENTRY(plan_ring_decode_chunk),
        TEST_ENTRY(size_arithmetic),
        TEST_ENTRY(timeline_figures_known_answer),
        TEST_ENTRY(timeline_reset_refuses_wrapping_sizes),
        TEST_ENTRY(timed_run_of_wrapping_chunk_count_fails_cleanly),
        TEST_ENTRY(pipeline_refuses_a_chunk_whose_bytes_overflow),
        TEST_ENTRY(host_staging_counts_the_union),
        TEST_ENTRY(multi_stream_stage_counts_wall_time),
        TEST_ENTRY(span_coverage),
        TEST_ENTRY(staging_pool_copies_every_byte),
        TEST_ENTRY(staging_pool_handoffs_under_pauses),
        TEST_ENTRY(copy_nontemporal_every_alignment),
        TEST_ENTRY(read_file_reads_whole_files),
        TEST_ENTRY_T(read_file_refuses_what_cannot_work, 10),
        TEST_ENTRY(read_file_refuses_a_file_that_changed_size),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
