/* The simulated power cut of the tests (config.test_power_cut, file_journal.h). What a real
 * cut leaves: what was flushed (fdatasync returned) is there; what was written since may be
 * there, gone, or garbage. The cut comes once test_power_cut_at bytes of output were written
 * (counted in the order the writes come): that write puts its share and fails, the writes
 * after it are dropped, and the power goes at the next flush, while it is under way (the
 * moment that tells a right fsync order from a wrong one; a run that fails makes one as its
 * handle closes). Every byte written since the last flush that completed is then overwritten
 * with 0xA5 and nothing more is written or flushed: a journal that claimed any of those bytes
 * would give a resumed output that differs. Writes go through the cut one at a time (it is
 * for tests; speed does not matter). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "io/file_journal.h"

#define POISON 0xA5

void sp_power_cut_init(sp_power_cut *c, int armed, unsigned long long at)
{
    memset(c, 0, sizeof *c);
    c->armed = armed;
    c->at = at;
    atomic_init(&c->fired, 0);
    pthread_mutex_init(&c->lock, NULL);
}

void sp_power_cut_free(sp_power_cut *c)
{
    sp_range_set_free(&c->unsynced);
    sp_range_set_free(&c->syncing);
    pthread_mutex_destroy(&c->lock);
}

static int write_at(int fd, const void *src, size_t n, off_t at)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = pwrite(fd, (const char *)src + put, n - put, at + (off_t)put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w == 0 ? ENOSPC : errno;
        put += (size_t)w;
    }
    return 0;
}

static void poison(int fd, const sp_range_set *s)
{
    unsigned char block[4096];
    memset(block, POISON, sizeof block);
    for (size_t i = 0; i < s->n; i++)
        for (size_t at = s->r[i].first; at < s->r[i].end; at += sizeof block) {
            size_t n = s->r[i].end - at < sizeof block ? s->r[i].end - at : sizeof block;
            (void)write_at(fd, block, n, (off_t)at);
        }
}

int sp_power_cut_pwrite(sp_power_cut *c, int fd, const void *src, size_t n, off_t at)
{
    pthread_mutex_lock(&c->lock);
    int err = c->pending || atomic_load(&c->fired) ? -1 : 0;
    size_t keep = n, start = (size_t)at;
    if (!err && c->written + n >= c->at)
        keep = (size_t)(c->at - c->written);
    if (!err && keep)
        err = write_at(fd, src, keep, at);
    if (!err && !sp_range_set_add(&c->unsynced, start, start + keep))
        err = ENOMEM;
    c->written += keep;
    if (!err && keep < n) { /* the cut: the power goes at the next flush */
        c->pending = 1;
        err = -1;
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

void sp_power_cut_flush_begin(sp_power_cut *c, int fd)
{
    if (!c->armed)
        return;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->unsynced.n; i++)
        (void)sp_range_set_add(&c->syncing, c->unsynced.r[i].first, c->unsynced.r[i].end);
    c->unsynced.n = 0;
    if (c->pending && !atomic_load(&c->fired)) { /* the power goes during this flush */
        poison(fd, &c->syncing);
        atomic_store(&c->fired, 1);
    }
    pthread_mutex_unlock(&c->lock);
}

int sp_power_cut_flush_end(sp_power_cut *c)
{
    if (!c->armed)
        return 1;
    pthread_mutex_lock(&c->lock);
    int flushed = !atomic_load(&c->fired);
    if (flushed)
        c->syncing.n = 0;
    pthread_mutex_unlock(&c->lock);
    return flushed;
}
