/* A stream under test; see stream_rig.h. */
#include "stream_rig.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t rig_tag(size_t k) { return 0x5000u + 7u * (uint64_t)k; }

static size_t tag_batch(uint64_t tag)
{
    return tag >= 0x5000u && (tag - 0x5000u) % 7u == 0 ? (size_t)((tag - 0x5000u) / 7u)
                                                        : SIZE_MAX;
}

/* ---- the plan ------------------------------------------------------------------------------ */

void rig_plan(stream_rig *r, size_t n, mem_kind in_kind, mem_kind out_kind, int in_place)
{
    if (!CHECK(r->n_batches < RIG_MAX_BATCHES))
        return;
    size_t k = r->n_batches++;
    rig_batch *b = &r->b[k];
    memset(b, 0, sizeof *b);
    b->n = n;
    b->first = k ? r->b[k - 1].first + r->b[k - 1].n : 0;
    b->first_chunk = k ? r->b[k - 1].first_chunk + r->b[k - 1].chunks : 0;
    b->chunks = (n + r->chunk - 1) / r->chunk;
    b->in_kind = in_kind;
    b->out_kind = in_place ? in_kind : out_kind;
    b->in_place = in_place;
    b->tag = rig_tag(k);
}

int rig_can_be_in_place(const mix_chain *chain) { return mix_chain_out_rec(chain) == chain->in_rec; }

size_t rig_random_size(size_t chunk, test_rng *rng)
{
    static const size_t fixed[] = {0, 1, 2, 7, 13, 97};
    size_t k = rng_below(rng, ARRAY_LEN(fixed) + 5);
    if (k < ARRAY_LEN(fixed))
        return fixed[k];
    switch (k - ARRAY_LEN(fixed)) {
    case 0: return chunk - 1;
    case 1: return chunk;
    case 2: return chunk + 1;
    case 3: return 3 * chunk + 1;
    default: return 11 * chunk + 7;
    }
}

void rig_plan_random(stream_rig *r, size_t batches, test_rng *rng)
{
    int in_place_ok = rig_can_be_in_place(&r->chain);
    for (size_t k = 0; k < batches; k++)
        rig_plan(r, rig_random_size(r->chunk, rng), (mem_kind)rng_below(rng, MEM_KINDS),
                 (mem_kind)rng_below(rng, MEM_KINDS), in_place_ok && rng_below(rng, 3) == 0);
}

void rig_describe(stream_rig *r, const char *prefix)
{
    char recs[48];
    int len = snprintf(recs, sizeof recs, "%zu", r->chain.in_rec);
    for (size_t s = 0; s < r->chain.n_stages && len > 0 && (size_t)len < sizeof recs; s++)
        len += snprintf(recs + len, sizeof recs - (size_t)len, "->%zu",
                        r->chain.stages[s].out_rec);
    snprintf(r->describe, sizeof r->describe, "%s chunk=%zu depth=%u stages=%zu records=%s "
             "batches=%zu max_in_flight=%u%s%s%s streams=%u", prefix, r->chunk, r->depth, r->chain.n_stages, recs,
                    r->n_batches, r->cfg.max_in_flight, r->cfg.nonblocking ? " nonblocking" : "",
                    r->cfg.input_released_events ? " released-events" : "",
             r->graph ? " graph" : "", r->stage_streams);
    harness_context("%s", r->describe);
}

/* ---- the chunk checks ---------------------------------------------------------------------- */

/* Whether chunk c is one the plan makes: inside one batch, cut from its start. */
static int chunk_in_plan(const stream_rig *r, const sp_chunk *c)
{
    for (size_t k = 0; k < r->n_batches; k++) {
        const rig_batch *b = &r->b[k];
        if (b->n == 0 || c->first_record < b->first || c->first_record >= b->first + b->n)
            continue;
        size_t off = c->first_record - b->first, left = b->n - off;
        return off % r->chunk == 0 && c->records == (left < r->chunk ? left : r->chunk) &&
               c->index == b->first_chunk + off / r->chunk;
    }
    return 0;
}

static sp_status bound_check(const sp_chunk *c, void *arg)
{
    bound_stage *bs = arg;
    atomic_fetch_add(&bs->calls, 1);
    stream_rig *r = (stream_rig *)bs->rig;
    if (r->on_chunk && bs == &r->bounds[0])
        r->on_chunk(r, c);
    if (!chunk_in_plan(bs->rig, c) || c->scratch != NULL) {
        if (atomic_fetch_add(&bs->violations, 1) == 0)
            harness_fail(__FILE__, __LINE__, "stage %s: chunk %zu (records %zu..+%zu, scratch "
                         "%p) is not one of the plan's", bs->wrap.inner.name, c->index,
                         c->first_record, c->records, c->scratch);
    }
    return SP_OK;
}

