/*
 * test_ring_decompress BACKEND [filter]: compressed inputs decompressed inside the ring
 * (streampipe_io.h, sp_decompress_where; src/core/ring_decode.c). Files of fresh random
 * records that compress, made by the real lz4, zstd and pzstd commands at several block sizes
 * and levels, run with decompress RING through mix stages: every output byte against the
 * reference on the decompressed data, the figures saying every chunk went through the ring
 * and the h2d carried fewer bytes than the records. Also: under random queue delays (the fault
 * backend), a range that cuts blocks (the staging threads take those chunks), records that do
 * not divide the blocks (RING refused, AUTO falls back saying why), corrupt blocks with and
 * without a block checksum (the run fails naming the file offset, nothing committed).
 *
 * On CUDA the ring needs nvCOMP: $SP_NVCOMP_LIBRARY (else the library path) is loaded; with
 * it the same cases run on the device; without it AUTO must fall back naming the reason, and
 * SP_REQUIRE_NVCOMP=1 (bench/gpu_check.sh) makes its absence a failure, not a skip. Skips
 * without the commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_io.h"
#include "testbuf.h"

#define IN_REC 16 /* divides every LZ4 block size (64 KiB .. 4 MiB) */

static sp_backend_kind g_kind;
static char dir[256];
static int g_nvcomp; /* CUDA: nvCOMP loaded */

static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

/* n records of small integers in runs (they compress about 3:1), written raw as in.bin. */
static unsigned char *make_input(test_rng *rng, size_t n)
{
    unsigned char *in = malloc(n * IN_REC);
    for (size_t i = 0; in && i < n * IN_REC; i++)
        in[i] = (i % 4 == 0 && rng_below(rng, 3) == 0) ? (unsigned char)rng_below(rng, 16)
                                                       : (i >= 4 ? in[i - 4] : 0);
    FILE *f = in ? fopen(at("in.bin"), "wb") : NULL;
    int ok = f && fwrite(in, 1, n * IN_REC, f) == n * IN_REC;
    if (f)
        ok = fclose(f) == 0 && ok;
    if (!ok) {
        free(in);
        return NULL;
    }
    return in;
}

static int make_file(const char *command, const char *name)
{
    char cmd[2048];
    int zstd = strncmp(command, "lz4", 3) != 0;
    snprintf(cmd, sizeof cmd, "%s '%s' %s'%s'", command, at("in.bin"), zstd ? "-o " : "",
             at(name));
    return CHECK_MSG(system(cmd) == 0, "failed: %s", cmd);
}

static int read_whole(const char *path, unsigned char *buf, size_t want)
{
    FILE *f = fopen(path, "rb");
    size_t size = f ? fread(buf, 1, want + 1, f) : 0;
    if (f)
        fclose(f);
    return CHECK_EQ(size, want);
}

typedef struct ring_run {
    sp_pipeline *p;
    size_t n, out_rec;
    const mix_chain *chain;
    const unsigned char *in;   /* the records */
    const unsigned char *want; /* the reference on the decompressed records */
    unsigned char *got;
} ring_run;

/* One file through the pipeline with `where`; 1 when it ran, committed, and its figures were
 * read into *in. */
static int run_file(ring_run *r, const char *name, int where, size_t first, size_t count,
                    sp_file_io_input *in)
{
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at(name);
    c.output = at("out.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = r->out_rec;
    c.first_record = first;
    c.n_records = count;
    c.decompress = where;
    sp_file_io *f = NULL;
    sp_report report;
    int ok = CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f)) &&
             CHECK_STATUS(sp_pipeline_run_io(r->p, sp_file_io_get(f), &report), SP_OK,
                          sp_pipeline_last_error(r->p)) &&
             CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f)) &&
             CHECK_EQ(sp_file_io_input_get(f, in), SP_OK);
    sp_file_io_close(f);
    if (ok)
        CHECK(in->ring_chunks == 0 || in->ring_busy_s > 0.0); /* a timed run */
    return ok;
}

/* The output holds the reference for records [first, first + count), zeros elsewhere. */
static void check_output(ring_run *r, size_t first, size_t count, const char *what)
{
    memset(r->got, 0xA5, r->n * r->out_rec);
    if (!read_whole(at("out.bin"), r->got, r->n * r->out_rec))
        return;
    CHECK_EQ(compare_records(r->want + first * r->out_rec, r->got + first * r->out_rec, count,
                             r->out_rec, what), 0);
    unlink(at("out.bin"));
}

