/* The budget at create, and the list of changes (tune.h). */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/plan.h"
#include "core/tune.h"

void sp_tune_shape_of(const sp_pipeline *p, sp_tune_shape *shape)
{
    memset(shape, 0, sizeof *shape);
    shape->align = SP_SLOT_ALIGN; /* pipeline.c rounds every slot buffer up to it */
    size_t M = p->n_stages, n = 0;
    shape->buffer[n++] = (sp_tune_buffer){p->record_bytes[0], 0, 1};
    shape->buffer[n++] = (sp_tune_buffer){p->record_bytes[M], 0, 1};
    for (size_t s = 0; s <= M; s++)
        shape->buffer[n++] = (sp_tune_buffer){p->record_bytes[s], 0, 0};
    for (size_t s = 0; s < M; s++)
        if (p->stages[s].scratch_bytes)
            shape->buffer[n++] = (sp_tune_buffer){0, p->stages[s].scratch_bytes, 0};
    shape->n_buffers = n;
}

/* The limits of the pick at create; `running`: those of the re-picks while runs go
 * (tune_run.c), which change the chunk within the slots made at create and keep the depth:
 * re-making the slots (a deeper ring, larger chunks) is not done while a run goes. */
static void limits_of(const sp_pipeline *p, int running, sp_tune_limits *lim)
{
    const sp_tune_state *t = &p->tune;
    *lim = (sp_tune_limits){
        .max_pinned = t->max_pinned, .max_device = t->max_device,
        .chunk_min = 1, .chunk_max = p->chunk_capacity,
        .depth_min = 1, .depth_max = SP_MAX_DEPTH,
        .chunk_fixed = !t->chunk_auto, .depth_fixed = !t->depth_auto,
    };
    if (running) {
        lim->depth_min = lim->depth_max = p->depth;
        lim->depth_fixed = 1;
        lim->slots_held = 1;
    }
}

static sp_status refuse(sp_pipeline *p, sp_tune_settings want, const sp_tune_shape *shape)
{
    size_t pinned = 0, device = 0;
    sp_tune_memory(shape, (sp_tune_settings){1, 1}, &pinned, &device);
    if (p->tune.chunk_auto || p->tune.depth_auto)
        return sp_context_fail(p->ctx, SP_ERR_INVALID_ARGUMENT,
                               "config: the budget (max_pinned_bytes %zu, max_device_bytes %zu)"
                               " cannot hold %s%s: one record at depth 1 takes %zu pinned and "
                               "%zu device bytes", p->tune.max_pinned, p->tune.max_device,
                               p->tune.chunk_auto ? "" : "the chunk_records given, ",
                               p->tune.depth_auto ? "any ring" : "the depth given", pinned,
                               device);
    sp_tune_memory(shape, want, &pinned, &device);
    return sp_context_fail(p->ctx, SP_ERR_INVALID_ARGUMENT,
                           "config: chunk_records %zu at depth %u takes %zu pinned and %zu "
                           "device bytes, over the budget (max_pinned_bytes %zu, "
                           "max_device_bytes %zu); leave chunk_records or depth at 0 to have "
                           "them fitted", want.chunk, want.depth, pinned, device,
                           p->tune.max_pinned, p->tune.max_device);
}

sp_status sp_tune_setup(sp_pipeline *p, const sp_pipeline_config *cfg)
{
    sp_tune_state *t = &p->tune;
    t->chunk_auto = cfg->chunk_records == 0;
    t->depth_auto = cfg->depth == 0;
    t->max_pinned = cfg->max_pinned_bytes;
    t->max_device = cfg->max_device_bytes;
    if (pthread_mutex_init(&t->lock, NULL) != 0)
        return sp_context_fail(p->ctx, SP_ERR_OUT_OF_MEMORY, "pthread_mutex_init failed");
    t->lock_made = 1;
    sp_tune_shape shape;
    sp_tune_limits lim;
    sp_tune_shape_of(p, &shape);
    limits_of(p, 0, &lim);
    sp_tune_settings want = {p->chunk_capacity, p->depth}, got = want;
    /* no budget: the settings stand as chosen (a size that overflows is pipeline.c's to
     * refuse, saying so) */
    int budget = t->max_pinned || t->max_device;
    if (budget && !sp_tune_initial(&shape, &lim, want, &got))
        return refuse(p, want, &shape);
    p->chunk_capacity = got.chunk;
    p->depth = t->depth_picked = got.depth;
    limits_of(p, 1, &lim);
    sp_tuner_init(&t->tuner, &shape, &lim, got, sp_now());
    if (!budget)
        return SP_OK;
    if (got.chunk != want.chunk || got.depth != want.depth) {
        char why[160];
        snprintf(why, sizeof why, "the budget: chunk %zu -> %zu, depth %u -> %u at create",
                 want.chunk, got.chunk, want.depth, got.depth);
        sp_tune_record(p, sp_now(), want, got, why);
    }
    return SP_OK;
}

