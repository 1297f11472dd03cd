/* Decompression inside the ring (ring_decode.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/block_source.h"
#include "core/pipeline.h"
#include "core/pipeline_state.h"
#include "core/ring.h"
#include "core/ring_chunk.h"
#include "core/ring_decode.h"
#include "streampipe_io.h"

/* What the launch on HOST and the done callback on CUDA are handed: the slot. */
typedef struct slot_arg {
    struct sp_ring_decode *d;
    size_t slot;
    size_t chunk; /* the chunk it decodes (the done callback's message) */
} slot_arg;

typedef struct decode_slot {
    int in_ring;        /* the slot's chunk goes through the ring */
    size_t n_units, n_packed; /* its units; those the backend decompresses (not stored) */
    size_t src_total;   /* its compressed units' bytes, from data_at */
    sp_ring_unit *units;
    int timed;          /* its timing events hold a record not yet added up */
} decode_slot;

struct sp_ring_decode {
    const sp_block_source *bs;
    sp_batch *b;
    int active;              /* chunks may go through the ring */
    int backend_op;          /* by the backend's decompress (CUDA), else a launch (HOST) */
    int covers;              /* every chunk of the run is whole units: all go through it */
    size_t max_units, data_at, slot_bytes, temp_bytes;
    size_t n_slots;          /* slots with buffers: the run's chunks, at most the depth */
    char *pinned, *device, *temp, *results;
    sp_bevent *start[SP_MAX_DEPTH], *end[SP_MAX_DEPTH];
    /* recorded after each chunk's decompression on its queue: the slot's units stay its own
     * until then (HOST's launch and CUDA's done callback read them), also where the ring
     * frees a slot for the next chunk's staging once its h2d is done (an output to memory) */
    sp_bevent *decoded[SP_MAX_DEPTH];
    decode_slot slots[SP_MAX_DEPTH];
    slot_arg args[SP_MAX_DEPTH];
    sp_ring_figures fig;
    char why[320];           /* why not, when not active */
    char chunk_note[80];     /* "" or why its chunks hold fewer blocks than wanted */
};

#define ARRAYS 6 /* src, src_bytes, dst, dst_bytes, made, status: 8 bytes a unit each */

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* ---- the decision and the memory ------------------------------------------------------- */

/* Why the batch's chunks cannot go through the ring ("" when they can), the chunk rounded
 * down to whole units when they can. */
/* Records a block holds (the source's blocks are one size and whole records once decide
 * found nothing against the ring). */
static size_t unit_records(const sp_ring_decode *d)
{
    return d->bs->unit_bytes / d->b->p->record_bytes[0];
}

static void decide(sp_ring_decode *d, char *why, size_t n)
{
    sp_batch *b = d->b;
    sp_pipeline *p = b->p;
    const sp_block_source *bs = d->bs;
    size_t rec = p->record_bytes[0];
    why[0] = '\0';
    if (bs->where == SP_DECOMPRESS_STAGING)
        snprintf(why, n, "asked for (decompress: staging)");
    else if (bs->why_not && bs->why_not[0])
        snprintf(why, n, "%s", bs->why_not);
    else if (p->n_stages == 0)
        snprintf(why, n, "the pipeline has no stage to decompress before");
    else if (bs->unit_bytes == 0)
        snprintf(why, n, "its blocks differ in size (several frames?), so chunks cannot be "
                 "whole blocks");
    else if (bs->unit_bytes % rec != 0)
        snprintf(why, n, "its blocks of %zu bytes are not whole records of %zu bytes",
                 bs->unit_bytes, rec);
    else if (bs->unit_bytes / rec > p->chunk_capacity)
        snprintf(why, n, "a block (%zu records) is larger than the pipeline's chunk (%zu "
                 "records)", bs->unit_bytes / rec, p->chunk_capacity);
    if (why[0])
        return;
    sp_ring_chunk_set(b, b->plan.chunk_records, unit_records(d));
}

/* The backend's device scratch for one call of chunks of `units` whole units, each slot's
 * aligned. */
