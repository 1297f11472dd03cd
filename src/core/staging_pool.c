/* A fixed pool of workers that split one memcpy at a time into pieces. The caller takes
 * pieces too, so a pool of T threads has T-1 workers. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/staging_pool.h"
#include "core/stream_copy.h"

/* Below this a single memcpy beats waking workers. */
#define SP_PARALLEL_COPY_MIN (512u * 1024u)
/* Pieces are multiples of this, so each thread's destination starts on a cache line. */
#define SP_PIECE_ALIGN 4096u

struct sp_staging_pool {
    unsigned threads;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    pthread_cond_t work_done;
    unsigned long generation; /* bumped for each copy; workers wake on a change */
    int stopping;

    /* the copies in progress, cut into pieces numbered across all of them */
    sp_copy copies[SP_MAX_COPIES];
    size_t first_piece[SP_MAX_COPIES + 1]; /* copy c owns pieces [first_piece[c], [c+1]) */
    size_t piece, pieces;
    atomic_size_t next_piece;
    size_t pieces_done; /* under lock */
    unsigned active;    /* workers inside this copy, under lock: the next copy may not
                           change the fields above until every one of them has left */
};

/* Takes pieces until none is left; returns how many this thread copied. */
static size_t copy_pieces(sp_staging_pool *pool)
{
    size_t done = 0;
    for (;;) {
        size_t k = atomic_fetch_add(&pool->next_piece, 1);
        if (k >= pool->pieces)
            break;
        size_t c = 0;
        while (k >= pool->first_piece[c + 1])
            c++;
        const sp_copy *copy = &pool->copies[c];
        size_t off = (k - pool->first_piece[c]) * pool->piece;
        size_t len = copy->bytes - off < pool->piece ? copy->bytes - off : pool->piece;
        sp_stream_copy((char *)copy->dst + off, (const char *)copy->src + off, len);
        done++;
    }
    return done;
}

static int copy_finished(const sp_staging_pool *pool)
{
    return pool->pieces_done == pool->pieces && pool->active == 0;
}

static void *worker_main(void *arg)
{
    sp_staging_pool *pool = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stopping && pool->generation == seen)
            pthread_cond_wait(&pool->work_ready, &pool->lock);
        if (pool->stopping)
            break;
        seen = pool->generation;
        pool->active++;
        pthread_mutex_unlock(&pool->lock);
        size_t done = copy_pieces(pool);
        pthread_mutex_lock(&pool->lock);
        pool->pieces_done += done;
        pool->active--;
        if (copy_finished(pool))
            pthread_cond_broadcast(&pool->work_done);
    }
    pthread_mutex_unlock(&pool->lock);
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
    pool->stopping = 1;
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
    atomic_init(&pool->next_piece, 0);
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

/* Cuts the job into pieces of about an equal share per thread, cache-page aligned. */
static void plan_pieces(sp_staging_pool *pool, const sp_copy *copies, size_t n, size_t total)
{
    size_t piece = (total / pool->threads + SP_PIECE_ALIGN - 1) / SP_PIECE_ALIGN * SP_PIECE_ALIGN;
    pool->piece = piece;
    pool->first_piece[0] = 0;
    for (size_t c = 0; c < n; c++) {
        pool->copies[c] = copies[c];
        pool->first_piece[c + 1] = pool->first_piece[c] + (copies[c].bytes + piece - 1) / piece;
    }
    pool->pieces = pool->first_piece[n];
}

void sp_staging_pool_copy_many(sp_staging_pool *pool, const sp_copy *copies, size_t n)
{
    size_t total = 0;
    for (size_t c = 0; c < n; c++)
        total += copies[c].bytes;
    if (pool->threads == 1 || total < SP_PARALLEL_COPY_MIN || n > SP_MAX_COPIES) {
        for (size_t c = 0; c < n; c++)
            if (copies[c].bytes)
                sp_stream_copy(copies[c].dst, copies[c].src, copies[c].bytes);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    while (pool->active > 0) /* a worker that woke late for the previous copy */
        pthread_cond_wait(&pool->work_done, &pool->lock);
    plan_pieces(pool, copies, n, total);
    pool->pieces_done = 0;
    atomic_store(&pool->next_piece, 0);
    pool->generation++;
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);

    size_t done = copy_pieces(pool);

    pthread_mutex_lock(&pool->lock);
    pool->pieces_done += done;
    while (!copy_finished(pool))
        pthread_cond_wait(&pool->work_done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

void sp_staging_pool_copy(sp_staging_pool *pool, void *dst, const void *src, size_t bytes)
{
    sp_copy one = {dst, src, bytes};
    sp_staging_pool_copy_many(pool, &one, 1);
}
