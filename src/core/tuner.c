/* The tuner's model and its rules of change (tuner.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/tuner.h"

static const char *const ENGINE_NAME[SP_TUNE_ENGINES] = {"h2d", "compute", "d2h", "host"};

/* ---- memory ----------------------------------------------------------------------------- */

static int buffer_bytes(const sp_tune_shape *shape, const sp_tune_buffer *b, size_t records,
                        size_t *bytes)
{
    size_t n, align = shape->align ? shape->align : 1;
    if (__builtin_mul_overflow(records, b->record_bytes, &n) ||
        __builtin_add_overflow(n, b->fixed_bytes, &n) || n > SIZE_MAX - align)
        return 0;
    *bytes = (n + align - 1) / align * align;
    return 1;
}

int sp_tune_memory(const sp_tune_shape *shape, sp_tune_settings s, size_t *pinned,
                   size_t *device)
{
    size_t slot_pinned = 0, slot_device = 0;
    for (size_t k = 0; k < shape->n_buffers; k++) {
        size_t bytes;
        size_t *sum = shape->buffer[k].pinned ? &slot_pinned : &slot_device;
        if (!buffer_bytes(shape, &shape->buffer[k], s.chunk, &bytes) ||
            __builtin_add_overflow(*sum, bytes, sum))
            return 0;
    }
    return !__builtin_mul_overflow(slot_pinned, (size_t)s.depth, pinned) &&
           !__builtin_mul_overflow(slot_device, (size_t)s.depth, device);
}

int sp_tune_fits(const sp_tune_shape *shape, const sp_tune_limits *lim, sp_tune_settings s)
{
    size_t pinned, device;
    if (s.chunk < lim->chunk_min || s.chunk > lim->chunk_max || s.depth < lim->depth_min ||
        s.depth > lim->depth_max || s.chunk == 0 || s.depth == 0)
        return 0;
    if (!sp_tune_memory(shape, s, &pinned, &device))
        return 0;
    return (!lim->max_pinned || pinned <= lim->max_pinned) &&
           (!lim->max_device || device <= lim->max_device);
}

static size_t memory_total(const sp_tune_shape *shape, sp_tune_settings s)
{
    size_t pinned = 0, device = 0;
    if (!sp_tune_memory(shape, s, &pinned, &device))
        return SIZE_MAX;
    return pinned > SIZE_MAX - device ? SIZE_MAX : pinned + device;
}

/* What s holds: its own memory, or the slots' when they stay allocated whatever s is. */
static size_t memory_held(const sp_tuner *t, sp_tune_settings s)
{
    if (t->lim.slots_held)
        s.chunk = t->lim.chunk_max;
    return memory_total(&t->shape, s);
}

/* The largest chunk in [lim->chunk_min, want] that fits at `depth`; 0: none. Memory grows
 * with the chunk, so a binary search finds it. */
