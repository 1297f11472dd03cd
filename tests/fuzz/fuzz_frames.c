/* The fuzz target for the compressed-input frame parsers (src/io/frame_lz4.c, frame_zstd.c):
 * any bytes, read as LZ4 and as Zstandard, must give a block index whose every unit lies
 * inside the file and within its format's limits, or a rejection with a message; nothing may
 * crash, leak or read out of bounds. Also XXH32 fed in two pieces equals XXH32 of the whole.
 * Built with libFuzzer (-DSP_FUZZ=ON, run.sh) and, with replay.c's main(), as a plain program
 * that ctest runs over the committed seeds (frames/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/block_index.h"
#include "io/xxh32.h"
#include "streampipe_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct bytes {
    const uint8_t *data;
    size_t size;
} bytes;

static int read_bytes(void *user, uint64_t offset, void *dst, size_t n)
{
    const bytes *b = user;
    if (offset > b->size || n > b->size - offset)
        abort(); /* the parsers must check against the size before reading */
    memcpy(dst, b->data + offset, n);
    return 0;
}

/* Every unit inside the file, of a size its format allows, laid out without gaps. */
static int index_is_sound(const sp_block_index *ix, size_t size)
{
    uint64_t at = 0;
    for (size_t i = 0; i < ix->n_blocks; i++) {
        const sp_block *b = &ix->blocks[i];
        uint64_t tail = b->checksum && b->codec != SP_BLOCK_ZSTD_FRAME ? 4 : 0;
        if (b->src_offset > size || b->src_bytes + tail > size - b->src_offset)
            return 0;
        if (b->codec != SP_BLOCK_ZSTD_FRAME && (b->dst_bytes > (4u << 20) || b->src_bytes == 0))
            return 0;
        if (b->frame >= ix->n_frames || b->dst_offset != at)
            return 0;
        at += b->dst_bytes;
    }
    return at == ix->total_bytes;
}

static void parse_as(int format, const uint8_t *data, size_t size)
{
    bytes b = {data, size};
    sp_byte_source src = {.size = size, .read = read_bytes, .user = &b};
    sp_block_index ix;
    memset(&ix, 0, sizeof ix);
    sp_status st = sp_block_index_build(&src, format, &ix);
    if (st == SP_OK) {
        /* sizes only a decode finds (no decoder here): taken as their bounds */
        for (size_t i = 0; i < ix.n_frames; i++)
            ix.frames[i].last_size_unknown = 0;
        if (sp_block_index_lay_out(&ix) == SP_OK && !index_is_sound(&ix, size))
            abort();
    } else if (ix.error[0] == '\0' || (st != SP_ERR_UNSUPPORTED && st != SP_ERR_OUT_OF_MEMORY)) {
        abort(); /* a rejection says why, with a documented status */
    }
    sp_block_index_free(&ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_as(SP_INPUT_FORMAT_LZ4, data, size);
    parse_as(SP_INPUT_FORMAT_ZSTD, data, size);
    size_t cut = size ? data[0] % (size + 1) : 0;
    sp_xxh32_state h;
    sp_xxh32_begin(&h, 7);
    sp_xxh32_add(&h, data, cut);
    sp_xxh32_add(&h, data + cut, size - cut);
    if (sp_xxh32_end(&h) != sp_xxh32(data, size, 7))
        abort();
    return 0;
}
