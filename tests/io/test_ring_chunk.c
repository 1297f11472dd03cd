/*
 * test_ring_chunk (HOST): the chunk of a compressed input decompressed inside the ring
 * (src/core/ring_chunk.c, plan.h's SP_RING_DECODE_BLOCKS). A Zstandard file of many 1 KiB
 * frames (libzstd, one frame per 64 records of 16 bytes) through a mix stage that widens the
 * records to 64 bytes, so that the library's default chunk (8 MiB of 64-byte records) holds
 * 2048 frames:
 * - a chunk left to the library grows to 4096 frames, the ring made anew and the change
 *   listed with its reason; an input smaller than that is one chunk, not cut for overlap;
 * - a chunk the config gives is kept as given, and a range that starts inside a frame (every
 *   chunk then decoded on the staging threads) keeps the planner's;
 * - a memory budget holds the grown chunk below 4096 frames, the pinned memory within it.
 * Every output record against the reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "testbuf.h"

#define IN_REC 16
#define OUT_REC 64
#define FRAME 1024                  /* bytes of records a frame */
#define PER (FRAME / IN_REC)        /* records a frame */
#define DEFAULT_UNITS 2048          /* 8 MiB / OUT_REC / PER: the default chunk's frames */
#define RING_BLOCKS 4096            /* plan.h's SP_RING_DECODE_BLOCKS */

static char dir[256];

static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

/* n records in runs of small integers (they compress), written as frames of FRAME bytes. */
static unsigned char *make_file(test_rng *rng, size_t n, const char *name)
{
    unsigned char *in = malloc(n * IN_REC), *frame = malloc(ZSTD_compressBound(FRAME));
    for (size_t i = 0; in && i < n * IN_REC; i++)
        in[i] = (i % 4 == 0 && rng_below(rng, 3) == 0) ? (unsigned char)rng_below(rng, 16)
                                                       : (i >= 4 ? in[i - 4] : 0);
    FILE *f = in && frame ? fopen(at(name), "wb") : NULL;
    int ok = f != NULL;
    for (size_t at_byte = 0; ok && at_byte < n * IN_REC; at_byte += FRAME) {
        size_t len = n * IN_REC - at_byte < FRAME ? n * IN_REC - at_byte : FRAME;
        size_t made = ZSTD_compress(frame, ZSTD_compressBound(FRAME), in + at_byte, len, 1);
        ok = !ZSTD_isError(made) && fwrite(frame, 1, made, f) == made;
    }
    if (f)
        ok = fclose(f) == 0 && ok;
    free(frame);
    if (!CHECK_MSG(ok, "writing %s", at(name))) {
        free(in);
        return NULL;
    }
    return in;
}

typedef struct chunk_run {
    sp_report report;
    sp_file_io_input in;
    sp_tune_change change[4];
    size_t changes;
} chunk_run;

/* The file's records from `first` on through a fresh pipeline (chunk_records, max_pinned),
 * every record checked; with first 0 every chunk must go through the ring. */
static int run(sp_context *ctx, const char *name, const unsigned char *in, size_t n,
               size_t first, size_t chunk_records, size_t max_pinned, chunk_run *r)
{
    size_t outs[] = {OUT_REC};
    mix_chain chain;
    mix_chain_init(&chain, IN_REC, 1, outs, 7);
    sp_pipeline_config cfg = mix_chain_config(&chain, chunk_records, 3);
    cfg.max_pinned_bytes = max_pinned;
    cfg.staging_threads = 2;
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at(name);
    c.output = at("out.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = OUT_REC;
    c.first_record = first;
    c.n_records = n - first;
    c.decompress = first ? SP_DECOMPRESS_AUTO : SP_DECOMPRESS_RING;
    sp_pipeline *p = NULL;
    sp_file_io *f = NULL;
    unsigned char *want = malloc(n * OUT_REC), *got = malloc(n * OUT_REC + 1);
    memset(r, 0, sizeof *r);
    int ok = CHECK(want && got) &&
             CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx)) &&
             CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f)) &&
             CHECK_STATUS(sp_pipeline_run_io(p, sp_file_io_get(f), &r->report), SP_OK,
                          sp_pipeline_last_error(p)) &&
             CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f)) &&
             CHECK_EQ(sp_file_io_input_get(f, &r->in), SP_OK) &&
             CHECK_EQ(sp_pipeline_tune_changes(p, r->change, 4, &r->changes, NULL), SP_OK);
    FILE *out = ok ? fopen(at("out.bin"), "rb") : NULL;
    if (ok && CHECK(out != NULL) && CHECK_EQ(fread(got, 1, n * OUT_REC + 1, out), n * OUT_REC)) {
        /* the range's records are numbered from its start, as the stages see them */
        mix_reference(chain.stages, chain.n_stages, IN_REC, in + first * IN_REC, n - first, 0,
                      want);
        CHECK_EQ(compare_records(want, got + first * OUT_REC, n - first, OUT_REC, name), 0);
    }
    if (out)
        fclose(out);
    sp_file_io_close(f);
    sp_pipeline_destroy(p);
    unlink(at("out.bin"));
    free(want);
    free(got);
    if (ok && !first) { /* every chunk went through the ring */
        CHECK_EQ(r->in.staging_chunks, 0);
        CHECK_EQ(r->in.ring_chunks, r->report.chunks);
        CHECK_EQ(r->in.ring_blocks, (n + PER - 1) / PER);
    }
    return ok;
}