/* ---- open ------------------------------------------------------------------------------- */

int rig_open(stream_rig *r, sp_context *ctx, uint64_t seed)
{
    r->ctx = ctx;
    r->in_rec = r->chain.in_rec;
    r->out_rec = mix_chain_out_rec(&r->chain);
    rng_init(&r->rng, seed);
    rng_init(&r->garbage, seed ^ 0x9e3779b97f4a7c15ull);
    atomic_init(&r->submitted, 0);
    atomic_init(&r->done, 0);
    atomic_init(&r->broken, 0);
    atomic_init(&r->producing, 0);
    atomic_init(&r->submitting, 0);
    if (r->graph)
        mix_chain_position_free(&r->chain);
    for (size_t s = 0; s < r->chain.n_stages; s++) {
        mix_stage_reset_counts(&r->chain.stages[s]);
        bound_stage *bs = &r->bounds[s];
        bs->wrap = (stage_wrap){.inner = r->chain.descs[s], .before = bound_check, .arg = bs};
        bs->rig = r;
        atomic_init(&bs->calls, 0);
        atomic_init(&bs->violations, 0);
        r->descs[s] = stage_wrap_desc(&bs->wrap);
        r->descs[s].streams = r->stage_streams;
    }
    size_t n_stages = r->chain.n_stages;
    if (r->tail.name)
        r->descs[n_stages++] = r->tail;
    sp_pipeline_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.in_record_bytes = r->in_rec;
    cfg.stages = n_stages ? r->descs : NULL;
    cfg.n_stages = n_stages;
    cfg.chunk_records = r->chunk;
    cfg.depth = r->depth;
    cfg.graph = r->graph ? SP_GRAPH_ON : SP_GRAPH_OFF;
    cfg.staging_threads = 2;
    if (!CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &r->p), SP_OK, sp_context_last_error(ctx)))
        return 0;
    if (!CHECK_STATUS(sp_stream_open(r->p, &r->cfg, &r->s), SP_OK,
                      sp_pipeline_last_error(r->p))) {
        sp_pipeline_destroy(r->p);
        r->p = NULL;
        return 0;
    }
    return 1;
}

/* ---- one batch ------------------------------------------------------------------------------ */

static void batch_free(rig_batch *b)
{
    buf_free(&b->in);
    buf_free(&b->out);
    free(b->want);
    free(b->in_copy);
    b->want = b->in_copy = NULL;
}

