/* The compressors (encode.h) over liblz4 and libzstd. */
#include <lz4.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>

#include "io/encode.h"
#include "io/xxh32.h"

#define LZ4_STORED_BIT 0x80000000u /* a block's size word: its data is not compressed */

sp_status sp_encode_available(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    return SP_OK;
}

size_t sp_encode_bound(int format, size_t bytes)
{
    if (format == SP_INPUT_FORMAT_ZSTD)
        return ZSTD_compressBound(bytes);
    /* a stored block is never larger; the frame: header, end mark, content checksum */
    size_t blocks = bytes / SP_ENCODE_LZ4_BLOCK + 1, most;
    if (__builtin_mul_overflow(blocks, (size_t)8, &most) ||
        __builtin_add_overflow(most, bytes, &most) ||
        __builtin_add_overflow(most, (size_t)SP_ENCODE_LZ4_FRAMING, &most))
        return 0;
    return most;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

/* One block: compressed into dst + 4 when that makes it smaller, else stored. The checksum
 * covers the block's data as written (the frame format's B.Checksum). */
static size_t lz4_block(const char *src, size_t n, unsigned char *dst, int *stored)
{
    int made = LZ4_compress_default(src, (char *)dst + 4, (int)n, (int)n - 1);
    *stored = made <= 0; /* 0: it would not fit in n - 1 bytes, so it does not shrink */
    size_t data = *stored ? n : (size_t)made;
    if (*stored)
        memcpy(dst + 4, src, n);
    put_le32(dst, (uint32_t)data | (*stored ? LZ4_STORED_BIT : 0));
    put_le32(dst + 4 + data, sp_xxh32(dst + 4, data, 0));
    return 8 + data;
}

/* The frame's header: version 01, independent blocks, block checksums, the content size,
 * the content checksum, 4 MiB blocks, the header checksum (lz4_Frame_format.md). */
static size_t lz4_header(unsigned char *h, uint64_t content_bytes)
{
    static const unsigned char magic[4] = {0x04, 0x22, 0x4D, 0x18};
    size_t n = 4;
    memcpy(h, magic, 4);
    h[n++] = 0x40 | 0x20 | 0x10 | 0x08 | 0x04; /* version 01, B.Indep, B.Checksum, C.Size,
                                                   C.Checksum */
    h[n++] = 7 << 4; /* block maximum size 4 MiB (SP_ENCODE_LZ4_BLOCK) */
    for (int i = 0; i < 8; i++)
        h[n++] = (unsigned char)(content_bytes >> (8 * i));
    h[n] = (unsigned char)(sp_xxh32(h + 4, n - 4, 0) >> 8);
    return n + 1;
}

/* One whole frame of the piece: the header, its blocks (all of SP_ENCODE_LZ4_BLOCK but the
 * last, as lz4 writes them, so that the file source reads the file back), the end mark and
 * the XXH32 of the piece's bytes (C.Checksum). */
static sp_status encode_lz4(const char *src, size_t bytes, unsigned char *dst, sp_encoded *out)
{
    out->bytes = lz4_header(dst, bytes);
    for (size_t at = 0; at < bytes; at += SP_ENCODE_LZ4_BLOCK) {
        size_t n = bytes - at < SP_ENCODE_LZ4_BLOCK ? bytes - at : SP_ENCODE_LZ4_BLOCK;
        int stored;
        out->bytes += lz4_block(src + at, n, dst + out->bytes, &stored);
        out->blocks++;
        out->stored += (uint64_t)stored;
    }
    put_le32(dst + out->bytes, 0); /* the end mark */
    put_le32(dst + out->bytes + 4, sp_xxh32(src, bytes, 0));
    out->bytes += 8;
    out->frames = 1;
    return SP_OK;
}

/* One frame of the piece: its content size (ZSTD_compress2 writes it, knowing the size) and
 * its checksum, at zstd's default level. A context per call: pieces are megabytes, and a
 * context kept per thread would outlive the handle. */
static sp_status encode_zstd(const void *src, size_t bytes, void *dst, size_t room,
                             sp_encoded *out, char *why, size_t why_size)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx) {
        snprintf(why, why_size, "no memory for a Zstandard compression context");
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t made = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    if (!ZSTD_isError(made))
        made = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    if (!ZSTD_isError(made))
        made = ZSTD_compress2(cctx, dst, room, src, bytes);
    ZSTD_freeCCtx(cctx);
    if (ZSTD_isError(made)) {
        snprintf(why, why_size, "Zstandard refused to compress %zu bytes: %s", bytes,
                 ZSTD_getErrorName(made));
        return SP_ERR_UNSUPPORTED;
    }
    out->bytes = made;
    out->blocks = out->frames = 1;
    return SP_OK;
}

sp_status sp_encode_piece(int format, const void *src, size_t bytes, void *dst, size_t room,
                          sp_encoded *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (room < sp_encode_bound(format, bytes)) {
        snprintf(why, why_size, "no room to compress %zu bytes", bytes);
        return SP_ERR_UNSUPPORTED;
    }
    if (format == SP_INPUT_FORMAT_ZSTD)
        return encode_zstd(src, bytes, dst, room, out, why, why_size);
    return encode_lz4(src, bytes, dst, out);
}
