/* Graph mode. The slots are cut into groups of G consecutive slots (G = 16, 8, 4, 2 or 1:
 * see sp_graph_bundle). The group's first slot owns a queue, a "group free" event and a graph
 * holding G chunks. Each chunk's stages are a chain of their own: the chunks use different
 * slots, so nothing orders them, and the chains run side by side as the chunks of stream
 * mode do. The copies are one per direction for the whole group when its chunks lie back to
 * back on both sides (group_is_contiguous), else each chain has its chunk's h2d and d2h.
 * The graph is captured from the first G full chunks the group gets: each chunk on its
 * slot's queue, forked from the group's queue and joined back to it. G chunks are then: the
 * host's turn for each, as in stream mode (wait for chunk i-K to leave the slot, stage
 * pageable data); the graph's copies pointed at the chunks' memory when it is the user's
 * pinned memory (staging buffers never move); one launch on the group's queue; one event.
 * That is 1/G of a launch and at most two copy updates per chunk instead of 10 to 17 calls.
 *
 * Safety:
 * - The chains of one graph share nothing: each has its own slot's device buffers and its
 *   own chunk's host memory.
 * - A group's graph replays in its queue's order and a launch of a CUDA graph waits for the
 *   previous launch of the same graph, so chunk i+K never overtakes chunk i in a slot; the
 *   host's turn waits for the group-free event, so no buffer the host touches is in use.
 * - A graph reads and writes only the slot's device buffers and host memory that the run
 *   gives it before each launch: it never keeps a pointer to memory of an earlier run.
 * - A new graph is checked once against its stages run directly, on a chunk other than the
 *   one it was captured from (so a stage whose work depends on the chunk's index shows).
 * - Whatever goes wrong with graphs (capture, update, check) turns graph mode off for the
 *   pipeline and the run goes on in stream mode from the first chunk not done; the tail
 *   chunk, when short, is done the same way. Stream mode's turn for chunk i waits for chunk
 *   i-K's slot-free event, so no stream operation touches a slot a replay still uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/backend_call.h"
#include "core/drain.h"
#include "core/stage_call.h"
#include "core/submit_graph.h"

/* Returned inside this file only: graphs are off now, carry on in stream mode. */
#define GRAPH_FALLBACK SP_GRAPH_FALLBACK

static size_t full_chunks(const sp_batch *r)
{
    return r->plan.n_records / r->plan.chunk_records;
}

/* Graph mode replays up to GROUP_MAX consecutive chunks (in consecutive slots) with one
 * launch: one launch, one event and one host wait per group instead of per chunk. A graph
 * launch costs the host about 9 us on the H200 (bench/PERF.md), so bigger groups cut its
 * share per chunk; two groups at least keep the host filling one while the other runs. */
#define GROUP_MAX 16u

/* Chunks per graph: the largest power of two up to GROUP_MAX that divides the depth and
 * leaves 2 groups. */
size_t sp_graph_bundle(const sp_pipeline *p)
{
    for (size_t g = GROUP_MAX; g > 1; g /= 2)
        if (p->depth % g == 0 && p->depth / g >= 2)
            return g;
    return 1;
}

/* The slot of the first chunk of chunk c's group: the group's queue, graph and event. */
static size_t group_slot(const sp_pipeline *p, size_t c)
{
    size_t b = c % p->depth;
    return b - b % sp_graph_bundle(p);
}