/* Every chunk in the ring, byte for byte. */
static void whole_in_ring(ring_run *r, const char *command, const char *name)
{
    harness_context("%s (%s)", name, command);
    sp_file_io_input in;
    if (make_file(command, name) && run_file(r, name, SP_DECOMPRESS_RING, 0, 0, &in)) {
        check_output(r, 0, r->n, name);
        CHECK(in.ring_chunks > 0);
        CHECK_EQ(in.staging_chunks, 0);
        CHECK_EQ(in.ring_bytes_out, (uint64_t)r->n * IN_REC);
        CHECK(in.ring_bytes_in > 0 && in.ring_bytes_in < in.ring_bytes_out);
        CHECK_EQ(in.ring_blocks, in.blocks);
        CHECK_HAS(in.note, "in the ring");
    }
    unlink(at(name));
    harness_context("%s", "");
}

static const char *const in_ring_commands[][2] = {
    {"lz4 -q -f -B4", "b4.lz4"},
    {"lz4 -q -f -B5 -BX -9", "b5x9.lz4"},  /* block checksums, checked on the staging threads */
    {"lz4 -q -f -B6 --content-size --no-frame-crc -1", "b6.lz4"},
    {"pzstd -q -f -p 3 -1", "p1.zst"},     /* frames of 2 MiB */
    {"pzstd -q -f -p 2 -2", "p2.zst"},
};

/* A range that starts inside a block: every chunk cuts one, so the staging threads take them
 * all (AUTO), and the output is still the reference. */
static void cut_range(ring_run *r)
{
    sp_file_io_input in;
    size_t first = 7, count = r->n - 7 - 100;
    /* the range's records are numbered from its start, as the stages see them */
    unsigned char *want = malloc(r->n * r->out_rec);
    if (CHECK(want != NULL) && make_file("lz4 -q -f -B4", "cut.lz4") &&
        run_file(r, "cut.lz4", SP_DECOMPRESS_AUTO, first, count, &in)) {
        mix_reference(r->chain->stages, r->chain->n_stages, IN_REC, r->in + first * IN_REC,
                      count, 0, want + first * r->out_rec);
        const unsigned char *whole = r->want;
        r->want = want;
        check_output(r, first, count, "cut range");
        r->want = whole;
        CHECK_EQ(in.ring_chunks, 0);
        CHECK(in.staging_chunks > 0);
    }
    unlink(at("cut.lz4"));
    free(want);
}

/* The file's byte at `offset` (from the end when negative) overwritten with n bytes of v. */
static int damage(const char *name, long offset, size_t n, unsigned char v)
{
    FILE *f = fopen(at(name), "r+b");
    int ok = f && fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET) == 0;
    for (size_t k = 0; ok && k < n; k++)
        ok = fputc(v, f) != EOF;
    if (f)
        ok = fclose(f) == 0 && ok;
    return CHECK(ok);
}