static size_t largest_chunk(const sp_tune_shape *shape, const sp_tune_limits *lim,
                            size_t want, unsigned depth)
{
    size_t lo = lim->chunk_min ? lim->chunk_min : 1, hi = want;
    if (hi < lo || !sp_tune_fits(shape, lim, (sp_tune_settings){lo, depth}))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (sp_tune_fits(shape, lim, (sp_tune_settings){mid, depth}))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Cuts the chunk (if it may) to fit at `depth`. */
static int fit_at_depth(const sp_tune_shape *shape, const sp_tune_limits *lim,
                        sp_tune_settings want, unsigned depth, sp_tune_settings *out)
{
    sp_tune_settings s = {want.chunk, depth};
    if (sp_tune_fits(shape, lim, s)) {
        *out = s;
        return 1;
    }
    if (lim->chunk_fixed)
        return 0;
    s.chunk = largest_chunk(shape, lim, want.chunk, depth);
    if (s.chunk == 0)
        return 0;
    *out = s;
    return 1;
}

int sp_tune_initial(const sp_tune_shape *shape, const sp_tune_limits *lim,
                    sp_tune_settings want, sp_tune_settings *out)
{
    if (sp_tune_fits(shape, lim, want)) {
        *out = want;
        return 1;
    }
    if (lim->depth_fixed)
        return fit_at_depth(shape, lim, want, want.depth, out);
    /* fewer slots first, down to one per engine (h2d, compute, d2h, the host's turn): the
     * ring still overlaps them all; only then smaller chunks, then fewer slots still */
    unsigned floor = want.depth < SP_TUNE_ENGINES ? want.depth : SP_TUNE_ENGINES;
    floor = floor < lim->depth_min ? lim->depth_min : floor;
    for (unsigned d = want.depth; d >= floor && d > 0; d--) {
        sp_tune_settings s = {want.chunk, d};
        if (sp_tune_fits(shape, lim, s)) {
            *out = s;
            return 1;
        }
    }
    for (unsigned d = floor; d >= lim->depth_min && d > 0; d--)
        if (fit_at_depth(shape, lim, want, d, out))
            return 1;
    return 0;
}

/* ---- observations and the fit ------------------------------------------------------------ */

void sp_tuner_init(sp_tuner *t, const sp_tune_shape *shape, const sp_tune_limits *lim,
                   sp_tune_settings start, double now)
{
    memset(t, 0, sizeof *t);
    t->shape = *shape;
    t->lim = *lim;
    t->cur = start;
    t->t_start = t->t_change = now;
}

static const sp_tune_obs *obs_at(const sp_tuner *t, size_t k) /* k = 0: the oldest kept */
{
    return &t->obs[(t->head + SP_TUNE_WINDOW - t->n_obs + k) % SP_TUNE_WINDOW];
}

sp_tune_fit sp_tuner_fit(const sp_tuner *t, sp_tune_engine e)
{
    sp_tune_fit f = {0.0, 0.0, 0};
    double n = (double)t->n_obs, sx = 0, sy = 0, sxx = 0, sxy = 0, lo = 0, hi = 0;
    if (t->n_obs == 0)
        return f;
    for (size_t k = 0; k < t->n_obs; k++) {
        const sp_tune_obs *o = obs_at(t, k);
        double x = (double)o->records, y = o->seconds[e];
        sx += x, sy += y, sxx += x * x, sxy += x * y;
        lo = k == 0 || x < lo ? x : lo;
        hi = k == 0 || x > hi ? x : hi;
    }
    double var = sxx - sx * sx / n;
    if (hi < 1.5 * lo || var <= 0.0) { /* one size: a mean, no slope */
        f.a = sy / n;
        return f;
    }
    f.sloped = 1;
    f.b = (sxy - sx * sy / n) / var;
    f.a = (sy - f.b * sx) / n;
    if (f.b < 0.0) { /* noise: cost does not fall with size */
        f.b = 0.0;
        f.a = sy / n;
    } else if (f.a < 0.0) { /* through the origin */
        f.a = 0.0;
        f.b = sxy / sxx;
    }
    return f;
}

static void fit_all(const sp_tuner *t, sp_tune_fit fit[SP_TUNE_ENGINES])
{
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        fit[e] = sp_tuner_fit(t, (sp_tune_engine)e);
}

static double cost(const sp_tune_fit *f, size_t records) { return f->a + f->b * (double)records; }

/* Chunks far from the fit three times in a row: the costs shifted, and what came before
 * says nothing of them now; only the last chunks are kept. */
static void watch_shift(sp_tuner *t, const sp_tune_obs *o)
{
    if (t->n_obs < 4)
        return;
    sp_tune_fit fit[SP_TUNE_ENGINES];
    fit_all(t, fit);
    double top = 0.0;
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        top = fmax(top, fmax(cost(&fit[e], o->records), o->seconds[e]));
    int far = 0;
    for (int e = 0; e < SP_TUNE_ENGINES && top > 0.0; e++) {
        double want = cost(&fit[e], o->records), got = o->seconds[e];
        if (!fit[e].sloped && (double)o->records * 1.2 < (double)t->cur.chunk)
            continue; /* a probe's smaller chunk against a mean: not comparable */
        if (fmax(want, got) < 0.05 * top)
            continue; /* too small to matter */
        far |= got >= SP_TUNE_SHIFT * want || got * SP_TUNE_SHIFT <= want;
    }
    t->strikes = far ? t->strikes + 1 : 0;
    if (t->strikes >= 3) {
        t->n_obs = 2; /* the two strikes before this one; this one is pushed next */
        t->strikes = 0;
        t->shifted = 1;
        t->probed = 0;
    }
}

void sp_tuner_observe(sp_tuner *t, const sp_tune_obs *o)
{
    if (o->records == 0)
        return;
    watch_shift(t, o);
    t->obs[t->head] = *o;
    t->head = (t->head + 1) % SP_TUNE_WINDOW;
    if (t->n_obs < SP_TUNE_WINDOW)
        t->n_obs++;
    t->seen_since_change++;
    if (t->probe_left > 0 && o->records == t->probe_chunk && --t->probe_left == 0)
        t->probed = t->informed = 1;
    if (t->extending && t->seen_since_change >= SP_TUNE_PROBE_CHUNKS)
        t->extending = 0, t->informed = 1;
}

size_t sp_tuner_next_chunk(const sp_tuner *t)
{
    return t->probe_left > 0 ? t->probe_chunk : t->cur.chunk;
}

/* ---- the model --------------------------------------------------------------------------- */

static double rate_with(const sp_tune_fit fit[SP_TUNE_ENGINES], sp_tune_settings s,
                        size_t remaining)
{
    double top = 0.0, sum = 0.0;
    for (int e = 0; e < SP_TUNE_ENGINES; e++) {
        double c = cost(&fit[e], s.chunk);
        top = fmax(top, c);
        sum += c;
    }
    double period = fmax(top, sum / (double)s.depth);
    if (period <= 0.0)
        return 0.0;
    if (remaining == 0)
        return (double)s.chunk / period;
    double n = ceil((double)remaining / (double)s.chunk);
    return (double)remaining / ((n - 1.0) * period + sum);
}

double sp_tuner_rate(const sp_tuner *t, sp_tune_settings s, size_t remaining)
{
    sp_tune_fit fit[SP_TUNE_ENGINES];
    fit_all(t, fit);
    return rate_with(fit, s, remaining);
}

/* Chunk sizes worth trying: the current one, and powers of two apart within the limits;
 * only the current one while some engine's slope is unknown (nothing says how it scales). */
static size_t chunk_candidates(const sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES],
                               size_t out[40])
{
    size_t n = 0;
    out[n++] = t->cur.chunk;
    if (t->lim.chunk_fixed)
        return n;
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        if (!fit[e].sloped && fit[e].a > 0.0)
            return n;
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t k = 0; k < t->n_obs; k++) {
        lo = obs_at(t, k)->records < lo ? obs_at(t, k)->records : lo;
        hi = obs_at(t, k)->records > hi ? obs_at(t, k)->records : hi;
    }
    size_t low = lo / 2 > t->lim.chunk_min ? lo / 2 : t->lim.chunk_min;
    size_t high = hi <= t->lim.chunk_max / SP_TUNE_REACH ? hi * SP_TUNE_REACH : t->lim.chunk_max;
    for (size_t c = t->cur.chunk / 2; c >= low && c > 0 && n < 20; c /= 2)
        out[n++] = c;
    for (size_t c = t->cur.chunk; c <= high / 2 && n < 38;)
        out[n++] = c *= 2;
    if (high != t->cur.chunk && n < 40)
        out[n++] = high;
    if (low < t->cur.chunk && n < 40)
        out[n++] = low;
    return n;
}

