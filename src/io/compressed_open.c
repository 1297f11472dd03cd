/* Opening a compressed input (compressed.h): its format, its block index built from the
 * frame headers, the sizes the headers leave open found, the way it will be read chosen; and
 * its figures for sp_file_io_input_get, and its close. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/compressed_impl.h"
#include "io/file_io.h"

static int pread_source(void *user, uint64_t offset, void *dst, size_t n)
{
    const int *fd = user;
    return sp_compressed_read_at(*fd, dst, n, offset);
}

/* The first magic number past any skippable frames (pzstd begins with one), into magic;
 * *n: 4, or fewer at the file's end. */
static int first_magic(sp_file_io *f, uint64_t file_bytes, unsigned char magic[4], size_t *n)
{
    uint64_t at = 0;
    for (int skipped = 0; skipped < 64; skipped++) {
        *n = file_bytes - at < 4 ? (size_t)(file_bytes - at) : 4;
        int err = pread_source(&f->in_fd, at, magic, *n);
        if (err != 0 || *n < 4 || (magic[0] & 0xF0) != 0x50 || magic[1] != 0x2A ||
            magic[2] != 0x4D || magic[3] != 0x18)
            return err;
        unsigned char size[4];
        if (file_bytes - at < 8 || (err = pread_source(&f->in_fd, at + 4, size, 4)) != 0)
            return err;
        at += 8 + ((uint64_t)size[0] | (uint64_t)size[1] << 8 | (uint64_t)size[2] << 16 |
                   (uint64_t)size[3] << 24);
        if (at >= file_bytes)
            return 0;
    }
    return 0;
}

sp_status sp_compressed_format(sp_file_io *f, int asked, uint64_t file_bytes, int *format)
{
    unsigned char magic[4];
    size_t n = 0;
    *format = asked;
    if (asked != SP_INPUT_FORMAT_AUTO)
        return asked >= SP_INPUT_FORMAT_RAW && asked <= SP_INPUT_FORMAT_ZSTD
                   ? SP_OK
                   : sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "input_format %d is not one "
                                     "of sp_input_format's", asked);
    int err = first_magic(f, file_bytes, magic, &n);
    if (err != 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot read the input '%s': %s", f->input,
                               strerror(err));
    *format = sp_frame_format_of(magic, n);
    return SP_OK;
}

/* A frame's size that its header leaves open, found by decoding: an LZ4 frame's last block
 * (no content size declared) or a whole Zstandard frame (pzstd declares none). */
static sp_status size_open_unit(sp_compressed *z, sp_decoder *d, sp_frame *fr, char *why,
                                size_t why_size)
{
    size_t last = (size_t)(fr->first_block + fr->n_blocks - 1);
    sp_block *b = &z->ix.blocks[last];
    if (b->codec != SP_BLOCK_ZSTD_FRAME) {
        size_t made = 0;
        sp_status st = sp_decode_unit(z, d, last, d->block, &made, why, why_size);
        b->dst_bytes = made;
        return st;
    }
    /* the frame's bytes into d->src, then decoded to count */
    int err = pread_source(&z->fd, b->src_offset, d->src, (size_t)b->src_bytes);
    if (err != 0) {
        snprintf(why, why_size, "reading the Zstandard frame at offset %llu: %s",
                 (unsigned long long)b->src_offset, strerror(err));
        return SP_ERR_BACKEND;
    }
    char detail[256] = "";
    sp_status st = sp_codec_measure(d->codec, d->src, (size_t)b->src_bytes, &b->dst_bytes,
                                    detail, sizeof detail);
    if (st != SP_OK)
        snprintf(why, why_size, "the Zstandard frame at offset %llu, which declares no size, "
                 "does not decode: %s", (unsigned long long)b->src_offset, detail);
    return st;
}

/* Every size the headers leave open, found; the contexts that did it are dropped, since
 * their buffers were sized before the sizes were known. */
static sp_status size_open_units(sp_compressed *z, char *why, size_t why_size)
{
    sp_decoder *d = NULL;
    sp_status st = SP_OK;
    for (size_t i = 0; i < z->ix.n_frames && st == SP_OK; i++) {
        sp_frame *fr = &z->ix.frames[i];
        if (!fr->last_size_unknown || fr->n_blocks == 0)
            continue;
        if (!d && !(d = sp_decoder_take(z, SIZE_MAX, why, why_size)))
            return SP_ERR_UNSUPPORTED;
        st = size_open_unit(z, d, fr, why, why_size);
        if (st == SP_OK) {
            fr->last_size_unknown = 0;
            z->sized_at_open++;
            uint64_t bytes = z->ix.blocks[fr->first_block + fr->n_blocks - 1].dst_bytes;
            if (bytes > z->ix.max_dst_bytes)
                z->ix.max_dst_bytes = bytes;
        }
    }
    if (d)
        sp_decoder_give(z, d);
    sp_decoders_drop(z);
    return st;
}

