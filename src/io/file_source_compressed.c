/* The file source over a compressed input (compressed.h): the engine's record ranges mapped
 * to the units of the block index they overlap, each decoded on the calling staging thread
 * with a decompression context of its own from a pool. A unit the range holds whole is
 * decoded straight into the pinned destination; one cut by the range's edge is decoded into
 * the context's buffer and the part wanted copied, and the context keeps it, so that the
 * read of the neighbouring piece that takes the same context copies the rest rather than
 * decoding it again. A single-frame Zstandard file is decoded in order with one stream. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/compressed_impl.h"
#include "io/file_io.h"
#include "io/xxh32.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* pread all n bytes at offset; 0 or an errno (EIO for a file that ended early). */
int sp_compressed_read_at(int fd, void *dst, size_t n, uint64_t offset)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)dst + got, n - got, (off_t)(offset + got));
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return r < 0 ? errno : EIO;
        got += (size_t)r;
    }
    return 0;
}

/* ---- the pool of decompression contexts --------------------------------------------------- */

void sp_decoder_free(sp_decoder *d)
{
    if (!d)
        return;
    sp_codec_free(d->codec);
    free(d->src);
    free(d->block);
    free(d);
}

static sp_decoder *make_decoder(sp_compressed *z, char *why, size_t why_size)
{
    sp_decoder *d = calloc(1, sizeof *d);
    size_t block = z->sequential ? SP_STREAM_IN_BYTES : (size_t)z->ix.max_dst_bytes;
    if (!d || sp_codec_create(&d->codec, why, why_size) != SP_OK ||
        !(d->src = malloc(z->sequential ? 1 : (size_t)z->ix.max_src_bytes + 1)) ||
        !(d->block = malloc(block + 1))) {
        if (d && d->codec)
            snprintf(why, why_size, "no memory for a decompression context's buffers");
        sp_decoder_free(d);
        return NULL;
    }
    d->cached = SIZE_MAX;
    return d;
}

sp_decoder *sp_decoder_take(sp_compressed *z, size_t unit, char *why, size_t why_size)
{
    pthread_mutex_lock(&z->pool_lock);
    sp_decoder **pick = &z->free_decoders; /* the last given back, unless one holds `unit` */
    for (sp_decoder **d = &z->free_decoders; *d; d = &(*d)->next_free)
        if ((*d)->cached == unit) {
            pick = d;
            break;
        }
    sp_decoder *d = *pick;
    if (d)
        *pick = d->next_free;
    pthread_mutex_unlock(&z->pool_lock);
    if (d)
        return d;
    if (!(d = make_decoder(z, why, why_size)))
        return NULL;
    pthread_mutex_lock(&z->pool_lock);
    d->next_made = z->made_decoders;
    z->made_decoders = d;
    pthread_mutex_unlock(&z->pool_lock);
    return d;
}

void sp_decoder_give(sp_compressed *z, sp_decoder *d)
{
    pthread_mutex_lock(&z->pool_lock);
    d->next_free = z->free_decoders;
    z->free_decoders = d;
    pthread_mutex_unlock(&z->pool_lock);
}

/* ---- one unit ------------------------------------------------------------------------------ */

static const char *unit_name(const sp_block *b)
{
    return b->codec == SP_BLOCK_ZSTD_FRAME ? "Zstandard frame" : "LZ4 block";
}

/* Its compressed bytes into d->src, their checksum checked where the block has one. */
static sp_status fetch_unit(sp_compressed *z, sp_decoder *d, const sp_block *b, char *why,
                            size_t why_size)
{
    int lz4_sum = b->checksum && b->codec != SP_BLOCK_ZSTD_FRAME;
    size_t n = (size_t)b->src_bytes + (lz4_sum ? 4 : 0);
    int err = sp_compressed_read_at(z->fd, d->src, n, b->src_offset);
    if (err != 0) {
        snprintf(why, why_size, "reading the %s at offset %llu: %s", unit_name(b),
                 (unsigned long long)b->src_offset, err == EIO ? "the file ended early (it "
                 "shrank during the run?)" : strerror(err));
        return SP_ERR_BACKEND;
    }
    atomic_fetch_add(&z->bytes_read, n);
    if (!lz4_sum)
        return SP_OK;
    const unsigned char *s = d->src + b->src_bytes;
    uint32_t stored = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
                      (uint32_t)s[3] << 24;
    uint32_t got = sp_xxh32(d->src, (size_t)b->src_bytes, 0);
    if (stored == got)
        return SP_OK;
    snprintf(why, why_size, "the LZ4 block at offset %llu fails its block checksum (0x%08x "
             "stored, 0x%08x read): corrupt", (unsigned long long)(b->src_offset - 4), stored,
             got);
    return SP_ERR_UNSUPPORTED;
}

