/* sp_probe_run: resolves the configuration, makes the probe's own queues, events and buffers
 * (random data, never zeros), runs the parts that were asked for, and gives everything back.
 * Only the backend table is used, so the figures are what a pipeline on this context sees. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sized.h"
#include "core/clock.h"
#include "probe/probe.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static sp_status config_error(sp_context *ctx, const char *what)
{
    return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_probe_run: %s", what);
}

/* Fills the zero fields with the defaults of this backend and checks the rest. */
static sp_status resolve_config(sp_context *ctx, const sp_probe_config *given,
                                sp_probe_config *c)
{
    const char *why = ""; /* the library's layout of the caller's (sized: streampipe.h) */
    *c = (sp_probe_config){.size = sizeof *c};
    sp_status st = given ? sp_sized_read(c, sizeof *c, given, SP_PROBE_CONFIG_SIZE_0_5, &why)
                         : SP_OK;
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "sp_probe_run: config: %s", why);
    int cuda = ctx->kind == SP_BACKEND_CUDA;
    c->parts = c->parts ? c->parts : SP_PROBE_ALL;
    c->repeats = c->repeats ? c->repeats : c->quick ? 3u : 5u;
    if (!c->copy_bytes)
        c->copy_bytes = (cuda ? 256 * MIB : 64 * MIB) / (c->quick ? 4 : 1);
    c->pin_bytes = c->pin_bytes ? c->pin_bytes : c->copy_bytes;
    c->min_chunk_bytes = c->min_chunk_bytes ? c->min_chunk_bytes : 64 * KIB;
    c->max_chunk_bytes = c->max_chunk_bytes ? c->max_chunk_bytes : 64 * MIB;
    c->max_threads = c->max_threads ? c->max_threads : 16;
    c->overhead_ops = c->overhead_ops ? c->overhead_ops : c->quick ? 500u : 2000u;
    if (c->parts & ~(unsigned)SP_PROBE_ALL)
        return config_error(ctx, "parts has bits that name no part");
    if (c->repeats > SP_PROBE_MAX_REPEATS)
        return config_error(ctx, "repeats is more than SP_PROBE_MAX_REPEATS");
    if (c->copy_bytes < 64 * KIB || c->pin_bytes < 64 * KIB)
        return config_error(ctx, "copy_bytes and pin_bytes must be at least 64 KiB");
    if (c->min_chunk_bytes < 4 * KIB || c->min_chunk_bytes > c->max_chunk_bytes)
        return config_error(ctx, "min_chunk_bytes must be at least 4 KiB and at most "
                                 "max_chunk_bytes");
    if (c->max_threads > 1024 || c->overhead_ops > 1000000)
        return config_error(ctx, "max_threads (<= 1024) or overhead_ops (<= 1e6) too large");
    return SP_OK;
}

/* splitmix64: fast, and random enough that no copy path can shortcut the data. */
static void fill_random(void *buf, size_t bytes, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t state = seed;
    for (size_t off = 0; off < bytes; off += sizeof state) {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        size_t n = bytes - off < sizeof z ? bytes - off : sizeof z;
        memcpy(p + off, &z, n);
    }
}

static sp_status make_queues_and_events(sp_probe *pr)
{
    static const char *const names[2] = {"probe-h2d", "probe-d2h"};
    sp_status st = SP_OK;
    for (int d = 0; st == SP_OK && d < 2; d++) {
        st = pr->ops->queue_create(pr->impl, names[d], 0, &pr->queue[d]);
        if (st == SP_OK)
            st = pr->ops->event_create(pr->impl, SP_EVENT_TIMING, &pr->start[d]);
        if (st == SP_OK)
            st = pr->ops->event_create(pr->impl, SP_EVENT_TIMING, &pr->end[d]);
    }
    if (st == SP_OK)
        st = pr->ops->event_create(pr->impl, SP_EVENT_SYNC, &pr->ordering);
    return st == SP_OK ? SP_OK : sp_probe_fail(pr, st, "creating its queues and events");
}

/* The big buffers the copy parts share; the sources hold random data, and device[D2H] gets
 * a copy of it so that D2H copies move random data too. */
