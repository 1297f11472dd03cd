/* Decompression inside the ring (issue 26): a compressed input's chunks staged as their
 * compressed blocks, carried so by the h2d, and decompressed on the first stage's queue into
 * the slot's device input before the first stage runs. The rest of the ring is unchanged:
 * the decompression reads the slot's compressed buffer (written by the h2d, read before
 * stage 1 ends: the ring's WAR on boundary 0 covers it) and writes boundary 0 on stage 1's
 * own queue, so stage 1's RAW is met by queue order.
 *
 * Per slot: a pinned buffer and a device buffer of the same layout (the unit arrays a
 * batched decompressor takes, then the compressed units, each aligned), the decompressor's
 * scratch, and two timing events around the decompression (a timed run), whose spans are
 * the decompression engine's busy time. A chunk whose records cut a unit is read through
 * sp_io.read as before; the figures say how many. */
#ifndef SP_RING_DECODE_H
#define SP_RING_DECODE_H

#include "core/batch.h"
#include "core/staging_pool.h"

typedef struct sp_ring_decode sp_ring_decode;

/* For a run_io batch whose io has blocks: decides whether its chunks go through the ring
 * (rounding its chunk to whole units), allocates what they need. SP_OK with b->decode set
 * (also when they do not: it says why after the run), or a failure recorded on the pipeline
 * (sp_decompress_where RING that cannot be met, memory). */
sp_status sp_ring_decode_begin(sp_batch *b);
/* 1 when every chunk of b goes through the ring (none is read into the pinned input slots,
 * which the ring may then go without: sp_pipeline_rechunk). */
int sp_ring_decode_covers(const sp_batch *b);
/* After the run (its queues drained): the figures and note handed to the source, all freed. */
void sp_ring_decode_end(sp_batch *b);

/* Chunk i's host turn is about to stage its `records`: 1 when it goes through the ring (its
 * units laid out in its slot), 0 when it is read through sp_io.read. */
int sp_ring_decode_plan(sp_batch *b, size_t i, size_t records);
/* The staging job that fetches chunk i's units into its slot's pinned buffer. */
sp_copy sp_ring_decode_fetch(sp_batch *b, size_t i);
/* These two are asked of a batch with b->decode only (the direct submitter checks), so that
 * a chunk of any other batch does not enter this file.
 * When chunk i goes through the ring: 1 and what its h2d copies; else 0. */
int sp_ring_decode_h2d(const sp_batch *b, size_t i, void **dst, const void **src,
                       size_t *bytes);
/* Enqueues chunk i's decompression on q (stage 1's queue, after its waits), when it goes
 * through the ring; SP_OK otherwise. A failure to enqueue is recorded and returned. */
sp_status sp_ring_decode_enqueue(sp_batch *b, size_t i, sp_bqueue *q);

#endif
