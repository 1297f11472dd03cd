/* Pipeline creation and destruction: every queue, event and buffer is made here, once, and
 * reused by every run (pipeline.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/flight.h"
#include "core/config_read.h"
#include "core/live_objects.h"
#include "core/pipeline.h"
#include "core/stage_call.h"
#include "core/submit_graph.h"
#include "core/tune.h"
#include "core/tune_run.h"


/* ---- config checks ------------------------------------------------------------------- */

static sp_status check_stage(sp_context *ctx, const sp_stage *st, size_t i)
{
    const char *name = st->name ? st->name : "(unnamed)";
    if (st->out_record_bytes == 0)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "stage %zu '%s': out_record_bytes is 0", i, name);
    if (st->streams > SP_MAX_STAGE_STREAMS)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "stage %zu '%s': %u streams, more than SP_MAX_STAGE_STREAMS (%d)",
                               i, name, st->streams, SP_MAX_STAGE_STREAMS);
    sp_stage_fn fn = ctx->kind == SP_BACKEND_CUDA ? st->cuda : st->host;
    if (!fn)
        return sp_context_fail(ctx, SP_ERR_UNSUPPORTED,
                               "stage %zu '%s' has no %s function, and this context runs on %s",
                               i, name, ctx->kind == SP_BACKEND_CUDA ? "cuda" : "host",
                               sp_backend_name(ctx->kind));
    return SP_OK;
}