static sp_status prepare(const sp_ring_decode *d, size_t units, size_t *temp)
{
    sp_pipeline *p = d->b->p;
    sp_backend_error_clear();
    sp_status st = p->ctx->ops->decompress_prepare(p->ctx->impl, d->bs->format, units + 1,
                                                   d->bs->max_dst_bytes,
                                                   units * d->bs->unit_bytes, temp);
    *temp = st == SP_OK ? round_up(*temp, 256) : 0;
    return st;
}

/* Whether the backend can decompress: its own op, or HOST's launch over the source's
 * decoders. Sets d->temp_bytes for b's chunk. */
static int backend_can(sp_ring_decode *d, char *why, size_t n)
{
    sp_pipeline *p = d->b->p;
    const sp_backend_ops *ops = p->ctx->ops;
    if (ops->decompress_prepare) {
        if (prepare(d, d->b->plan.chunk_records / unit_records(d), &d->temp_bytes) == SP_OK) {
            d->backend_op = 1;
            return 1;
        }
        snprintf(why, n, "%s", sp_backend_error()[0] ? sp_backend_error()
                                                     : "the backend cannot decompress it");
    }
    if (p->ctx->kind == SP_BACKEND_HOST)
        return 1; /* its device memory is host memory: the source's decoders reach it */
    if (!ops->decompress_prepare)
        snprintf(why, n, "the %s backend has no decompression", ops->name);
    return 0;
}

/* Whether the run's first records are a whole unit: a range that starts inside one cuts a
 * unit in every chunk (all go to the staging threads), so their chunk is not re-picked. */
static int starts_whole(const sp_ring_decode *d)
{
    const sp_batch *b = d->b;
    size_t per = unit_records(d), n, src_total;
    sp_ring_unit unit;
    return d->bs->units(d->bs, b->record_base, per < b->plan.n_records ? per : b->plan.n_records,
                        &unit, 1, &n, &src_total);
}

/* The decoder's buffers for chunks of max_units - 1 whole units in `slots` slots, each
 * slot's device scratch `temp`: the unit arrays and the compressed bytes (data_at on) a slot
 * in pinned and in device memory, the results in pinned memory. */
typedef struct decoder_bytes {
    size_t data_at, slot_bytes, pinned, device;
} decoder_bytes;

static decoder_bytes bytes_of(const sp_ring_decode *d, size_t max_units, size_t slots,
                              size_t temp)
{
    decoder_bytes z;
    z.data_at = round_up(ARRAYS * 8 * max_units, 256);
    z.slot_bytes = z.data_at + d->bs->max_src_total(d->bs, max_units);
    z.pinned = slots * (z.slot_bytes + 16 * max_units);
    z.device = slots * (z.slot_bytes + temp);
    return z;
}

/* Slots a run in chunks of `units` units fills: one a chunk, at most the depth. */
static size_t slots_for(const sp_ring_decode *d, size_t units)
{
    size_t chunk = units * unit_records(d), n = d->b->plan.n_records;
    size_t chunks = n / chunk + (n % chunk != 0);
    return chunks < d->b->p->depth ? chunks : d->b->p->depth;
}

/* What bytes_of holds per unit a slot (the spare unit aside), for the budget of a larger
 * ring (tune.h): the scratch shared out over b's units now. */
static sp_tune_decoder decoder_of(const sp_ring_decode *d)
{
    size_t data = round_up(d->bs->max_src_bytes + 16, 16);
    size_t temp = d->max_units ? (d->temp_bytes + d->max_units - 1) / d->max_units : 0;
    return (sp_tune_decoder){unit_records(d), ARRAYS * 8 + 16 + data, ARRAYS * 8 + data + temp};
}

/* The chunk a batched decompressor wants (ring_chunk.h), once the backend can decompress: a
 * larger one needs the backend's scratch asked for again. */
static void repick(sp_ring_decode *d)
{
    sp_tune_decoder dec = decoder_of(d);
    if (!starts_whole(d) || !sp_ring_chunk_pick(d->b, &dec, d->chunk_note, sizeof d->chunk_note))
        return;
    d->max_units = d->b->plan.chunk_records / dec.unit_records + 1;
    d->active = backend_can(d, d->why, sizeof d->why);
}

/* The pipeline's bytes with chunks of `units` units: the ring's and the decoder's. 0 when the
 * backend cannot say its scratch for them. */