/* The index refused an LZ4 frame whose content size says a block before its last is short
 * (frame_lz4.c): its blocks are decoded, in order, until the short one, so that the message
 * names it. why keeps the index's message when none is found (the size was wrong) or a block
 * does not decode (that block's failure then). */
static void name_short_block(sp_compressed *z, char *why, size_t why_size)
{
    sp_block_index *ix = &z->ix;
    const sp_frame *fr = &ix->frames[ix->short_block_frame - 1];
    char detail[400] = "";
    sp_decoder *d = sp_decoder_take(z, SIZE_MAX, detail, sizeof detail);
    for (uint64_t k = 0; d && k + 1 < fr->n_blocks; k++) {
        size_t unit = (size_t)(fr->first_block + k), made = 0;
        const sp_block *b = &ix->blocks[unit];
        if (sp_decode_unit(z, d, unit, d->block, &made, detail, sizeof detail) != SP_OK) {
            snprintf(why, why_size, "%s", detail);
            break;
        }
        if (made < fr->block_bytes) {
            snprintf(why, why_size, "the LZ4 frame at offset %llu: block %llu of %llu at offset "
                     "%llu holds %zu bytes: it is shorter than the frame's block size of %llu "
                     "and is not the frame's last (every block but a frame's last must hold "
                     "the block size, as lz4 writes them; lz4 -d reads it: decompress it "
                     "first)", (unsigned long long)fr->offset, (unsigned long long)(k + 1),
                     (unsigned long long)fr->n_blocks,
                     (unsigned long long)(b->src_offset - 4), made,
                     (unsigned long long)fr->block_bytes);
            break;
        }
    }
    if (d)
        sp_decoder_give(z, d);
    sp_decoders_drop(z);
}

/* How it will be read, in words, for the report. */
static void describe(sp_compressed *z)
{
    const sp_block_index *ix = &z->ix;
    size_t data_frames = 0;
    for (size_t i = 0; i < ix->n_frames; i++)
        data_frames += ix->frames[i].n_blocks > 0;
    if (ix->format == SP_INPUT_FORMAT_LZ4)
        snprintf(z->note, sizeof z->note, "LZ4: %zu frame%s, %zu independent blocks decoded in "
                 "parallel on the staging threads", ix->n_frames, ix->n_frames == 1 ? "" : "s",
                 ix->n_blocks);
    else if (z->sequential && data_frames <= 1)
        snprintf(z->note, sizeof z->note, "Zstandard: a single frame, which cannot be split: "
                 "decompressed on the host as one unit, in order on one thread");
    else if (z->sequential)
        snprintf(z->note, sizeof z->note, "Zstandard: %zu frames, some over %llu MiB: "
                 "decompressed in order on one thread", data_frames,
                 (unsigned long long)(SP_FRAME_HELD_MAX >> 20));
    else
        snprintf(z->note, sizeof z->note, "Zstandard: %zu frames decoded in parallel on the "
                 "staging threads", data_frames);
    size_t used = strlen(z->note);
    if (z->sized_at_open && ix->format == SP_INPUT_FORMAT_ZSTD && used < sizeof z->note)
        snprintf(z->note + used, sizeof z->note - used, "; %zu declared no size (pzstd) and "
                 "were decoded once at open to find it", z->sized_at_open);
}

static sp_status index_input(sp_file_io *f, sp_compressed *z, int format, uint64_t file_bytes)
{
    char why[600] = "";
    sp_byte_source src = {.size = file_bytes, .read = pread_source, .user = &z->fd};
    sp_status st = sp_block_index_build(&src, format, &z->ix);
    if (st == SP_OK)
        st = size_open_units(z, why, sizeof why);
    else
        snprintf(why, sizeof why, "%s", z->ix.error);
    if (st != SP_OK && z->ix.short_block_frame)
        name_short_block(z, why, sizeof why);
    if (st == SP_OK && (st = sp_block_index_lay_out(&z->ix)) != SP_OK)
        snprintf(why, sizeof why, "%s", z->ix.error);
    if (st == SP_OK && sp_content_checks_make(&z->checks, &z->ix) != SP_OK) {
        st = SP_ERR_OUT_OF_MEMORY;
        snprintf(why, sizeof why, "no memory for the content checks");
    }
    if (st == SP_OK)
        return SP_OK;
    /* the data is bad or of a kind not read: never the caller's arguments */
    return sp_file_io_fail(f, st == SP_ERR_INVALID_ARGUMENT ? SP_ERR_UNSUPPORTED : st,
                           "the input '%s' (%s): %s%s", f->input,
                           format == SP_INPUT_FORMAT_LZ4 ? "LZ4" : "Zstandard", why,
                           f->format_asked == SP_INPUT_FORMAT_AUTO
                               ? " (chosen by its magic number; input_format RAW reads it raw)"
                               : "");
}

