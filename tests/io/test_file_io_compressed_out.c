/*
 * test_file_io_compressed_out [filter]: the file sink's compressed outputs and the file
 * source's stream inputs (streampipe_io.h, "Compressed outputs", "Stream inputs"), through the
 * library's API on HOST (tests/cli/cli_run_compressed_out.sh covers the CLI). Fresh random
 * records through mix stages, small and large chunks on four staging threads (pieces finish
 * out of order), each output read back by the real lz4 -d / zstd -d and compared byte for byte
 * with the reference (the mix stages write noise: LZ4 stores its blocks); the LZ4 one (a frame
 * per piece, each with its content checksum) also by this library's own file source, auto and
 * as input_format LZ4, in pieces of the same chunk, every content checksum checked, and by
 * lz4 -t;
 * sp_file_io_output_get's figures against the file. A pipe read to its end as the input; a
 * part record at its end fails the run and commits nothing. What cannot
 * be done in record order (a journal, a range, temp_output, a compressed stream) is refused
 * before anything is made. Skips without the lz4 and zstd commands.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The whole file, *size its bytes; NULL when it cannot be read. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    unsigned char *b = f && fstat(fileno(f), &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
    *size = b ? fread(b, 1, (size_t)st.st_size, f) : 0;
    if (f)
        fclose(f);
    return b;
}

typedef struct fixture {
    sp_context *ctx;
    mix_chain chain;
    size_t n, out_rec;
    unsigned char *in, *want;
} fixture;

static sp_file_io_config config_of(const fixture *x, const char *output, int format)
{
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at("in.bin");
    c.output = output;
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = x->out_rec;
    c.output_format = format;
    return c;
}

/* The file at `path`, decompressed by the real command, is the reference. */
static void check_back(const fixture *x, const char *path, int format)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s -q -d -c '%s' > '%s'",
             format == SP_INPUT_FORMAT_LZ4 ? "lz4" : "zstd", path, at("back.bin"));
    if (!CHECK_MSG(system(cmd) == 0, "failed: %s", cmd))
        return;
    size_t size;
    unsigned char *got = slurp(at("back.bin"), &size);
    if (CHECK(got) && CHECK_EQ(size, x->n * x->out_rec))
        CHECK_EQ(compare_records(x->want, got, x->n, x->out_rec, path), 0);
    free(got);
    unlink(at("back.bin"));
}

/* The LZ4 file at `path` read back by this library's own file source (a source-only handle,
 * input_format `asked`: AUTO or LZ4) in pieces of `chunk` records, which cut frames and blocks
 * anywhere: the reference, one frame per piece written (o_frames), every frame's content
 * checksum present and checked. Then `lz4 -t`, which checks those checksums too. */
static void read_own_lz4(const fixture *x, const char *path, int asked, size_t chunk,
                         uint64_t o_frames)
{
    harness_context("reading %s back (input_format %d), pieces of %zu", path, asked, chunk);
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = path;
    c.in_record_bytes = c.out_record_bytes = x->out_rec;
    c.input_format = asked;
    sp_file_io *f = NULL;
    unsigned char *got = malloc(x->n * x->out_rec);
    if (CHECK(got) &&
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f))) {
        const sp_io *io = sp_file_io_get(f);
        size_t done = 0;
        while (io && io->n_records == x->n && done < x->n) {
            size_t want = x->n - done < chunk ? x->n - done : chunk, records = 0;
            if (!CHECK_STATUS(io->read(got + done * x->out_rec, done, want, &records,
                                       io->read_user),
                              SP_OK, sp_file_io_last_error(f)) ||
                !CHECK_EQ(records, want))
                break;
            done += records;
        }
        sp_file_io_input in;
        if (CHECK_EQ(done, x->n) && CHECK_EQ(sp_file_io_input_get(f, &in), SP_OK)) {
            CHECK_EQ(compare_records(x->want, got, x->n, x->out_rec, "read back"), 0);
            CHECK_EQ(in.format, SP_INPUT_FORMAT_LZ4);
            CHECK_EQ(in.frames, o_frames);
            CHECK_EQ(in.content_checksums, o_frames);
            CHECK_EQ(in.content_checked, o_frames);
        }
    }
    sp_file_io_close(f);
    free(got);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "lz4 -q -t '%s'", path);
    CHECK_MSG(system(cmd) == 0, "failed: %s", cmd);
    harness_context("%s", "");
}