/* Left to the library: 4096 frames a chunk (the ring grown from 2048, listed with its
 * reason), and a smaller input in one chunk. */
static void auto_chunk(sp_context *ctx, test_rng *rng)
{
    size_t n = 6000 * PER - 5;
    chunk_run r;
    unsigned char *in = make_file(rng, n, "big.zst");
    if (in && run(ctx, "big.zst", in, n, 0, 0, 0, &r)) {
        CHECK_EQ(r.report.chunk_records, (size_t)RING_BLOCKS * PER);
        CHECK_EQ(r.report.chunks, 2);
        CHECK_HAS(r.report.notes, "whole blocks for the decompression in the ring");
        if (CHECK_EQ(r.changes, 1)) {
            CHECK_EQ(r.change[0].from_chunk, (size_t)DEFAULT_UNITS * PER);
            CHECK_EQ(r.change[0].to_chunk, (size_t)RING_BLOCKS * PER);
            CHECK_HAS(r.change[0].reason, "4096 blocks a chunk");
        }
    }
    free(in);
    n = 1000 * PER; /* under the default chunk, not cut for overlap */
    in = make_file(rng, n, "small.zst");
    if (in && run(ctx, "small.zst", in, n, 0, 0, 0, &r)) {
        CHECK_EQ(r.report.chunks, 1);
        CHECK_EQ(r.changes, 0);
    }
    /* a range that starts inside a frame cuts one in every chunk: the staging threads take
     * them all, and the ring is not grown for them */
    if (in && run(ctx, "small.zst", in, n, 7, 0, 0, &r)) {
        CHECK_EQ(r.in.ring_chunks, 0);
        CHECK(r.in.staging_chunks > 1);
        CHECK_EQ(r.changes, 0);
    }
    free(in);
}

/* Given by the config: kept, in whole frames. */
static void given_chunk(sp_context *ctx, test_rng *rng)
{
    size_t n = 6000 * PER;
    chunk_run r;
    unsigned char *in = make_file(rng, n, "given.zst");
    if (in && run(ctx, "given.zst", in, n, 0, 128 * PER, 0, &r)) {
        CHECK_EQ(r.report.chunk_records, 128 * PER);
        CHECK_EQ(r.report.chunks, 6000 / 128 + 1);
        CHECK_EQ(r.changes, 0);
        CHECK_HAS(r.in.note, "128 blocks a chunk, not 4096: chunk_records given");
    }
    free(in);
}

/* A budget of 80 MiB pinned: the ring of 2048 frames (30 MiB at depth 3) and a new one
 * beside it while it is made leave room for about 3400 frames. */
static void budget_bounds(sp_context *ctx, test_rng *rng)
{
    size_t n = 6000 * PER, budget = (size_t)80 << 20;
    chunk_run r;
    unsigned char *in = make_file(rng, n, "budget.zst");
    if (in && run(ctx, "budget.zst", in, n, 0, 0, budget, &r) && CHECK_EQ(r.changes, 1)) {
        size_t units = r.change[0].to_chunk / PER;
        CHECK(units > DEFAULT_UNITS && units < RING_BLOCKS);
        CHECK_EQ(r.change[0].to_chunk % PER, 0);
        CHECK_EQ(r.report.chunk_records, r.change[0].to_chunk);
        CHECK_EQ(r.report.chunks, (6000 + units - 1) / units);
        CHECK(r.report.pinned_bytes <= budget);
        CHECK_HAS(r.change[0].reason, "all the budget holds");
        CHECK_HAS(r.in.note, "not 4096: the memory budget");
    }
    free(in);
}

TEST(ring_chunk_holds_thousands_of_blocks)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    snprintf(dir, sizeof dir, "/tmp/sp-ring-chunk-XXXXXX");
    if (!CHECK(mkdtemp(dir) != NULL))
        return TEST_FAIL;
    sp_context *ctx = NULL;
    if (CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK,
                     sp_context_last_error(ctx))) {
        auto_chunk(ctx, &rng);
        given_chunk(ctx, &rng);
        budget_bounds(ctx, &rng);
    }
    sp_context_destroy(ctx);
    const char *names[] = {"big.zst", "small.zst", "given.zst", "budget.zst"};
    for (size_t k = 0; k < ARRAY_LEN(names); k++)
        unlink(at(names[k]));
    rmdir(dir);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(ring_chunk_holds_thousands_of_blocks),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
