/* LZ4 frames (the format `lz4` writes; lz4_Frame_format.md) into the block index: the frame
 * descriptor checked against its header checksum, then each block's 4-byte size word, without
 * reading the blocks themselves.
 *
 * Two rules make the blocks reachable at random. Blocks must be independent (the `lz4`
 * default): linked blocks (lz4 -BD) refer back into the previous block, so a block could only
 * be decoded after all before it; such frames are refused, not decoded in order. And a block
 * does not say how much it decompresses to, so every block but a frame's last is taken to
 * hold exactly the frame's block size, which is what the lz4 command, LZ4F_compressUpdate
 * without flushes and `streampipe run --output-format lz4` (a frame per piece) write; the
 * file source checks each block against it when it decodes it, and a block before a frame's
 * last that is shorter is refused as that, naming it.
 * The last block's size is the content size less the others' when the frame declares one,
 * and otherwise found by decompressing that one block at open (file_source_compressed.c). */
#include <stdio.h>

#include "io/block_index.h"
#include "io/xxh32.h"

#define LZ4_MAGIC 0x184D2204u
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define SKIPPABLE_FIRST 0x184D2A50u /* to ...5F: any format's skippable frames */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

typedef struct lz4_descriptor {
    int block_checksum, content_checksum, has_content_size;
    uint64_t content_size, block_bytes;
    size_t length; /* of the descriptor, header checksum included */
} lz4_descriptor;

/* The frame descriptor after the magic at `at`: FLG, BD, the optional content size and
 * dictionary ID, the header checksum. */
static sp_status read_descriptor(sp_block_index *ix, const sp_byte_source *src, uint64_t at,
                                 lz4_descriptor *d)
{
    unsigned char h[15];
    unsigned long long off = (unsigned long long)at;
    sp_status st = sp_index_fetch(ix, src, at + 4, h, 2, "an LZ4 frame descriptor");
    if (st != SP_OK)
        return st;
    unsigned flg = h[0], bd = h[1], size_id = (bd >> 4) & 7;
    if ((flg >> 6) != 1 || (flg & 2) || (bd & 0x8F))
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu has version "
                             "%u or reserved bits set (FLG 0x%02x, BD 0x%02x): not a frame "
                             "this reader knows", off, flg >> 6, flg, bd);
    if (!(flg & 0x20))
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu has linked "
                             "blocks (lz4 -BD), which can only be decoded in order: recompress "
                             "with independent blocks (the lz4 default, -BI)", off);
    if (flg & 1)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu needs a "
                             "dictionary (its dictionary ID flag is set)", off);
    if (size_id < 4)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu declares "
                             "block size code %u (4..7, 64 KiB to 4 MiB, are defined)", off,
                             size_id);
    d->block_checksum = (flg >> 4) & 1;
    d->has_content_size = (flg >> 3) & 1;
    d->content_checksum = (flg >> 2) & 1;
    d->block_bytes = (uint64_t)1 << (8 + 2 * size_id);
    d->length = 2 + (d->has_content_size ? 8 : 0) + 1;
    if ((st = sp_index_fetch(ix, src, at + 4, h, d->length, "an LZ4 frame descriptor")) != SP_OK)
        return st;
    d->content_size = d->has_content_size ? le64(h + 2) : 0;
    unsigned want = (sp_xxh32(h, d->length - 1, 0) >> 8) & 0xFF;
    if (h[d->length - 1] != want)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame descriptor at offset %llu "
                             "fails its header checksum (0x%02x, want 0x%02x): corrupt", off,
                             h[d->length - 1], want);
    return SP_OK;
}