static sp_status make_buffers(sp_probe *pr)
{
    size_t bytes = pr->cfg.copy_bytes;
    sp_status st = SP_OK;
    for (int d = 0; st == SP_OK && d < 2; d++) {
        st = pr->ops->pinned_alloc(pr->impl, bytes, &pr->pinned[d]);
        if (st == SP_OK)
            st = pr->ops->device_alloc(pr->impl, bytes, &pr->device[d]);
        pr->pageable[d] = st == SP_OK ? malloc(bytes) : NULL;
        if (st == SP_OK && !pr->pageable[d])
            st = SP_ERR_OUT_OF_MEMORY;
    }
    if (st != SP_OK)
        return sp_probe_fail(pr, st, "allocating its copy buffers");
    fill_random(pr->pinned[PROBE_H2D], bytes, 1);
    fill_random(pr->pageable[PROBE_H2D], bytes, 2);
    double ignored;
    return sp_probe_timed_copies(pr, PROBE_H2D, pr->device[PROBE_D2H], pr->pinned[PROBE_H2D],
                                 bytes, bytes, &ignored);
}

/* Gives everything back; returns `st`, or the first failure of a final sync when st is OK
 * (a device error that shows only now still makes the figures suspect). */
static sp_status release(sp_probe *pr, sp_status st)
{
    const sp_backend_ops *ops = pr->ops;
    for (int d = 0; d < 2; d++) {
        if (pr->queue[d]) {
            sp_status synced = ops->queue_sync(pr->impl, pr->queue[d]); /* buffers are idle */
            if (st == SP_OK && synced != SP_OK)
                st = sp_probe_fail(pr, synced, "waiting for its queues");
            ops->queue_destroy(pr->impl, pr->queue[d]);
        }
        if (pr->start[d])
            ops->event_destroy(pr->impl, pr->start[d]);
        if (pr->end[d])
            ops->event_destroy(pr->impl, pr->end[d]);
        ops->device_free(pr->impl, pr->device[d]);
        ops->pinned_free(pr->impl, pr->pinned[d]);
        free(pr->pageable[d]);
    }
    if (pr->ordering)
        ops->event_destroy(pr->impl, pr->ordering);
    return st;
}

static const struct {
    unsigned part;
    sp_status (*run)(sp_probe *pr, sp_probe_result *out);
} parts[] = {
    {SP_PROBE_COPY_RATES, sp_probe_copy_rates},
    {SP_PROBE_CHUNK_SIZES, sp_probe_chunk_sizes},
    {SP_PROBE_HOST_COPY, sp_probe_host_copy},
    {SP_PROBE_HOST_UNDER_DMA, sp_probe_host_under_dma},
    {SP_PROBE_PINNING, sp_probe_pinning},
    {SP_PROBE_OVERHEADS, sp_probe_overheads},
};

static void describe(const sp_probe *pr, sp_probe_result *out)
{
    memset(out, 0, sizeof *out);
    out->backend = pr->ctx->kind;
    out->parts = pr->cfg.parts;
    out->repeats = pr->cfg.repeats;
    out->copy_bytes = pr->cfg.copy_bytes;
    out->pin_bytes = pr->cfg.pin_bytes;
    out->overhead_ops = pr->cfg.overhead_ops;
    if (out->backend == SP_BACKEND_HOST)
        snprintf(out->notes, sizeof out->notes,
                 "host backend: 'device' memory is host memory and copies are memcpy on a "
                 "worker thread, so the copy rates are this CPU's memcpy rates, not a bus; "
                 "beside the staging copy those threads take CPU cores too");
}

sp_status sp_probe_run(sp_context *ctx, const sp_probe_config *cfg, sp_probe_result *out)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!out)
        return config_error(ctx, "out is NULL");
    sp_probe pr;
    memset(&pr, 0, sizeof pr);
    sp_status st = sp_context_check_alive(ctx);
    pr.ctx = ctx;
    pr.ops = ctx->ops;
    pr.impl = ctx->impl;
    if (st == SP_OK)
        st = resolve_config(ctx, cfg, &pr.cfg);
    if (st != SP_OK)
        return st;
    describe(&pr, out);
    double t0 = sp_now();
    st = make_queues_and_events(&pr);
    if (st == SP_OK && (pr.cfg.parts & (SP_PROBE_COPY_RATES | SP_PROBE_CHUNK_SIZES |
                                        SP_PROBE_HOST_COPY | SP_PROBE_HOST_UNDER_DMA)))
        st = make_buffers(&pr);
    for (size_t i = 0; st == SP_OK && i < sizeof parts / sizeof parts[0]; i++)
        if (pr.cfg.parts & parts[i].part)
            st = parts[i].run(&pr, out);
    st = release(&pr, st);
    out->seconds = sp_now() - t0;
    return st;
}