static sp_status check_config(sp_context *ctx, const sp_pipeline_config *cfg)
{
    if (cfg->in_record_bytes == 0)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "config: in_record_bytes is 0");
    if (cfg->n_stages > SP_MAX_STAGES)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "config: n_stages is %zu, more than SP_MAX_STAGES (%d)",
                               cfg->n_stages, SP_MAX_STAGES);
    if (cfg->n_stages > 0 && !cfg->stages)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "config: stages is NULL but n_stages is %zu", cfg->n_stages);
    if (cfg->graph != SP_GRAPH_OFF && cfg->graph != SP_GRAPH_ON && cfg->graph != SP_GRAPH_AUTO)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "config: graph is %d, not SP_GRAPH_OFF, _ON or _AUTO",
                               (int)cfg->graph);
    if (cfg->timeline != SP_TIMELINE_SAMPLED && cfg->timeline != SP_TIMELINE_EVENTS &&
        cfg->timeline != SP_TIMELINE_CUPTI && cfg->timeline != SP_TIMELINE_OFF)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "config: timeline is %d, not "
                               "SP_TIMELINE_SAMPLED, _EVENTS, _CUPTI or _OFF",
                               (int)cfg->timeline);
    if (cfg->keep_timeline != 0 && cfg->keep_timeline != 1)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "config: keep_timeline is %d, "
                               "not 0 or 1", cfg->keep_timeline);
    if (!(cfg->flight_recorder_s >= 0.0 && cfg->flight_recorder_s <= 1e6))
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "config: flight_recorder_s is "
                               "%g, not 0 (off) or a number of seconds up to 1e6",
                               cfg->flight_recorder_s);
    if (cfg->depth > SP_MAX_DEPTH)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT,
                               "config: depth %u is more than SP_MAX_DEPTH (%d)", cfg->depth,
                               SP_MAX_DEPTH);
    for (size_t i = 0; i < cfg->n_stages; i++) {
        sp_status st = check_stage(ctx, &cfg->stages[i], i);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

/* ---- shape: record sizes, chunk, depth -------------------------------------------------- */

static void copy_shape(sp_pipeline *p, const sp_pipeline_config *cfg)
{
    p->in_record_bytes = cfg->in_record_bytes;
    p->n_stages = cfg->n_stages;
    p->record_bytes[0] = cfg->in_record_bytes;
    p->widest_record = cfg->in_record_bytes;
    for (size_t i = 0; i < cfg->n_stages; i++) {
        p->stages[i] = cfg->stages[i];
        snprintf(p->stage_names[i], sizeof p->stage_names[i], "%s",
                 cfg->stages[i].name ? cfg->stages[i].name : "stage");
        p->stages[i].name = p->stage_names[i];
        p->calls[i] = (sp_stage_call){p, i};
        p->record_bytes[i + 1] = cfg->stages[i].out_record_bytes;
        p->stage_streams[i] = cfg->stages[i].streams ? cfg->stages[i].streams : 1;
        if (p->record_bytes[i + 1] > p->widest_record)
            p->widest_record = p->record_bytes[i + 1];
    }
    p->chunk_chosen = cfg->chunk_records == 0;
    size_t end_record = p->record_bytes[0] > p->record_bytes[p->n_stages]
                            ? p->record_bytes[0] : p->record_bytes[p->n_stages];
    p->chunk_capacity = p->chunk_chosen ? sp_plan_default_chunk(end_record, p->widest_record,
                                                              p->n_stages)
                                        : cfg->chunk_records;
    size_t chunk_bytes = sp_plan_chunk_bytes(p->chunk_capacity, p->record_bytes[0],
                                             p->record_bytes[p->n_stages]);
    if (cfg->depth)
        p->depth = cfg->depth;
    else if (cfg->graph != SP_GRAPH_OFF)
        p->depth = sp_plan_default_graph_depth(cfg->n_stages, chunk_bytes);
    else
        p->depth = sp_plan_default_depth(cfg->n_stages);
    p->priority = cfg->priority;
    p->copy_piece_bytes = cfg->copy_piece_bytes;
    p->copy_by_kernel = cfg->copy_by_kernel != 0;
    p->graph_mode = cfg->graph;
    p->timeline_mode = cfg->timeline;
    p->keep_timeline = cfg->keep_timeline;
}

/* Bytes of one slot at `record_bytes` per record, rounded up for alignment; 0 on overflow. */
static size_t slot_stride(const sp_pipeline *p, size_t record_bytes)
{
    int overflow = 0;
    size_t bytes = sp_mul_size(p->chunk_capacity, record_bytes, &overflow);
    if (overflow || bytes > SIZE_MAX - SP_SLOT_ALIGN)
        return 0;
    return (bytes + SP_SLOT_ALIGN - 1) / SP_SLOT_ALIGN * SP_SLOT_ALIGN;
}

/* ---- resources ------------------------------------------------------------------------ */

static sp_status make_queues(sp_pipeline *p)
{
    const sp_backend_ops *ops = p->ctx->ops;
    void *impl = p->ctx->impl;
    sp_status st = ops->queue_create(impl, "h2d", p->priority, &p->h2d);
    /* every queue of a stage has the stage's name: fault delays target stages by name */
    for (size_t s = 0; st == SP_OK && s < p->n_stages; s++)
        for (unsigned k = 0; st == SP_OK && k < p->stage_streams[s]; k++)
            st = ops->queue_create(impl, p->stage_names[s], p->priority, &p->stage_queue[s][k]);
    if (st == SP_OK)
        st = ops->queue_create(impl, "d2h", p->priority, &p->d2h);
    return st == SP_OK ? SP_OK : sp_pipeline_backend_fail(p, st, "creating the queues");
}

/* The engines' release events of slots [from, to), those not made yet (a ring that had fewer
 * slots keeps the events of the ones it lost). */
static sp_status make_slot_events(sp_pipeline *p, unsigned from, unsigned to)
{
    const sp_backend_ops *ops = p->ctx->ops;
    sp_status st = SP_OK;
    for (size_t e = 0; st == SP_OK && e < sp_gpu_engines(p); e++)
        for (unsigned b = from; st == SP_OK && b < to; b++)
            if (!p->events[e].done[b])
                st = ops->event_create(p->ctx->impl, SP_EVENT_SYNC, &p->events[e].done[b]);
    return st == SP_OK ? SP_OK : sp_pipeline_backend_fail(p, st, "creating the events");
}

static sp_status make_events(sp_pipeline *p)
{
    sp_status st = p->ctx->ops->event_create(p->ctx->impl, SP_EVENT_TIMING, &p->timing.base);
    if (st != SP_OK)
        return sp_pipeline_backend_fail(p, st, "creating the events");
    return make_slot_events(p, 0, p->depth);
}

static sp_status alloc_ring(sp_pipeline *p, size_t stride, char **out, int pinned,
                            const char *what)
{
    size_t total;
    if (stride == 0 || __builtin_mul_overflow(stride, (size_t)p->depth, &total))
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT,
                                "%s: %u slots x %zu records overflows size_t", what, p->depth,
                                p->chunk_capacity);
    const sp_backend_ops *ops = p->ctx->ops;
    void *mem = NULL;
    sp_status st = pinned ? ops->pinned_alloc(p->ctx->impl, total, &mem)
                          : ops->device_alloc(p->ctx->impl, total, &mem);
    if (st != SP_OK) {
        if (st == SP_ERR_OUT_OF_DEVICE_MEMORY && pinned)
            st = SP_ERR_OUT_OF_MEMORY;
        return sp_pipeline_fail(p, st,
                                "allocating %s: %zu bytes of %s memory (%u slots x %zu records) "
                                "failed: %s",
                                what, total, pinned ? "pinned host" : "device", p->depth,
                                p->chunk_capacity, sp_backend_error());
    }
    *out = mem;
    return SP_OK;
}