static int batch_prepare(stream_rig *r, rig_batch *b)
{
    size_t in_bytes = b->n * r->in_rec, out_bytes = b->n * r->out_rec;
    if (!CHECK_STATUS(buf_alloc(&b->in, r->ctx, b->in_kind, in_bytes), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    if (!b->in_place && !CHECK_STATUS(buf_alloc(&b->out, r->ctx, b->out_kind, out_bytes), SP_OK,
                                      sp_context_last_error(r->ctx))) {
        batch_free(b);
        return 0;
    }
    b->want = malloc(out_bytes + 1);
    b->in_copy = malloc(in_bytes + 1);
    if (!CHECK(b->want != NULL && b->in_copy != NULL)) {
        batch_free(b);
        return 0;
    }
    rng_fill(&r->rng, b->in.data, in_bytes);
    memcpy(b->in_copy, b->in.data, in_bytes);
    if (r->graph) /* position-free: records count from 0 in each chunk of the batch */
        mix_reference_run(r->chain.stages, r->chain.n_stages, r->in_rec, b->in.data, b->n,
                          r->chunk, b->want);
    else
        mix_reference(r->chain.stages, r->chain.n_stages, r->in_rec, b->in.data, b->n,
                      b->first, b->want);
    if (!b->in_place)
        buf_poison(&b->out, (unsigned char)(0xA5 ^ (b->tag & 0xFF)));
    return 1;
}

static void *batch_out(rig_batch *b) { return b->in_place ? b->in.data : b->out.data; }

static void batch_verify(stream_rig *r, size_t k, rig_batch *b, const char *when)
{
    char what[96];
    snprintf(what, sizeof what, "batch %zu (%zu records%s) output %s", k, b->n,
             b->in_place ? ", in place" : "", when);
    compare_records(b->want, batch_out(b), b->n, r->out_rec, what);
    CHECK_MSG(buf_guards_intact(&b->in), "batch %zu: a guard of its input was written", k);
    if (!b->in_place) {
        CHECK_MSG(buf_guards_intact(&b->out), "batch %zu: a guard of its output was written",
                  k);
        if (!b->clobbered)
            CHECK_MSG(memcmp(b->in_copy, b->in.data, b->n * r->in_rec) == 0,
                      "batch %zu: its input was written", k);
    }
}

/* ---- events ------------------------------------------------------------------------------- */

static void on_released(stream_rig *r, const sp_stream_event *ev)
{
    size_t k = tag_batch(ev->tag);
    size_t submitting = atomic_load(&r->submitting), done = atomic_load(&r->done);
    if (!CHECK_MSG(k < submitting && k >= done, "INPUT_RELEASED with tag %llu: no batch held "
                   "has it", (unsigned long long)ev->tag))
        return;
    rig_batch *b = &r->b[k];
    CHECK_MSG(r->cfg.input_released_events, "INPUT_RELEASED of batch %zu not asked for", k);
    CHECK_MSG(!b->released, "batch %zu released twice", k);
    CHECK_EQ(ev->records, b->n);
    CHECK_EQ(ev->status, SP_OK);
    b->released = 1;
    if (b->in_place) {
        /* its input is its output: released only once the output is all there */
        if (!r->allow_failures)
            batch_verify(r, k, b, "at its INPUT_RELEASED");
        return;
    }
    rng_fill(&r->garbage, b->in.data, b->n * r->in_rec); /* the library must not read it now */
    b->clobbered = 1;
}

static void on_done(stream_rig *r, const sp_stream_event *ev)
{
    size_t k = tag_batch(ev->tag), done = atomic_load(&r->done);
    if (!CHECK_MSG(k == done, "DONE with tag %llu (batch %zu) where batch %zu's was due",
                   (unsigned long long)ev->tag, k, done))
        return;
    rig_batch *b = &r->b[k];
    CHECK_EQ(ev->records, b->n);
    if (r->cfg.input_released_events)
        CHECK_MSG(b->released, "batch %zu: DONE before INPUT_RELEASED", k);
    b->status = ev->status;
    b->done = 1;
    if (ev->status == SP_OK)
        batch_verify(r, k, b, "at its DONE");
    else if (CHECK_MSG(r->allow_failures, "batch %zu: %s: %s", k, sp_status_name(ev->status),
                       sp_stream_last_error(r->s)))
        snprintf(b->error, sizeof b->error, "%s", sp_stream_last_error(r->s));
    batch_free(b);
    atomic_store(&r->done, done + 1);
}

int rig_take_event(stream_rig *r)
{
    sp_stream_event ev;
    memset(&ev, 0xEE, sizeof ev);
    sp_status st = sp_stream_next(r->s, &ev, RIG_EVENT_TIMEOUT_S);
    if (!CHECK_STATUS(st, SP_OK, sp_stream_last_error(r->s))) {
        atomic_store(&r->broken, 1);
        return 0;
    }
    if (ev.kind == SP_EVENT_DONE)
        on_done(r, &ev);
    else if (CHECK_MSG(ev.kind == SP_EVENT_INPUT_RELEASED, "event kind %d", (int)ev.kind))
        on_released(r, &ev);
    return 1;
}

/* ---- submitting --------------------------------------------------------------------------- */

/* Takes events while batches are held; with none held (the submitter is behind), waits for
 * one, since sp_stream_next would rightly refuse. */
static void *consumer_main(void *arg)
{
    stream_rig *r = arg;
    harness_context("%s (taking events)", r->describe);
    while (atomic_load(&r->done) < r->run_to && !atomic_load(&r->broken)) {
        if (atomic_load(&r->submitted) == atomic_load(&r->done)) {
            if (!atomic_load(&r->producing))
                break;
            struct timespec pause = {0, 50000L};
            nanosleep(&pause, NULL);
            continue;
        }
        if (!rig_take_event(r))
            break;
    }
    return NULL;
}

/* A poll (timeout 0) now and then: an event, SP_ERR_TIMEOUT, or SP_ERR_INVALID_ARGUMENT when
 * nothing is held. */
static void maybe_poll(stream_rig *r)
{
    if (rng_below(&r->rng, 3) != 0)
        return;
    sp_stream_event ev;
    sp_status st = sp_stream_next(r->s, &ev, 0.0);
    size_t held = atomic_load(&r->submitted) - atomic_load(&r->done);
    if (st == SP_OK) {
        if (ev.kind == SP_EVENT_DONE)
            on_done(r, &ev);
        else
            on_released(r, &ev);
    } else if (held == 0) {
        CHECK_STATUS(st, SP_ERR_INVALID_ARGUMENT, sp_stream_last_error(r->s));
    } else {
        CHECK_STATUS(st, SP_ERR_TIMEOUT, sp_stream_last_error(r->s));
    }
}

static int submit_one(stream_rig *r, size_t k)
{
    rig_batch *b = &r->b[k];
    if (!batch_prepare(r, b))
        return 0;
    unsigned max = r->cfg.max_in_flight ? r->cfg.max_in_flight : 4;
    atomic_store(&r->submitting, k + 1);
    for (;;) {
        sp_status st = sp_stream_submit(r->s, b->in.data, b->n, batch_out(b), b->tag);
        if (st == SP_ERR_WOULD_BLOCK && r->cfg.nonblocking) {
            r->would_block++;
            /* max batches not complete, and perhaps more complete whose DONE is not taken */
            CHECK(atomic_load(&r->submitted) - atomic_load(&r->done) >= max);
            if (!rig_take_event(r))
                return 0;
            continue;
        }
        if (!CHECK_STATUS(st, SP_OK, sp_stream_last_error(r->s)))
            return 0;
        break;
    }
    atomic_fetch_add(&r->submitted, 1);
    if (r->cfg.nonblocking) /* room is the engine's: what the rig has not taken is unbounded */
        maybe_poll(r);
    return 1;
}

void rig_run(stream_rig *r, size_t from, size_t to)
{
    if (atomic_load(&r->broken) ||
        !CHECK(to <= r->n_batches && from == atomic_load(&r->submitted)))
        return;
    pthread_t consumer;
    int threaded = !r->cfg.nonblocking;
    r->run_to = to; /* set before the consumer starts */
    atomic_store(&r->producing, 1);
    if (threaded && !CHECK(pthread_create(&consumer, NULL, consumer_main, r) == 0))
        threaded = 0;
    for (size_t k = from; k < to && !atomic_load(&r->broken); k++)
        if (!submit_one(r, k))
            break;
    atomic_store(&r->producing, 0);
    if (threaded) {
        pthread_join(consumer, NULL);
    } else {
        while (atomic_load(&r->done) < atomic_load(&r->submitted) && !atomic_load(&r->broken))
            rig_take_event(r);
    }
}

/* ---- closing ------------------------------------------------------------------------------ */

size_t rig_chunks(const stream_rig *r, size_t batches)
{
    size_t chunks = 0;
    for (size_t k = 0; k < batches; k++)
        chunks += r->b[k].chunks;
    return chunks;
}

int rig_all_ok(const stream_rig *r)
{
    size_t done = atomic_load(&r->done);
    for (size_t k = 0; k < done; k++)
        if (r->b[k].status != SP_OK)
            return 0;
    return 1;
}

static void check_report(const stream_rig *r, const sp_report *rep, size_t batches)
{
    size_t records = 0;
    int staged_in = 0, staged_out = 0;
    for (size_t k = 0; k < batches; k++) {
        records += r->b[k].n;
        staged_in |= r->b[k].n > 0 && r->b[k].in_kind == MEM_PAGEABLE;
        staged_out |= r->b[k].n > 0 && r->b[k].out_kind == MEM_PAGEABLE;
    }
    CHECK_EQ(rep->batches, batches);
    CHECK_EQ(rep->records, records);
    CHECK_EQ(rep->chunks, rig_chunks(r, batches));
    CHECK_EQ(rep->chunk_records, r->chunk);
    CHECK_EQ(rep->depth, r->depth);
    CHECK_EQ(rep->staged_in, staged_in);
    CHECK_EQ(rep->staged_out, staged_out);
    CHECK(rep->pinned_bytes >= (size_t)r->depth * r->chunk * (r->in_rec + r->out_rec));
    CHECK(rep->makespan_s >= 0.0);
}

sp_status rig_close(stream_rig *r)
{
    size_t batches = atomic_load(&r->submitted);
    sp_report rep;
    memset(&rep, 0xFF, sizeof rep);
    sp_status st = sp_stream_close(r->s, &rep);
    r->s = NULL;
    int ok = rig_all_ok(r) && atomic_load(&r->done) == batches;
    if (ok)
        CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(r->p));
    if (st == SP_OK || ok)
        check_report(r, &rep, batches);
    size_t chunks = rig_chunks(r, batches);
    for (size_t s = 0; s < r->chain.n_stages; s++) {
        const bound_stage *bs = &r->bounds[s];
        CHECK_EQ(atomic_load(&bs->violations), 0);
        CHECK_EQ(atomic_load(&r->chain.stages[s].violations), 0);
        if (ok && !r->graph) /* replays do not call the stage functions once per chunk */
            CHECK_MSG(atomic_load(&bs->calls) == chunks, "stage %s called %lu times for %zu "
                      "chunks", bs->wrap.inner.name, atomic_load(&bs->calls), chunks);
    }
    sp_pipeline_destroy(r->p);
    r->p = NULL;
    for (size_t k = 0; k < r->n_batches; k++)
        batch_free(&r->b[k]); /* batches whose DONE never came */
    return st;
}
