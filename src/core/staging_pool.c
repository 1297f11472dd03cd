/* A fixed pool of workers that split one memcpy at a time into pieces. The caller takes
 * pieces too, so a pool of T threads has T-1 workers. The copy itself is here too
 * (sp_copy_nontemporal, public for sources and sinks): the pool is its owner, and a chunk's
 * staging then enters one file for it, not two (issue 22).
 *
 * Threads hand work over through atomics and spin for a while before they sleep: a pageable
 * run stages a chunk every few hundred microseconds, and waking 15 sleeping workers through a
 * condition variable (each then queueing for its mutex) started the last of them tens of
 * microseconds late on every turn, which an OpenMP ring (whose threads spin between parallel
 * regions) does not pay (issue 17, bench/PERF.md).
 *
 * The protocol. `generation` is odd while the caller writes a plan and even once it is
 * published. A worker that sees a new even generation announces itself in `active`, then
 * checks the generation again and backs out if it changed; the caller makes the generation
 * odd before it waits for `active` to reach 0, and both sides use sequentially consistent
 * atomics, so either the caller waits for the worker or the worker sees the odd generation:
 * no worker ever reads a plan being written. A piece is counted in `pieces_done` after it is
 * copied, so the copy is finished when every piece is counted. Sleepers register under the
 * lock before their last look at the generation, and the caller broadcasts under the lock
 * when it sees one, so no wake-up is lost (the same pattern guards the caller's sleep). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/clock.h"
#include "core/staging_pool.h"

/* Below this a single memcpy beats waking workers. */
#define SP_PARALLEL_COPY_MIN (512u * 1024u)
/* Pieces are multiples of this, so each thread's destination starts on a cache line. */
#define SP_PIECE_ALIGN 4096u
/* How long a thread spins for the next copy, or for the copy's last piece, before it sleeps.
 * Longer than the host's gap between two turns of a pageable run (waiting for a slot, then
 * enqueueing a chunk: tens of microseconds); 0 sleeps at once (the A/B baseline). */
#ifndef SP_STAGING_SPIN_US
#define SP_STAGING_SPIN_US 200
#endif

struct sp_staging_pool {
    unsigned threads;
    pthread_t *workers;
    pthread_mutex_t lock; /* only for sleeping and waking */
    pthread_cond_t work_ready;
    pthread_cond_t work_done;
    atomic_ulong generation; /* odd: a plan is being written; even: published */
    atomic_int stopping;
    atomic_uint sleepers;       /* workers asleep on work_ready (changed under lock) */
    atomic_int caller_sleeping; /* the caller asleep on work_done (changed under lock) */
    atomic_uint active;         /* workers that may be reading the plan */

    /* the plan: the copies in progress, cut into pieces numbered across all of them */
    sp_copy copies[SP_MAX_COPIES];
    size_t first_piece[SP_MAX_COPIES + 1]; /* copy c owns pieces [first_piece[c], [c+1]) */
    size_t piece[SP_MAX_COPIES];           /* bytes per piece of copy c */
    size_t pieces;
    atomic_size_t next_piece;
    atomic_size_t pieces_done;
    atomic_int job_status; /* the first error of a job's fn in this copy */
};

static void cpu_relax(void)
{
#if defined(__SSE2__)
    _mm_pause();
#else
    sched_yield();
#endif
}

/* Spins while done(pool, arg) is false, at most SP_STAGING_SPIN_US; its last answer. */
static int spin_until(const sp_staging_pool *pool, int (*done)(const sp_staging_pool *, unsigned long),
                      unsigned long arg)
{
    if (done(pool, arg))
        return 1;
    if (SP_STAGING_SPIN_US == 0)
        return 0;
    double give_up = sp_now() + SP_STAGING_SPIN_US * 1e-6;
    for (unsigned k = 1;; k++) {
        cpu_relax();
        if (done(pool, arg))
            return 1;
        if (k % 64 == 0 && sp_now() > give_up)
            return 0;
    }
}

/* A published plan other than `seen`, or the pool stopping. */
static int new_work(const sp_staging_pool *pool, unsigned long seen)
{
    unsigned long g = atomic_load(&pool->generation);
    return atomic_load(&pool->stopping) || (g != seen && g % 2 == 0);
}

