/*
 * test_ring_budget (HOST): the memory of a compressed input decompressed inside the ring
 * (src/core/ring_decode.c, ring_chunk.c, tune.c), on ring_rig.h's file of 1 KiB Zstandard
 * frames. HOST has no decompressor of its own (the core decodes in a launch, with no
 * scratch), so a stand-in takes the backend's decompress_prepare and decompress, as nvCOMP's
 * on CUDA: it asks for TEMP_PER_UNIT bytes of device scratch a block, writes all of it, and
 * decodes with libzstd. Checked from the HOST allocator's own count, not the pipeline's:
 * - what sp_stats says the pipeline holds is every byte it holds, while the run goes (the
 *   ring, the compressed buffers on both sides, the scratch) and after;
 * - a device budget holds the scratch too: the chunk is cut to fit, never past the budget;
 * - a budget that cannot hold the buffers of the chunk given refuses decompress: ring with a
 *   message naming the budget and what it needs, and the pipeline, unharmed, decodes on the
 *   staging threads with decompress: auto;
 * - a short input left to the library holds one slot per chunk, and a longer one after it
 *   gets the library's depth back;
 * - a slot's compressed buffer holds the most bytes a chunk's frames take, not the largest
 *   frame times the count;
 * - the ring grown for the run has no pinned input slots; a later run that reads into them
 *   makes them, and one refused that memory fails alone, writing nothing.
 * Every output record against the reference.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core_door.h"
#include "harness.h"
#include "ring_rig.h"
#include "stage_wrap.h"

#define TEMP_PER_UNIT 16384 /* the stand-in's scratch a block: more than the block's records */

/* ---- the stand-in decompressor --------------------------------------------------------- */

static const sp_backend_ops *host_ops;
static sp_backend_ops standin_ops;
static size_t temp_seen; /* the largest scratch a decompress was handed */

static sp_status standin_prepare(void *impl, int format, size_t max_units,
                                 size_t max_unit_bytes, size_t max_total_bytes,
                                 size_t *temp_bytes)
{
    (void)impl, (void)format, (void)max_unit_bytes, (void)max_total_bytes;
    *temp_bytes = max_units * TEMP_PER_UNIT;
    return SP_OK;
}

/* On the queue's worker: the scratch written whole (it must be memory of that size), each
 * unit decoded, the results where decompress puts them, then done(). */
static sp_status standin_decode(const sp_chunk *chunk, void *arg)
{
    (void)chunk;
    sp_decompress_args *a = arg;
    memset(a->temp, 0x5A, a->temp_bytes);
    for (size_t k = 0; k < a->n; k++) {
        size_t made = ZSTD_decompress(a->dst[k], a->dst_bytes[k], a->src[k], a->src_bytes[k]);
        a->made_host[k] = ZSTD_isError(made) ? 0 : made;
        a->status_host[k] = ZSTD_isError(made) ? 1 : 0;
    }
    a->done(a->done_arg);
    free(a);
    return SP_OK;
}

static sp_status standin_decompress(void *impl, const sp_decompress_args *args, sp_bqueue *q)
{
    sp_decompress_args *a = malloc(sizeof *a);
    if (!a || !args->temp)
        return SP_ERR_BACKEND;
    *a = *args;
    temp_seen = args->temp_bytes > temp_seen ? args->temp_bytes : temp_seen;
    sp_chunk none;
    memset(&none, 0, sizeof none);
    return host_ops->launch(impl, q, standin_decode, a, &none);
}

/* A HOST context whose backend decompresses with the stand-in. */
static sp_context *standin_context(void)
{
    sp_context *ctx = NULL;
    if (!CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK,
                      sp_context_last_error(ctx)))
        return ctx;
    host_ops = ctx->ops;
    standin_ops = *ctx->ops;
    standin_ops.decompress_prepare = standin_prepare;
    standin_ops.decompress = standin_decompress;
    ctx->ops = &standin_ops;
    return ctx;
}

/* The HOST allocator's bytes, [0] pinned and [1] device: held now, and at their peak. */
static void allocator(sp_context *ctx, size_t held[2], size_t peak[2])
{
    sp_backend_host_memory_held(ctx->impl, held, peak);
}

