/* Host-side costs: pinning memory (allocating pinned memory, registering the user's), and
 * copying pageable memory into pinned memory over several threads, the way the pipeline's
 * staging pool does it. Host clock throughout. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "probe/probe.h"
#include "core/staging_pool.h"

/* Milliseconds per GiB from seconds per pin_bytes. */
static double ms_per_gib(const sp_probe *pr, double seconds)
{
    return seconds * 1e3 * (double)(1u << 30) / (double)pr->cfg.pin_bytes;
}

/* sp_host_alloc then sp_host_free, each timed; a warm-up first, then the repeats. */
static sp_status time_alloc_free(sp_probe *pr, double *alloc_s, double *free_s)
{
    for (unsigned r = 0; r <= pr->cfg.repeats; r++) {
        void *mem = NULL;
        double t0 = sp_now();
        sp_status st = sp_host_alloc(pr->ctx, pr->cfg.pin_bytes, &mem);
        double t1 = sp_now();
        if (st != SP_OK)
            return st; /* sp_host_alloc set the context's error */
        sp_host_free(pr->ctx, mem);
        double t2 = sp_now();
        if (r > 0) {
            alloc_s[r - 1] = t1 - t0;
            free_s[r - 1] = t2 - t1;
        }
    }
    return SP_OK;
}

/* sp_host_register then sp_host_unregister of one malloc'd buffer, touched beforehand so
 * that page faults are not counted as pinning. */
static sp_status time_register(sp_probe *pr, double *reg_s, double *unreg_s)
{
    void *mem = malloc(pr->cfg.pin_bytes);
    if (!mem)
        return sp_context_fail(pr->ctx, SP_ERR_OUT_OF_MEMORY,
                               "probe: no memory for %zu bytes to register", pr->cfg.pin_bytes);
    memset(mem, 0x5A, pr->cfg.pin_bytes);
    sp_status st = SP_OK;
    for (unsigned r = 0; r <= pr->cfg.repeats; r++) {
        double t0 = sp_now();
        st = sp_host_register(pr->ctx, mem, pr->cfg.pin_bytes);
        double t1 = sp_now();
        if (st != SP_OK)
            break;
        st = sp_host_unregister(pr->ctx, mem);
        double t2 = sp_now();
        if (st != SP_OK) {
            /* the memory is freed below and must not stay registered: ask once more */
            (void)sp_host_unregister(pr->ctx, mem);
            break;
        }
        if (r > 0) {
            reg_s[r - 1] = t1 - t0;
            unreg_s[r - 1] = t2 - t1;
        }
    }
    free(mem);
    return st;
}

sp_status sp_probe_pinning(sp_probe *pr, sp_probe_result *out)
{
    double a[SP_PROBE_MAX_REPEATS], f[SP_PROBE_MAX_REPEATS];
    unsigned n = pr->cfg.repeats;
    sp_status st = time_alloc_free(pr, a, f);
    if (st != SP_OK)
        return st;
    out->alloc_ms_per_gib = ms_per_gib(pr, sp_probe_median(a, n));
    out->free_ms_per_gib = ms_per_gib(pr, sp_probe_median(f, n));
    st = time_register(pr, a, f);
    if (st != SP_OK)
        return st;
    out->register_ms_per_gib = ms_per_gib(pr, sp_probe_median(a, n));
    out->unregister_ms_per_gib = ms_per_gib(pr, sp_probe_median(f, n));
    return SP_OK;
}

typedef struct copy_threads {
    sp_staging_pool *pool;
} copy_threads;

static sp_status measure_host_copy(sp_probe *pr, const void *arg, double *seconds)
{
    const copy_threads *with = arg;
    double t0 = sp_now();
    sp_staging_pool_copy(with->pool, pr->pinned[PROBE_D2H], pr->pageable[PROBE_H2D],
                         pr->cfg.copy_bytes);
    *seconds = sp_now() - t0;
    return SP_OK;
}

sp_status sp_probe_host_copy(sp_probe *pr, sp_probe_result *out)
{
    for (unsigned threads = 1; threads <= pr->cfg.max_threads &&
                               out->n_thread_counts < SP_PROBE_MAX_THREAD_COUNTS;
         threads *= 2) {
        copy_threads with = {NULL};
        if (sp_staging_pool_create(threads, &with.pool) != SP_OK)
            return sp_context_fail(pr->ctx, SP_ERR_OUT_OF_MEMORY,
                                   "probe: starting %u copy threads failed", threads);
        double seconds = 0.0;
        sp_status st = sp_probe_repeat(pr, measure_host_copy, &with, &seconds);
        sp_staging_pool_destroy(with.pool);
        if (st != SP_OK)
            return st;
        sp_probe_thread_rate *rate = &out->host_copy[out->n_thread_counts++];
        rate->threads = threads;
        rate->gbps = sp_gbps((double)pr->cfg.copy_bytes, seconds);
    }
    return SP_OK;
}
