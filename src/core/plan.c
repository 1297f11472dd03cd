#include <stdint.h>

#include "core/plan.h"

size_t sp_mul_size(size_t a, size_t b, int *overflow)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = 1;
        return 0;
    }
    return r;
}

int sp_ranges_overlap(const void *a, size_t a_len, const void *b, size_t b_len)
{
    if (a_len == 0 || b_len == 0)
        return 0;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    /* a + len cannot overflow: run arguments are checked for that first */
    return a0 < b0 + b_len && b0 < a0 + a_len;
}

size_t sp_plan_default_chunk(size_t end_record_bytes, size_t widest_record_bytes,
                             size_t n_stages)
{
    size_t end = end_record_bytes ? end_record_bytes : 1;
    size_t widest = widest_record_bytes > end ? widest_record_bytes : end;
    /* the copies set the size, the widest buffer only caps it: the MLP (64-byte records in,
     * 1 KiB between its GEMMs) at 8192 records, 8 MiB of its widest, ran tf32 at 200 M
     * samples/s against 677 at 256K records (bench/PERF.md); with its 4 stages (a long
     * chain) this gives it 256K, 16 MiB copies in and 256 MiB between the GEMMs */
    size_t scale = n_stages >= SP_LONG_CHAIN_STAGES ? 2 : 1;
    size_t records = SP_DEFAULT_CHUNK_BYTES / end * scale;
    size_t cap = SP_MAX_CHOSEN_STAGE_BYTES / widest * scale;
    if (records > cap)
        records = cap;
    return records ? records : 1;
}

size_t sp_plan_ring_decode_chunk(size_t unit_records, size_t n_records,
                                 size_t widest_record_bytes)
{
    size_t per = unit_records ? unit_records : 1;
    size_t widest = widest_record_bytes ? widest_record_bytes : 1;
    size_t units = SP_RING_DECODE_BLOCKS;
    size_t cap = SP_RING_DECODE_MAX_STAGE_BYTES / widest / per; /* whole blocks */
    if (units > cap)
        units = cap ? cap : 1;
    size_t whole = n_records / per + (n_records % per != 0); /* the input, in blocks */
    if (n_records && units > whole)
        units = whole;
    return units > SIZE_MAX / per ? SIZE_MAX / per * per : units * per;
}

unsigned sp_plan_default_depth(size_t n_stages)
{
    /* a slot for each GPU engine (h2d, stages, d2h), one for the host's copies, one spare */
    size_t slots = n_stages + 4;
    return (unsigned)(slots > 8 ? 8 : slots);
}

/* Graph mode's chunks are small (AUTO replays chunks of at most 2 MiB in + out). Its groups
 * (submit_graph.c: up to 16 chunks, the depth over two or more) move a group's data with one
 * copy each way, and the host prepares one group while others run. The depth grows until a
 * quarter of it (a group of up to 16 chunks, so four groups, or two of 16 for chunks of 256
 * KiB to 1 MiB) moves at least GRAPH_GROUP_BYTES (bench/PERF.md, tiny: 64 KiB chunks at depth
 * 16, 32 and 64 ran at 42, 53 and 65 GB/s). */
#define GRAPH_SMALL_CHUNK_DEPTH 16u
#define GRAPH_GROUP_BYTES ((size_t)2 << 20)

unsigned sp_plan_default_graph_depth(size_t n_stages, size_t chunk_bytes)
{
    unsigned depth = sp_plan_default_depth(n_stages);
    if (chunk_bytes > SP_GRAPH_SMALL_CHUNK_BYTES)
        return depth;
    depth = depth < GRAPH_SMALL_CHUNK_DEPTH ? GRAPH_SMALL_CHUNK_DEPTH : depth;
    while (depth < SP_MAX_DEPTH && depth / 4 * chunk_bytes < GRAPH_GROUP_BYTES)
        depth *= 2;
    return depth;
}

size_t sp_plan_chunk_bytes(size_t records, size_t in_record_bytes, size_t out_record_bytes)
{
    size_t sum, bytes;
    if (__builtin_add_overflow(in_record_bytes, out_record_bytes, &sum) ||
        __builtin_mul_overflow(records, sum, &bytes))
        return SIZE_MAX;
    return bytes;
}

void sp_plan_run(size_t n_records, size_t capacity, int chosen, unsigned depth,
                 size_t widest_record_bytes, sp_run_plan *plan)
{
    size_t chunk = capacity;
    if (chosen && n_records > 0) {
        size_t want_chunks = 2u * (depth ? depth : 1);
        /* rounded up without n_records + want_chunks - 1, which wraps near SIZE_MAX */
        size_t even = n_records / want_chunks + (n_records % want_chunks != 0);
        size_t floor = SP_MIN_CHOSEN_CHUNK_BYTES / (widest_record_bytes ? widest_record_bytes : 1);
        if (floor == 0)
            floor = 1;
        if (even < floor)
            even = floor;
        if (even < chunk)
            chunk = even;
    }
    plan->n_records = n_records;
    plan->chunk_records = chunk;
    plan->chunks = n_records ? (n_records - 1) / chunk + 1 : 0;
}
