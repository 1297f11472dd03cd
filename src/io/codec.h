/* The decompressors behind the block index (codec.c: liblz4 and libzstd; codec_absent.c in a
 * build without them, refusing). A context is used by one thread at a time: the file source
 * keeps a pool of them, one per read in flight (file_source_compressed.c). */
#ifndef SP_IO_CODEC_H
#define SP_IO_CODEC_H

#include <stddef.h>

#include "io/block_index.h"

typedef struct sp_codec sp_codec;

/* SP_OK; SP_ERR_OUT_OF_MEMORY; SP_ERR_UNSUPPORTED in a build without the libraries, with
 * why set. */
sp_status sp_codec_create(sp_codec **out, char *why, size_t why_size);
void sp_codec_free(sp_codec *c);
/* Decodes one unit of the block index (LZ4 block, stored block, Zstandard frame) from its
 * compressed bytes at src into dst, which has room for `room` bytes; *made: what it wrote.
 * SP_ERR_UNSUPPORTED with why set (the decompressor's own words) when the data is corrupt,
 * or would not fit `room`. */
sp_status sp_codec_decode(sp_codec *c, const sp_block *b, const void *src, void *dst,
                          size_t room, size_t *made, char *why, size_t why_size);
/* How many bytes the Zstandard frame at src (n bytes) decodes to, found by decoding it into
 * scratch (a frame that declares no size). SP_ERR_UNSUPPORTED with why set when corrupt. */
sp_status sp_codec_measure(sp_codec *c, const void *src, size_t n, uint64_t *bytes, char *why,
                           size_t why_size);
/* A Zstandard stream decoded in order (a file of one frame): restart from its first byte. */
sp_status sp_codec_stream_restart(sp_codec *c, char *why, size_t why_size);
/* Feeds up to `in` bytes at src, writing up to `room` bytes at dst; *used and *made say how
 * many went each way, *frame_end whether a frame (its checksum checked) just ended.
 * SP_ERR_UNSUPPORTED with why set on corrupt data. */
sp_status sp_codec_stream(sp_codec *c, const void *src, size_t in, size_t *used, void *dst,
                          size_t room, size_t *made, int *frame_end, char *why,
                          size_t why_size);

#endif /* SP_IO_CODEC_H */