int sp_graph_wanted(sp_batch *r)
{
    sp_pipeline *p = r->p;
    size_t M = p->n_stages;
    if (p->graph_mode == SP_GRAPH_OFF || r->io)
        return 0; /* a source's chunks are as long as it reads: no graph fits them */
    if (r->in_device || r->out_device) {
        snprintf(r->graph_note, sizeof r->graph_note, "graph mode off for this run: a "
                 "device-resident end is copied device to device, which a replay's copy "
                 "updates do not follow");
        return 0;
    }
    if (!p->ctx->ops->capture_begin) {
        snprintf(r->graph_note, sizeof r->graph_note, "graph mode off: the %s backend has no "
                 "graphs", p->ctx->ops->name);
        return 0;
    }
    if (p->graph.off) {
        snprintf(r->graph_note, sizeof r->graph_note, "graph mode off: %s", p->graph.why);
        return 0;
    }
    size_t chunk_bytes = sp_plan_chunk_bytes(r->plan.chunk_records, p->record_bytes[0],
                                             p->record_bytes[M]);
    if (p->graph_mode == SP_GRAPH_AUTO && chunk_bytes > SP_GRAPH_SMALL_CHUNK_BYTES)
        return 0; /* stream mode is as fast for chunks this big: nothing to note */
    /* graph_rebase moves copy_h2d/copy_d2h copies only: a replayed kernel copy would keep
     * the captured chunk's host pointers. Staging buffers never move, so staged runs can. */
    if (p->copy_by_kernel && p->ctx->ops->copy_kernel && (!r->stage_in || !r->stage_out)) {
        snprintf(r->graph_note, sizeof r->graph_note, "graph mode off for this run: its kernel "
                 "copies would use the user's pinned memory, which a replay cannot follow");
        return 0;
    }
    if (full_chunks(r) < sp_graph_bundle(p)) {
        snprintf(r->graph_note, sizeof r->graph_note, "graph mode: %zu full chunks, fewer "
                 "than a graph holds (%zu)", full_chunks(r), sp_graph_bundle(p));
        return 0;
    }
    r->timing = 0; /* no per-operation times: the report keeps no timeline (sp_timing_invalidate) */
    return 1;
}

static void drop_graphs(sp_pipeline *p)
{
    for (unsigned b = 0; b < SP_MAX_DEPTH; b++) {
        if (p->graph.exec[b])
            p->ctx->ops->graph_destroy(p->ctx->impl, p->graph.exec[b]);
        p->graph.exec[b] = NULL;
        p->graph.checked[b] = 0;
    }
}

void sp_graph_release(sp_pipeline *p)
{
    const sp_backend_ops *ops = p->ctx->ops;
    drop_graphs(p);
    for (unsigned b = 0; b < SP_MAX_DEPTH; b++) {
        if (p->graph.queue[b])
            ops->queue_destroy(p->ctx->impl, p->graph.queue[b]);
        if (p->graph.done[b])
            ops->event_destroy(p->ctx->impl, p->graph.done[b]);
        if (p->graph.join[b])
            ops->event_destroy(p->ctx->impl, p->graph.join[b]);
        p->graph.queue[b] = NULL;
        p->graph.done[b] = NULL;
        p->graph.join[b] = NULL;
    }
    free(p->graph.check_buffer); /* after the queues whose checks wrote it */
    p->graph.check_buffer = NULL;
    p->graph.check_bytes = 0;
}

/* Turns graph mode off for the pipeline, keeping the reason; the run goes on in stream mode.
 * A lost device is no reason to fall back: then the run fails. The pipeline's failure state
 * is never touched here: a stage that refuses during a capture records nothing (pipeline.c),
 * and a failure recorded meanwhile by a replay on another thread is real. */
static sp_status graph_fail(sp_batch *r, sp_status st, const char *what)
{
    sp_pipeline *p = r->p;
    if (st == SP_ERR_DEVICE_LOST || atomic_load(&p->ctx->lost))
        return sp_batch_fail(r, SP_ERR_DEVICE_LOST, "graph mode: %s", what);
    snprintf(p->graph.why, sizeof p->graph.why, "%s: %s", what, sp_backend_error());
    snprintf(r->graph_note, sizeof r->graph_note, "graph mode off from chunk %zu: %s",
             r->graph_end, p->graph.why);
    p->graph.off = 1;
    drop_graphs(p);
    return GRAPH_FALLBACK;
}

/* The queues and events of the group of slots from slot b. */
static sp_status make_group(sp_batch *r, size_t b)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    sp_status st = SP_OK;
    if (!p->graph.done[b])
        st = ops->event_create(p->ctx->impl, SP_EVENT_SYNC, &p->graph.done[b]);
    for (size_t k = b; st == SP_OK && k < b + sp_graph_bundle(p); k++) {
        char name[32]; /* room for any size_t: some compilers check */
        snprintf(name, sizeof name, "graph%zu", k);
        if (!p->graph.queue[k])
            st = ops->queue_create(p->ctx->impl, name, p->priority, &p->graph.queue[k]);
        if (st == SP_OK && !p->graph.join[k])
            st = ops->event_create(p->ctx->impl, SP_EVENT_SYNC, &p->graph.join[k]);
    }
    return st == SP_OK ? SP_OK : graph_fail(r, st, "creating a graph queue");
}

