/* The compressed input's block source (src/core/block_source.h): the block index's units as
 * the ring takes them. A chunk of records that begins and ends on unit boundaries is handed
 * over as its units; their compressed bytes are read on the staging threads, each to an
 * aligned place, with its block checksum checked there (content checksums need the
 * decompressed bytes, which stay on the device: they are not checked in the ring). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io/compressed_impl.h"
#include "io/file_io.h"
#include "io/xxh32.h"

#define UNIT_ALIGN 16 /* nvCOMP's decompressors want 4 (LZ4) to 8 (Zstandard) */

static size_t round_up(size_t n) { return (n + UNIT_ALIGN - 1) / UNIT_ALIGN * UNIT_ALIGN; }

static const sp_file_io *handle(const sp_block_source *bs) { return bs->user; }

/* The bytes of a unit's compressed form read: its data and an LZ4 block's checksum. */
static size_t read_bytes(const sp_block *b)
{
    return (size_t)b->src_bytes + (b->checksum && b->codec != SP_BLOCK_ZSTD_FRAME ? 4 : 0);
}

static uint64_t header_of(const sp_block *b)
{
    return b->codec == SP_BLOCK_ZSTD_FRAME ? b->src_offset : b->src_offset - 4;
}

static int units(const sp_block_source *bs, uint64_t first_record, size_t records,
                 sp_ring_unit *u, size_t max, size_t *n, size_t *src_total)
{
    const sp_file_io *f = handle(bs);
    const sp_block_index *ix = &f->compressed->ix;
    uint64_t at = (f->first + first_record) * f->in_record_bytes;
    uint64_t end = at + (uint64_t)records * f->in_record_bytes;
    size_t k = 0, src = 0;
    if (records == 0 || end > ix->total_bytes)
        return 0;
    for (size_t unit = sp_block_index_find(ix, at); at < end; unit++) {
        const sp_block *b = &ix->blocks[unit];
        if (b->dst_offset != at || b->dst_offset + b->dst_bytes > end || k == max)
            return 0; /* the range cuts a unit: read through sp_io.read */
        u[k] = (sp_ring_unit){.file_offset = header_of(b), .index = unit, .src_at = src,
                              .src_bytes = (size_t)b->src_bytes,
                              .dst_at = (size_t)(at - (f->first + first_record) *
                                                           f->in_record_bytes),
                              .dst_bytes = (size_t)b->dst_bytes,
                              .stored = b->codec == SP_BLOCK_STORED};
        src += round_up(read_bytes(b));
        at += b->dst_bytes;
        k++;
    }
    *n = k;
    *src_total = src;
    return 1;
}

static size_t max_src_total(const sp_block_source *bs, size_t units)
{
    const sp_block_index *ix = &handle(bs)->compressed->ix;
    size_t sum = 0, most = 0; /* over the window of units ending at block k */
    for (size_t k = 0; k < ix->n_blocks; k++) {
        sum += round_up(read_bytes(&ix->blocks[k]));
        if (k >= units)
            sum -= round_up(read_bytes(&ix->blocks[k - units]));
        most = sum > most ? sum : most;
    }
    return most;
}

static sp_status fetch(const sp_block_source *bs, const sp_ring_unit *u, void *dst, char *why,
                       size_t why_size)
{
    const sp_file_io *f = handle(bs);
    sp_compressed *z = f->compressed;
    const sp_block *b = &z->ix.blocks[u->index];
    size_t n = read_bytes(b);
    int err = sp_compressed_read_at(z->fd, dst, n, b->src_offset);
    if (err != 0) {
        snprintf(why, why_size, "reading the unit at offset %llu of '%s': %s",
                 (unsigned long long)u->file_offset, f->input,
                 err == EIO ? "the file ended early (it shrank during the run?)"
                            : strerror(err));
        return SP_ERR_STAGE_FAILED;
    }
    atomic_fetch_add(&z->bytes_read, n);
    if (n == b->src_bytes)
        return SP_OK;
    const unsigned char *s = (const unsigned char *)dst + b->src_bytes;
    uint32_t stored = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
                      (uint32_t)s[3] << 24;
    uint32_t got = sp_xxh32(dst, (size_t)b->src_bytes, 0);
    if (stored == got)
        return SP_OK;
    snprintf(why, why_size, "the LZ4 block at offset %llu of '%s' fails its block checksum "
             "(0x%08x stored, 0x%08x read): corrupt", (unsigned long long)u->file_offset,
             f->input, stored, got);
    return SP_ERR_STAGE_FAILED;
}