static void run_compressed(const fixture *x, int format, size_t chunk)
{
    harness_context("%s, chunk %zu", format == SP_INPUT_FORMAT_LZ4 ? "lz4" : "zstd", chunk);
    sp_pipeline_config cfg = mix_chain_config(&x->chain, chunk, 3);
    cfg.staging_threads = 4;
    sp_pipeline *p = NULL;
    sp_file_io *f = NULL;
    sp_file_io_config c = config_of(x, at("out.z"), format);
    sp_file_io_output o;
    if (CHECK_STATUS(sp_pipeline_create(x->ctx, &cfg, &p), SP_OK,
                     sp_context_last_error(x->ctx)) &&
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f)) &&
        CHECK_STATUS(sp_pipeline_run_io(p, sp_file_io_get(f), NULL), SP_OK,
                     sp_pipeline_last_error(p)) &&
        CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f)) &&
        CHECK_EQ(sp_file_io_output_get(f, &o), SP_OK)) {
        struct stat st;
        CHECK_EQ(o.format, format);
        CHECK_EQ(o.stream_bytes, x->n * x->out_rec);
        CHECK(stat(at("out.z"), &st) == 0 && (uint64_t)st.st_size == o.file_bytes);
        CHECK(o.file_bytes > 0 && o.blocks > 0 && o.note[0]); /* mix output: noise */
        CHECK_HAS(o.note, "staging threads");
        check_back(x, at("out.z"), format);
        if (format == SP_INPUT_FORMAT_LZ4 && CHECK(o.frames > 1)) { /* a frame per piece */
            read_own_lz4(x, at("out.z"), SP_INPUT_FORMAT_AUTO, chunk, o.frames);
            read_own_lz4(x, at("out.z"), SP_INPUT_FORMAT_LZ4, chunk, o.frames);
        }
    }
    sp_file_io_close(f);
    sp_pipeline_destroy(p);
    unlink(at("out.z"));
    harness_context("%s", "");
}

/* Opens that must be refused with `status`, leaving no output. */
static void refused(const fixture *x, sp_file_io_config c, sp_status status, const char *says)
{
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), status, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), says);
    sp_file_io_close(f);
    CHECK(access(at("no.out"), F_OK) != 0);
    (void)x;
}

static void refusals(const fixture *x)
{
    sp_file_io_config c = config_of(x, at("no.out"), SP_INPUT_FORMAT_LZ4);
    c.journal = 1;
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "journal");
    c = config_of(x, at("no.out"), SP_INPUT_FORMAT_LZ4);
    c.temp_output = at("in.bin");
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "temp_output");
    c = config_of(x, at("no.out"), SP_INPUT_FORMAT_ZSTD);
    c.first_record = 1;
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "whole");
    c = config_of(x, NULL, SP_INPUT_FORMAT_ZSTD);
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "no output");
    c = config_of(x, at("no.out"), 9);
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "output_format 9");
    c = config_of(x, at("no.out"), 0);
    c.input_is_fd = 1;
    c.input_fd = 0;
    c.journal = 1;
    refused(x, c, SP_ERR_INVALID_ARGUMENT, "stream input");
    c.journal = 0;
    c.input_format = SP_INPUT_FORMAT_LZ4;
    refused(x, c, SP_ERR_UNSUPPORTED, "read raw");
}

typedef struct feeder {
    int fd;
    const unsigned char *bytes;
    size_t n;
} feeder;

