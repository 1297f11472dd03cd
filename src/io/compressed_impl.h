/* The compressed input's state, shared by compressed_open.c (open, close, the figures) and
 * file_source_compressed.c (the reads). The open writes everything but the pool, the stream
 * and the counters, which the reads own. */
#ifndef SP_IO_COMPRESSED_IMPL_H
#define SP_IO_COMPRESSED_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/block_source.h"
#include "io/block_index.h"
#include "io/codec.h"
#include "io/compressed.h"
#include "io/content_check.h"

/* A decompression context with its buffers, used by one read at a time. `block` keeps the
 * last unit it decoded whole, so that the next read that wants the rest of a unit cut by a
 * piece's boundary copies it instead of decoding it again. */
typedef struct sp_decoder {
    sp_codec *codec;
    unsigned char *src;       /* max_src_bytes: one unit's compressed bytes */
    unsigned char *block;     /* max_dst_bytes: one unit decoded (sequential: scratch) */
    size_t cached;            /* the unit in `block`, or SIZE_MAX */
    struct sp_decoder *next_free, *next_made;
} sp_decoder;

/* A single-frame file read in order: where the decoder stands in the file and the stream. */
typedef struct sp_stream_state {
    sp_decoder *decoder;
    uint64_t file_at;         /* compressed bytes fed so far */
    uint64_t stream_at;       /* decompressed bytes produced so far */
    unsigned char *in;        /* compressed bytes read ahead */
    size_t in_len, in_pos;
    int frame_end;            /* the last step ended a frame */
} sp_stream_state;

#define SP_STREAM_IN_BYTES ((size_t)1 << 20)
/* Frames larger than this are read in order rather than held whole per thread. */
#define SP_FRAME_HELD_MAX ((uint64_t)64 << 20)

struct sp_compressed {
    sp_block_index ix;
    int fd;
    const char *path;         /* the handle's, for messages */
    int sequential;
    sp_content_checks checks;
    char note[192];
    size_t sized_at_open;     /* units whose size the headers left open, decoded at open */
    pthread_mutex_t pool_lock;
    sp_decoder *free_decoders, *made_decoders;
    sp_stream_state stream;
    atomic_uint_least64_t bytes_read, bytes_decompressed, blocks_decompressed, blocks_reused,
        content_checked, decompress_ns;
    /* decompression in the ring (file_blocks.c): the last run's figures and note */
    sp_ring_figures ring;
    char run_note[192];
};

/* A context from the pool (or a new one), preferring the one that holds `unit`; NULL with
 * why set when none can be made. */
sp_decoder *sp_decoder_take(sp_compressed *z, size_t unit, char *why, size_t why_size);
void sp_decoder_give(sp_compressed *z, sp_decoder *d);
void sp_decoder_free(sp_decoder *d);
/* Frees every context (none may be taken). */
void sp_decoders_drop(sp_compressed *z);
/* Unit `unit` decoded whole into out (its dst_bytes), its block checksum checked and its
 * content offered to the content check. sized: NULL, it must make exactly dst_bytes; else
 * it may make 1 to dst_bytes, *sized says how many, and nothing is offered (an LZ4 frame's
 * last block at open, whose size is not declared). SP_OK, or a status with why set. */
sp_status sp_decode_unit(sp_compressed *z, sp_decoder *d, size_t unit, void *out,
                         size_t *sized, char *why, size_t why_size);

/* n bytes at offset of fd into dst, through short reads and EINTR: 0, or an errno value
 * (EIO: the file ended first). */
int sp_compressed_read_at(int fd, void *dst, size_t n, uint64_t offset);

#endif /* SP_IO_COMPRESSED_IMPL_H */