/* Stage s's scratch: one workspace per slot, so that two chunks in flight never share one. */
static sp_status make_scratch(sp_pipeline *p, size_t s)
{
    size_t bytes = p->stages[s].scratch_bytes;
    if (bytes == 0)
        return SP_OK;
    if (bytes > SIZE_MAX - SP_SLOT_ALIGN)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "stage '%s': scratch_bytes %zu "
                                "overflows", p->stage_names[s], bytes);
    p->scratch_stride[s] = (bytes + SP_SLOT_ALIGN - 1) / SP_SLOT_ALIGN * SP_SLOT_ALIGN;
    char what[64];
    snprintf(what, sizeof what, "the scratch of stage '%s'", p->stage_names[s]);
    return alloc_ring(p, p->scratch_stride[s], &p->scratch[s], 0, what);
}

/* The slots' strides for the pipeline's chunk. */
static void set_strides(sp_pipeline *p)
{
    for (size_t s = 0; s <= p->n_stages; s++)
        p->device_stride[s] = slot_stride(p, p->record_bytes[s]);
    p->pinned_in_stride = slot_stride(p, p->record_bytes[0]);
    p->pinned_out_stride = slot_stride(p, p->record_bytes[p->n_stages]);
}

/* The ring's buffers; its pinned input staging only `with_input_staging` (else made by the
 * first batch that stages input: sp_pipeline_stage_input). */
static sp_status make_buffers(sp_pipeline *p, int with_input_staging)
{
    set_strides(p);
    for (size_t s = 0; s <= p->n_stages; s++) {
        sp_status st = alloc_ring(p, p->device_stride[s], &p->device_buffer[s], 0,
                                  s == 0 ? "device input buffers" : "device stage buffers");
        if (st != SP_OK)
            return st;
    }
    sp_status st = with_input_staging ? alloc_ring(p, p->pinned_in_stride, &p->pinned_in, 1,
                                                   "input staging")
                                      : SP_OK;
    if (st == SP_OK)
        st = alloc_ring(p, p->pinned_out_stride, &p->pinned_out, 1, "output staging");
    for (size_t s = 0; st == SP_OK && s < p->n_stages; s++)
        st = make_scratch(p, s);
    return st;
}

void sp_pipeline_ring_bytes(const sp_pipeline *p, size_t *pinned, size_t *device)
{
    *device = 0;
    for (size_t s = 0; s <= p->n_stages; s++)
        *device += p->device_buffer[s] ? p->device_stride[s] * p->depth : 0;
    for (size_t s = 0; s < p->n_stages; s++)
        *device += p->scratch[s] ? p->scratch_stride[s] * p->depth : 0;
    *pinned = ((p->pinned_in ? p->pinned_in_stride : 0) + p->pinned_out_stride) * p->depth;
}

/* What the pipeline holds, the ring and the run's buffers beside it, for sp_stats and the
 * report (read from any thread: hence atomics, written here alone). */
static void note_held(sp_pipeline *p)
{
    size_t pinned, device;
    sp_pipeline_ring_bytes(p, &pinned, &device);
    atomic_store(&p->held_pinned_bytes, pinned + p->run_pinned_bytes);
    atomic_store(&p->held_device_bytes, device + p->run_device_bytes);
}

void sp_pipeline_hold_run(sp_pipeline *p, size_t pinned, size_t device)
{
    p->run_pinned_bytes = pinned;
    p->run_device_bytes = device;
    note_held(p);
}

sp_status sp_pipeline_stage_input(sp_pipeline *p)
{
    if (p->pinned_in)
        return SP_OK;
    sp_status st = alloc_ring(p, p->pinned_in_stride, &p->pinned_in, 1, "input staging");
    note_held(p);
    return st;
}