/* A run of a damaged file fails naming `needle`, and leaves no output. */
static void fails_in_ring(ring_run *r, const char *name, const char *needle)
{
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at(name);
    c.output = at("bad.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = r->out_rec;
    c.decompress = SP_DECOMPRESS_RING;
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_EQ(sp_pipeline_run_io(r->p, sp_file_io_get(f), NULL), SP_ERR_STAGE_FAILED);
    CHECK_HAS(sp_pipeline_last_error(r->p), needle);
    CHECK_HAS(sp_pipeline_last_error(r->p), "offset");
    CHECK(sp_file_io_commit(f) != SP_OK);
    sp_file_io_close(f);
    CHECK(access(at("bad.bin"), F_OK) != 0);
}

static void corrupt_blocks(ring_run *r)
{
    /* with block checksums: a byte inside the third 64 KiB block's data */
    if (make_file("lz4 -q -f -B4 -BX", "sum.lz4") && damage("sum.lz4", 7 + 2 * 30000, 1, 0x5A))
        fails_in_ring(r, "sum.lz4", "checksum");
    unlink(at("sum.lz4"));
    /* without: the second block's first bytes (its first token and literals) made 0xFF, so
     * that the lengths run past the block */
    if (make_file("lz4 -q -f -B4 --no-frame-crc", "nosum.lz4")) {
        FILE *f = fopen(at("nosum.lz4"), "rb");
        unsigned char h[4];
        long second = 0;
        /* header: magic 4, FLG, BD, HC = 7 bytes; then the first block's size word */
        if (f && fseek(f, 7, SEEK_SET) == 0 && fread(h, 1, 4, f) == 4)
            second = 7 + 4 + (long)((h[0] | h[1] << 8 | h[2] << 16 | (unsigned)h[3] << 24) &
                                    0x7FFFFFFF) + 4;
        if (f)
            fclose(f);
        if (CHECK(second > 0) && damage("nosum.lz4", second, 24, 0xFF))
            fails_in_ring(r, "nosum.lz4", "LZ4 block at file offset");
    }
    unlink(at("nosum.lz4"));
}

/* Records of 12 bytes do not divide 64 KiB blocks: RING is refused, AUTO says why. */
static void records_not_dividing(sp_context *ctx, size_t n, test_rng *rng)
{
    size_t outs[] = {12};
    mix_chain chain;
    mix_chain_init(&chain, 12, 1, outs, (uint32_t)rng_next(rng));
    sp_pipeline_config cfg = mix_chain_config(&chain, 8192, 3);
    sp_pipeline *p = NULL;
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at("odd.lz4");
    c.output = at("odd.bin");
    c.in_record_bytes = c.out_record_bytes = 12;
    sp_file_io *f = NULL;
    sp_file_io_input in;
    (void)n;
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)) ||
        !make_file("lz4 -q -f -B4", "odd.lz4")) {
        sp_pipeline_destroy(p);
        return;
    }
    for (int where = SP_DECOMPRESS_AUTO; where <= SP_DECOMPRESS_RING; where += 2) {
        c.decompress = where;
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
        sp_status st = sp_pipeline_run_io(p, sp_file_io_get(f), NULL);
        if (where == SP_DECOMPRESS_RING) {
            CHECK_EQ(st, SP_ERR_UNSUPPORTED);
            CHECK_HAS(sp_pipeline_last_error(p), "not whole records of 12 bytes");
        } else if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)) &&
                   CHECK_EQ(sp_file_io_input_get(f, &in), SP_OK)) {
            CHECK_HAS(in.note, "on the staging threads: its blocks of 65536 bytes are not "
                               "whole records");
            CHECK_EQ(in.ring_chunks, 0);
        }
        sp_file_io_close(f);
        f = NULL;
    }
    sp_pipeline_destroy(p);
    unlink(at("odd.lz4"));
}

/* CUDA: nvCOMP found, or its absence said (and, with SP_REQUIRE_NVCOMP=1, failed). */
static int nvcomp_ready(void)
{
    if (g_kind != SP_BACKEND_CUDA)
        return 1;
    const char *path = getenv("SP_NVCOMP_LIBRARY");
    char why[256];
    g_nvcomp = sp_nvcomp_load(path && *path ? path : NULL, why, sizeof why) == SP_OK;
    const char *req = getenv("SP_REQUIRE_NVCOMP");
    if (!g_nvcomp && req && strcmp(req, "1") == 0)
        return CHECK_MSG(0, "SP_REQUIRE_NVCOMP=1 and nvCOMP did not load: %s", why);
    if (!g_nvcomp)
        CHECK_HAS(why, "nvCOMP");
    return 1;
}

/* Without nvCOMP, CUDA falls back, its note naming why. */
static void falls_back_without_nvcomp(ring_run *r)
{
    sp_file_io_input in;
    if (make_file("lz4 -q -f -B4", "fb.lz4") &&
        run_file(r, "fb.lz4", SP_DECOMPRESS_AUTO, 0, 0, &in)) {
        check_output(r, 0, r->n, "fallback");
        CHECK_EQ(in.ring_chunks, 0);
        CHECK_HAS(in.note, "nvCOMP");
    }
    unlink(at("fb.lz4"));
}

