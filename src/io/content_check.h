/* LZ4 content checksums, checked while the staging threads decode blocks out of order.
 * XXH32 hashes in order only, so each frame keeps a cursor: the thread that decoded the
 * block at the cursor hashes it and every block queued behind it; a block decoded ahead of
 * the cursor is copied into the queue (at most SP_CONTENT_QUEUE_MAX bytes per frame; past
 * that the frame's checksum is given up, and counted as not checked). Nothing ever waits,
 * so no order of the engine's reads can deadlock. Only frames that the run's range covers
 * whole are checked; sp_content_checks_reset starts over for a new range. */
#ifndef SP_IO_CONTENT_CHECK_H
#define SP_IO_CONTENT_CHECK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "io/block_index.h"
#include "io/xxh32.h"

#define SP_CONTENT_QUEUE_MAX ((size_t)64 << 20)

typedef struct sp_queued_block sp_queued_block;

typedef struct sp_content_check {
    pthread_mutex_t lock;
    int active;               /* the range covers the frame whole: check it */
    int done, gave_up;
    uint64_t next;            /* the frame's blocks hashed so far */
    sp_xxh32_state hash;
    sp_queued_block *queue;   /* blocks decoded ahead of the cursor */
    size_t queued_bytes;
} sp_content_check;

typedef struct sp_content_checks {
    sp_content_check *frames; /* one per frame of the index (NULL: none has a checksum) */
    size_t n;
} sp_content_checks;

sp_status sp_content_checks_make(sp_content_checks *c, const sp_block_index *ix);
/* Forgets what was hashed; checks the frames that lie whole inside [begin, end) of the
 * decompressed stream. */
void sp_content_checks_reset(sp_content_checks *c, const sp_block_index *ix, uint64_t begin,
                             uint64_t end);
/* Block `block`, decoded whole into `data`: hashed, or queued. SP_ERR_UNSUPPORTED with why
 * set when it completes a frame whose checksum does not match; *checked is 1 when it completed
 * one that does. */
sp_status sp_content_offer(sp_content_checks *c, const sp_block_index *ix, size_t block,
                           const void *data, int *checked, char *why, size_t why_size);
void sp_content_checks_free(sp_content_checks *c);

#endif /* SP_IO_CONTENT_CHECK_H */