sp_status sp_compressed_open(sp_file_io *f, int format, uint64_t file_bytes,
                             uint64_t *stream_bytes)
{
    sp_compressed *z = calloc(1, sizeof *z);
    if (!z)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the compressed input");
    f->compressed = z;
    z->fd = f->in_fd;
    z->path = f->input;
    pthread_mutex_init(&z->pool_lock, NULL);
    sp_status st = index_input(f, z, format, file_bytes);
    if (st != SP_OK)
        return st;
    /* one frame cannot be split; a huge one would be held whole by every thread */
    size_t data_frames = 0;
    for (size_t i = 0; i < z->ix.n_frames; i++)
        data_frames += z->ix.frames[i].n_blocks > 0;
    z->sequential = format == SP_INPUT_FORMAT_ZSTD &&
                    (data_frames <= 1 || z->ix.max_dst_bytes > SP_FRAME_HELD_MAX);
    describe(z);
    *stream_bytes = z->ix.total_bytes;
    return SP_OK;
}

int sp_compressed_sequential(const sp_compressed *z)
{
    return z->sequential;
}

void sp_compressed_reset(sp_compressed *z, uint64_t begin, uint64_t end)
{
    atomic_store(&z->bytes_read, 0);
    atomic_store(&z->bytes_decompressed, 0);
    atomic_store(&z->blocks_decompressed, 0);
    atomic_store(&z->blocks_reused, 0);
    atomic_store(&z->content_checked, 0);
    atomic_store(&z->decompress_ns, 0);
    memset(&z->ring, 0, sizeof z->ring);
    z->run_note[0] = '\0';
    sp_content_checks_reset(&z->checks, &z->ix, begin, end);
}

void sp_compressed_input(sp_compressed *z, sp_file_io_input *out)
{
    out->format = z->ix.format;
    out->sequential = z->sequential;
    out->file_bytes = z->ix.file_bytes;
    out->stream_bytes = z->ix.total_bytes;
    out->frames = z->ix.n_frames;
    out->blocks = z->ix.n_blocks;
    out->block_checksums = z->ix.block_checksums;
    out->content_checksums = z->ix.content_checksums;
    out->bytes_read = atomic_load(&z->bytes_read);
    out->bytes_decompressed = atomic_load(&z->bytes_decompressed);
    out->blocks_decompressed = atomic_load(&z->blocks_decompressed);
    out->blocks_reused = atomic_load(&z->blocks_reused);
    out->content_checked = atomic_load(&z->content_checked);
    out->decompress_s = (double)atomic_load(&z->decompress_ns) * 1e-9;
    pthread_mutex_lock(&z->pool_lock); /* the ring's figures: file_blocks.c */
    snprintf(out->note, sizeof out->note, "%s", z->run_note[0] ? z->run_note : z->note);
    out->ring_chunks = z->ring.chunks;
    out->ring_blocks = z->ring.blocks;
    out->ring_bytes_in = z->ring.bytes_in;
    out->ring_bytes_out = z->ring.bytes_out;
    out->ring_busy_s = z->ring.busy_s;
    out->staging_chunks = z->ring.staging_chunks;
    pthread_mutex_unlock(&z->pool_lock);
}

void sp_decoders_drop(sp_compressed *z)
{
    for (sp_decoder *d = z->made_decoders; d;) {
        sp_decoder *next = d->next_made;
        sp_decoder_free(d);
        d = next;
    }
    z->made_decoders = z->free_decoders = NULL;
}

void sp_compressed_close(sp_compressed *z)
{
    if (!z)
        return;
    sp_decoders_drop(z);
    free(z->stream.in);
    sp_content_checks_free(&z->checks);
    sp_block_index_free(&z->ix);
    pthread_mutex_destroy(&z->pool_lock);
    free(z);
}