static int with_pipeline(sp_context *ctx, test_rng *rng, int delayed)
{
    /* a multiple of 3 records: 12-byte records divide it too (records_not_dividing) */
    size_t n = 3 * (200000 + rng_below(rng, 30000)), outs[] = {20};
    mix_chain chain;
    mix_chain_init(&chain, IN_REC, 1, outs, (uint32_t)rng_next(rng));
    ring_run r = {.n = n, .out_rec = mix_chain_out_rec(&chain), .chain = &chain};
    /* 256K records of 16 bytes: 4 MiB chunks, whole blocks of 64 KiB to 1 MiB, pzstd -1's
     * frames of 2 MiB */
    sp_pipeline_config cfg = mix_chain_config(&chain, 262144, 3);
    cfg.staging_threads = 3;
    unsigned char *in = make_input(rng, n), *want = malloc(n * r.out_rec);
    r.got = malloc(n * r.out_rec);
    r.want = want;
    r.in = in;
    if (CHECK(in && want && r.got) &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &r.p), SP_OK, sp_context_last_error(ctx))) {
        mix_reference(chain.stages, chain.n_stages, IN_REC, in, n, 0, want);
        if (g_kind == SP_BACKEND_CUDA && !g_nvcomp) {
            falls_back_without_nvcomp(&r);
        } else {
            for (size_t k = 0; k < ARRAY_LEN(in_ring_commands); k++)
                whole_in_ring(&r, in_ring_commands[k][0], in_ring_commands[k][1]);
            if (!delayed) {
                cut_range(&r);
                corrupt_blocks(&r);
                records_not_dividing(ctx, n, rng);
            }
        }
    }
    sp_pipeline_destroy(r.p);
    free(in);
    free(want);
    free(r.got);
    unlink(at("in.bin"));
    return TEST_OK;
}

static int have_commands(void)
{
    return system("command -v lz4 >/dev/null && command -v zstd >/dev/null && "
                  "command -v pzstd >/dev/null") == 0;
}

static int setup(test_rng *rng)
{
    if (!have_commands()) {
        harness_skip_reason("no lz4, zstd or pzstd command (Debian: lz4 zstd)");
        return TEST_SKIP;
    }
    rng_init(rng, harness_seed());
    snprintf(dir, sizeof dir, "/tmp/sp-ring-z-XXXXXX");
    return CHECK(mkdtemp(dir) != NULL) && nvcomp_ready() ? TEST_OK : TEST_FAIL;
}

TEST(decompressed_in_the_ring)
{
    test_rng rng;
    int rc = setup(&rng);
    if (rc != TEST_OK)
        return rc;
    sp_context *ctx = NULL;
    if (CHECK_STATUS(sp_context_create(g_kind, 0, &ctx), SP_OK, sp_context_last_error(ctx)))
        rc = with_pipeline(ctx, &rng, 0);
    sp_context_destroy(ctx);
    rmdir(dir);
    return rc;
}

/* Random delays on every queue: a missing wait between the h2d of a slot's compressed bytes
 * and the decompression that reads them would show as wrong records. */
TEST(decompressed_in_the_ring_delayed)
{
    test_rng rng;
    int rc = setup(&rng);
    if (rc != TEST_OK)
        return rc;
    sp_fault_config fc = SP_FAULT_CONFIG_INIT;
    fc.random_delay_us = 400;
    fc.seed = (unsigned long)rng_next(&rng);
    sp_context *ctx = NULL;
    if (CHECK_STATUS(sp_context_create_fault(g_kind, 0, &fc, &ctx), SP_OK,
                     sp_context_last_error(ctx)))
        rc = with_pipeline(ctx, &rng, 1);
    sp_context_destroy(ctx);
    rmdir(dir);
    return rc;
}

/* The file source alone into device memory (sp_io.out): the ring frees a slot for the next
 * chunk's staging once its h2d is done, before the decompression that still reads the slot's
 * units has run. Chunks of one 64 KiB block, a shallow ring and random delays on every queue
 * (the stage's lags the host's), every record compared after the copy back. */