/* Whether the ring `to` fits, and the budget holds the old ring and the new at once (the new
 * is made before the old is freed, so that a failure loses nothing). */
static int swap_fits(const sp_pipeline *p, const sp_tune_shape *shape,
                     const sp_tune_limits *lim, sp_tune_settings to)
{
    size_t pinned_now = 0, device_now = 0, pinned = 0, device = 0;
    if (!sp_tune_fits(shape, lim, to) || !sp_tune_memory(shape, to, &pinned, &device) ||
        !sp_tune_memory(shape, (sp_tune_settings){p->chunk_capacity, p->depth}, &pinned_now,
                        &device_now))
        return 0;
    /* fits: pinned <= max_pinned, device <= max_device */
    return (!lim->max_pinned || pinned_now <= lim->max_pinned - pinned) &&
           (!lim->max_device || device_now <= lim->max_device - device);
}

unsigned sp_tune_stream_depth(const sp_pipeline *p)
{
    if (!p->tune.depth_auto || p->graph_mode != SP_GRAPH_OFF || p->depth >= SP_STREAM_DEPTH)
        return p->depth;
    sp_tune_shape shape;
    sp_tune_limits lim;
    sp_tune_shape_of(p, &shape);
    limits_of(p, 0, &lim);
    unsigned want = SP_STREAM_DEPTH;
    while (want > p->depth &&
           !swap_fits(p, &shape, &lim, (sp_tune_settings){p->chunk_capacity, want}))
        want--;
    return want;
}

void sp_tune_deepened(sp_pipeline *p, unsigned from)
{
    sp_tune_state *t = &p->tune;
    sp_tune_shape shape;
    sp_tune_limits lim;
    sp_tune_shape_of(p, &shape);
    limits_of(p, 1, &lim);
    sp_tune_settings was = {t->tuner.cur.chunk, from}, now = {t->tuner.cur.chunk, p->depth};
    double at = sp_now();
    sp_tuner_init(&t->tuner, &shape, &lim, now, at); /* a new stream: seen afresh */
    if (t->depth_picked < p->depth)
        t->depth_picked = p->depth;
    size_t pinned_was = 0, device_was = 0, pinned = 0, device = 0;
    sp_tune_memory(&shape, (sp_tune_settings){p->chunk_capacity, from}, &pinned_was,
                   &device_was);
    sp_tune_memory(&shape, (sp_tune_settings){p->chunk_capacity, p->depth}, &pinned, &device);
    char why[160];
    snprintf(why, sizeof why, "a stream: each batch holds its own slots, so small ones want "
             "more of them; depth %u -> %u (%zu MiB more pinned)", from, p->depth,
             (pinned - pinned_was) >> 20);
    sp_tune_record(p, at, was, now, why);
}

/* Whether the ring `to` fits: swapped for p's (above), and with the decoder's buffers (`run`:
 * the ring's shape and theirs) while the run goes. */
static int ring_fits(const sp_pipeline *p, const sp_tune_shape *ring, const sp_tune_shape *run,
                     const sp_tune_limits *lim, sp_tune_settings to)
{
    return swap_fits(p, ring, lim, to) && sp_tune_fits(run, lim, to);
}

/* The slots for a run of `n` records in chunks of `chunk`: one a chunk, at most the library's
 * depth; p's own where the config gave the depth. */
static unsigned slots_for(const sp_pipeline *p, size_t chunk, size_t n)
{
    if (!p->tune.depth_auto || chunk == 0 || n == 0)
        return p->depth;
    size_t chunks = n / chunk + (n % chunk != 0);
    return chunks < p->tune.depth_picked ? (unsigned)chunks : p->tune.depth_picked;
}

/* A buffer of `unit` bytes a unit of `per` records, one spare unit besides, per slot. */
static sp_tune_buffer unit_buffer(size_t unit, size_t per, int pinned)
{
    return (sp_tune_buffer){unit / per + (unit % per != 0), unit, pinned};
}

/* The largest chunk of whole units in (p's chunk, want] that fits at p's depth; p's chunk
 * when none does. Memory grows with the chunk, so a binary search finds it. */
static size_t largest_fit(const sp_pipeline *p, const sp_tune_shape *ring,
                          const sp_tune_shape *run, const sp_tune_limits *lim, size_t want,
                          size_t per)
{
    size_t lo = p->chunk_capacity / per + 1, hi = want / per;
    if (lo > hi || !ring_fits(p, ring, run, lim, (sp_tune_settings){lo * per, p->depth}))
        return p->chunk_capacity;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (ring_fits(p, ring, run, lim, (sp_tune_settings){mid * per, p->depth}))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * per;
}

