/*
 * test_ring_chunk (HOST): the chunk of a compressed input decompressed inside the ring
 * (src/core/ring_chunk.c, plan.h's SP_RING_DECODE_BLOCKS), on ring_rig.h's file of 1 KiB
 * Zstandard frames, whose default chunk holds 2048 of them, at depth 3:
 * - a chunk left to the library grows to 4096 frames, the ring made anew and the change
 *   listed with its reason; an input smaller than that is one chunk, not cut for overlap;
 * - a chunk the config gives is kept as given, and a range that starts inside a frame (every
 *   chunk then decoded on the staging threads) keeps the planner's;
 * - a memory budget holds the grown chunk below 4096 frames, the pinned memory within it.
 * Every output record against the reference.
 */
#include <stdlib.h>

#include "harness.h"
#include "ring_rig.h"

/* The file's records from `first` on through a fresh pipeline (chunk_records, depth 3,
 * max_pinned), every record checked; with first 0 every chunk must go through the ring. */
static int run(sp_context *ctx, const char *name, const unsigned char *in, size_t n,
               size_t first, size_t chunk_records, size_t max_pinned, chunk_run *r)
{
    sp_pipeline *p = ring_rig_pipeline(ctx, chunk_records, 3, max_pinned, 0);
    int ok = ring_rig_run(p, name, in, n, first,
                          first ? SP_DECOMPRESS_AUTO : SP_DECOMPRESS_RING, SP_OK, r);
    sp_pipeline_destroy(p);
    return ok;
}

/* Left to the library: 4096 frames a chunk (the ring grown from 2048, listed with its
 * reason), and a smaller input in one chunk. */
static void auto_chunk(sp_context *ctx, test_rng *rng)
{
    size_t n = 6000 * PER - 5;
    chunk_run r;
    unsigned char *in = ring_rig_file(rng, n, "big.zst");
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
    in = ring_rig_file(rng, n, "small.zst");
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
    unsigned char *in = ring_rig_file(rng, n, "given.zst");
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
    unsigned char *in = ring_rig_file(rng, n, "budget.zst");
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
    if (!ring_rig_open())
        return TEST_FAIL;
    sp_context *ctx = NULL;
    if (CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK,
                     sp_context_last_error(ctx))) {
        auto_chunk(ctx, &rng);
        given_chunk(ctx, &rng);
        budget_bounds(ctx, &rng);
    }
    sp_context_destroy(ctx);
    ring_rig_close();
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(ring_chunk_holds_thousands_of_blocks),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