/* Chunk i's stages, enqueued on q. */
static sp_status enqueue_stages(sp_batch *r, size_t i, sp_bqueue *q)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    sp_status st = SP_OK;
    for (size_t s = 1; st == SP_OK && s <= p->n_stages; s++) {
        sp_chunk chunk = sp_ring_stage_chunk(r, s, i, b);
        st = p->ctx->ops->launch(p->ctx->impl, q, sp_stage_trampoline, &p->calls[s - 1],
                                 &chunk);
    }
    return st;
}

/* Chunk i's h2d, stages and d2h, enqueued on q (captured, or run for the check). The d2h
 * goes to `out` when given, else to where the run puts chunk i's output. */
static sp_status enqueue_whole_chunk(sp_batch *r, size_t i, sp_bqueue *q, void *out)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth, M = p->n_stages, n = sp_chunk_records(r, i);
    sp_status st = sp_call_copy(p, 1, sp_device_slot(p, 0, b), sp_ring_h2d_source(r, i),
                                       n * p->record_bytes[0], q);
    if (st == SP_OK)
        st = enqueue_stages(r, i, q);
    if (st != SP_OK)
        return st;
    if (!out)
        return sp_call_copy(p, 0, sp_ring_d2h_target(r, i), sp_device_slot(p, M, b),
                                   n * p->record_bytes[M], q);
    /* the check's host buffer is pageable: the copy engines take any memory, a kernel copy
     * (copy_by_kernel) only pinned */
    return p->ctx->ops->copy_d2h(p->ctx->impl, out, sp_device_slot(p, M, b),
                                 n * p->record_bytes[M], q);
}

/* Whether a group's chunks lie back to back on both sides, so that one copy per direction
 * can move the whole group: on the host they always do (full chunks of the user's array) but
 * for staging slots a chunk must fill its slot, and so on the device. One copy instead of G
 * saves G-1 copy updates per replay (0.7 us each on the H200) and moves more per copy. */
static int group_is_contiguous(const sp_batch *r)
{
    const sp_pipeline *p = r->p;
    size_t M = p->n_stages, n = r->plan.chunk_records;
    size_t in = n * p->record_bytes[0], out = n * p->record_bytes[M];
    return sp_graph_bundle(p) > 1 && p->device_stride[0] == in && p->device_stride[M] == out &&
           (!r->stage_in || p->pinned_in_stride == in) &&
           (!r->stage_out || p->pinned_out_stride == out);
}

/* The whole group from chunk i (slots b..b+G-1) copied in one direction, on q. */
static sp_status enqueue_group_copy(sp_batch *r, size_t i, sp_bqueue *q, int to_device)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth, M = p->n_stages;
    size_t bytes = sp_graph_bundle(p) * r->plan.chunk_records * p->record_bytes[to_device ? 0 : M];
    if (to_device)
        return sp_call_copy(p, 1, sp_device_slot(p, 0, b), sp_ring_h2d_source(r, i),
                                   bytes, q);
    return sp_call_copy(p, 0, sp_ring_d2h_target(r, i), sp_device_slot(p, M, b), bytes,
                               q);
}

/* The group from chunk i, each chunk on its slot's queue: the other queues fork from q (they
 * wait for an event recorded on q, which brings them into q's capture) and are joined back
 * (q waits for an event recorded on each). With group copies, q copies the group in before
 * the fork and out after the join. Every queue that forked is joined, also after a failure,
 * so that the capture can end. */