/* ---- what the pipeline says it holds --------------------------------------------------- */

/* Before each call of the stage: sp_stats' memory against the allocator's, while the run
 * holds every buffer it has. */
typedef struct watch {
    stage_wrap wrap;
    sp_context *ctx;
    sp_pipeline *p;
    size_t calls, differ, stats[2], held[2];
} watch;

static sp_status look(const sp_chunk *c, void *arg)
{
    (void)c;
    watch *w = arg;
    sp_stats st;
    size_t peak[2];
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    allocator(w->ctx, w->held, peak);
    if (w->p && sp_pipeline_stats(w->p, &st) == SP_OK) {
        w->stats[0] = st.pinned_bytes;
        w->stats[1] = st.device_bytes;
        w->differ += st.pinned_bytes != w->held[0] || st.device_bytes != w->held[1];
        w->calls++;
    }
    return SP_OK;
}

TEST(stats_count_every_byte_held)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t n = 2000 * PER;
    unsigned char *in = ring_rig_file(&rng, n, "held.zst");
    mix_chain *chain = ring_rig_chain();
    watch w = {.wrap = {.inner = chain->descs[0], .before = look}};
    w.wrap.arg = &w;
    w.ctx = standin_context();
    chain->descs[0] = stage_wrap_desc(&w.wrap);
    w.p = ring_rig_pipeline(w.ctx, 256 * PER, 3, 0, 0);
    chain->descs[0] = w.wrap.inner;
    chunk_run r;
    temp_seen = 0;
    if (in && ring_rig_run(w.p, "held.zst", in, n, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
        CHECK(w.calls > 0);
        CHECK_MSG(w.differ == 0, "sp_stats said %zu pinned, %zu device bytes; the allocator "
                  "held %zu, %zu", w.stats[0], w.stats[1], w.held[0], w.held[1]);
        CHECK(temp_seen >= 256 * TEMP_PER_UNIT); /* the scratch was the stand-in's */
        size_t held[2], peak[2];
        sp_stats st = {.size = sizeof st};
        allocator(w.ctx, held, peak);
        CHECK_EQ(sp_pipeline_stats(w.p, &st), SP_OK); /* the run's buffers gone with it */
        CHECK_EQ(st.pinned_bytes, held[0]);
        CHECK_EQ(st.device_bytes, held[1]);
    }
    sp_pipeline_destroy(w.p);
    sp_context_destroy(w.ctx);
    free(in);
    return TEST_OK;
}

/* ---- the budget -------------------------------------------------------------------------- */

/* The allocator's device peak of a fresh pipeline (chunk and depth the library's) running
 * the file under max_device; the run's figures in r. */
static size_t device_peak(const char *name, const unsigned char *in, size_t n,
                          size_t max_device, chunk_run *r)
{
    sp_context *ctx = standin_context();
    sp_pipeline *p = ring_rig_pipeline(ctx, 0, 0, 0, max_device);
    size_t held[2], peak[2] = {0, 0};
    if (ring_rig_run(p, name, in, n, 0, SP_DECOMPRESS_RING, SP_OK, r))
        allocator(ctx, held, peak);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return peak[1];
}

TEST(device_budget_holds_the_scratch)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t n = 6000 * PER;
    chunk_run r;
    unsigned char *in = ring_rig_file(&rng, n, "budget.zst");
    size_t full = in ? device_peak("budget.zst", in, n, 0, &r) : 0;
    if (!CHECK(full > 0)) {
        free(in);
        return TEST_FAIL;
    }
    size_t budget = full / 2, peak = device_peak("budget.zst", in, n, budget, &r);
    CHECK_MSG(peak > 0 && peak <= budget, "device peak %zu, budget %zu (unbudgeted: %zu)", peak,
              budget, full);
    CHECK(r.report.chunk_records < (size_t)RING_BLOCKS * PER);
    CHECK_HAS(r.in.note, "the memory budget");
    free(in);
    return TEST_OK;
}