static void *feed(void *arg)
{
    feeder *w = arg;
    for (size_t put = 0; put < w->n;) {
        size_t step = w->n - put < 7777 ? w->n - put : 7777; /* odd sizes: records cut */
        ssize_t k = write(w->fd, w->bytes + put, step);
        if (k <= 0)
            break;
        put += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

/* The input through a pipe, `cut` bytes short of its end: the reference, or a failure. */
static void run_stream(const fixture *x, size_t cut)
{
    harness_context("a pipe, %zu bytes short", cut);
    int fds[2];
    if (!CHECK(pipe(fds) == 0))
        return;
    feeder w = {fds[1], x->in, x->n * IN_REC - cut};
    pthread_t t;
    pthread_create(&t, NULL, feed, &w);
    sp_pipeline_config cfg = mix_chain_config(&x->chain, 4093, 3);
    sp_pipeline *p = NULL;
    sp_file_io *f = NULL;
    sp_file_io_config c = config_of(x, at("s.out"), 0);
    c.input = NULL;
    c.input_is_fd = 1;
    c.input_fd = fds[0];
    CHECK_STATUS(sp_pipeline_create(x->ctx, &cfg, &p), SP_OK, sp_context_last_error(x->ctx));
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    close(fds[0]); /* the handle holds its own */
    const sp_io *io = sp_file_io_get(f);
    CHECK(io && !io->positional && io->n_records == 0);
    sp_status st = p && io ? sp_pipeline_run_io(p, io, NULL) : SP_ERR_INVALID_ARGUMENT;
    pthread_join(t, NULL);
    if (cut) {
        CHECK_EQ(st, SP_ERR_STAGE_FAILED);
        CHECK_HAS(sp_file_io_last_error(f), "ended at byte");
        CHECK(sp_file_io_commit(f) != SP_OK);
    } else if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)) &&
               CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f))) {
        size_t size;
        unsigned char *got = slurp(at("s.out"), &size);
        if (CHECK(got) && CHECK_EQ(size, x->n * x->out_rec))
            CHECK_EQ(compare_records(x->want, got, x->n, x->out_rec, "the pipe's"), 0);
        free(got);
    }
    sp_file_io_close(f);
    if (cut)
        CHECK(access(at("s.out"), F_OK) != 0); /* nothing committed, no temporary left */
    unlink(at("s.out"));
    sp_pipeline_destroy(p);
    harness_context("%s", "");
}

TEST(compressed_outputs_and_stream_inputs)
{
    if (system("command -v lz4 >/dev/null && command -v zstd >/dev/null") != 0) {
        harness_skip_reason("no lz4 or zstd command (Debian: lz4 zstd)");
        return TEST_SKIP;
    }
    test_rng rng;
    rng_init(&rng, harness_seed());
    snprintf(dir, sizeof dir, "/tmp/sp-file-io-zo-XXXXXX");
    if (!CHECK(mkdtemp(dir) != NULL))
        return TEST_FAIL;
    fixture x = {.n = 400000 + rng_below(&rng, 100000)};
    size_t outs[] = {20};
    mix_chain_init(&x.chain, IN_REC, 1, outs, (uint32_t)rng_next(&rng));
    x.out_rec = mix_chain_out_rec(&x.chain);
    x.in = malloc(x.n * IN_REC);
    x.want = malloc(x.n * x.out_rec);
    FILE *in = x.in ? fopen(at("in.bin"), "wb") : NULL;
    for (size_t i = 0; x.in && i < x.n * IN_REC; i++) /* runs of small values: compresses */
        x.in[i] = rng_below(&rng, 5) == 0 ? (unsigned char)rng_below(&rng, 4)
                                          : (i ? x.in[i - 1] : 0);
    if (CHECK(in && x.want && fwrite(x.in, 1, x.n * IN_REC, in) == x.n * IN_REC) &&
        CHECK(fclose(in) == 0) &&
        CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &x.ctx), SP_OK,
                     sp_context_last_error(x.ctx))) {
        mix_reference(x.chain.stages, x.chain.n_stages, IN_REC, x.in, x.n, 0, x.want);
        static const size_t chunks[] = {4093, 65536, 400000}; /* 400000 x 20: several blocks */
        for (size_t i = 0; i < ARRAY_LEN(chunks); i++) {
            run_compressed(&x, SP_INPUT_FORMAT_LZ4, chunks[i]);
            run_compressed(&x, SP_INPUT_FORMAT_ZSTD, chunks[i]);
        }
        refusals(&x);
        run_stream(&x, 0);
        run_stream(&x, 5);
    }
    sp_context_destroy(x.ctx);
    free(x.in);
    free(x.want);
    unlink(at("in.bin"));
    rmdir(dir);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(compressed_outputs_and_stream_inputs),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