static int held_with(const sp_ring_decode *d, size_t units, size_t *pinned, size_t *device)
{
    size_t temp = 0;
    if (d->backend_op && prepare(d, units, &temp) != SP_OK)
        return 0;
    decoder_bytes z = bytes_of(d, units + 1, slots_for(d, units), temp);
    const sp_pipeline *p = d->b->p;
    sp_pipeline_ring_bytes(p, pinned, device);
    if (!p->pinned_in) /* left out by the rechunk: a later batch that stages input makes it */
        *pinned += p->pinned_in_stride * p->depth;
    *pinned += z.pinned;
    *device += z.device;
    return 1;
}

static int within(const sp_ring_decode *d, size_t units)
{
    const sp_tune_state *t = &d->b->p->tune;
    size_t pinned, device;
    return held_with(d, units, &pinned, &device) && (!t->max_pinned || pinned <= t->max_pinned) &&
           (!t->max_device || device <= t->max_device);
}

/* Why no chunk fits the budget: what the smallest legal one (one block where the library
 * picks the chunk, else the chunk given) would hold. */
static void say_over(sp_ring_decode *d, size_t units)
{
    const sp_pipeline *p = d->b->p;
    size_t pinned = 0, device = 0;
    (void)held_with(d, units, &pinned, &device);
    snprintf(d->why, sizeof d->why, "the memory budget (max_pinned_bytes %zu, "
             "max_device_bytes %zu) cannot hold the ring with its compressed buffers: %zu "
             "blocks a chunk%s need %zu pinned, %zu device bytes",
             p->tune.max_pinned, p->tune.max_device, units,
             p->chunk_chosen ? "" : " (chunk_records given)", pinned, device);
}

/* Every byte the decoder holds within the budget, beside the ring: b's chunk as it is, or,
 * where the library picks it, cut to the most whole blocks that fit; 0 (d->why says what the
 * smallest would need) when none does. Sets d->temp_bytes for the chunk. */
