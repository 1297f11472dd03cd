/* The decompressors (codec.h) over liblz4 and libzstd. */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "io/codec.h"

struct sp_codec {
    ZSTD_DCtx *frames;   /* one frame at a time, in one call */
    ZSTD_DStream *stream; /* a single-frame file, in order; made when first used */
};

sp_status sp_codec_create(sp_codec **out, char *why, size_t why_size)
{
    sp_codec *c = calloc(1, sizeof *c);
    *out = c;
    if (c && (c->frames = ZSTD_createDCtx()) != NULL)
        return SP_OK;
    snprintf(why, why_size, "no memory for a decompression context");
    return SP_ERR_OUT_OF_MEMORY;
}

void sp_codec_free(sp_codec *c)
{
    if (!c)
        return;
    ZSTD_freeDCtx(c->frames);
    ZSTD_freeDStream(c->stream);
    free(c);
}

static sp_status decode_lz4(const sp_block *b, const void *src, void *dst, size_t room,
                            size_t *made, char *why, size_t why_size)
{
    if (b->src_bytes > (uint64_t)LZ4_MAX_INPUT_SIZE || room > (size_t)LZ4_MAX_INPUT_SIZE) {
        snprintf(why, why_size, "a block larger than LZ4 allows");
        return SP_ERR_UNSUPPORTED;
    }
    int n = LZ4_decompress_safe(src, dst, (int)b->src_bytes, (int)room);
    if (n < 0) {
        snprintf(why, why_size, "LZ4 finds it corrupt, or it expands past its %zu bytes "
                 "(LZ4_decompress_safe returned %d)", room, n);
        return SP_ERR_UNSUPPORTED;
    }
    *made = (size_t)n;
    return SP_OK;
}

sp_status sp_codec_decode(sp_codec *c, const sp_block *b, const void *src, void *dst,
                          size_t room, size_t *made, char *why, size_t why_size)
{
    if (b->codec == SP_BLOCK_LZ4)
        return decode_lz4(b, src, dst, room, made, why, why_size);
    if (b->codec == SP_BLOCK_STORED) {
        *made = b->src_bytes < room ? (size_t)b->src_bytes : room;
        memcpy(dst, src, *made);
        return SP_OK;
    }
    size_t n = ZSTD_decompressDCtx(c->frames, dst, room, src, (size_t)b->src_bytes);
    if (ZSTD_isError(n)) {
        snprintf(why, why_size, "libzstd: %s", ZSTD_getErrorName(n));
        return SP_ERR_UNSUPPORTED;
    }
    *made = n;
    return SP_OK;
}

sp_status sp_codec_stream_restart(sp_codec *c, char *why, size_t why_size)
{
    if (!c->stream && (c->stream = ZSTD_createDStream()) == NULL) {
        snprintf(why, why_size, "no memory for a decompression stream");
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t rc = ZSTD_DCtx_reset(c->stream, ZSTD_reset_session_only);
    if (ZSTD_isError(rc)) {
        snprintf(why, why_size, "libzstd: %s", ZSTD_getErrorName(rc));
        return SP_ERR_BACKEND;
    }
    return SP_OK;
}

sp_status sp_codec_stream(sp_codec *c, const void *src, size_t in, size_t *used, void *dst,
                          size_t room, size_t *made, int *frame_end, char *why,
                          size_t why_size)
{
    ZSTD_inBuffer input = {src, in, 0};
    ZSTD_outBuffer output = {dst, room, 0};
    size_t rc = ZSTD_decompressStream(c->stream, &output, &input);
    *used = input.pos;
    *made = output.pos;
    *frame_end = rc == 0;
    if (ZSTD_isError(rc)) {
        snprintf(why, why_size, "libzstd: %s", ZSTD_getErrorName(rc));
        return SP_ERR_UNSUPPORTED;
    }
    return SP_OK;
}

sp_status sp_codec_measure(sp_codec *c, const void *src, size_t n, uint64_t *bytes, char *why,
                           size_t why_size)
{
    static _Thread_local unsigned char scratch[1 << 17]; /* ZSTD_BLOCKSIZE_MAX: no more per step */
    sp_status st = sp_codec_stream_restart(c, why, why_size);
    ZSTD_inBuffer input = {src, n, 0};
    size_t rc = 1;
    *bytes = 0;
    while (st == SP_OK && rc != 0) {
        ZSTD_outBuffer output = {scratch, sizeof scratch, 0};
        rc = ZSTD_decompressStream(c->stream, &output, &input);
        if (ZSTD_isError(rc)) {
            snprintf(why, why_size, "libzstd: %s", ZSTD_getErrorName(rc));
            return SP_ERR_UNSUPPORTED;
        }
        *bytes += output.pos;
        if (rc != 0 && input.pos == input.size && output.pos < output.size) {
            snprintf(why, why_size, "truncated: the frame ends before its last block");
            return SP_ERR_UNSUPPORTED;
        }
    }
    return st;
}