/* The blocks from `at` to the end mark; *end: past the frame (content checksum included). */
static sp_status read_blocks(sp_block_index *ix, const sp_byte_source *src,
                             const lz4_descriptor *d, uint64_t at, uint64_t *end)
{
    unsigned char word[4];
    for (;;) {
        sp_status st = sp_index_fetch(ix, src, at, word, 4, "an LZ4 block header");
        if (st != SP_OK)
            return st;
        uint32_t size_word = le32(word), size = size_word & 0x7FFFFFFFu;
        if (size_word == 0)
            break; /* the end mark */
        if (size == 0 || size > d->block_bytes)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 block at offset %llu declares "
                                 "%u bytes: %s the frame's block size of %llu", 
                                 (unsigned long long)at, size, size ? "more than" : "empty, in",
                                 (unsigned long long)d->block_bytes);
        uint64_t whole = 4 + (uint64_t)size + (d->block_checksum ? 4 : 0);
        if (whole > src->size - at)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the LZ4 block at offset "
                                 "%llu (%u bytes) runs past the file's end (%llu bytes)",
                                 (unsigned long long)at, size, (unsigned long long)src->size);
        int stored = (size_word >> 31) != 0;
        if (!sp_index_add_block(ix, stored ? SP_BLOCK_STORED : SP_BLOCK_LZ4, at + 4, size,
                                stored ? size : d->block_bytes, d->block_checksum))
            return SP_ERR_OUT_OF_MEMORY;
        at += whole;
    }
    at += 4;
    *end = at + (d->content_checksum ? 4 : 0);
    return *end > src->size ? sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the content "
                                            "checksum of the LZ4 frame ending at offset %llu is "
                                            "missing", (unsigned long long)at)
                            : SP_OK;
}

/* Block k (from 0) of frame f: "block N of M at offset X", for messages. */
static void name_block(const sp_block_index *ix, const sp_frame *f, uint64_t k, char *out,
                       size_t size)
{
    snprintf(out, size, "block %llu of %llu at offset %llu", (unsigned long long)(k + 1),
             (unsigned long long)f->n_blocks,
             (unsigned long long)(ix->blocks[f->first_block + k].src_offset - 4));
}

/* The last block's size from the declared content size, which must fit the blocks: all but
 * the last full, the last holding 1 to block_bytes. Without one it stays to be found. A
 * content size too small for the blocks before the last means one of them is short (or the
 * size is wrong): a stored one is named here; a compressed one says its size only when
 * decoded, so short_block_frame asks the open to find it (compressed_open.c). */
static sp_status size_last_block(sp_block_index *ix, sp_frame *f, const lz4_descriptor *d)
{
    sp_block *last = f->n_blocks ? &ix->blocks[f->first_block + f->n_blocks - 1] : NULL;
    uint64_t before = f->n_blocks ? (f->n_blocks - 1) * d->block_bytes : 0;
    unsigned long long off = (unsigned long long)f->offset;
    if (!d->has_content_size) {
        f->last_size_unknown = last && last->codec == SP_BLOCK_LZ4;
        return SP_OK;
    }
    if (!last)
        return d->content_size == 0
                   ? SP_OK
                   : sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu "
                                   "declares %llu bytes of content but has no blocks", off,
                                   (unsigned long long)d->content_size);
    uint64_t last_bytes = d->content_size - before;
    if (d->content_size <= before) {
        char name[96];
        for (uint64_t k = 0; k + 1 < f->n_blocks; k++) {
            const sp_block *b = &ix->blocks[f->first_block + k];
            if (b->codec == SP_BLOCK_STORED && b->dst_bytes < d->block_bytes) {
                name_block(ix, f, k, name, sizeof name);
                return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu: %s "
                                     "(stored, %llu bytes) is shorter than the frame's block "
                                     "size of %llu and is not the frame's last: every block "
                                     "but a frame's last must hold the block size, as lz4 "
                                     "writes them (lz4 -d reads it: decompress it first)", off,
                                     name, (unsigned long long)b->dst_bytes,
                                     (unsigned long long)d->block_bytes);
            }
        }
        ix->short_block_frame = (uint64_t)(f - ix->frames) + 1;
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu declares "
                             "%llu bytes of content, fewer than its first %llu blocks would "
                             "hold at the frame's block size of %llu: a block before the "
                             "frame's last is shorter than the block size (every block but a "
                             "frame's last must hold it, as lz4 writes them), or the declared "
                             "size is wrong", off, (unsigned long long)d->content_size,
                             (unsigned long long)(f->n_blocks - 1),
                             (unsigned long long)d->block_bytes);
    }
    if (last_bytes > d->block_bytes)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu declares "
                             "%llu bytes of content, more than its %llu blocks of %llu bytes "
                             "can hold", off, (unsigned long long)d->content_size,
                             (unsigned long long)f->n_blocks,
                             (unsigned long long)d->block_bytes);
    if (last->codec == SP_BLOCK_STORED && last_bytes != last->dst_bytes)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the LZ4 frame at offset %llu declares "
                             "%llu bytes of content, which leaves %llu for its last block, "
                             "stored with %llu", off, (unsigned long long)d->content_size,
                             (unsigned long long)last_bytes,
                             (unsigned long long)last->dst_bytes);
    last->dst_bytes = last_bytes;
    return SP_OK;
}