/* The ring's buffers, taken out of the pipeline whole (its fields left NULL). */
typedef struct ring_memory {
    char *device[SP_MAX_STAGES + 1], *scratch[SP_MAX_STAGES], *pinned_in, *pinned_out;
} ring_memory;

static void take_ring(sp_pipeline *p, ring_memory *m)
{
    memcpy(m->device, p->device_buffer, sizeof m->device);
    memcpy(m->scratch, p->scratch, sizeof m->scratch);
    m->pinned_in = p->pinned_in;
    m->pinned_out = p->pinned_out;
    memset(p->device_buffer, 0, sizeof p->device_buffer);
    memset(p->scratch, 0, sizeof p->scratch);
    p->pinned_in = p->pinned_out = NULL;
}

static void put_ring(sp_pipeline *p, const ring_memory *m)
{
    memcpy(p->device_buffer, m->device, sizeof m->device);
    memcpy(p->scratch, m->scratch, sizeof m->scratch);
    p->pinned_in = m->pinned_in;
    p->pinned_out = m->pinned_out;
}

static void free_ring(const sp_pipeline *p, const ring_memory *m)
{
    const sp_backend_ops *ops = p->ctx->ops;
    for (size_t s = 0; s <= SP_MAX_STAGES; s++)
        ops->device_free(p->ctx->impl, m->device[s]);
    for (size_t s = 0; s < SP_MAX_STAGES; s++)
        ops->device_free(p->ctx->impl, m->scratch[s]);
    ops->pinned_free(p->ctx->impl, m->pinned_in);
    ops->pinned_free(p->ctx->impl, m->pinned_out);
}

/* The ring made anew at `chunk` x `depth` (idle, claimed), the old one freed once the new
 * exists; on failure it stays as it was. */
static sp_status remake_ring(sp_pipeline *p, size_t chunk, unsigned depth,
                             int with_input_staging)
{
    unsigned was_depth = p->depth;
    size_t was_chunk = p->chunk_capacity;
    ring_memory was, made;
    take_ring(p, &was);
    p->chunk_capacity = chunk;
    p->depth = depth;
    sp_status st = make_buffers(p, with_input_staging);
    if (st == SP_OK && depth > was_depth)
        st = make_slot_events(p, was_depth, depth); /* kept on failure: destroy frees them */
    if (st != SP_OK) {
        take_ring(p, &made);
        free_ring(p, &made);
        put_ring(p, &was);
        p->chunk_capacity = was_chunk;
        p->depth = was_depth;
        set_strides(p);
        return st;
    }
    free_ring(p, &was);
    note_held(p);
    return SP_OK;
}

sp_status sp_pipeline_deepen(sp_pipeline *p, unsigned depth)
{
    if (depth <= p->depth || depth > SP_MAX_DEPTH || p->graph_mode != SP_GRAPH_OFF)
        return SP_OK;
    return remake_ring(p, p->chunk_capacity, depth, p->pinned_in != NULL);
}

sp_status sp_pipeline_rechunk(sp_pipeline *p, size_t chunk, unsigned depth)
{
    if (chunk < p->chunk_capacity || (chunk == p->chunk_capacity && depth == p->depth) ||
        depth == 0 || depth > SP_MAX_DEPTH || p->graph_mode != SP_GRAPH_OFF)
        return SP_OK;
    return remake_ring(p, chunk, depth, 0);
}

static sp_status make_pool(sp_pipeline *p, unsigned threads)
{
    if (threads == 0)
        threads = sp_staging_pool_default_threads();
    if (sp_staging_pool_create(threads, &p->pool) != SP_OK)
        return sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "starting %u staging threads failed",
                                threads);
    return SP_OK;
}

static sp_status make_flight(sp_pipeline *p, double seconds)
{
    int failed;
    p->flight = sp_flight_create(seconds, &failed);
    return failed ? sp_pipeline_fail(p, SP_ERR_OUT_OF_MEMORY, "no memory for the flight "
                                     "recorder (%zu bytes)", sp_flight_bytes(NULL) +
                                     SP_FLIGHT_CAPACITY * sizeof(sp_flight_span))
                  : SP_OK;
}

