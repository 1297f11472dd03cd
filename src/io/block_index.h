/* The block index of a compressed input: a table of the units that can be decompressed on
 * their own, each with where its compressed bytes lie in the file and where its bytes go in
 * the decompressed stream. The frame parsers (frame_lz4.c, frame_zstd.c) build it at open from
 * the frame and block headers alone, validating every size against the file and against what
 * the frame declares; the file source (file_source_compressed.c) maps a range of records to
 * the blocks it overlaps. The table is what a batched GPU decompressor needs too (nvCOMP takes
 * arrays of compressed pointers and sizes and of decompressed sizes): a later ring stage can
 * copy the blocks' compressed bytes and hand it these columns unchanged.
 *
 * A unit is an LZ4 block (compressed or stored) or a whole Zstandard frame (libzstd checks a
 * frame's own checksum; a frame's blocks depend on each other, so the frame is the unit). */
#ifndef SP_IO_BLOCK_INDEX_H
#define SP_IO_BLOCK_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

typedef enum sp_block_codec {
    SP_BLOCK_LZ4 = 1,      /* an LZ4 block (LZ4_decompress_safe) */
    SP_BLOCK_STORED = 2,   /* an LZ4 block stored uncompressed: its bytes are the data */
    SP_BLOCK_ZSTD_FRAME = 3 /* a whole Zstandard frame (ZSTD_decompressDCtx) */
} sp_block_codec;

typedef struct sp_block {
    uint64_t src_offset; /* the compressed bytes' offset in the file */
    uint64_t src_bytes;  /* how many (an LZ4 block's checksum, after them, not counted) */
    uint64_t dst_offset; /* where its bytes start in the decompressed stream */
    uint64_t dst_bytes;  /* how many it decompresses to, exactly */
    uint32_t frame;      /* its frame, in the frame table */
    uint8_t codec;       /* sp_block_codec */
    uint8_t checksum;    /* LZ4: an XXH32 of the compressed bytes follows them (4 bytes);
                            zstd: the frame ends in a checksum that libzstd checks */
} sp_block;

typedef struct sp_frame {
    uint64_t offset;         /* the frame's magic number in the file */
    uint64_t first_block;    /* its blocks in the block table */
    uint64_t n_blocks;
    uint64_t block_bytes;    /* LZ4: the block size the frame declares (every block but the
                                last holds exactly this much: see frame_lz4.c) */
    int last_size_unknown;   /* LZ4 without a content size: the last block's size is only
                                known once it is decompressed (sp_block_index_lay_out) */
    int content_checksum;    /* LZ4: an XXH32 of the frame's content follows its end mark */
    uint32_t content_hash;   /* that checksum */
} sp_frame;

typedef struct sp_block_index {
    int format;               /* SP_INPUT_FORMAT_LZ4 or SP_INPUT_FORMAT_ZSTD */
    sp_block *blocks;
    size_t n_blocks, cap_blocks;
    sp_frame *frames;
    size_t n_frames, cap_frames;
    uint64_t file_bytes;      /* the compressed file's size */
    uint64_t total_bytes;     /* the decompressed stream's, once laid out */
    uint64_t max_src_bytes;   /* the largest unit, compressed (checksum included) */
    uint64_t max_dst_bytes;   /* and decompressed */
    size_t block_checksums;   /* units with a checksum of their own */
    size_t content_checksums; /* frames with a content checksum */
    uint64_t short_block_frame; /* a failed build: 1 + the LZ4 frame whose content size says a
                                   block before its last is short (which one only decoding
                                   tells: compressed_open.c names it); else 0 */
    char error[512];          /* why building it failed, naming the file offset */
} sp_block_index;

/* Where the parsers read the file from: the file itself (pread) or, for the fuzz target, a
 * buffer. read fills dst with n bytes at offset (within size) and returns 0, or an errno. */
typedef struct sp_byte_source {
    uint64_t size;
    int (*read)(void *user, uint64_t offset, void *dst, size_t n);
    void *user;
} sp_byte_source;

/* n bytes at offset into dst; SP_OK, or SP_ERR_UNSUPPORTED ("truncated": `what` at offset
 * runs past the file's end) or SP_ERR_BACKEND (the read failed) with ix->error set. */
sp_status sp_index_fetch(sp_block_index *ix, const sp_byte_source *src, uint64_t offset,
                         void *dst, size_t n, const char *what);
/* Sets ix->error (printf-style) and returns status. */
sp_status sp_index_fail(sp_block_index *ix, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Appends a frame (its blocks follow with sp_index_add_block); NULL: no memory (error set). */
sp_frame *sp_index_add_frame(sp_block_index *ix, uint64_t offset);
/* Appends a block to the last frame; NULL: no memory (error set). */
sp_block *sp_index_add_block(sp_block_index *ix, uint8_t codec, uint64_t src_offset,
                             uint64_t src_bytes, uint64_t dst_bytes, int checksum);

/* The frame parsers: the whole file as frames of their format (skippable frames skipped). */
sp_status sp_frame_lz4_index(const sp_byte_source *src, sp_block_index *ix);
sp_status sp_frame_zstd_index(const sp_byte_source *src, sp_block_index *ix);
/* The format the file's first four bytes name: SP_INPUT_FORMAT_LZ4 or _ZSTD, else _RAW
 * (fewer than four bytes, or any other magic). */
int sp_frame_format_of(const unsigned char *first, size_t n);
/* Parses the file as `format` into ix (which it clears first). */
sp_status sp_block_index_build(const sp_byte_source *src, int format, sp_block_index *ix);
/* Gives each block its place in the decompressed stream (after every unknown last-block size
 * has been found) and sets total_bytes; SP_ERR_UNSUPPORTED when a size is still unknown or the
 * total overflows. */
sp_status sp_block_index_lay_out(sp_block_index *ix);
/* The block that holds decompressed byte `at` (< total_bytes). */
size_t sp_block_index_find(const sp_block_index *ix, uint64_t at);
void sp_block_index_free(sp_block_index *ix);

#endif /* SP_IO_BLOCK_INDEX_H */