static sp_status read_frame(sp_block_index *ix, const sp_byte_source *src, uint64_t at,
                            uint64_t *end)
{
    lz4_descriptor d = {0};
    sp_status st = read_descriptor(ix, src, at, &d);
    if (st != SP_OK)
        return st;
    sp_frame *f = sp_index_add_frame(ix, at);
    if (!f)
        return SP_ERR_OUT_OF_MEMORY;
    f->block_bytes = d.block_bytes;
    f->content_checksum = d.content_checksum;
    if ((st = read_blocks(ix, src, &d, at + 4 + d.length, end)) != SP_OK)
        return st;
    if (d.content_checksum) {
        unsigned char word[4];
        if ((st = sp_index_fetch(ix, src, *end - 4, word, 4, "an LZ4 content checksum")) != SP_OK)
            return st;
        f->content_hash = le32(word);
        ix->content_checksums++;
    }
    return size_last_block(ix, f, &d);
}

/* A skippable frame at `at` (magic, 4-byte size, that many bytes): *end past it. */
static sp_status skip_frame(sp_block_index *ix, const sp_byte_source *src, uint64_t at,
                            uint64_t *end)
{
    unsigned char word[4];
    sp_status st = sp_index_fetch(ix, src, at + 4, word, 4, "a skippable frame's size");
    if (st != SP_OK)
        return st;
    *end = at + 8 + le32(word);
    if (*end > src->size)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: the skippable frame at offset "
                             "%llu (%u bytes) runs past the file's end (%llu bytes)",
                             (unsigned long long)at, le32(word), (unsigned long long)src->size);
    return SP_OK;
}

sp_status sp_frame_lz4_index(const sp_byte_source *src, sp_block_index *ix)
{
    uint64_t at = 0;
    while (at < src->size) {
        unsigned char word[4];
        sp_status st = sp_index_fetch(ix, src, at, word, 4, "an LZ4 frame's magic number");
        uint32_t magic = st == SP_OK ? le32(word) : 0;
        uint64_t end = at;
        if (st != SP_OK)
            return st;
        if (magic == LZ4_MAGIC)
            st = read_frame(ix, src, at, &end);
        else if ((magic & 0xFFFFFFF0u) == SKIPPABLE_FIRST)
            st = skip_frame(ix, src, at, &end);
        else if (magic == LZ4_LEGACY_MAGIC)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "offset %llu holds the legacy LZ4 "
                                 "format (lz4 -l), which is not read: recompress without -l",
                                 (unsigned long long)at);
        else
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "unknown magic number 0x%08x at offset "
                                 "%llu: not an LZ4 frame (%s)", magic, (unsigned long long)at,
                                 at ? "data after the last frame" : "the input is not LZ4");
        if (st != SP_OK)
            return st;
        at = end;
    }
    return SP_OK;
}
