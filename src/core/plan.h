/* Size arithmetic and choices: the defaults for chunk size and depth, how one run is cut into
 * chunks, and the checks on a run's arguments. Everything here is pure and unit-tested. */
#ifndef SP_PLAN_H
#define SP_PLAN_H

#include <stddef.h>

#include "streampipe.h"

/* Chunks of about this many bytes reach 53-55 GB/s on the H200's PCIe link while leaving
 * enough chunks to overlap (DESIGN.md section 6: 1 MiB reaches 48, 4 MiB 53, 16 MiB 55). */
#define SP_DEFAULT_CHUNK_BYTES (8u << 20)
/* ... and holds at most this much of the widest record at any stage boundary (a slot's
 * largest device buffer; the default depth is at most 8 slots). */
#define SP_MAX_CHOSEN_STAGE_BYTES ((size_t)128 << 20)
/* A chosen chunk is never cut below this for short runs: smaller copies lose bandwidth. */
#define SP_MIN_CHOSEN_CHUNK_BYTES (1u << 20)

typedef struct sp_run_plan {
    size_t n_records;
    size_t chunk_records; /* records per chunk in this run */
    size_t chunks;
    size_t in_bytes, out_bytes;
} sp_run_plan;

/* Each stage adds costs to a chunk that do not grow with its records (its launches, its
 * host call), so a chain of this many stages or more gets chunks twice as large: the digits
 * MLP (4 stages) ran fp32 at 240.5 M samples/s with 256K-record chunks against 223.1 at 128K,
 * and tf32 at 714.9 against 702.8, where one-stage chains were best at the copies' 8 MiB
 * (bench/PERF.md, twelfth session, call 4). */
#define SP_LONG_CHAIN_STAGES 4

/* Records per chunk when the config says 0: SP_DEFAULT_CHUNK_BYTES of the wider of the
 * records copied in and out (end_record_bytes: what each copy moves per record), at most
 * SP_MAX_CHOSEN_STAGE_BYTES of the widest record at any stage boundary, both doubled for a
 * chain of SP_LONG_CHAIN_STAGES stages or more. A stage set that widens its records in
 * between (the MLP: 64 bytes in, 1 KiB between its GEMMs, 4 out) so gets copies as large as
 * a plain one's, and launches and GEMMs over 16x more rows than a chunk sized by its widest
 * record would. */
size_t sp_plan_default_chunk(size_t end_record_bytes, size_t widest_record_bytes,
                             size_t n_stages);
/* A compressed input decompressed inside the ring (ring_decode.c) decodes each chunk's
 * blocks as one batch, and a GPU's batched decompressor needs thousands of blocks a batch: on
 * the H200, nvCOMP's LZ4 and zstd decompressed 1024 blocks of 64 KiB a batch at 20-26 GB/s,
 * 4096-8192 at 57-70 GB/s (bench/PERF.md, thirteenth session, call 4), where the 8 MiB
 * default chunk holds 128. So a chosen chunk of such an input holds at least this many
 * blocks (ring_decode.c grows the ring to it, within the budget) ... */
#define SP_RING_DECODE_BLOCKS 4096u
/* ... but at most this much of the widest record at any stage boundary: 512 MiB chunks were
 * the largest measured (8192 blocks of 64 KiB, as fast as 4096), and a file of 4 MiB blocks
 * (lz4's default) would otherwise want 16 GiB chunks. */
#define SP_RING_DECODE_MAX_STAGE_BYTES ((size_t)512 << 20)
/* Records per chunk for a compressed input decoded in the ring, blocks of `unit_records`
 * records each: SP_RING_DECODE_BLOCKS blocks, at most SP_RING_DECODE_MAX_STAGE_BYTES of the
 * widest record (never below one block), at most the run's n_records (0: unknown) rounded up
 * to whole blocks, so that a smaller input is one chunk. Always whole blocks. */
size_t sp_plan_ring_decode_chunk(size_t unit_records, size_t n_records,
                                 size_t widest_record_bytes);
/* Slots when the config says 0: one per engine a chunk passes through plus one, so that
 * every engine can hold a chunk while the host stages the next; at most 8. */
unsigned sp_plan_default_depth(size_t n_stages);
/* Slots for a stream when the config says 0: a stream's batch holds whole slots whatever its
 * size, so small batches leave a ring of sp_plan_default_depth slots with little in flight. A
 * stream of 4 KiB..64 MiB batches (8 in flight, sinmix) ran at 0.935-0.945 of its best fixed
 * setting with 5 slots, best at 8 (bench/PERF.md, twelfth session, calls 4-5). */
#define SP_STREAM_DEPTH 8u
/* The same for graph mode with chunks of chunk_bytes (in + out): for chunks of at most 2
 * MiB, 16 slots or more, up to SP_MAX_DEPTH, so that four groups of replayed chunks move 2
 * MiB each; larger chunks get the stream-mode depth. */
unsigned sp_plan_default_graph_depth(size_t n_stages, size_t chunk_bytes);
/* Graph mode's small chunks: AUTO replays chunks that move at most this much in + out (about
 * 40 us of copying at 50 GB/s per direction, where 15 us of enqueueing per chunk shows), and
 * the default depth is raised for them. */
#define SP_GRAPH_SMALL_CHUNK_BYTES ((size_t)2 << 20)
/* Bytes a chunk of `records` moves in and out together; SIZE_MAX when that overflows. */
size_t sp_plan_chunk_bytes(size_t records, size_t in_record_bytes, size_t out_record_bytes);
/* Cuts a run: `capacity` is the pipeline's chunk size; when `chosen` (the user left it 0) a
 * short run gets smaller chunks so that at least 2*depth chunks can overlap, never below
 * SP_MIN_CHOSEN_CHUNK_BYTES worth of records. */
void sp_plan_run(size_t n_records, size_t capacity, int chosen, unsigned depth,
                 size_t widest_record_bytes, sp_run_plan *plan);
/* a * b, or 0 with *overflow = 1. */
size_t sp_mul_size(size_t a, size_t b, int *overflow);
/* 1 when [a, a+a_len) and [b, b+b_len) share a byte. */
int sp_ranges_overlap(const void *a, size_t a_len, const void *b, size_t b_len);

#endif