static void release_events(sp_pipeline *p)
{
    const sp_backend_ops *ops = p->ctx->ops;
    for (size_t e = 0; e < SP_MAX_STAGES + 2; e++)
        for (unsigned b = 0; b < SP_MAX_DEPTH; b++)
            if (p->events[e].done[b])
                ops->event_destroy(p->ctx->impl, p->events[e].done[b]);
    for (size_t t = 0; t < p->timing.n; t++)
        ops->event_destroy(p->ctx->impl, p->timing.events[t]);
    free(p->timing.events);
    free(p->timing.inferred);
    free(p->timing.rank);
    if (p->timing.base)
        ops->event_destroy(p->ctx->impl, p->timing.base);
    sp_tune_run_release(p); /* the tuner's watch events */
}

/* Frees whatever exists; queues are drained by their destroy. */
static void release_all(sp_pipeline *p)
{
    const sp_backend_ops *ops = p->ctx->ops;
    void *impl = p->ctx->impl;
    sp_graph_release(p);
    sp_flight_destroy(p->flight);
    if (p->h2d)
        ops->queue_destroy(impl, p->h2d);
    for (size_t s = 0; s < SP_MAX_STAGES; s++)
        for (unsigned k = 0; k < SP_MAX_STAGE_STREAMS; k++)
            if (p->stage_queue[s][k])
                ops->queue_destroy(impl, p->stage_queue[s][k]);
    if (p->d2h)
        ops->queue_destroy(impl, p->d2h);
    release_events(p);
    ring_memory ring;
    take_ring(p, &ring);
    free_ring(p, &ring);
    sp_staging_pool_destroy(p->pool);
    sp_timeline_free(&p->timeline);
    sp_tune_release(p);
    sp_failure_destroy(&p->failure);
    sp_error_box_destroy(&p->error);
}

sp_status sp_pipeline_create(sp_context *ctx, const sp_pipeline_config *given,
                             sp_pipeline **out)
{
    if (!ctx)
        return SP_ERR_INVALID_ARGUMENT;
    if (!given || !out)
        return sp_context_fail(ctx, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_create: %s is NULL",
                               !given ? "config" : "out");
    *out = NULL;
    sp_pipeline_config config;
    const sp_pipeline_config *cfg = &config;
    sp_status st = sp_context_check_alive(ctx);
    if (st == SP_OK)
        st = sp_pipeline_config_read(ctx, given, &config);
    if (st == SP_OK)
        st = check_config(ctx, cfg);
    if (st != SP_OK)
        return st;
    sp_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return sp_context_fail(ctx, SP_ERR_OUT_OF_MEMORY, "no memory for the pipeline");
    p->ctx = ctx;
    sp_context_retain(ctx); /* given back by sp_pipeline_destroy, after the pipeline is gone */
    sp_failure_init(&p->failure);
    sp_error_box_init(&p->error);
    atomic_init(&p->busy, 0);
    copy_shape(p, cfg);
    st = sp_tune_setup(p, cfg); /* the budget may cut the chunk and depth just chosen */
    if (st == SP_OK)
        st = make_queues(p);
    if (st == SP_OK)
        st = make_events(p);
    if (st == SP_OK)
        st = make_buffers(p, 1);
    if (st == SP_OK)
        note_held(p);
    if (st == SP_OK)
        st = make_pool(p, cfg->staging_threads);
    if (st == SP_OK)
        st = make_flight(p, cfg->flight_recorder_s);
    if (st != SP_OK) {
        release_all(p);
        free(p);
        sp_context_release(ctx);
        return st;
    }
    sp_live_object_add(SP_LIVE_PIPELINE, +1);
    *out = p;
    return SP_OK;
}

/* Destroying a pipeline that runs on another thread would free what the run uses: it is
 * refused (a leak is better than a use after free), and the context's text says why. A
 * group's member is its group's to destroy: the group would use it after. */
void sp_pipeline_destroy(sp_pipeline *p)
{
    if (!p)
        return;
    if (sp_pipeline_is_group_member(p)) {
        /* the context's text, as any refused call's: the pipeline's is its group run's */
        sp_context_fail(p->ctx, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_destroy: the pipeline "
                        "is a device group's member; sp_group_destroy destroys it");
        return;
    }
    if (sp_pipeline_claim(p, "sp_pipeline_destroy") != SP_OK)
        return;
    sp_context *ctx = p->ctx;
    release_all(p);
    free(p);
    sp_live_object_add(SP_LIVE_PIPELINE, -1);
    sp_context_release(ctx); /* the last one closes the context, if its handle is gone */
}
