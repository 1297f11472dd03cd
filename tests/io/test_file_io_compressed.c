/*
 * test_file_io_compressed [filter]: the file source over LZ4 and Zstandard inputs, through the
 * library's API on HOST (tests/cli/cli_run_compressed.sh covers the formats' variants and bad
 * files through the CLI). Files of fresh random records that compress, made by the real lz4,
 * zstd and pzstd commands, run through mix stages with small chunks on four staging threads,
 * the output compared byte for byte with the reference; sp_file_io_input_get's figures (the
 * format, sizes, a single zstd frame read in order through a sequential sp_io, the LZ4
 * content checksum checked for the whole range and not for part of it). Skips without the
 * commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "testbuf.h"

#define IN_REC 12

static char dir[256];

static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int have_commands(void)
{
    return system("command -v lz4 >/dev/null && command -v zstd >/dev/null && "
                  "command -v pzstd >/dev/null") == 0;
}

/* n records of small integers in runs, which compress; written raw as in.bin. */
static unsigned char *make_input(test_rng *rng, size_t n)
{
    unsigned char *in = malloc(n * IN_REC);
    for (size_t i = 0; in && i < n * IN_REC; i++)
        in[i] = (i % IN_REC < 4 && rng_below(rng, 4) == 0) ? (unsigned char)rng_below(rng, 8)
                                                            : (i ? in[i - 1] : 0);
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

/* COMMAND 'in' TO'out': the compressor's command line (TO: "" for lz4, "-o " for zstd). */
static int compress(const char *command, const char *in, const char *to, const char *out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s '%s' %s'%s'", command, in, to, out);
    return CHECK_MSG(system(cmd) == 0, "failed: %s", cmd);
}

typedef struct compressed_case {
    const char *name, *command, *to; /* the file, the command that makes it from in.bin */
    int format, sequential, content_checksums;
} compressed_case;

/* One file through the pipeline; its output against `want`, its figures against the case. */
static void run_case(const compressed_case *k, sp_pipeline *p, size_t n, size_t out_rec,
                     const unsigned char *want)
{
    harness_context("%s", k->name);
    if (!compress(k->command, at("in.bin"), k->to, at(k->name)))
        return;
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at(k->name);
    c.output = at("out.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = out_rec;
    sp_file_io *f = NULL;
    sp_file_io_input in;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_EQ(sp_file_io_records(f), n);
    const sp_io *io = sp_file_io_get(f);
    CHECK(io && io->positional == !k->sequential);
    CHECK_STATUS(sp_pipeline_run_io(p, io, NULL), SP_OK, sp_pipeline_last_error(p));
    CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
    CHECK_EQ(sp_file_io_input_get(f, &in), SP_OK);
    CHECK_EQ(in.format, k->format);
    CHECK_EQ(in.sequential, k->sequential);
    CHECK_EQ(in.stream_bytes, n * IN_REC);
    CHECK(in.bytes_decompressed >= n * IN_REC && in.bytes_read > 0 && in.note[0]);
    CHECK_EQ(in.content_checked, k->content_checksums);
    sp_file_io_close(f);
    FILE *out = fopen(at("out.bin"), "rb");
    unsigned char *got = malloc(n * out_rec + 1);
    size_t size = out && got ? fread(got, 1, n * out_rec + 1, out) : 0;
    if (out)
        fclose(out);
    if (CHECK_EQ(size, n * out_rec))
        CHECK_EQ(compare_records(want, got, n, out_rec, k->name), 0);
    free(got);
    unlink(at(k->name));
    unlink(at("out.bin"));
    harness_context("%s", "");
}

/* Part of the range: the frame is not covered whole, so its content checksum is not checked. */
static void run_part(sp_pipeline *p, size_t n, size_t out_rec)
{
    if (!compress("lz4 -q -f -B4", at("in.bin"), "", at("part.lz4")))
        return;
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at("part.lz4");
    c.output = at("out.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = out_rec;
    c.first_record = 7;
    c.n_records = n - 20;
    sp_file_io *f = NULL;
    sp_file_io_input in;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_STATUS(sp_pipeline_run_io(p, sp_file_io_get(f), NULL), SP_OK,
                 sp_pipeline_last_error(p));
    CHECK_EQ(sp_file_io_input_get(f, &in), SP_OK);
    CHECK_EQ(in.content_checksums, 1);
    CHECK_EQ(in.content_checked, 0);
    sp_file_io_close(f); /* not committed: nothing is left */
    CHECK(access(at("out.bin"), F_OK) != 0);
    unlink(at("part.lz4"));
}

TEST(compressed_files_read_as_the_raw_one)
{
    if (!have_commands()) {
        harness_skip_reason("no lz4, zstd or pzstd command (Debian: lz4 zstd)");
        return TEST_SKIP;
    }
    static const compressed_case cases[] = {
        {"b4.lz4", "lz4 -q -f -B4 -BX", "", SP_INPUT_FORMAT_LZ4, 0, 1},
        {"b6.lz4", "lz4 -q -f -B6 --content-size --no-frame-crc", "", SP_INPUT_FORMAT_LZ4, 0,
         0},
        {"one.zst", "zstd -q -f -5", "-o ", SP_INPUT_FORMAT_ZSTD, 1, 0},
        {"many.zst", "pzstd -q -f -p 4 -1", "-o ", SP_INPUT_FORMAT_ZSTD, 0, 0},
    };
    test_rng rng;
    rng_init(&rng, harness_seed());
    snprintf(dir, sizeof dir, "/tmp/sp-file-io-z-XXXXXX");
    if (!CHECK(mkdtemp(dir) != NULL))
        return TEST_FAIL;
    size_t n = 300000 + rng_below(&rng, 100000), outs[] = {20};
    mix_chain chain;
    mix_chain_init(&chain, IN_REC, 1, outs, (uint32_t)rng_next(&rng));
    size_t out_rec = mix_chain_out_rec(&chain);
    sp_pipeline_config cfg = mix_chain_config(&chain, 4093, 3);
    cfg.staging_threads = 4;
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    unsigned char *in = make_input(&rng, n), *want = malloc(n * out_rec);
    if (CHECK(in && want) &&
        CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK,
                     sp_context_last_error(ctx)) &&
        CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx))) {
        mix_reference(chain.stages, chain.n_stages, IN_REC, in, n, 0, want);
        for (size_t i = 0; i < ARRAY_LEN(cases); i++)
            run_case(&cases[i], p, n, out_rec, want);
        run_part(p, n, out_rec);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    free(want);
    unlink(at("in.bin"));
    rmdir(dir);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(compressed_files_read_as_the_raw_one),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