static int fit_budget(sp_ring_decode *d)
{
    sp_pipeline *p = d->b->p;
    size_t per = unit_records(d), units = d->b->plan.chunk_records / per, lo = 1;
    if ((!p->tune.max_pinned && !p->tune.max_device) || within(d, units))
        return 1;
    if (!p->chunk_chosen || units == 1 || !within(d, lo)) {
        say_over(d, p->chunk_chosen ? 1 : units);
        return 0;
    }
    for (size_t hi = units - 1; lo < hi;) { /* memory grows with the chunk */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (within(d, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    sp_ring_chunk_set(d->b, lo * per, per);
    sp_ring_chunk_note(d->b, per, units * per, lo * per, d->chunk_note, sizeof d->chunk_note);
    if (!d->backend_op || prepare(d, lo, &d->temp_bytes) == SP_OK)
        return 1;
    snprintf(d->why, sizeof d->why, "%s", sp_backend_error()); /* it said so a moment ago */
    return 0;
}

static sp_status allocate(sp_ring_decode *d)
{
    sp_pipeline *p = d->b->p;
    const sp_backend_ops *ops = p->ctx->ops;
    void *impl = p->ctx->impl;
    size_t units = d->b->plan.chunk_records / unit_records(d);
    d->max_units = units + 1;
    d->n_slots = slots_for(d, units); /* chunk i takes slot i % depth: these alone */
    decoder_bytes z = bytes_of(d, d->max_units, d->n_slots, d->temp_bytes);
    d->data_at = z.data_at;
    d->slot_bytes = z.slot_bytes;
    for (size_t s = 0; s < d->n_slots; s++)
        if (!(d->slots[s].units = calloc(d->max_units, sizeof(sp_ring_unit))))
            return SP_ERR_OUT_OF_MEMORY;
    sp_status st = ops->pinned_alloc(impl, d->n_slots * d->slot_bytes, (void **)&d->pinned);
    if (st == SP_OK)
        st = ops->device_alloc(impl, d->n_slots * d->slot_bytes, (void **)&d->device);
    if (st == SP_OK)
        st = ops->pinned_alloc(impl, d->n_slots * 16 * d->max_units, (void **)&d->results);
    if (st == SP_OK && d->temp_bytes)
        st = ops->device_alloc(impl, d->n_slots * d->temp_bytes, (void **)&d->temp);
    for (size_t s = 0; st == SP_OK && d->b->timing && s < d->n_slots; s++) {
        st = ops->event_create(impl, SP_EVENT_TIMING, &d->start[s]);
        if (st == SP_OK)
            st = ops->event_create(impl, SP_EVENT_TIMING, &d->end[s]);
    }
    for (size_t s = 0; st == SP_OK && s < d->n_slots; s++)
        st = ops->event_create(impl, SP_EVENT_SYNC, &d->decoded[s]);
    if (st == SP_OK)
        sp_pipeline_hold_run(p, z.pinned, z.device); /* what sp_stats and the report count */
    return st;
}

static void release(sp_ring_decode *d)
{
    sp_pipeline *p = d->b->p;
    const sp_backend_ops *ops = p->ctx->ops;
    void *impl = p->ctx->impl;
    for (size_t s = 0; s < SP_MAX_DEPTH; s++) {
        if (d->start[s])
            ops->event_destroy(impl, d->start[s]);
        if (d->end[s])
            ops->event_destroy(impl, d->end[s]);
        if (d->decoded[s])
            ops->event_destroy(impl, d->decoded[s]);
        free(d->slots[s].units);
    }
    ops->pinned_free(impl, d->pinned);
    ops->pinned_free(impl, d->results);
    ops->device_free(impl, d->device);
    ops->device_free(impl, d->temp);
    sp_pipeline_hold_run(p, 0, 0);
    free(d);
}

/* Whether every chunk is whole units: the first starts on a unit, each holds whole units
 * (decide rounded the chunk), and the last ends on one or at the input's end (units() says:
 * it is asked with the slots' arrays, made by allocate). */
static int every_chunk_whole(const sp_ring_decode *d)
{
    const sp_batch *b = d->b;
    size_t last = b->plan.chunks - 1, first = sp_chunk_first(b, last), n, src_total;
    return starts_whole(d) && b->plan.chunk_records % unit_records(d) == 0 &&
           d->bs->units(d->bs, b->record_base + first, b->plan.n_records - first,
                        d->slots[0].units, d->max_units, &n, &src_total) &&
           src_total <= d->slot_bytes - d->data_at;
}

int sp_ring_decode_covers(const sp_batch *b)
{
    return b->decode && b->decode->covers;
}

sp_status sp_ring_decode_begin(sp_batch *b)
{
    b->decode = NULL;
    if (!b->io || !b->io->blocks || b->io->n_records == 0)
        return SP_OK;
    sp_ring_decode *d = calloc(1, sizeof *d);
    if (!d)
        return sp_pipeline_fail(b->p, SP_ERR_OUT_OF_MEMORY, "no memory for decompression");
    d->bs = b->io->blocks;
    d->b = b;
    b->decode = d;
    decide(d, d->why, sizeof d->why);
    if (!d->why[0]) {
        d->max_units = b->plan.chunk_records * b->p->record_bytes[0] / d->bs->unit_bytes + 1;
        d->active = backend_can(d, d->why, sizeof d->why);
    }
    if (d->active)
        repick(d);
    if (d->active && !fit_budget(d))
        d->active = 0; /* d->why says what the budget would need */
    sp_status st = SP_OK;
    if (d->active && (st = allocate(d)) != SP_OK) {
        st = sp_pipeline_backend_fail(b->p, st, "allocating the ring's compressed buffers");
    } else if (d->active) {
        d->covers = every_chunk_whole(d);
    } else if (d->bs->where == SP_DECOMPRESS_RING) {
        st = sp_pipeline_fail(b->p, SP_ERR_UNSUPPORTED, "decompress: ring: the input cannot "
                              "be decompressed in the ring: %s", d->why);
    }
    if (st != SP_OK) {
        release(d);
        b->decode = NULL;
    }
    return st;
}

/* ---- timing ------------------------------------------------------------------------------ */

/* Adds slot s's last decompression span to the busy time (its events are complete: the
 * chunk has left the ring, or the run has drained). */
static void add_span(sp_ring_decode *d, size_t s)
{
    sp_pipeline *p = d->b->p;
    double seconds = 0.0;
    if (!d->slots[s].timed)
        return;
    d->slots[s].timed = 0;
    if (p->ctx->ops->event_sync(p->ctx->impl, d->end[s]) == SP_OK &&
        p->ctx->ops->event_elapsed(p->ctx->impl, d->start[s], d->end[s], &seconds) == SP_OK)
        d->fig.busy_s += seconds;
}

void sp_ring_decode_end(sp_batch *b)
{
    sp_ring_decode *d = b->decode;
    if (!d)
        return;
    for (size_t s = 0; s < d->n_slots; s++)
        add_span(d, s);
    char note[384];
    const sp_backend_ops *ops = b->p->ctx->ops;
    if (!d->active)
        snprintf(note, sizeof note, "decompressed on the staging threads: %s", d->why);
    else if (d->fig.staging_chunks)
        snprintf(note, sizeof note, "decompressed in the ring (%s), %llu chunks on the "
                 "staging threads (they cut a block)%s", d->backend_op ? ops->name : "host",
                 (unsigned long long)d->fig.staging_chunks, d->chunk_note);
    else /* the blocks a batch: what a GPU decompressor has to fill the device with */
        snprintf(note, sizeof note, "decompressed in the ring (%s, %llu blocks per chunk)%s%s",
                 d->backend_op ? "the device's nvCOMP" : "liblz4/libzstd on stage 1's queue",
                 (unsigned long long)(d->fig.chunks ? d->fig.blocks / d->fig.chunks : 0),
                 d->bs->format == SP_INPUT_FORMAT_LZ4 ? "; content checksums not checked"
                                                     : "", d->chunk_note);
    d->bs->ran(d->bs, &d->fig, note);
    release(d);
    b->decode = NULL;
}

/* ---- a chunk ------------------------------------------------------------------------------ */

static char *slot_pinned(const sp_ring_decode *d, size_t s) { return d->pinned + s * d->slot_bytes; }
static char *slot_device(const sp_ring_decode *d, size_t s) { return d->device + s * d->slot_bytes; }

/* The unit arrays of the backend's decompress, written into the pinned buffer with the
 * device addresses they will have after the h2d. */
static void write_arrays(sp_ring_decode *d, size_t s)
{
    decode_slot *ds = &d->slots[s];
    size_t m = d->max_units, k = 0;
    char *base = slot_pinned(d, s), *dev = slot_device(d, s);
    char *in = sp_device_slot(d->b->p, 0, s);
    void **src = (void **)base, **dst = (void **)(base + 16 * m);
    size_t *src_bytes = (size_t *)(base + 8 * m), *dst_bytes = (size_t *)(base + 24 * m);
    for (size_t u = 0; u < ds->n_units; u++) {
        const sp_ring_unit *x = &ds->units[u];
        if (x->stored)
            continue;
        src[k] = dev + d->data_at + x->src_at;
        src_bytes[k] = x->src_bytes;
        dst[k] = in + x->dst_at;
        dst_bytes[k] = x->dst_bytes;
        k++;
    }
    ds->n_packed = k;
}

int sp_ring_decode_plan(sp_batch *b, size_t i, size_t records)
{
    sp_ring_decode *d = b->decode;
    if (!d)
        return 0;
    size_t s = i % b->p->depth, rec = b->p->record_bytes[0];
    decode_slot *ds = &d->slots[s];
    size_t first = b->record_base + sp_chunk_first(b, i);
    sp_status st = d->decoded[s] ? b->p->ctx->ops->event_sync(b->p->ctx->impl, d->decoded[s])
                                 : SP_OK; /* the slot's last chunk is done with its units */
    if (st != SP_OK) {
        (void)sp_batch_fail(b, st, "chunk %zu: waiting for the decompression of chunk %zu", i,
                            i - b->p->depth);
        return 0;
    }
    ds->in_ring = d->active &&
                  d->bs->units(d->bs, first, records, ds->units, d->max_units, &ds->n_units,
                               &ds->src_total) &&
                  ds->src_total <= d->slot_bytes - d->data_at; /* max_src_total's promise */
    if (!ds->in_ring) {
        d->fig.staging_chunks++;
        return 0;
    }
    write_arrays(d, s);
    d->fig.chunks++;
    d->fig.blocks += ds->n_units;
    d->fig.bytes_in += ds->src_total;
    d->fig.bytes_out += (uint64_t)records * rec;
    return 1;
}

/* The first of the slot's units whose compressed bytes start at or after byte `at` of its
 * buffer (their src_at grow with the unit). */
static size_t unit_at(const decode_slot *ds, size_t at)
{
    size_t lo = 0, hi = ds->n_units;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ds->units[mid].src_at < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A staging job's piece: bytes [offset, offset + len) of the slot's compressed buffer, that
 * is the units that start there, fetched whole (a unit is read by the one piece it starts
 * in). The job is counted in bytes, not units, so that the pool shares a chunk's reads out
 * over all its threads (a count of units would be one piece: one thread read every block). */
static sp_status fetch_piece(void *arg, size_t offset, size_t len)
{
    slot_arg *a = arg;
    sp_ring_decode *d = a->d;
    decode_slot *ds = &d->slots[a->slot];
    char *data = slot_pinned(d, a->slot) + d->data_at;
    for (size_t u = unit_at(ds, offset), end = unit_at(ds, offset + len); u < end; u++) {
        char why[384];
        const sp_ring_unit *x = &ds->units[u];
        if (d->bs->fetch(d->bs, x, data + x->src_at, why, sizeof why) != SP_OK)
            return sp_batch_fail_chunk(d->b, a->chunk, "the source failed reading the "
                                       "compressed blocks of the chunk from record %zu: %s",
                                       d->b->record_base + sp_chunk_first(d->b, a->chunk),
                                       why);
    }
    return SP_OK;
}

sp_copy sp_ring_decode_fetch(sp_batch *b, size_t i)
{
    sp_ring_decode *d = b->decode;
    size_t s = i % b->p->depth;
    d->args[s] = (slot_arg){d, s, i};
    return (sp_copy){.bytes = d->slots[s].src_total, .fn = fetch_piece, .arg = &d->args[s],
                     .unit = 1};
}

int sp_ring_decode_h2d(const sp_batch *b, size_t i, void **dst, const void **src,
                       size_t *bytes)
{
    const sp_ring_decode *d = b->decode;
    size_t s = i % b->p->depth;
    if (!d || !d->slots[s].in_ring)
        return 0;
    *dst = slot_device(d, s);
    *src = slot_pinned(d, s);
    *bytes = d->data_at + d->slots[s].src_total;
    return 1;
}

/* ---- the decompression ------------------------------------------------------------------- */

static sp_status fail_unit(sp_ring_decode *d, size_t chunk, const sp_ring_unit *x,
                           const char *why)
{
    return sp_pipeline_fail_chunk(d->b->p, chunk, 0, SP_ERR_STAGE_FAILED,
                                  "chunk %zu: decompressing its %s at file offset %llu in the "
                                  "ring: %s", chunk,
                                  d->bs->format == SP_INPUT_FORMAT_LZ4 ? "LZ4 block"
                                                                      : "Zstandard frame",
                                  (unsigned long long)x->file_offset, why);
}

/* HOST: the chunk's units decoded on the queue's worker, from the slot's "device" buffer. */
static sp_status host_decode(const sp_chunk *chunk, void *arg)
{
    slot_arg *a = arg;
    sp_ring_decode *d = a->d;
    sp_pipeline *p = d->b->p;
    if (sp_failure_drops(&p->failure, chunk->index))
        return SP_ERR_CANCELLED;
    const decode_slot *ds = &d->slots[a->slot];
    const char *data = slot_device(d, a->slot) + d->data_at;
    char *in = sp_device_slot(p, 0, a->slot);
    for (size_t u = 0; u < ds->n_units; u++) {
        const sp_ring_unit *x = &ds->units[u];
        char why[384];
        sp_status st = SP_OK;
        if (x->stored)
            memcpy(in + x->dst_at, data + x->src_at, x->dst_bytes);
        else
            st = d->bs->decode(d->bs, x, data + x->src_at, in + x->dst_at, why, sizeof why);
        if (st != SP_OK)
            return fail_unit(d, chunk->index, x, why);
    }
    return SP_OK;
}

/* CUDA: the backend's results, checked on its callback thread. */
static void device_done(void *arg)
{
    slot_arg *a = arg;
    sp_ring_decode *d = a->d;
    const decode_slot *ds = &d->slots[a->slot];
    const size_t *made = (const size_t *)(d->results + a->slot * 16 * d->max_units);
    const int *status = (const int *)(made + d->max_units);
    size_t k = 0;
    for (size_t u = 0; u < ds->n_units; u++) {
        const sp_ring_unit *x = &ds->units[u];
        if (x->stored)
            continue;
        char why[160] = "";
        if (status[k] != 0)
            snprintf(why, sizeof why, "nvCOMP status %d (corrupt, or it expands past its %zu "
                     "bytes)", status[k], x->dst_bytes);
        else if (made[k] != x->dst_bytes)
            snprintf(why, sizeof why, "it decodes to %zu bytes, not %zu", made[k],
                     x->dst_bytes);
        k++;
        if (why[0]) {
            (void)fail_unit(d, a->chunk, x, why);
            return;
        }
    }
}

/* The backend's decompress: the stored units copied device to device, the others in one
 * batched call. */
static sp_status device_decode(sp_ring_decode *d, size_t s, sp_bqueue *q)
{
    sp_pipeline *p = d->b->p;
    const sp_backend_ops *ops = p->ctx->ops;
    const decode_slot *ds = &d->slots[s];
    char *dev = slot_device(d, s), *in = sp_device_slot(p, 0, s);
    size_t m = d->max_units;
    sp_status st = SP_OK;
    for (size_t u = 0; st == SP_OK && u < ds->n_units; u++)
        if (ds->units[u].stored)
            st = ops->copy_d2d(p->ctx->impl, in + ds->units[u].dst_at,
                               dev + d->data_at + ds->units[u].src_at,
                               ds->units[u].dst_bytes, q);
    if (st != SP_OK || ds->n_packed == 0)
        return st;
    size_t *made_host = (size_t *)(d->results + s * 16 * m);
    sp_decompress_args args = {
        .format = d->bs->format, .n = ds->n_packed,
        .src = (const void *const *)dev, .src_bytes = (const size_t *)(dev + 8 * m),
        .dst = (void *const *)(dev + 16 * m), .dst_bytes = (const size_t *)(dev + 24 * m),
        .made = (size_t *)(dev + 32 * m), .status = (int *)(dev + 40 * m),
        .max_dst_bytes = d->bs->max_dst_bytes,
        .total_dst_bytes = d->b->plan.chunk_records * p->record_bytes[0],
        .temp = d->temp ? d->temp + s * d->temp_bytes : NULL, .temp_bytes = d->temp_bytes,
        .made_host = made_host, .status_host = (int *)(made_host + m),
        .done = device_done, .done_arg = &d->args[s]};
    return ops->decompress(p->ctx->impl, &args, q);
}

sp_status sp_ring_decode_enqueue(sp_batch *b, size_t i, sp_bqueue *q)
{
    sp_ring_decode *d = b->decode;
    sp_pipeline *p = b->p;
    size_t s = i % p->depth;
    if (!d || !d->slots[s].in_ring)
        return SP_OK;
    const sp_backend_ops *ops = p->ctx->ops;
    add_span(d, s); /* chunk i - K has left the slot: its span is complete */
    d->args[s] = (slot_arg){d, s, i};
    int timed = d->start[s] != NULL;
    sp_status st = timed ? ops->event_record(p->ctx->impl, d->start[s], q) : SP_OK;
    if (st == SP_OK && d->backend_op) {
        st = device_decode(d, s, q);
    } else if (st == SP_OK) {
        sp_chunk chunk = sp_ring_stage_chunk(b, 1, i, s);
        st = ops->launch(p->ctx->impl, q, host_decode, &d->args[s], &chunk);
    }
    if (st == SP_OK && timed && (st = ops->event_record(p->ctx->impl, d->end[s], q)) == SP_OK)
        d->slots[s].timed = 1;
    if (st == SP_OK)
        st = ops->event_record(p->ctx->impl, d->decoded[s], q);
    return st == SP_OK ? SP_OK
                       : sp_batch_fail(b, st, "chunk %zu: enqueueing its decompression", i);
}
