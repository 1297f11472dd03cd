/* The compressors behind a compressed output (encode.c: liblz4 and libzstd; encode_absent.c in
 * a build without them, refusing). Each call compresses one piece of the output on the staging
 * thread that writes it, with no state shared between calls, so pieces of several chunks are
 * compressed at once; file_sink_compressed.c puts them in order. */
#ifndef SP_IO_ENCODE_H
#define SP_IO_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_io.h" /* sp_input_format */

/* The LZ4 frame's block size (BD 7: 4 MiB, lz4's largest): a piece is cut into blocks of it. */
#define SP_ENCODE_LZ4_BLOCK ((size_t)4 << 20)
/* An LZ4 frame's bytes besides its blocks: magic, FLG, BD, content size, header checksum (15),
 * end mark (4), content checksum (4). */
#define SP_ENCODE_LZ4_FRAMING 23

/* What a piece's encoding holds, for the report. */
typedef struct sp_encoded {
    size_t bytes;      /* written to dst */
    uint64_t frames;   /* 1: a piece is one frame in either format */
    uint64_t blocks;   /* LZ4 blocks, or 1 Zstandard frame */
    uint64_t stored;   /* LZ4 blocks kept uncompressed (they did not shrink) */
} sp_encoded;

/* SP_OK when this build can compress, else SP_ERR_UNSUPPORTED with why set. */
sp_status sp_encode_available(char *why, size_t why_size);
/* The most bytes sp_encode_piece may write for `bytes` of input (0: too large). */
size_t sp_encode_bound(int format, size_t bytes);
/* `bytes` at src encoded into dst (room bytes, at least the bound) as one whole frame, so that
 * the pieces appended in order make a file of concatenated frames: for SP_INPUT_FORMAT_LZ4,
 * its header with the content size, independent blocks of SP_ENCODE_LZ4_BLOCK (the last may
 * be short; each: its size word, its data, its XXH32 block checksum; a block that does not
 * shrink stored as it is, as the frame format allows), the end mark and the XXH32 content
 * checksum of the piece; for SP_INPUT_FORMAT_ZSTD, its content size and checksum.
 * SP_ERR_UNSUPPORTED with why set when the compressor refuses. */
sp_status sp_encode_piece(int format, const void *src, size_t bytes, void *dst, size_t room,
                          sp_encoded *out, char *why, size_t why_size);

#endif /* SP_IO_ENCODE_H */