static sp_status enqueue_branches(sp_batch *r, size_t i, sp_bqueue *q)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t b = i % p->depth, G = sp_graph_bundle(p), forked = 1;
    sp_status st = r->group_copies ? enqueue_group_copy(r, i, q, 1) : SP_OK;
    if (st == SP_OK && G > 1)
        st = ops->event_record(p->ctx->impl, p->graph.join[b], q);
    while (st == SP_OK && forked < G) { /* a queue whose wait failed is not in the capture */
        st = ops->queue_wait(p->ctx->impl, p->graph.queue[b + forked], p->graph.join[b]);
        forked += st == SP_OK;
    }
    for (size_t k = 0; st == SP_OK && k < G; k++)
        st = r->group_copies ? enqueue_stages(r, i + k, p->graph.queue[b + k])
                             : enqueue_whole_chunk(r, i + k, p->graph.queue[b + k], NULL);
    char why[160] = ""; /* the first failure's reason: the joins below may fail too */
    if (st != SP_OK)
        snprintf(why, sizeof why, "%s", sp_backend_error());
    for (size_t k = 1; k < forked; k++) {
        sp_status joined = ops->event_record(p->ctx->impl, p->graph.join[b + k],
                                             p->graph.queue[b + k]);
        if (joined == SP_OK)
            joined = ops->queue_wait(p->ctx->impl, q, p->graph.join[b + k]);
        if (st == SP_OK)
            st = joined;
    }
    if (why[0] != '\0')
        sp_backend_fail("%s", why);
    return st == SP_OK && r->group_copies ? enqueue_group_copy(r, i, q, 0) : st;
}

static sp_status capture(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t b = i % p->depth;
    sp_bqueue *q = p->graph.queue[b];
    sp_status st = ops->capture_begin(p->ctx->impl, q);
    if (st != SP_OK)
        return graph_fail(r, st, "beginning a capture");
    sp_pipeline_set_capturing(p); /* a stage refusing now is no run failure (pipeline.c) */
    st = enqueue_branches(r, i, q);
    sp_pipeline_set_capturing(NULL);
    char inside[160] = "";
    if (st != SP_OK) /* the reason, before capture_end replaces it */
        snprintf(inside, sizeof inside, "%s", sp_backend_error());
    sp_bgraph *g = NULL;
    sp_status ended = ops->capture_end(p->ctx->impl, q, &g); /* always: q must leave capture */
    if (st != SP_OK) {
        if (ended == SP_OK)
            ops->graph_destroy(p->ctx->impl, g);
        sp_backend_fail("%s", inside);
        /* a lost device, whichever call saw it, must fail the run, not fall back */
        return graph_fail(r, ended == SP_ERR_DEVICE_LOST ? ended : st,
                          "enqueueing a chunk during capture");
    }
    if (ended != SP_OK)
        return graph_fail(r, ended, "ending the capture");
    p->graph.exec[b] = g;
    for (size_t k = 0; k < sp_graph_bundle(p); k++) {
        p->graph.in_base[b + k] = p->graph.captured_in[b + k] = sp_ring_h2d_source(r, i + k);
        p->graph.out_base[b + k] = p->graph.captured_out[b + k] = sp_ring_d2h_target(r, i + k);
    }
    p->graph.capture_chunk[b] = i;
    p->graph.checked[b] = 0;
    return SP_OK;
}

/* Points the copies of the `chunks` chunks from chunk c (one chunk, or a group with group
 * copies) in graph g at their host memory; slot c % K keeps where they point now. Nothing to
 * do for staging buffers, which never move. */
static sp_status rebase_span(sp_batch *r, sp_bgraph *g, size_t c, size_t chunks)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t b = c % p->depth, n = chunks * r->plan.chunk_records, M = p->n_stages;
    const void *in = sp_ring_h2d_source(r, c);
    void *out = sp_ring_d2h_target(r, c);
    sp_status st = SP_OK;
    if (in != p->graph.in_base[b])
        st = ops->graph_rebase(p->ctx->impl, g, 1, p->graph.captured_in[b], in,
                               n * p->record_bytes[0]);
    if (st == SP_OK)
        p->graph.in_base[b] = in;
    if (st == SP_OK && out != p->graph.out_base[b])
        st = ops->graph_rebase(p->ctx->impl, g, 0, p->graph.captured_out[b], out,
                               n * p->record_bytes[M]);
    if (st == SP_OK)
        p->graph.out_base[b] = out;
    return st;
}

/* Points the graph of the group from chunk i at the group's chunks. */
static sp_status rebase(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    sp_bgraph *g = p->graph.exec[i % p->depth];
    size_t G = sp_graph_bundle(p);
    sp_status st = r->group_copies ? rebase_span(r, g, i, G) : SP_OK;
    for (size_t k = 0; st == SP_OK && !r->group_copies && k < G; k++)
        st = rebase_span(r, g, i + k, 1);
    return st == SP_OK ? SP_OK : graph_fail(r, st, "updating the graph's copies");
}