typedef struct pick {
    sp_tune_settings s;
    double rate;
    size_t memory;
} pick;

/* The least memory among the settings within SP_TUNE_NEAR of the best rate, in budget. */
static pick best_pick(const sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES],
                      size_t remaining)
{
    size_t chunks[40], n = chunk_candidates(t, fit, chunks);
    unsigned d0 = t->lim.depth_fixed ? t->cur.depth : t->lim.depth_min;
    unsigned d1 = t->lim.depth_fixed ? t->cur.depth : t->lim.depth_max;
    double best = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        pick chosen = {.s = t->cur, .rate = 0.0, .memory = SIZE_MAX};
        for (size_t k = 0; k < n; k++)
            for (unsigned d = d0 ? d0 : 1; d <= d1; d++) {
                sp_tune_settings s = {chunks[k], d};
                if (!sp_tune_fits(&t->shape, &t->lim, s))
                    continue;
                double r = rate_with(fit, s, remaining);
                size_t mem = memory_held(t, s);
                if (pass == 0)
                    best = fmax(best, r);
                else if (r >= (1.0 - SP_TUNE_NEAR) * best &&
                         (mem < chosen.memory || (mem == chosen.memory && r > chosen.rate)))
                    chosen = (pick){s, r, mem};
            }
        if (pass == 1)
            return chosen;
    }
    return (pick){.s = t->cur, .rate = 0.0, .memory = SIZE_MAX}; /* not reached */
}

/* ---- the rules of change ----------------------------------------------------------------- */

/* How far the costs per record moved since the last pick: the largest factor either way
 * over the engines that matter (5% of the period or more). */
static double moved_since_pick(const sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES])
{
    double now[SP_TUNE_ENGINES], top = 0.0, factor = 1.0;
    for (int e = 0; e < SP_TUNE_ENGINES; e++) {
        now[e] = cost(&fit[e], t->cur.chunk) / (double)t->cur.chunk;
        top = fmax(top, fmax(now[e], t->basis[e]));
    }
    for (int e = 0; e < SP_TUNE_ENGINES; e++) {
        if (fmax(now[e], t->basis[e]) < 0.05 * top)
            continue;
        if (now[e] <= 0.0 || t->basis[e] <= 0.0)
            return INFINITY;
        factor = fmax(factor, fmax(now[e] / t->basis[e], t->basis[e] / now[e]));
    }
    return factor;
}

static int may_pick(const sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES], double now)
{
    if (!t->picked || t->shifted || t->informed)
        return 1;
    double moved = moved_since_pick(t, fit);
    if (moved >= SP_TUNE_SHIFT)
        return 1;
    if (moved < SP_TUNE_MOVED)
        return 0;
    return now - t->t_start < SP_TUNE_WARMUP_S || now - t->t_change >= SP_TUNE_CALM_S;
}