static int all_pieces_done(const sp_staging_pool *pool, unsigned long unused)
{
    (void)unused;
    return atomic_load(&pool->pieces_done) == pool->pieces;
}

/* ---- the copy: sp_copy_nontemporal (streampipe.h), the pool's, and sources' and sinks' ---- */

#if defined(__SSE2__) && !defined(SP_STAGING_PLAIN_MEMCPY)

/* Below this a plain memcpy is as fast and keeps the data in cache for whoever reads it. */
#define SP_NONTEMPORAL_MIN (64u * 1024u)

void sp_copy_nontemporal(void *dst, const void *src, size_t bytes)
{
    if (bytes < SP_NONTEMPORAL_MIN) {
        if (bytes > 0)
            memcpy(dst, src, bytes);
        return;
    }
    char *d = dst;
    const char *s = src;
    size_t head = (16u - ((uintptr_t)d & 15u)) & 15u; /* streaming stores need 16-byte aligned */
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    size_t lines = bytes / 64u;
    for (size_t i = 0; i < lines; i++, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
    memcpy(d, s, bytes % 64u);
    _mm_sfence(); /* streaming stores are weakly ordered: make them visible before returning */
}

#else

void sp_copy_nontemporal(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

#endif

/* ---- the pool ------------------------------------------------------------------------ */

static void run_piece(sp_staging_pool *pool, const sp_copy *copy, size_t off, size_t len)
{
    if (!copy->fn) {
        sp_copy_nontemporal((char *)copy->dst + off, (const char *)copy->src + off, len);
        return;
    }
    sp_status st = copy->fn(copy->arg, off, len);
    int expected = SP_OK;
    if (st != SP_OK)
        atomic_compare_exchange_strong(&pool->job_status, &expected, (int)st);
}

/* Takes pieces until none is left; counts each in pieces_done once it is copied. */
static void copy_pieces(sp_staging_pool *pool)
{
    for (;;) {
        size_t k = atomic_fetch_add(&pool->next_piece, 1);
        if (k >= pool->pieces)
            break;
        size_t c = 0;
        while (k >= pool->first_piece[c + 1])
            c++;
        const sp_copy *copy = &pool->copies[c];
        size_t piece = pool->piece[c];
        size_t off = (k - pool->first_piece[c]) * piece;
        size_t len = copy->bytes - off < piece ? copy->bytes - off : piece;
        run_piece(pool, copy, off, len);
        if (atomic_fetch_add(&pool->pieces_done, 1) + 1 == pool->pieces &&
            atomic_load(&pool->caller_sleeping)) {
            pthread_mutex_lock(&pool->lock);
            pthread_cond_broadcast(&pool->work_done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
}

/* Waits, spinning first, until there is a published plan other than `seen`. */
static void wait_for_work(sp_staging_pool *pool, unsigned long seen)
{
    if (spin_until(pool, new_work, seen))
        return;
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add(&pool->sleepers, 1);
    while (!new_work(pool, seen))
        pthread_cond_wait(&pool->work_ready, &pool->lock);
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->lock);
}

static void *worker_main(void *arg)
{
    sp_staging_pool *pool = arg;
    unsigned long seen = 0;
    for (;;) {
        wait_for_work(pool, seen);
        if (atomic_load(&pool->stopping))
            break;
        unsigned long g = atomic_load(&pool->generation);
        atomic_fetch_add(&pool->active, 1);
        if (atomic_load(&pool->generation) == g && g % 2 == 0) { /* still the plan we saw */
            seen = g;
            copy_pieces(pool);
        }
        atomic_fetch_sub(&pool->active, 1);
    }
    return NULL;
}

unsigned sp_staging_pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > 16 ? 16u : (unsigned)n;
}

static void stop_workers(sp_staging_pool *pool, unsigned started)
{
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stopping, 1);
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(pool->workers[i], NULL);
}

sp_status sp_staging_pool_create(unsigned threads, sp_staging_pool **out)
{
    *out = NULL;
    sp_staging_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return SP_ERR_OUT_OF_MEMORY;
    pool->threads = threads ? threads : 1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work_ready, NULL);
    pthread_cond_init(&pool->work_done, NULL);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->stopping, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->caller_sleeping, 0);
    atomic_init(&pool->active, 0);
    atomic_init(&pool->next_piece, 0);
    atomic_init(&pool->pieces_done, 0);
    atomic_init(&pool->job_status, SP_OK);
    unsigned workers = pool->threads - 1;
    if (workers) {
        pool->workers = calloc(workers, sizeof *pool->workers);
        if (!pool->workers) {
            sp_staging_pool_destroy(pool);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) {
            stop_workers(pool, i);
            pool->threads = 0; /* workers already joined */
            sp_staging_pool_destroy(pool);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    *out = pool;
    return SP_OK;
}

void sp_staging_pool_destroy(sp_staging_pool *pool)
{
    if (!pool)
        return;
    if (pool->threads > 1 && pool->workers)
        stop_workers(pool, pool->threads - 1);
    pthread_cond_destroy(&pool->work_done);
    pthread_cond_destroy(&pool->work_ready);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

unsigned sp_staging_pool_threads(const sp_staging_pool *pool) { return pool->threads; }

/* Cuts the work into pieces of about an equal share per thread: cache-page aligned for
 * copies, whole units (records) for jobs. */
static void plan_pieces(sp_staging_pool *pool, const sp_copy *copies, size_t n, size_t total)
{
    size_t share = total / pool->threads > 0 ? total / pool->threads : 1;
    pool->first_piece[0] = 0;
    for (size_t c = 0; c < n; c++) {
        size_t align = copies[c].fn ? copies[c].unit : SP_PIECE_ALIGN;
        size_t piece = (share + align - 1) / align * align;
        pool->copies[c] = copies[c];
        pool->piece[c] = piece;
        pool->first_piece[c + 1] = pool->first_piece[c] + (copies[c].bytes + piece - 1) / piece;
    }
    pool->pieces = pool->first_piece[n];
}

/* Makes the generation odd, waits for workers still looking at the last plan, writes the new
 * one and publishes it (even), waking sleepers if there are any. */
static void publish(sp_staging_pool *pool, const sp_copy *copies, size_t n, size_t total)
{
    unsigned long g = atomic_load(&pool->generation);
    atomic_store(&pool->generation, g + 1);
    while (atomic_load(&pool->active) > 0) /* a worker backing out, or late for the last copy */
        sched_yield();
    plan_pieces(pool, copies, n, total);
    atomic_store(&pool->job_status, SP_OK);
    atomic_store(&pool->pieces_done, 0);
    atomic_store(&pool->next_piece, 0);
    atomic_store(&pool->generation, g + 2);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_broadcast(&pool->work_ready);
        pthread_mutex_unlock(&pool->lock);
    }
}

static void wait_for_pieces(sp_staging_pool *pool)
{
    if (spin_until(pool, all_pieces_done, 0))
        return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->caller_sleeping, 1);
    while (!all_pieces_done(pool, 0))
        pthread_cond_wait(&pool->work_done, &pool->lock);
    atomic_store(&pool->caller_sleeping, 0);
    pthread_mutex_unlock(&pool->lock);
}

/* On the calling thread alone, each copy as one piece: small copies, one-thread pools. */
static sp_status copy_here(sp_staging_pool *pool, const sp_copy *copies, size_t n)
{
    atomic_store(&pool->job_status, SP_OK);
    for (size_t c = 0; c < n; c++)
        if (copies[c].bytes)
            run_piece(pool, &copies[c], 0, copies[c].bytes);
    return (sp_status)atomic_load(&pool->job_status);
}

sp_status sp_staging_pool_copy_many(sp_staging_pool *pool, const sp_copy *copies, size_t n)
{
    size_t total = 0;
    for (size_t c = 0; c < n; c++)
        total += copies[c].bytes;
    if (pool->threads == 1 || total < SP_PARALLEL_COPY_MIN || n > SP_MAX_COPIES)
        return copy_here(pool, copies, n);
    publish(pool, copies, n, total);
    copy_pieces(pool);
    wait_for_pieces(pool);
    return (sp_status)atomic_load(&pool->job_status);
}

void sp_staging_pool_copy(sp_staging_pool *pool, void *dst, const void *src, size_t bytes)
{
    sp_copy one = {.dst = dst, .src = src, .bytes = bytes};
    (void)sp_staging_pool_copy_many(pool, &one, 1);
}