sp_status sp_decode_unit(sp_compressed *z, sp_decoder *d, size_t unit, void *out,
                         size_t *sized, char *why, size_t why_size)
{
    const sp_block *b = &z->ix.blocks[unit];
    sp_status st = fetch_unit(z, d, b, why, why_size);
    if (st != SP_OK)
        return st;
    char detail[256] = "";
    size_t made = 0;
    uint64_t started = now_ns();
    st = sp_codec_decode(d->codec, b, d->src, out, (size_t)b->dst_bytes, &made, detail,
                         sizeof detail);
    atomic_fetch_add(&z->decompress_ns, now_ns() - started);
    uint64_t header = b->codec == SP_BLOCK_ZSTD_FRAME ? b->src_offset : b->src_offset - 4;
    if (st != SP_OK) {
        snprintf(why, why_size, "the %s at offset %llu does not decode to its %llu bytes "
                 "(corrupt, or it expands past that size): %s",
                 unit_name(b), (unsigned long long)header, (unsigned long long)b->dst_bytes,
                 detail);
        return st;
    }
    if (sized && made > 0) {
        *sized = made;
        return SP_OK;
    }
    if (made != b->dst_bytes) {
        const sp_frame *fr = &z->ix.frames[b->frame];
        uint64_t k = unit - fr->first_block;
        if (b->codec != SP_BLOCK_ZSTD_FRAME && made < b->dst_bytes && k + 1 < fr->n_blocks)
            snprintf(why, why_size, "the LZ4 frame at offset %llu: block %llu of %llu at offset "
                     "%llu decodes to %zu bytes: it is shorter than the frame's block size of "
                     "%llu and is not the frame's last (every block but a frame's last must "
                     "hold the block size, as lz4 writes them; lz4 -d reads it: decompress it "
                     "first)", (unsigned long long)fr->offset, (unsigned long long)(k + 1),
                     (unsigned long long)fr->n_blocks, (unsigned long long)header, made,
                     (unsigned long long)fr->block_bytes);
        else
            snprintf(why, why_size, "the %s at offset %llu decodes to %zu bytes, not %llu",
                     unit_name(b), (unsigned long long)header, made,
                     (unsigned long long)b->dst_bytes);
        return SP_ERR_UNSUPPORTED;
    }
    atomic_fetch_add(&z->blocks_decompressed, 1);
    atomic_fetch_add(&z->bytes_decompressed, made);
    int checked = 0;
    st = sp_content_offer(&z->checks, &z->ix, unit, out, &checked, why, why_size);
    atomic_fetch_add(&z->content_checked, (uint64_t)checked);
    return st;
}

/* ---- positional reads ---------------------------------------------------------------------- */

/* [at, at + bytes) from the units that hold it, with one context. */
static sp_status read_units(sp_compressed *z, sp_decoder *d, unsigned char *dst, uint64_t at,
                            size_t bytes, char *why, size_t why_size)
{
    for (size_t unit = sp_block_index_find(&z->ix, at); bytes > 0; unit++) {
        const sp_block *b = &z->ix.blocks[unit];
        uint64_t inside = at - b->dst_offset, left = b->dst_bytes - inside;
        size_t n = left < bytes ? (size_t)left : bytes;
        sp_status st = SP_OK;
        if (inside == 0 && n == b->dst_bytes) {
            st = sp_decode_unit(z, d, unit, dst, NULL, why, why_size);
        } else if (d->cached == unit) {
            atomic_fetch_add(&z->blocks_reused, 1);
        } else {
            d->cached = SIZE_MAX;
            st = sp_decode_unit(z, d, unit, d->block, NULL, why, why_size);
            d->cached = st == SP_OK ? unit : SIZE_MAX;
        }
        if (st != SP_OK)
            return st;
        if (inside != 0 || n != b->dst_bytes)
            memcpy(dst, d->block + inside, n);
        dst += n;
        at += n;
        bytes -= n;
    }
    return SP_OK;
}

/* ---- in order: a single-frame Zstandard file ------------------------------------------------ */

/* More compressed bytes into the stream's buffer; 0 at the file's end, -1 (why set) when the
 * read fails. */
static int refill(sp_compressed *z, char *why, size_t why_size)
{
    sp_stream_state *s = &z->stream;
    uint64_t left = z->ix.file_bytes - s->file_at;
    size_t n = left < SP_STREAM_IN_BYTES ? (size_t)left : SP_STREAM_IN_BYTES;
    int err = n ? sp_compressed_read_at(z->fd, s->in, n, s->file_at) : 0;
    if (err != 0) {
        snprintf(why, why_size, "reading at offset %llu: %s", (unsigned long long)s->file_at,
                 strerror(err));
        return -1;
    }
    atomic_fetch_add(&z->bytes_read, n);
    s->file_at += n;
    s->in_len = n;
    s->in_pos = 0;
    return n > 0;
}