static sp_status decode(const sp_block_source *bs, const sp_ring_unit *u, const void *src,
                        void *dst, char *why, size_t why_size)
{
    const sp_file_io *f = handle(bs);
    sp_compressed *z = f->compressed;
    const sp_block *b = &z->ix.blocks[u->index];
    const sp_frame *fr = &z->ix.frames[b->frame];
    sp_decoder *d = sp_decoder_take(z, SIZE_MAX, why, why_size);
    if (!d)
        return SP_ERR_STAGE_FAILED;
    char detail[256] = "";
    size_t made = 0;
    sp_status st = sp_codec_decode(d->codec, b, src, dst, u->dst_bytes, &made, detail,
                                   sizeof detail);
    sp_decoder_give(z, d);
    if (st != SP_OK)
        snprintf(why, why_size, "it does not decode to its %zu bytes (corrupt, or it expands "
                 "past that size): %s", u->dst_bytes, detail);
    else if (made < u->dst_bytes && b->codec != SP_BLOCK_ZSTD_FRAME &&
             u->index + 1 < fr->first_block + fr->n_blocks)
        snprintf(why, why_size, "block %llu of %llu of the LZ4 frame at offset %llu decodes to "
                 "%zu bytes: it is shorter than the frame's block size of %zu and is not the "
                 "frame's last (every block but a frame's last must hold the block size, as "
                 "lz4 writes them)", (unsigned long long)(u->index - fr->first_block + 1),
                 (unsigned long long)fr->n_blocks, (unsigned long long)fr->offset, made,
                 u->dst_bytes);
    else if (made != u->dst_bytes)
        snprintf(why, why_size, "it decodes to %zu bytes, not %zu", made, u->dst_bytes);
    return st != SP_OK || made != u->dst_bytes ? SP_ERR_STAGE_FAILED : SP_OK;
}

/* Added up, as the other counters are over the runs since the range was set; under the
 * pool's lock, since a device group's members run units of one input at once. */
static void ran(const sp_block_source *bs, const sp_ring_figures *fig, const char *note)
{
    sp_compressed *z = handle(bs)->compressed;
    pthread_mutex_lock(&z->pool_lock);
    z->ring.chunks += fig->chunks;
    z->ring.blocks += fig->blocks;
    z->ring.bytes_in += fig->bytes_in;
    z->ring.bytes_out += fig->bytes_out;
    z->ring.staging_chunks += fig->staging_chunks;
    z->ring.busy_s += fig->busy_s;
    snprintf(z->run_note, sizeof z->run_note, "%s", note);
    pthread_mutex_unlock(&z->pool_lock);
}

/* Every unit but the last decompresses to one size: the chunks can be rounded to it. */
static size_t common_unit(const sp_block_index *ix)
{
    if (ix->n_blocks == 0)
        return 0;
    size_t size = (size_t)ix->blocks[0].dst_bytes;
    for (size_t k = 1; k + 1 < ix->n_blocks; k++)
        if (ix->blocks[k].dst_bytes != size)
            return 0;
    return size;
}

const sp_block_source *sp_file_blocks_init(sp_file_io *f)
{
    const sp_block_index *ix = &f->compressed->ix;
    f->blocks = (sp_block_source){
        .format = ix->format, .where = f->decompress_where, .unit_bytes = common_unit(ix),
        .max_src_bytes = (size_t)ix->max_src_bytes, .max_dst_bytes = (size_t)ix->max_dst_bytes,
        .why_not = f->compressed->sequential ? "a single Zstandard frame (or one over 64 MiB) "
                                               "cannot be split: it is read in order"
                   : !f->positional ? "the output is written in record order"
                                    : "",
        .user = f, .units = units, .max_src_total = max_src_total, .fetch = fetch,
        .decode = decode,
        .ran = ran};
    return &f->blocks;
}