static int start_probe(sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES], sp_tune_decision *d)
{
    int sloped = 1;
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        sloped &= fit[e].sloped || fit[e].a <= 0.0;
    if (sloped || t->probed || t->lim.chunk_fixed)
        return 0;
    size_t c = t->cur.chunk / 2;
    if (c < t->lim.chunk_min || c == 0)
        c = t->cur.chunk * 2 <= t->lim.chunk_max ? t->cur.chunk * 2 : 0;
    if (c == 0 || !sp_tune_fits(&t->shape, &t->lim, (sp_tune_settings){c, t->cur.depth}))
        return 0;
    t->probe_chunk = c;
    t->probe_left = SP_TUNE_PROBE_CHUNKS;
    d->verdict = SP_TUNE_PROBE;
    d->to = (sp_tune_settings){c, t->cur.depth};
    snprintf(d->reason, sizeof d->reason, "probing %zu-record chunks to see how costs scale",
             c);
    return 1;
}

static void explain(const sp_tuner *t, const sp_tune_fit fit[SP_TUNE_ENGINES], const pick *to,
                    double gain, size_t freed, sp_tune_decision *d)
{
    int top = 0, second = -1;
    double c[SP_TUNE_ENGINES];
    for (int e = 0; e < SP_TUNE_ENGINES; e++) {
        c[e] = cost(&fit[e], t->cur.chunk) * 1e3;
        if (c[e] > c[top])
            top = e;
    }
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        if (e != top && (second < 0 || c[e] > c[second]))
            second = e;
    char what[64] = "", *w = what;
    if (to->s.chunk != t->cur.chunk)
        w += snprintf(w, sizeof what, "chunk %zu -> %zu", t->cur.chunk, to->s.chunk);
    if (to->s.depth != t->cur.depth)
        snprintf(w, sizeof what - (size_t)(w - what), "%sdepth %u -> %u", w > what ? ", " : "",
                 t->cur.depth, to->s.depth);
    char why[48];
    if (gain > SP_TUNE_GAIN)
        snprintf(why, sizeof why, "for %+.0f%% predicted rate", gain * 100.0);
    else
        snprintf(why, sizeof why, "to free %.0f MiB", (double)freed / (1024.0 * 1024.0));
    snprintf(d->reason, sizeof d->reason, "%s %.*f ms/chunk hidden behind %s %.*f ms: %s %s",
             ENGINE_NAME[second], c[second] < 1.0 ? 3 : 1, c[second], ENGINE_NAME[top],
             c[top] < 1.0 ? 3 : 1, c[top], what, why);
}

void sp_tuner_decide(sp_tuner *t, double now, size_t remaining, sp_tune_decision *d)
{
    memset(d, 0, sizeof *d);
    d->verdict = SP_TUNE_KEEP;
    d->from = d->to = t->cur;
    if (t->probe_left > 0 || t->seen_since_change < SP_TUNE_MIN_OBS || t->n_obs < SP_TUNE_MIN_OBS)
        return;
    sp_tune_fit fit[SP_TUNE_ENGINES];
    fit_all(t, fit);
    int in_budget = sp_tune_fits(&t->shape, &t->lim, t->cur);
    if (in_budget && !may_pick(t, fit, now))
        return;
    if (start_probe(t, fit, d))
        return;
    pick to = best_pick(t, fit, remaining);
    t->picked = 1;
    t->picks++;
    t->t_pick = now;
    t->shifted = 0;
    t->informed = 0;
    for (int e = 0; e < SP_TUNE_ENGINES; e++)
        t->basis[e] = cost(&fit[e], t->cur.chunk) / (double)t->cur.chunk;
    if (to.memory == SIZE_MAX || (to.s.chunk == t->cur.chunk && to.s.depth == t->cur.depth))
        return;
    double now_rate = rate_with(fit, t->cur, remaining);
    double gain = now_rate > 0.0 ? to.rate / now_rate - 1.0 : INFINITY;
    size_t mem = memory_held(t, t->cur);
    size_t freed = mem > to.memory ? mem - to.memory : 0;
    int frees = gain > -SP_TUNE_NEAR && (double)freed >= SP_TUNE_FREE * (double)mem;
    if (in_budget && gain <= SP_TUNE_GAIN && !frees)
        return;
    d->verdict = SP_TUNE_CHANGE;
    d->to = to.s;
    /* beyond the sizes seen before: pick again once the new size has been seen */
    t->extending = to.s.chunk != t->cur.chunk;
    d->predicted_gain = gain;
    explain(t, fit, &to, gain, freed, d);
}

void sp_tuner_applied(sp_tuner *t, sp_tune_settings s, double now)
{
    t->cur = s;
    t->t_change = now;
    t->seen_since_change = 0;
    t->probe_left = 0;
}