static sp_status launch_bundle(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    const sp_backend_ops *ops = p->ctx->ops;
    size_t b = i % p->depth;
    sp_call_trace_push(p, "graph", i);
    sp_status st = ops->graph_launch(p->ctx->impl, p->graph.exec[b], p->graph.queue[b]);
    r->replayed |= st == SP_OK;
    if (st == SP_OK)
        st = ops->event_record(p->ctx->impl, p->graph.done[b], p->graph.queue[b]);
    sp_call_trace_pop(p);
    return st == SP_OK ? SP_OK : sp_batch_fail(r, st, "chunk %zu: launching its graph", i);
}

/* The group from chunk i run directly on q, chunk i+k's output into want + k * bytes; then q
 * synchronized, also after a failed enqueue, since copies already enqueued still write `want`:
 * a failed sync is settled as the drain settles one (sp_drain_queue), so q is idle when
 * this returns, or else the context is lost. */
static sp_status run_directly(sp_batch *r, size_t i, sp_bqueue *q, char *want, size_t bytes)
{
    sp_pipeline *p = r->p;
    sp_status st = SP_OK;
    for (size_t k = 0; st == SP_OK && k < sp_graph_bundle(p); k++)
        st = enqueue_whole_chunk(r, i + k, q, want + k * bytes);
    char what[64];
    snprintf(what, sizeof what, "chunk %zu: checking a new graph", i);
    if (st != SP_OK)
        st = sp_batch_fail(r, st, "%s", what);
    sp_status synced = sp_drain_queue(r->p, r, q, what);
    if (st == SP_OK)
        st = synced;
    if (st == SP_OK && sp_pipeline_has_failed(p))
        return SP_ERR_STAGE_FAILED; /* the trampoline recorded why */
    return st;
}

/* Replays the group from chunk i and compares its output with `want`; SP_OK when equal. */
static sp_status replay_and_compare(sp_batch *r, size_t i, sp_bqueue *q, const char *want,
                                    size_t bytes)
{
    sp_pipeline *p = r->p;
    sp_status st = rebase(r, i);
    if (st == SP_OK)
        st = launch_bundle(r, i);
    if (st == SP_OK && (st = p->ctx->ops->queue_sync(p->ctx->impl, q)) != SP_OK)
        return sp_batch_fail(r, st, "chunk %zu: waiting for a graph's first replay", i);
    if (st == SP_OK && sp_pipeline_has_failed(p))
        return SP_ERR_STAGE_FAILED;
    for (size_t k = 0; st == SP_OK && k < sp_graph_bundle(p); k++)
        if (memcmp(sp_ring_d2h_target(r, i + k), want + k * bytes, bytes) != 0) {
            sp_backend_fail("its replay of chunk %zu differs from the stages run directly "
                            "(does a stage depend on chunk->index or ->first_record?)", i + k);
            st = graph_fail(r, SP_ERR_BACKEND, "checking the graph");
        }
    return st;
}

/* The host buffer the check's direct run writes, `bytes` long. The pipeline keeps it until
 * it is destroyed (after its queues): a check whose queue could not be waited for leaves
 * copies that may still write it (the context is lost then, so no later check comes to
 * replace it). */
static char *check_buffer(sp_pipeline *p, size_t bytes)
{
    if (p->graph.check_bytes >= bytes)
        return p->graph.check_buffer;
    char *bigger = malloc(bytes);
    if (!bigger)
        return NULL;
    free(p->graph.check_buffer); /* idle: every earlier check's queue was settled */
    p->graph.check_buffer = bigger;
    p->graph.check_bytes = bytes;
    return bigger;
}

/* The check: the group from chunk i run directly on its queue into a host buffer, then
 * replayed into its real place; the outputs must be equal byte for byte. The slots are idle
 * (the host's turns waited for them). Returns SP_OK (the group done by the replay),
 * GRAPH_FALLBACK (graphs off; the group done, with the direct run's output) or a run
 * failure. */
