/* The block index's table and its lookups (block_index.h); the formats' parsers fill it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/block_index.h"
#include "streampipe_io.h"

sp_status sp_index_fail(sp_block_index *ix, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ix->error, sizeof ix->error, fmt, ap);
    va_end(ap);
    return status;
}

sp_status sp_index_fetch(sp_block_index *ix, const sp_byte_source *src, uint64_t offset,
                         void *dst, size_t n, const char *what)
{
    if (offset > src->size || n > src->size - offset)
        return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "truncated: %s at offset %llu runs past "
                             "the file's end (%llu bytes)", what, (unsigned long long)offset,
                             (unsigned long long)src->size);
    int err = src->read(src->user, offset, dst, n);
    if (err != 0)
        return sp_index_fail(ix, SP_ERR_BACKEND, "reading %s at offset %llu: %s", what,
                             (unsigned long long)offset, strerror(err));
    return SP_OK;
}

/* Room for one more of `item` bytes in *items (count, capacity): 0 when there is none. */
static int grow(void **items, size_t count, size_t *cap, size_t item)
{
    if (count < *cap)
        return 1;
    size_t more = *cap ? *cap * 2 : 64, bytes;
    if (__builtin_mul_overflow(more, item, &bytes))
        return 0;
    void *bigger = realloc(*items, bytes);
    if (!bigger)
        return 0;
    *items = bigger;
    *cap = more;
    return 1;
}

sp_frame *sp_index_add_frame(sp_block_index *ix, uint64_t offset)
{
    if (!grow((void **)&ix->frames, ix->n_frames, &ix->cap_frames, sizeof *ix->frames)) {
        sp_index_fail(ix, SP_ERR_OUT_OF_MEMORY, "no memory for the frame table");
        return NULL;
    }
    sp_frame *f = &ix->frames[ix->n_frames++];
    memset(f, 0, sizeof *f);
    f->offset = offset;
    f->first_block = ix->n_blocks;
    return f;
}

sp_block *sp_index_add_block(sp_block_index *ix, uint8_t codec, uint64_t src_offset,
                             uint64_t src_bytes, uint64_t dst_bytes, int checksum)
{
    if (!grow((void **)&ix->blocks, ix->n_blocks, &ix->cap_blocks, sizeof *ix->blocks)) {
        sp_index_fail(ix, SP_ERR_OUT_OF_MEMORY, "no memory for the block table");
        return NULL;
    }
    sp_block *b = &ix->blocks[ix->n_blocks++];
    *b = (sp_block){.src_offset = src_offset, .src_bytes = src_bytes, .dst_bytes = dst_bytes,
                    .frame = (uint32_t)(ix->n_frames - 1), .codec = codec,
                    .checksum = (uint8_t)(checksum != 0)};
    ix->frames[ix->n_frames - 1].n_blocks++;
    uint64_t src_total = src_bytes + (codec != SP_BLOCK_ZSTD_FRAME && checksum ? 4 : 0);
    if (src_total > ix->max_src_bytes)
        ix->max_src_bytes = src_total;
    if (dst_bytes > ix->max_dst_bytes)
        ix->max_dst_bytes = dst_bytes;
    ix->block_checksums += checksum != 0;
    return b;
}

int sp_frame_format_of(const unsigned char *first, size_t n)
{
    if (n < 4)
        return SP_INPUT_FORMAT_RAW;
    uint32_t magic = (uint32_t)first[0] | (uint32_t)first[1] << 8 | (uint32_t)first[2] << 16 |
                     (uint32_t)first[3] << 24;
    return magic == 0x184D2204u   ? SP_INPUT_FORMAT_LZ4
           : magic == 0xFD2FB528u ? SP_INPUT_FORMAT_ZSTD
                                  : SP_INPUT_FORMAT_RAW;
}

sp_status sp_block_index_build(const sp_byte_source *src, int format, sp_block_index *ix)
{
    sp_block_index_free(ix);
    ix->format = format;
    ix->file_bytes = src->size;
    if (format == SP_INPUT_FORMAT_LZ4)
        return sp_frame_lz4_index(src, ix);
    if (format == SP_INPUT_FORMAT_ZSTD)
        return sp_frame_zstd_index(src, ix);
    return sp_index_fail(ix, SP_ERR_INVALID_ARGUMENT, "input format %d has no frames", format);
}

sp_status sp_block_index_lay_out(sp_block_index *ix)
{
    uint64_t at = 0;
    for (size_t i = 0; i < ix->n_blocks; i++) {
        sp_block *b = &ix->blocks[i];
        if (ix->frames[b->frame].last_size_unknown && i + 1 == ix->frames[b->frame].first_block +
                                                                 ix->frames[b->frame].n_blocks)
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the size of the last block of the "
                                 "frame at offset %llu is not known",
                                 (unsigned long long)ix->frames[b->frame].offset);
        b->dst_offset = at;
        if (__builtin_add_overflow(at, b->dst_bytes, &at))
            return sp_index_fail(ix, SP_ERR_UNSUPPORTED, "the decompressed size passes 2^64 "
                                 "bytes at the block at offset %llu",
                                 (unsigned long long)b->src_offset);
    }
    ix->total_bytes = at;
    return SP_OK;
}

size_t sp_block_index_find(const sp_block_index *ix, uint64_t at)
{
    size_t lo = 0, hi = ix->n_blocks; /* the last block whose start is <= at */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->blocks[mid].dst_offset <= at)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void sp_block_index_free(sp_block_index *ix)
{
    free(ix->blocks);
    free(ix->frames);
    memset(ix, 0, sizeof *ix);
}
