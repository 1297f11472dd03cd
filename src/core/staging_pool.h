/* Host threads that copy between the user's pageable memory and pinned staging buffers.
 * One host thread reaches about 10 GB/s into pinned memory on our H200 host and 16 reach about
 * 36 GB/s (DESIGN.md section 6), so pageable pipelines need several. */
#ifndef SP_STAGING_POOL_H
#define SP_STAGING_POOL_H

#include <stddef.h>

#include "streampipe.h"

typedef struct sp_staging_pool sp_staging_pool;

/* threads counts the calling thread too: threads == 1 starts no worker. */
sp_status sp_staging_pool_create(unsigned threads, sp_staging_pool **out);
void sp_staging_pool_destroy(sp_staging_pool *pool);
unsigned sp_staging_pool_threads(const sp_staging_pool *pool);
/* memcpy split over the pool's threads; returns when all bytes are copied. One caller at a
 * time (each pipeline owns its pool and runs from one thread at a time). */
void sp_staging_pool_copy(sp_staging_pool *pool, void *dst, const void *src, size_t bytes);

/* Several independent copies at once, their pieces shared out over all threads: the input of
 * one chunk and the output of another are staged together rather than one after the other.
 * A copy with `fn` is a job instead: each piece [offset, offset + len) of its `bytes` is
 * handed to fn(arg, offset, len), in pieces that are multiples of `unit` bytes (a positional
 * source reading, or a sink writing, whole records on several threads at once). */
#define SP_MAX_COPIES 2
typedef sp_status (*sp_piece_fn)(void *arg, size_t offset, size_t len);
typedef struct sp_copy {
    void *dst;
    const void *src;
    size_t bytes;
    sp_piece_fn fn; /* NULL: memcpy from src to dst */
    void *arg;
    size_t unit;    /* fn's pieces are multiples of this (> 0) */
} sp_copy;
/* Returns SP_OK, or the first error a job's fn returned (every piece is still attempted). */
sp_status sp_staging_pool_copy_many(sp_staging_pool *pool, const sp_copy *copies, size_t n);
/* The default thread count for this machine: the online CPUs, at most 16. */
unsigned sp_staging_pool_default_threads(void);

#endif
