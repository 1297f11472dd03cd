/* A source of compressed blocks (sp_io.blocks): what the core needs to decompress a
 * compressed input inside the ring (ring_decode.c) instead of asking the source for
 * decompressed records. The library's file source implements it (src/io/file_blocks.c) over
 * its block index; the core knows nothing of frames or codecs beyond what is here.
 *
 * A chunk goes through the ring when its records cover whole units (LZ4 blocks, Zstandard
 * frames): the staging threads fetch each unit's compressed bytes (block checksums checked
 * there), the h2d carries them, the device decompresses them into the chunk's input. */
#ifndef SP_CORE_BLOCK_SOURCE_H
#define SP_CORE_BLOCK_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

/* One unit of a chunk: its codec and sizes, where it lies in the file and in the chunk. */
typedef struct sp_ring_unit {
    uint64_t file_offset; /* its header in the file, for messages */
    size_t index;         /* in the source's block table */
    size_t src_at;        /* its compressed bytes in the slot's compressed buffer (aligned) */
    size_t src_bytes;
    size_t dst_at;        /* its bytes in the chunk's input */
    size_t dst_bytes;
    int stored;           /* an LZ4 block stored as it is: copied, not decompressed */
} sp_ring_unit;

typedef struct sp_ring_figures {
    uint64_t chunks, blocks, bytes_in, bytes_out, staging_chunks;
    double busy_s;
} sp_ring_figures;

typedef struct sp_block_source {
    int format;              /* SP_INPUT_FORMAT_LZ4 or _ZSTD */
    int where;               /* sp_decompress_where the caller asked for */
    size_t unit_bytes;       /* every unit but the input's last decompresses to this; 0: they
                                differ (why_not says so): chunks are not rounded to units */
    size_t max_src_bytes;    /* the largest unit, compressed */
    size_t max_dst_bytes;    /* and decompressed */
    const char *why_not;     /* "" or why no chunk can go through the ring (single frame...) */
    void *user;
    /* The units that records [first_record, + records) are made of (numbered as sp_io.read
     * numbers them), when they are whole units: their count in *n (at most max), laid out
     * from src_at 0 with each unit aligned, *src_total the compressed buffer's size. 0 when
     * the range cuts a unit (or needs more than max): the chunk is read through sp_io.read.
     * Their src_at grow with the unit: the ring's staging job shares the buffer's bytes out
     * over the threads, each reading the units that start in its piece. */
    int (*units)(const struct sp_block_source *bs, uint64_t first_record, size_t records,
                 sp_ring_unit *u, size_t max, size_t *n, size_t *src_total);
    /* The most compressed bytes any `units` consecutive units take as units() lays them out:
     * what a slot's compressed buffer needs for chunks of up to that many units. Sized by the
     * largest unit times the count instead, one block that does not compress sizes every
     * slot as if none did (pinned and on the device), and pinned memory is slow to make: the
     * decoder's buffers are made and freed every run. */
    size_t (*max_src_total)(const struct sp_block_source *bs, size_t units);
    /* Unit u's compressed bytes into dst (its place in the slot's buffer), its block checksum
     * checked: SP_OK, or SP_ERR_STAGE_FAILED with why naming the file offset. Staging
     * threads, several at once. */
    sp_status (*fetch)(const struct sp_block_source *bs, const sp_ring_unit *u, void *dst,
                       char *why, size_t why_size);
    /* Unit u decoded from src into dst (host memory: the HOST backend's device memory); it
     * must make exactly u->dst_bytes. SP_OK or SP_ERR_STAGE_FAILED with why. Any thread. */
    sp_status (*decode)(const struct sp_block_source *bs, const sp_ring_unit *u,
                        const void *src, void *dst, char *why, size_t why_size);
    /* After a run: its figures and a line saying where the blocks were decompressed and why
     * (for the input's note). */
    void (*ran)(const struct sp_block_source *bs, const sp_ring_figures *fig,
                const char *note);
} sp_block_source;

#endif