/* One step of the stream into out (room bytes at most); *made what came. */
static sp_status stream_step(sp_compressed *z, unsigned char *out, size_t room, size_t *made,
                             char *why, size_t why_size)
{
    sp_stream_state *s = &z->stream;
    size_t used = 0;
    char detail[256] = "";
    uint64_t started = now_ns();
    sp_status st = sp_codec_stream(s->decoder->codec, s->in + s->in_pos, s->in_len - s->in_pos,
                                   &used, out, room, made, &s->frame_end, detail,
                                   sizeof detail);
    atomic_fetch_add(&z->decompress_ns, now_ns() - started);
    if (st != SP_OK) {
        snprintf(why, why_size, "the Zstandard stream does not decode near offset %llu "
                 "(corrupt, or it expands past its declared size): %s",
                 (unsigned long long)(s->file_at - s->in_len + s->in_pos), detail);
        return st;
    }
    s->in_pos += used;
    s->stream_at += *made;
    atomic_fetch_add(&z->bytes_decompressed, *made);
    return SP_OK;
}

/* Past the last declared byte: the rest of the file must end the frame (its checksum
 * checked by libzstd) and decode to nothing more. */
static sp_status stream_finish(sp_compressed *z, char *why, size_t why_size)
{
    sp_stream_state *s = &z->stream;
    unsigned char extra;
    for (;;) {
        int more = s->in_pos < s->in_len ? 1 : refill(z, why, why_size);
        if (more < 0)
            return SP_ERR_BACKEND;
        if (more == 0)
            break;
        size_t made = 0;
        sp_status st = stream_step(z, &extra, 1, &made, why, why_size);
        if (st == SP_OK && made > 0) {
            snprintf(why, why_size, "the Zstandard stream decodes past the %llu bytes its frame "
                     "declares", (unsigned long long)z->ix.total_bytes);
            st = SP_ERR_UNSUPPORTED;
        }
        if (st != SP_OK)
            return st;
    }
    if (s->frame_end)
        return SP_OK;
    snprintf(why, why_size, "truncated: the Zstandard frame does not end before the file's end "
             "(offset %llu)", (unsigned long long)z->ix.file_bytes);
    return SP_ERR_UNSUPPORTED;
}

/* Decodes the stream onward into dst (NULL: discard into scratch) for `bytes` bytes. */
static sp_status stream_on(sp_compressed *z, unsigned char *dst, size_t bytes, char *why,
                           size_t why_size)
{
    sp_stream_state *s = &z->stream;
    while (bytes > 0) {
        int more = s->in_pos < s->in_len ? 1 : refill(z, why, why_size);
        if (more < 0)
            return SP_ERR_BACKEND;
        if (more == 0) {
            snprintf(why, why_size, "truncated: the Zstandard stream ends at offset %llu, at "
                     "decompressed byte %llu of the %llu its frame declares",
                     (unsigned long long)s->file_at, (unsigned long long)s->stream_at,
                     (unsigned long long)z->ix.total_bytes);
            return SP_ERR_UNSUPPORTED;
        }
        size_t room = dst || bytes < SP_STREAM_IN_BYTES ? bytes : SP_STREAM_IN_BYTES, made = 0;
        sp_status st = stream_step(z, dst ? dst : s->decoder->block, room, &made, why,
                                   why_size);
        if (st != SP_OK)
            return st;
        if (dst)
            dst += made;
        bytes -= made;
    }
    return s->stream_at == z->ix.total_bytes ? stream_finish(z, why, why_size) : SP_OK;
}

static sp_status read_in_order(sp_compressed *z, unsigned char *dst, uint64_t at, size_t bytes,
                               char *why, size_t why_size)
{
    sp_stream_state *s = &z->stream;
    if (!s->decoder && !(s->decoder = sp_decoder_take(z, SIZE_MAX, why, why_size)))
        return SP_ERR_OUT_OF_MEMORY;
    if (!s->in && !(s->in = malloc(SP_STREAM_IN_BYTES))) {
        snprintf(why, why_size, "no memory for the stream's input");
        return SP_ERR_OUT_OF_MEMORY;
    }
    if (at < s->stream_at || s->stream_at == 0) { /* behind us (a rerun): from the start */
        sp_status st = sp_codec_stream_restart(s->decoder->codec, why, why_size);
        if (st != SP_OK)
            return st;
        s->file_at = s->stream_at = 0;
        s->in_len = s->in_pos = 0;
    }
    sp_status st = at > s->stream_at ? stream_on(z, NULL, (size_t)(at - s->stream_at), why,
                                                 why_size)
                                     : SP_OK;
    return st == SP_OK ? stream_on(z, dst, bytes, why, why_size) : st;
}

sp_status sp_compressed_read(sp_file_io *f, void *dst, uint64_t at, size_t bytes)
{
    sp_compressed *z = f->compressed;
    char why[600] = "";
    sp_status st;
    if (bytes == 0)
        return SP_OK;
    if (z->sequential) {
        st = read_in_order(z, dst, at, bytes, why, sizeof why);
    } else {
        sp_decoder *d = sp_decoder_take(z, sp_block_index_find(&z->ix, at), why, sizeof why);
        st = d ? read_units(z, d, dst, at, bytes, why, sizeof why) : SP_ERR_OUT_OF_MEMORY;
        if (d)
            sp_decoder_give(z, d);
    }
    return st == SP_OK ? SP_OK : sp_file_io_fail_io(f, "reading '%s': %s", f->input, why);
}