TEST(impossible_budget_refused_then_staged)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t n = 2000 * PER;
    unsigned char *in = ring_rig_file(&rng, n, "tight.zst");
    sp_context *ctx = standin_context();
    sp_pipeline *p = ring_rig_pipeline(ctx, 256 * PER, 2, 0, 0);
    sp_stats st = {.size = sizeof st};
    CHECK_EQ(sp_pipeline_stats(p, &st), SP_OK);
    sp_pipeline_destroy(p);
    size_t budget = st.device_bytes + 4096; /* the ring and a little: not its buffers */
    p = ring_rig_pipeline(ctx, 256 * PER, 2, 0, budget);
    chunk_run r;
    if (in && p &&
        ring_rig_run(p, "tight.zst", in, n, 0, SP_DECOMPRESS_RING, SP_ERR_UNSUPPORTED, &r)) {
        const char *why = sp_pipeline_last_error(p);
        CHECK_HAS(why, "max_device_bytes");
        CHECK_HAS(why, "need");
        CHECK_HAS(why, "chunk_records given");
    }
    /* nothing lost: the same pipeline decodes on the staging threads, within the budget */
    if (in && p && ring_rig_run(p, "tight.zst", in, n, 0, SP_DECOMPRESS_AUTO, SP_OK, &r)) {
        size_t held[2], peak[2];
        allocator(ctx, held, peak);
        CHECK(peak[1] <= budget);
        CHECK_EQ(r.in.ring_chunks, 0);
        CHECK_EQ(r.in.staging_chunks, r.report.chunks);
        CHECK_HAS(r.in.note, "memory budget");
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    return TEST_OK;
}

/* ---- the compressed buffers sized by the compressed bytes -------------------------------- */

/* The most bytes `units` consecutive frames take in a slot, each aligned to 16 as the file
 * source lays them out (file_blocks.c). */
static size_t window_bytes(const size_t *frame_bytes, size_t frames, size_t units)
{
    size_t sum = 0, most = 0;
    for (size_t k = 0; k < frames; k++) {
        sum += (frame_bytes[k] + 15) / 16 * 16;
        if (k >= units)
            sum -= (frame_bytes[k - units] + 15) / 16 * 16;
        most = sum > most ? sum : most;
    }
    return most;
}

/* Frames that compress about 5:1 with a run of 200 that do not, across a chunk boundary: a
 * slot's compressed buffer holds the most any chunk's frames take (that chunk is in the
 * ring too), not the largest frame times the frames a chunk, which is about twice as much
 * here (and the ratio times as much on data without such a run). */