static sp_status check(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    size_t bytes = r->plan.chunk_records * p->record_bytes[p->n_stages];
    char *want = check_buffer(p, bytes * sp_graph_bundle(p));
    if (!want)
        return sp_batch_fail(r, SP_ERR_OUT_OF_MEMORY, "checking a graph: no %zu bytes",
                           bytes * sp_graph_bundle(p));
    sp_bqueue *q = p->graph.queue[b];
    sp_status st = run_directly(r, i, q, want, bytes);
    if (st == SP_OK)
        st = replay_and_compare(r, i, q, want, bytes);
    for (size_t k = 0; st == GRAPH_FALLBACK && k < sp_graph_bundle(p); k++)
        memcpy(sp_ring_d2h_target(r, i + k), want + k * bytes, bytes); /* the queue is idle */
    if (st == SP_OK)
        p->graph.checked[b] = 1;
    return st;
}

/* The group of full chunks from chunk i, after their host turns: SP_OK, GRAPH_FALLBACK (the
 * group still to do, unless the check did it: then r->graph_end is already past it) or a run
 * failure. */
static sp_status graph_group(sp_batch *r, size_t i)
{
    sp_pipeline *p = r->p;
    size_t b = i % p->depth;
    sp_status st = make_group(r, b);
    if (st == SP_OK && !p->graph.exec[b])
        st = capture(r, i);
    if (st == SP_OK && !p->graph.checked[b] && i != p->graph.capture_chunk[b]) {
        st = check(r, i); /* does the group itself, also when it falls back */
        if (st == SP_OK || st == GRAPH_FALLBACK)
            r->graph_end = i + sp_graph_bundle(p);
        return st;
    }
    if (st == SP_OK)
        st = rebase(r, i);
    if (st == SP_OK)
        st = launch_bundle(r, i);
    return st;
}

/* The graphs fit one chunk size and one choice of staging: another batch makes them anew. */
static void fit_graphs(sp_batch *r)
{
    sp_pipeline *p = r->p;
    if (p->graph.chunk_records == r->plan.chunk_records && p->graph.stage_in == r->stage_in &&
        p->graph.stage_out == r->stage_out)
        return;
    drop_graphs(p);
    p->graph.chunk_records = r->plan.chunk_records;
    p->graph.stage_in = r->stage_in;
    p->graph.stage_out = r->stage_out;
}

void sp_graph_begin(sp_batch *r)
{
    sp_pipeline *p = r->p;
    fit_graphs(r); /* group copies depend only on what fit_graphs keys the graphs by */
    r->group_copies = group_is_contiguous(r);
    size_t G = sp_graph_bundle(p), full_end = r->base + full_chunks(r);
    /* a bundle starts at a bundle's first slot (K is a multiple of G): a stream's batch may
     * start anywhere in the ring, and its chunks before that are submitted directly */
    size_t first = (r->base + G - 1) / G * G;
    r->graph_first = r->graph_end = first < full_end ? first : full_end;
}

int sp_graph_fits(const sp_batch *r, size_t i)
{
    size_t G = sp_graph_bundle(r->p);
    return r->graphs && i >= r->graph_first && i % G == 0 &&
           i + G <= r->base + full_chunks(r);
}

sp_bevent *sp_graph_done_event(const sp_pipeline *p, size_t i)
{
    return p->graph.done[group_slot(p, i)];
}

sp_status sp_submit_graph(sp_batch *r, size_t i, int *bundle_done)
{
    sp_status st = graph_group(r, i);
    /* the one-time check runs the bundle directly, whatever it finds (graph_group moved
     * graph_end past it) */
    *bundle_done = st == SP_OK || r->graph_end > i;
    if (*bundle_done)
        r->graph_end = i + sp_graph_bundle(r->p);
    if (st == GRAPH_FALLBACK)
        r->graphs = 0;
    return st;
}

void sp_graph_note(sp_batch *r)
{
    if (r->graph_note[0] != '\0')
        return; /* why graph mode went off says more */
    snprintf(r->graph_note, sizeof r->graph_note, "graph mode: %zu of %zu chunks replayed, in "
             "groups of %zu with %s", r->graph_end - r->graph_first, r->plan.chunks,
             sp_graph_bundle(r->p), r->group_copies ? "one copy each way per group"
                                                     : "copies per chunk");
}
