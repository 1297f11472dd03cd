/* Zstandard frames (RFC 8878) into the block index, one unit per frame: a frame's blocks
 * refer back into each other, so the frame is what can be decoded on its own. Files of
 * several frames (pzstd, zstd's seekable format, frames concatenated) are read in parallel;
 * a file of one frame is still indexed here, and the file source reads it in order.
 *
 * Each frame header is checked and its blocks walked (3-byte headers only) to find where it
 * ends and to bound what its blocks can hold: the content size it declares must lie between
 * what its raw and RLE blocks hold and that plus Block_Maximum_Size for each compressed one.
 * A frame that declares no content size (pzstd writes none, zstd from a pipe neither) is
 * marked to be sized at open by decoding it once (compressed_open.c). Frames that need a
 * dictionary are refused; skippable frames (the seekable format's seek table) are skipped. */
#include <stdio.h>

#include "io/block_index.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define SKIPPABLE_FIRST 0x184D2A50u
#define ZSTD_BLOCK_MAX (128u * 1024u)

static uint64_t le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i > 0; i--)
        v = v << 8 | p[i - 1];
    return v;
}

typedef struct zstd_header {
    uint64_t content_size, window;
    size_t length; /* the header after the magic */
    int checksum;
    int size_unknown; /* no content size declared (pzstd, a pipe): found at open by decoding */
} zstd_header;

static sp_status read_header(sp_block_index *ix, const sp_byte_source *src, uint64_t at,
                             zstd_header *z)
{
    static const unsigned dict_bytes[4] = {0, 1, 2, 4};
    unsigned char h[14];
    unsigned long long off = (unsigned long long)at;
    sp_status st = sp_index_fetch(ix, src, at + 4, h, 1, "a Zstandard frame header");
    if (st != SP_OK)
        return st;
    unsigned fhd = h[0], fcs_flag = fhd >> 6, single = (fhd >> 5) & 1;
    unsigned fcs_bytes = fcs_flag == 0 ? single : 1u << fcs_flag;
    if (fhd & 0x08)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the Zstandard frame at offset %llu has "
                             "its reserved bit set (descriptor 0x%02x): corrupt", off, fhd);
    z->size_unknown = fcs_bytes == 0;
    z->checksum = (fhd >> 2) & 1;
    z->length = 1 + !single + dict_bytes[fhd & 3] + fcs_bytes;
    if ((st = sp_index_fetch(ix, src, at + 4, h, z->length, "a Zstandard frame header")) !=
        SP_OK)
        return st;
    const unsigned char *p = h + 1 + !single;
    if (le(p, dict_bytes[fhd & 3]) != 0)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the Zstandard frame at offset %llu needs "
                             "dictionary %llu", off,
                             (unsigned long long)le(p, dict_bytes[fhd & 3]));
    p += dict_bytes[fhd & 3];
    z->content_size = le(p, fcs_bytes) + (fcs_bytes == 2 ? 256 : 0);
    unsigned exponent = h[1] >> 3, mantissa = h[1] & 7;
    uint64_t base = (uint64_t)1 << (10 + exponent);
    z->window = single ? z->content_size : base + base / 8 * mantissa;
    (void)off;
    return SP_OK;
}

/* The blocks from `at`; *end past the last (and the checksum); *least and *most what they
 * can decompress to. */
static sp_status walk_blocks(sp_block_index *ix, const sp_byte_source *src,
                             const zstd_header *z, uint64_t at, uint64_t *end, uint64_t *least,
                             uint64_t *most)
{
    uint64_t block_max = z->window < ZSTD_BLOCK_MAX ? z->window : ZSTD_BLOCK_MAX;
    unsigned char h[3];
    *least = *most = 0;
    for (int last = 0; !last;) {
        sp_status st = sp_index_fetch(ix, src, at, h, 3, "a Zstandard block header");
        if (st != SP_OK)
            return st;
        uint32_t word = (uint32_t)le(h, 3), type = (word >> 1) & 3, size = word >> 3;
        last = word & 1;
        if (type == 3 || size > block_max)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the Zstandard block at offset %llu "
                                 "is %s: corrupt", (unsigned long long)at,
                                 type == 3 ? "of the reserved type" : "larger than the frame's "
                                 "block limit");
        uint64_t payload = type == 1 ? 1 : size; /* RLE: one byte, repeated `size` times */
        if (payload > src->size - at - 3)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the Zstandard block at "
                                 "offset %llu (%llu bytes) runs past the file's end (%llu "
                                 "bytes)", (unsigned long long)at, (unsigned long long)payload,
                                 (unsigned long long)src->size);
        *least += type == 2 ? 0 : size;
        *most += type == 2 ? block_max : size;
        at += 3 + payload;
    }
    *end = at + (z->checksum ? 4 : 0);
    if (*end > src->size)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the checksum of the Zstandard "
                             "frame ending at offset %llu is missing", (unsigned long long)at);
    return SP_OK;
}

static sp_status read_frame(sp_block_index *ix, const sp_byte_source *src, uint64_t at,
                            uint64_t *end)
{
    zstd_header z = {0};
    uint64_t least, most;
    sp_status st = read_header(ix, src, at, &z);
    if (st == SP_OK)
        st = walk_blocks(ix, src, &z, at + 4 + z.length, end, &least, &most);
    if (st != SP_OK)
        return st;
    if (!z.size_unknown && (z.content_size < least || z.content_size > most))
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the Zstandard frame at offset %llu "
                             "declares %llu bytes of content, which its blocks cannot hold "
                             "(%llu to %llu bytes)", (unsigned long long)at,
                             (unsigned long long)z.content_size, (unsigned long long)least,
                             (unsigned long long)most);
    sp_frame *f = sp_index_add_frame(ix, at);
    if (!f)
        return SP_ERR_OUT_OF_MEMORY;
    f->last_size_unknown = z.size_unknown;
    if (z.content_size == 0 && !z.size_unknown) /* nothing to decode: a frame without a unit */
        return SP_OK;
    return sp_index_add_block(ix, SP_BLOCK_ZSTD_FRAME, at, *end - at, z.content_size,
                              z.checksum)
               ? SP_OK
               : SP_ERR_OUT_OF_MEMORY;
}

sp_status sp_frame_zstd_index(const sp_byte_source *src, sp_block_index *ix)
{
    uint64_t at = 0;
    while (at < src->size) {
        unsigned char word[4];
        sp_status st = sp_index_fetch(ix, src, at, word, 4, "a Zstandard frame's magic number");
        if (st != SP_OK)
            return st;
        uint32_t magic = (uint32_t)le(word, 4);
        uint64_t end = at;
        if (magic == ZSTD_MAGIC) {
            st = read_frame(ix, src, at, &end);
        } else if ((magic & 0xFFFFFFF0u) == SKIPPABLE_FIRST) {
            st = sp_index_fetch(ix, src, at + 4, word, 4, "a skippable frame's size");
            end = at + 8 + le(word, 4);
            if (st == SP_OK && end > src->size)
                st = sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the skippable frame at "
                                   "offset %llu runs past the file's end (%llu bytes)",
                                   (unsigned long long)at, (unsigned long long)src->size);
        } else {
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "unknown magic number 0x%08x at "
                                 "offset %llu: not a Zstandard frame (%s)", magic,
                                 (unsigned long long)at,
                                 at ? "data after the last frame" : "the input is not zstd");
        }
        if (st != SP_OK)
            return st;
        at = end;
    }
    return SP_OK;
}