sp_tune_settings sp_tune_ring_chunk(const sp_pipeline *p, size_t want, size_t n_records,
                                    const sp_tune_decoder *dec)
{
    sp_tune_settings now = {p->chunk_capacity, p->depth};
    size_t per = dec->unit_records ? dec->unit_records : 1;
    sp_tune_settings to = {want > now.chunk ? want : now.chunk, slots_for(p, want, n_records)};
    if (want <= now.chunk && to.depth <= now.depth)
        return now; /* the slots hold the chunk: fewer of them would free memory, not make any */
    if (!p->tune.max_pinned && !p->tune.max_device)
        return to;
    sp_tune_shape ring, run;
    sp_tune_limits lim;
    sp_tune_shape_of(p, &ring);
    run = ring;
    run.buffer[run.n_buffers++] = unit_buffer(dec->unit_pinned, per, 1);
    run.buffer[run.n_buffers++] = unit_buffer(dec->unit_device, per, 0);
    limits_of(p, 0, &lim);
    lim.chunk_max = to.chunk;
    if (ring_fits(p, &ring, &run, &lim, to))
        return to;
    if (want <= now.chunk)
        return now; /* a later run's slots back: not within the budget */
    /* the budget: the chunk cut at p's depth, then its slots as many as its chunks */
    to.chunk = largest_fit(p, &ring, &run, &lim, want, per);
    unsigned slots = slots_for(p, to.chunk, n_records);
    to.depth = to.chunk == now.chunk || slots > now.depth ? now.depth : slots;
    return to;
}

void sp_tune_rechunked(sp_pipeline *p, sp_tune_settings from, const char *reason)
{
    sp_tune_shape shape;
    sp_tune_limits lim;
    sp_tune_shape_of(p, &shape);
    limits_of(p, 1, &lim); /* the slots' new chunk is what a re-pick while runs go may reach */
    sp_tune_settings now = {p->chunk_capacity, p->depth};
    double at = sp_now();
    sp_tuner_init(&p->tune.tuner, &shape, &lim, now, at);
    sp_tune_record(p, at, from, now, reason);
}

void sp_tune_release(sp_pipeline *p)
{
    if (p->tune.lock_made)
        pthread_mutex_destroy(&p->tune.lock);
    p->tune.lock_made = 0;
}

void sp_tune_record(sp_pipeline *p, double now, sp_tune_settings from, sp_tune_settings to,
                    const char *reason)
{
    sp_tune_state *t = &p->tune;
    sp_tune_change c = {.at_s = now, .from_chunk = from.chunk, .to_chunk = to.chunk,
                        .from_depth = from.depth, .to_depth = to.depth};
    snprintf(c.reason, sizeof c.reason, "%s", reason);
    pthread_mutex_lock(&t->lock);
    /* entry 0 stays the first change; 1.. are a ring of the latest, oldest first when read */
    size_t at = t->total < SP_TUNE_CHANGES_KEPT
                    ? (size_t)t->total
                    : 1 + (size_t)((t->total - 1) % (SP_TUNE_CHANGES_KEPT - 1));
    t->change[at] = c;
    t->total++;
    t->kept = t->total < SP_TUNE_CHANGES_KEPT ? (size_t)t->total : SP_TUNE_CHANGES_KEPT;
    pthread_mutex_unlock(&t->lock);
}

void sp_tune_last(const sp_pipeline *p, uint64_t *total, char *reason, size_t reason_size)
{
    sp_tune_state *t = (sp_tune_state *)&p->tune; /* the lock, not the state, changes */
    pthread_mutex_lock(&t->lock);
    *total = t->total;
    reason[0] = '\0';
    if (t->total > 0) {
        size_t last = t->total <= SP_TUNE_CHANGES_KEPT
                          ? (size_t)t->total - 1
                          : 1 + (size_t)((t->total - 2) % (SP_TUNE_CHANGES_KEPT - 1));
        snprintf(reason, reason_size, "%s", t->change[last].reason);
    }
    pthread_mutex_unlock(&t->lock);
}

sp_status sp_pipeline_tune_changes(const sp_pipeline *p, sp_tune_change *out, size_t max,
                                   size_t *n, uint64_t *total)
{
    if (!p || !n || (!out && max > 0))
        return SP_ERR_INVALID_ARGUMENT;
    sp_tune_state *t = (sp_tune_state *)&p->tune;
    pthread_mutex_lock(&t->lock);
    size_t kept = t->kept, w = 0;
    for (size_t k = 0; k < kept && w < max; k++) {
        size_t at = k;
        if (t->total > SP_TUNE_CHANGES_KEPT && k > 0) /* the ring's oldest first */
            at = 1 + (size_t)((t->total - 1 + k - 1) % (SP_TUNE_CHANGES_KEPT - 1));
        out[w++] = t->change[at];
    }
    if (total)
        *total = t->total;
    pthread_mutex_unlock(&t->lock);
    *n = w;
    return SP_OK;
}