static void into_memory(sp_context *ctx, test_rng *rng)
{
    size_t n = 4096 * (150 + rng_below(rng, 50)), outs[] = {20};
    mix_chain chain;
    mix_chain_init(&chain, IN_REC, 1, outs, (uint32_t)rng_next(rng));
    size_t out_rec = mix_chain_out_rec(&chain);
    sp_pipeline_config cfg = mix_chain_config(&chain, 4096, 3);
    cfg.staging_threads = 2;
    unsigned char *in = make_input(rng, n), *want = malloc(n * out_rec), *got = malloc(n * out_rec);
    void *dev = NULL;
    sp_pipeline *p = NULL;
    sp_file_io *f = NULL;
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at("mem.lz4");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = out_rec;
    c.decompress = SP_DECOMPRESS_RING;
    sp_file_io_input fig;
    if (CHECK(in && want && got) && make_file("lz4 -q -f -B4", "mem.lz4") &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)) &&
        CHECK_STATUS(sp_device_alloc(ctx, n * out_rec, &dev), SP_OK,
                     sp_context_last_error(ctx)) &&
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f))) {
        mix_reference(chain.stages, chain.n_stages, IN_REC, in, n, 0, want);
        for (int round = 0; round < 3; round++) {
            sp_io io = *sp_file_io_get(f);
            io.out = dev;
            memset(got, 0xA5, n * out_rec);
            if (!CHECK_STATUS(sp_pipeline_run_io(p, &io, NULL), SP_OK,
                              sp_pipeline_last_error(p)) ||
                !CHECK_STATUS(sp_memcpy(ctx, got, dev, n * out_rec), SP_OK,
                              sp_context_last_error(ctx)))
                break;
            CHECK_EQ(compare_records(want, got, n, out_rec, "into memory"), 0);
        }
        if (CHECK_EQ(sp_file_io_input_get(f, &fig), SP_OK)) {
            CHECK_EQ(fig.staging_chunks, 0);
            CHECK_EQ(fig.ring_bytes_out, 3 * (uint64_t)n * IN_REC);
        }
    }
    sp_file_io_close(f);
    sp_device_free(ctx, dev);
    sp_pipeline_destroy(p);
    free(in);
    free(want);
    free(got);
    unlink(at("mem.lz4"));
    unlink(at("in.bin"));
}

TEST(decompressed_in_the_ring_into_memory)
{
    test_rng rng;
    int rc = setup(&rng);
    if (rc != TEST_OK)
        return rc;
    sp_fault_config fc = SP_FAULT_CONFIG_INIT;
    fc.random_delay_us = 200;
    fc.seed = (unsigned long)rng_next(&rng);
    sp_context *ctx = NULL;
    if (CHECK_STATUS(sp_context_create_fault(g_kind, 0, &fc, &ctx), SP_OK,
                     sp_context_last_error(ctx)) &&
        (g_kind != SP_BACKEND_CUDA || g_nvcomp))
        into_memory(ctx, &rng);
    sp_context_destroy(ctx);
    rmdir(dir);
    return rc;
}

/* The loader's reasons: a library that is not there, one without nVCOMP's symbols, one of a
 * version it does not support (tests/io/fake_nvcomp.c, 4.1.0). Once nvCOMP is loaded (CUDA
 * with $SP_NVCOMP_LIBRARY) a load keeps it: then only its status is checked. */
TEST(nvcomp_loader_says_why)
{
    char why[256];
    unsigned version = 0;
    if (sp_nvcomp_status(&version, why, sizeof why)) {
        CHECK(version / 1000 == 5 || version / 1000 == 6);
        return TEST_OK;
    }
    CHECK_EQ(sp_nvcomp_load("/nonexistent/libnvcomp.so.6", why, sizeof why),
             SP_ERR_UNSUPPORTED);
    CHECK_HAS(why, "nvCOMP not found");
    CHECK_HAS(why, "/nonexistent/libnvcomp.so.6");
    CHECK_EQ(sp_nvcomp_load("libc.so.6", why, sizeof why), SP_ERR_UNSUPPORTED);
    CHECK_HAS(why, "lacks nvcompGetProperties");
    const char *fake = getenv("SP_TEST_FAKE_NVCOMP");
    if (CHECK_MSG(fake && *fake, "SP_TEST_FAKE_NVCOMP (ctest sets it) is not set")) {
        CHECK_EQ(sp_nvcomp_load(fake, why, sizeof why), SP_ERR_UNSUPPORTED);
        CHECK_HAS(why, "is version 4.1.0: this streampipe supports majors 5 and 6");
    }
    CHECK_EQ(sp_nvcomp_status(&version, why, sizeof why), 0);
    CHECK_EQ(version, 0);
    CHECK_HAS(why, "version 4.1.0"); /* the last load's reason */
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(nvcomp_loader_says_why),
        TEST_ENTRY(decompressed_in_the_ring),
        TEST_ENTRY(decompressed_in_the_ring_delayed),
        TEST_ENTRY(decompressed_in_the_ring_into_memory),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
