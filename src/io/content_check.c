/* LZ4 content checksums over blocks decoded out of order (content_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/content_check.h"

struct sp_queued_block {
    sp_queued_block *next;
    uint64_t block;           /* its number within the frame */
    size_t bytes;
    unsigned char data[];
};

sp_status sp_content_checks_make(sp_content_checks *c, const sp_block_index *ix)
{
    memset(c, 0, sizeof *c);
    if (ix->content_checksums == 0)
        return SP_OK;
    c->frames = calloc(ix->n_frames, sizeof *c->frames);
    if (!c->frames)
        return SP_ERR_OUT_OF_MEMORY;
    c->n = ix->n_frames;
    for (size_t i = 0; i < c->n; i++)
        pthread_mutex_init(&c->frames[i].lock, NULL);
    return SP_OK;
}

static void drop_queue(sp_content_check *k)
{
    while (k->queue) {
        sp_queued_block *q = k->queue;
        k->queue = q->next;
        free(q);
    }
    k->queued_bytes = 0;
}

void sp_content_checks_reset(sp_content_checks *c, const sp_block_index *ix, uint64_t begin,
                             uint64_t end)
{
    for (size_t i = 0; i < c->n; i++) {
        const sp_frame *f = &ix->frames[i];
        sp_content_check *k = &c->frames[i];
        drop_queue(k);
        k->done = k->gave_up = 0;
        k->next = 0;
        sp_xxh32_begin(&k->hash, 0);
        k->active = 0;
        if (f->content_checksum && f->n_blocks > 0) {
            const sp_block *first = &ix->blocks[f->first_block];
            const sp_block *last = first + f->n_blocks - 1;
            k->active = first->dst_offset >= begin && last->dst_offset + last->dst_bytes <= end;
        }
    }
}

/* The cursor's block hashed, then those queued behind it, in order. */
static void hash_in_order(sp_content_check *k, const void *data, size_t bytes)
{
    sp_xxh32_add(&k->hash, data, bytes);
    k->next++;
    for (sp_queued_block **q = &k->queue; *q;) {
        if ((*q)->block != k->next) {
            q = &(*q)->next;
            continue;
        }
        sp_queued_block *hit = *q;
        *q = hit->next;
        sp_xxh32_add(&k->hash, hit->data, hit->bytes);
        k->queued_bytes -= hit->bytes;
        k->next++;
        free(hit);
        q = &k->queue; /* the next one may be anywhere in the queue */
    }
}

/* A copy of a block decoded ahead of the cursor; past the bound, the frame is given up. */
static void enqueue(sp_content_check *k, uint64_t block, const void *data, size_t bytes)
{
    for (sp_queued_block *q = k->queue; q; q = q->next)
        if (q->block == block)
            return; /* another thread decoded it too (a block cut by a piece's boundary) */
    sp_queued_block *q = k->queued_bytes + bytes <= SP_CONTENT_QUEUE_MAX
                             ? malloc(sizeof *q + bytes)
                             : NULL;
    if (!q) {
        drop_queue(k);
        k->gave_up = 1;
        return;
    }
    q->block = block;
    q->bytes = bytes;
    memcpy(q->data, data, bytes);
    q->next = k->queue;
    k->queue = q;
    k->queued_bytes += bytes;
}

sp_status sp_content_offer(sp_content_checks *c, const sp_block_index *ix, size_t block,
                           const void *data, int *checked, char *why, size_t why_size)
{
    const sp_block *b = &ix->blocks[block];
    const sp_frame *f = &ix->frames[b->frame];
    sp_content_check *k = c->frames ? &c->frames[b->frame] : NULL;
    sp_status st = SP_OK;
    *checked = 0;
    if (!k || !k->active)
        return SP_OK;
    uint64_t in_frame = block - f->first_block;
    pthread_mutex_lock(&k->lock);
    if (!k->done && !k->gave_up && in_frame == k->next)
        hash_in_order(k, data, (size_t)b->dst_bytes);
    else if (!k->done && !k->gave_up && in_frame > k->next)
        enqueue(k, in_frame, data, (size_t)b->dst_bytes);
    if (!k->done && !k->gave_up && k->next == f->n_blocks) {
        k->done = 1;
        uint32_t got = sp_xxh32_end(&k->hash);
        *checked = got == f->content_hash;
        if (!*checked) {
            snprintf(why, why_size, "the content checksum of the LZ4 frame at offset %llu does "
                     "not match (0x%08x stored, 0x%08x decoded): corrupt",
                     (unsigned long long)f->offset, f->content_hash, got);
            st = SP_ERR_UNSUPPORTED;
        }
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}

void sp_content_checks_free(sp_content_checks *c)
{
    for (size_t i = 0; i < c->n; i++) {
        drop_queue(&c->frames[i]);
        pthread_mutex_destroy(&c->frames[i].lock);
    }
    free(c->frames);
    memset(c, 0, sizeof *c);
}