TEST(compressed_buffers_hold_what_a_chunk_takes)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t frames = 4096, units = 512, n = frames * PER;
    size_t *frame_bytes = calloc(frames + 1, sizeof *frame_bytes);
    unsigned char *in = frame_bytes ? ring_rig_file_noisy(&rng, n, "noisy.zst", 950, 200,
                                                          frame_bytes)
                                    : NULL;
    sp_context *ctx = standin_context();
    sp_pipeline *p = ring_rig_pipeline(ctx, units * PER, 2, 0, 0);
    size_t ring[2], peak[2], largest = 0;
    chunk_run r;
    allocator(ctx, ring, peak);
    if (in && p && ring_rig_run(p, "noisy.zst", in, n, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
        size_t held[2], mu = units + 1;
        allocator(ctx, held, peak);
        for (size_t k = 0; k < frames; k++)
            largest = frame_bytes[k] > largest ? frame_bytes[k] : largest;
        size_t window = window_bytes(frame_bytes, frames, mu);
        size_t arrays = (48 * mu + 255) / 256 * 256, decoder = peak[0] - ring[0];
        CHECK_EQ(r.report.chunks, frames / units);
        CHECK_MSG(window * 3 < mu * largest * 2, "the run of noisy frames is too short to "
                  "tell: %zu bytes at most a chunk, %zu frames of %zu", window, mu, largest);
        CHECK_MSG(decoder == 2 * (arrays + window + 16 * mu), "%zu pinned bytes for the "
                  "compressed buffers of 2 slots, where %zu a chunk's frames take at most",
                  decoder, window);
        CHECK_EQ(held[0], ring[0]); /* and given back after the run */
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    free(frame_bytes);
    return TEST_OK;
}

/* ---- a short input's slots ---------------------------------------------------------------- */

/* What one slot of a chunk of `units` frames holds pinned at most: the ring's staging in
 * and out, the decoder's unit arrays, compressed bytes and results (ring_decode.c). */
static size_t slot_pinned_max(size_t units)
{
    size_t records = units * PER, mu = units + 1, align = 256;
    size_t ring = (records * IN_REC + align - 1) / align * align +
                  (records * OUT_REC + align - 1) / align * align;
    return ring + (48 * mu + align) + mu * (ZSTD_compressBound(FRAME) + 32) + 16 * mu;
}

TEST(short_input_holds_a_slot_per_chunk)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t n = 3000 * PER, m = 9000 * PER; /* over the default chunk, under 4096 frames */
    unsigned char *in = ring_rig_file(&rng, n, "short.zst");
    unsigned char *more = ring_rig_file(&rng, m, "long.zst");
    sp_context *ctx = NULL;
    CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK);
    sp_pipeline *p = ring_rig_pipeline(ctx, 0, 0, 0, 0);
    unsigned depth = sp_pipeline_depth(p);
    chunk_run r;
    if (in && p && CHECK(depth > 1) &&
        ring_rig_run(p, "short.zst", in, n, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
        CHECK_EQ(r.report.chunks, 1);
        CHECK_EQ(r.report.depth, 1);
        CHECK_MSG(r.report.pinned_bytes <= r.report.chunks * slot_pinned_max(3000),
                  "%zu pinned bytes held for %zu chunk(s) of 3000 frames", r.report.pinned_bytes,
                  r.report.chunks);
        if (CHECK_EQ(r.changes, 1))
            CHECK_HAS(r.change[0].reason, "1 slots, one a chunk of the run");
    }
    /* a longer input on the same pipeline: the library's depth back */
    if (more && p && ring_rig_run(p, "long.zst", more, m, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
        CHECK_EQ(r.report.chunks, 3);
        CHECK_EQ(r.report.depth, depth < 3 ? depth : 3);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    free(more);
    return TEST_OK;
}

/* ---- no pinned input staging for a run decompressed in the ring ---------------------------- */

/* The pinned bytes of p's ring at its chunk and depth: its output slots alone, and with its
 * input slots (both rounded up as slots are). */
static void ring_pinned(sp_pipeline *p, size_t slot_records, size_t *out_only, size_t *both)
{
    size_t depth = sp_pipeline_depth(p), align = 256;
    size_t in = (slot_records * IN_REC + align - 1) / align * align;
    size_t out = (slot_records * OUT_REC + align - 1) / align * align;
    *out_only = depth * out;
    *both = depth * (in + out);
}

/* The ring grown for a run whose every chunk is decompressed in it has no pinned input slots
 * (the blocks are staged in the decoder's buffers), and a later batch that reads into them
 * makes them: a run from pageable memory, and a range that starts inside a block (its chunks
 * read through the source). Every output record checked. */
TEST(ring_decoded_run_pins_no_input_slots)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t m = 9000 * PER, slot = RING_BLOCKS * PER;
    unsigned char *more = ring_rig_file(&rng, m, "pins.zst");
    unsigned char *want = malloc(m * OUT_REC), *got = malloc(m * OUT_REC);
    sp_context *ctx = NULL;
    CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK);
    size_t held[2], peak[2], out_only = 0, both = 0;
    chunk_run r;
    for (int later = 0; later < 2; later++) {
        sp_pipeline *p = ring_rig_pipeline(ctx, 0, 0, 0, 0);
        if (!more || !want || !got || !p ||
            !ring_rig_run(p, "pins.zst", more, m, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
            sp_pipeline_destroy(p);
            break;
        }
        CHECK_EQ(r.report.slot_records, slot);
        ring_pinned(p, slot, &out_only, &both);
        allocator(ctx, held, peak);
        CHECK_MSG(held[0] == out_only, "%zu pinned bytes held after the run: the output slots "
                  "are %zu, with the input's %zu", held[0], out_only, both);
        if (later == 0) { /* pageable memory in: the input slots made, every record checked */
            memset(got, 0xA5, m * OUT_REC);
            mix_reference(ring_rig_chain()->stages, ring_rig_chain()->n_stages, IN_REC, more,
                          m, 0, want);
            if (CHECK_STATUS(sp_pipeline_run(p, more, m, got, NULL), SP_OK,
                             sp_pipeline_last_error(p)))
                CHECK_EQ(compare_records(want, got, m, OUT_REC, "pageable run"), 0);
        } else if (ring_rig_run(p, "pins.zst", more, m, PER / 2, SP_DECOMPRESS_AUTO, SP_OK,
                                &r)) { /* a range from inside a block: read through the source */
            CHECK_EQ(r.in.staging_chunks, r.report.chunks);
        }
        allocator(ctx, held, peak);
        CHECK_EQ(held[0], both);
        sp_pipeline_destroy(p);
    }
    sp_context_destroy(ctx);
    free(more);
    free(want);
    free(got);
    return TEST_OK;
}

/* Pinned allocation refused for the input slots a later run makes: that run fails saying
 * what it was allocating, writes none of its output, and the pipeline is unharmed: the
 * next run, with memory to be had, makes them and gives every record. */
static int refuse_pinned;

static sp_status refusing_pinned_alloc(void *impl, size_t bytes, void **out)
{
    return refuse_pinned ? SP_ERR_OUT_OF_MEMORY : host_ops->pinned_alloc(impl, bytes, out);
}

TEST(input_slots_refused_fail_that_run_alone)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    size_t m = 3000 * PER;
    unsigned char *in = ring_rig_file(&rng, m, "refused.zst");
    unsigned char *want = malloc(m * OUT_REC), *got = malloc(m * OUT_REC);
    sp_context *ctx = standin_context();
    standin_ops.pinned_alloc = refusing_pinned_alloc;
    sp_pipeline *p = ctx ? ring_rig_pipeline(ctx, 0, 0, 0, 0) : NULL;
    chunk_run r;
    if (in && want && got && p &&
        ring_rig_run(p, "refused.zst", in, m, 0, SP_DECOMPRESS_RING, SP_OK, &r)) {
        mix_reference(ring_rig_chain()->stages, ring_rig_chain()->n_stages, IN_REC, in, m, 0,
                      want);
        memset(got, 0xA5, m * OUT_REC);
        refuse_pinned = 1;
        sp_status st = sp_pipeline_run(p, in, m, got, NULL);
        refuse_pinned = 0;
        CHECK_EQ(st, SP_ERR_OUT_OF_MEMORY);
        CHECK_MSG(strstr(sp_pipeline_last_error(p), "input staging") != NULL, "error: %s",
                  sp_pipeline_last_error(p));
        size_t untouched = 0;
        for (size_t i = 0; i < m * OUT_REC; i++)
            untouched += got[i] == 0xA5;
        CHECK_EQ(untouched, m * OUT_REC);
        if (CHECK_STATUS(sp_pipeline_run(p, in, m, got, NULL), SP_OK, sp_pipeline_last_error(p)))
            CHECK_EQ(compare_records(want, got, m, OUT_REC, "run after the refusal"), 0);
    }
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    standin_ops.pinned_alloc = NULL; /* standin_context copies the HOST table afresh */
    free(in);
    free(want);
    free(got);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(stats_count_every_byte_held),
        TEST_ENTRY(device_budget_holds_the_scratch),
        TEST_ENTRY(impossible_budget_refused_then_staged),
        TEST_ENTRY(short_input_holds_a_slot_per_chunk),
        TEST_ENTRY(compressed_buffers_hold_what_a_chunk_takes),
        TEST_ENTRY(ring_decoded_run_pins_no_input_slots),
        TEST_ENTRY(input_slots_refused_fail_that_run_alone),
    };
    if (!ring_rig_open())
        return 1;
    int rc = harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
    ring_rig_close();
    return rc;
}
