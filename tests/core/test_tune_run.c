/* The tuner while a run goes (src/core/tune_run.c), on real HOST runs: a stage whose cost per
 * record grows tenfold part way through, chunk size left to the library, a budget that cuts
 * the slots to 4096 records so that a run has hundreds of chunks. Checked: every output
 * element (poisoned first, fresh random input; the stage's output depends on each record's
 * own number, so a wrong chunk geometry shows), that the chunk size was changed and the
 * change list says why, that the HOST allocator's peak stays in the budget across changes,
 * that settings the user fixed never change, and run_io, run_feed and a stream across
 * changes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_door.h"
#include "harness.h"
#include "testbuf.h"

#define REC 16          /* bytes per record, in and out: four words */
#define N_RECORDS (1u << 21) /* 512 slot-sized chunks: the tuner watches one in 64 */
#define SLOT_RECORDS 4096
#define DEPTH 4

/* The stage's cost: ns_per_record before record `shift_at`, ten times that from it on. */
typedef struct cost_model {
    double ns_per_record;
    size_t shift_at;
} cost_model;

static void spin_for(double seconds)
{
    double until = sp_now() + seconds;
    while (sp_now() < until) {
    }
}

static uint32_t expected_word(uint32_t in, size_t record, unsigned k)
{
    return in * 2654435761u ^ (uint32_t)(record * 40503u + k);
}

static sp_status shifting_stage(const sp_chunk *c, void *user)
{
    const cost_model *m = user;
    const uint32_t *in = c->in;
    uint32_t *out = c->out;
    for (size_t r = 0; r < c->records; r++)
        for (unsigned k = 0; k < REC / 4; k++)
            out[r * 4 + k] = expected_word(in[r * 4 + k], c->first_record + r, k);
    size_t before = c->first_record < m->shift_at ? m->shift_at - c->first_record : 0;
    before = before < c->records ? before : c->records;
    spin_for(1e-9 * m->ns_per_record * ((double)before + 10.0 * (double)(c->records - before)));
    return SP_OK;
}

static sp_pipeline_config config_of(sp_stage *stage, cost_model *m, size_t chunk, unsigned depth)
{
    *stage = (sp_stage){.name = "shifting", .out_record_bytes = REC, .host = shifting_stage,
                        .user = m};
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = REC;
    cfg.stages = stage;
    cfg.n_stages = 1;
    cfg.chunk_records = chunk;
    cfg.depth = depth;
    /* two pinned buffers of 4096 records per slot, at the depth a budget cuts to first */
    cfg.max_pinned_bytes = (size_t)DEPTH * 2 * SLOT_RECORDS * REC;
    return cfg;
}

static sp_context *host_context(void)
{
    sp_context *ctx = NULL;
    CHECK_EQ(sp_context_create(SP_BACKEND_HOST, 0, &ctx), SP_OK);
    return ctx;
}

/* Every output word of records [first, first + n) against the stage's formula. */
static int output_right(const uint32_t *in, const uint32_t *out, size_t first, size_t n)
{
    for (size_t r = 0; r < n; r++)
        for (unsigned k = 0; k < REC / 4; k++)
            if (out[r * 4 + k] != expected_word(in[r * 4 + k], first + r, k))
                return CHECK_MSG(0, "record %zu word %u: %08x, want %08x", first + r, k,
                                 out[r * 4 + k], expected_word(in[r * 4 + k], first + r, k));
    return 1;
}

/* The changes made since create (the budget's cut there is the first entry): how many
 * changed the chunk, and whether any changed the depth. */
static size_t chunk_changes(sp_pipeline *p, int *depth_changed, char *reason, size_t size)
{
    sp_tune_change list[SP_TUNE_CHANGES_KEPT];
    size_t got = 0, n = 0;
    uint64_t total = 0;
    CHECK_EQ(sp_pipeline_tune_changes(p, list, SP_TUNE_CHANGES_KEPT, &got, &total), SP_OK);
    *depth_changed = 0;
    reason[0] = '\0';
    for (size_t k = got && strstr(list[0].reason, "at create") ? 1 : 0; k < got; k++) {
        if (getenv("SP_TEST_VERBOSE"))
            fprintf(stderr, "  change %zu: chunk %zu -> %zu: %s\n", k, list[k].from_chunk,
                    list[k].to_chunk, list[k].reason);
        *depth_changed |= list[k].from_depth != list[k].to_depth;
        if (list[k].from_chunk != list[k].to_chunk) {
            CHECK_MSG(list[k].reason[0] != '\0', "change %zu has no reason", k);
            CHECK_MSG(list[k].to_chunk <= SLOT_RECORDS, "change %zu: chunk %zu over the slots",
                      k, list[k].to_chunk);
            if (n++ == 0)
                snprintf(reason, size, "%s", list[k].reason);
        }
    }
    return n;
}

/* One run of fresh random data into poisoned memory (pinned from sp_host_alloc, or
 * pageable), every element checked; 1 when right. */
static int run_checked(sp_context *ctx, sp_pipeline *p, int pinned, test_rng *rng)
{
    size_t bytes = (size_t)N_RECORDS * REC;
    uint32_t *in = NULL, *out = NULL;
    if (pinned) {
        CHECK_EQ(sp_host_alloc(ctx, bytes, (void **)&in), SP_OK);
        CHECK_EQ(sp_host_alloc(ctx, bytes, (void **)&out), SP_OK);
    } else {
        in = malloc(bytes);
        out = malloc(bytes);
    }
    int ok = CHECK(in && out);
    if (ok) {
        rng_fill(rng, in, bytes);
        memset(out, 0xA5, bytes);
        ok = CHECK_EQ(sp_pipeline_run(p, in, N_RECORDS, out, NULL), SP_OK) &&
             output_right(in, out, 0, N_RECORDS);
    }
    if (pinned) {
        sp_host_free(ctx, in);
        sp_host_free(ctx, out);
    } else {
        free(in);
        free(out);
    }
    return ok;
}

TEST(auto_chunk_is_repicked_in_budget_and_every_element_right)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    for (int pinned = 0; pinned < 2; pinned++) {
        harness_context("pinned %d", pinned);
        sp_context *ctx = host_context();
        cost_model m = {40.0, N_RECORDS / 3};
        sp_stage stage;
        sp_pipeline_config cfg = config_of(&stage, &m, 0, 0);
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
        if (p) {
            run_checked(ctx, p, pinned, &rng);
            int depth_changed = 1;
            char reason[160];
            size_t n = chunk_changes(p, &depth_changed, reason, sizeof reason);
            CHECK_MSG(n >= 1, "the tuner never changed the chunk");
            CHECK(!depth_changed);
            CHECK_HAS(reason, "chunks");
            sp_stats st = SP_STATS_INIT;
            CHECK_EQ(sp_pipeline_stats(p, &st), SP_OK);
            CHECK(st.tune_changes >= n);
            CHECK(st.tune_reason[0] != '\0');
            sp_pipeline_destroy(p);
        }
        size_t held[2], peak[2];
        sp_backend_host_memory_held(ctx->impl, held, peak);
        if (!pinned) /* the pinned run's own sp_host_alloc blocks count there too */
            CHECK_MSG(peak[0] <= cfg.max_pinned_bytes && peak[0] > 0,
                      "pinned peak %zu over the budget %zu", peak[0], cfg.max_pinned_bytes);
        sp_context_destroy(ctx);
    }
    harness_context("%s", "");
    return TEST_OK;
}

TEST(fixed_settings_never_change)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    sp_context *ctx = host_context();
    cost_model m = {40.0, N_RECORDS / 3};
    sp_stage stage;
    for (int which = 0; which < 2; which++) { /* chunk and depth fixed; the chunk alone */
        sp_pipeline_config cfg = config_of(&stage, &m, 2048, which == 0 ? 3 : 0);
        sp_pipeline *p = NULL;
        CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
        if (!p)
            continue;
        harness_context("depth %s", which == 0 ? "fixed" : "auto");
        run_checked(ctx, p, 0, &rng);
        int depth_changed = 1;
        char reason[160];
        CHECK_EQ(chunk_changes(p, &depth_changed, reason, sizeof reason), 0);
        CHECK(!depth_changed);
        sp_stats st = SP_STATS_INIT;
        CHECK_EQ(sp_pipeline_stats(p, &st), SP_OK);
        CHECK_EQ(st.tune_changes, 0); /* in the budget as given: not even one at create */
        sp_pipeline_destroy(p);
    }
    harness_context("%s", "");
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* run_io's source and sink over memory: sequential reads in pieces, writes checked in order. */
typedef struct io_memory {
    const uint32_t *in;
    uint32_t *out;
    size_t n, next_write;
    int out_of_order;
} io_memory;

static sp_status read_memory(void *dst, size_t first, size_t max, size_t *got, void *user)
{
    io_memory *io = user;
    size_t n = first < io->n ? io->n - first : 0;
    n = n < max ? n : max;
    n = n > 1000 ? 1000 : n; /* short reads: the run asks again */
    memcpy(dst, io->in + first * 4, n * REC);
    *got = n;
    return SP_OK;
}

static sp_status write_memory(const void *src, size_t first, size_t n, void *user)
{
    io_memory *io = user;
    io->out_of_order |= first != io->next_write;
    if (first + n > io->n)
        return SP_ERR_INVALID_ARGUMENT;
    memcpy(io->out + first * 4, src, n * REC);
    io->next_write = first + n;
    return SP_OK;
}

/* Each run on a pipeline of its own: a fresh tuner probes and picks within the run's 8
 * watched chunks for certain, where a tuner carried over from the run before has already
 * probed and changes again only if it sees the shift in time (under TSan on a 2-core machine
 * it did not, once). */
TEST(run_io_across_changes)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    sp_context *ctx = host_context();
    cost_model m = {40.0, N_RECORDS / 3};
    sp_stage stage;
    sp_pipeline_config cfg = config_of(&stage, &m, 0, 0);
    size_t bytes = (size_t)N_RECORDS * REC;
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    for (int known = 0; in && out && known < 2; known++) {
        harness_context("length %s", known ? "known" : "unknown");
        sp_pipeline *p = NULL;
        if (!CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK))
            break;
        rng_fill(&rng, in, bytes);
        memset(out, 0xA5, bytes);
        io_memory mem = {in, out, N_RECORDS, 0, 0};
        sp_io io = SP_IO_INIT;
        io.read = read_memory;
        io.read_user = &mem;
        io.write = write_memory;
        io.write_user = &mem;
        io.n_records = known ? N_RECORDS : 0;
        CHECK_EQ(sp_pipeline_run_io(p, &io, NULL), SP_OK);
        CHECK(!mem.out_of_order);
        CHECK_EQ(mem.next_write, N_RECORDS);
        output_right(in, out, 0, N_RECORDS);
        int depth_changed = 1;
        char reason[160];
        CHECK_MSG(chunk_changes(p, &depth_changed, reason, sizeof reason) >= 1,
                  "run_io made no change");
        CHECK(!depth_changed);
        sp_pipeline_destroy(p);
        m.shift_at = N_RECORDS / 2; /* the second run shifts elsewhere */
    }
    harness_context("%s", "");
    free(in);
    free(out);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* run_feed: batches of uneven sizes fed behind each other, numbered on from each other. */
typedef struct feed_state {
    const uint32_t *in;
    uint32_t *out;
    size_t n, fed;
    test_rng *rng;
} feed_state;

static int next_batch(void *user, sp_feed_batch *b)
{
    feed_state *f = user;
    if (f->fed >= f->n)
        return 0;
    size_t want = 30000 + rng_below(f->rng, 100000);
    want = want < f->n - f->fed ? want : f->n - f->fed;
    *b = (sp_feed_batch){f->in + f->fed * 4, want, f->out + f->fed * 4, f->fed};
    f->fed += want;
    return 1;
}

/* Twice a run's records: a feed's units are batches of their own, and the tuner needs its
 * watched chunks (one in 64) at one setting before its first probe. */
#define FEED_RECORDS (2 * N_RECORDS)

TEST(run_feed_across_changes)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    sp_context *ctx = host_context();
    cost_model m = {40.0, FEED_RECORDS / 3};
    sp_stage stage;
    sp_pipeline_config cfg = config_of(&stage, &m, 0, 0);
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    size_t bytes = (size_t)FEED_RECORDS * REC;
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    if (p && in && out) {
        rng_fill(&rng, in, bytes);
        memset(out, 0xA5, bytes);
        feed_state f = {in, out, FEED_RECORDS, 0, &rng};
        CHECK_EQ(sp_pipeline_run_feed(p, next_batch, &f, NULL), SP_OK);
        output_right(in, out, 0, FEED_RECORDS);
        int depth_changed = 1;
        char reason[160];
        CHECK_MSG(chunk_changes(p, &depth_changed, reason, sizeof reason) >= 1,
                  "run_feed made no change");
        CHECK(!depth_changed);
    }
    free(in);
    free(out);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A stream's batches, submitted behind each other, numbered from the stream's start. As many
 * records as run_feed's, for the same reason: at half that, the stream was over before its
 * first probe once under ASan on a loaded machine ("the stream made no change"). */
TEST(stream_across_changes)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    sp_context *ctx = host_context();
    cost_model m = {40.0, FEED_RECORDS / 3};
    sp_stage stage;
    sp_pipeline_config cfg = config_of(&stage, &m, 0, 0);
    sp_pipeline *p = NULL;
    CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK);
    size_t bytes = (size_t)FEED_RECORDS * REC;
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    sp_stream *stream = NULL;
    if (p && in && out && CHECK_EQ(sp_stream_open(p, NULL, &stream), SP_OK)) {
        rng_fill(&rng, in, bytes);
        memset(out, 0xA5, bytes);
        size_t fed = 0, batches = 0, done = 0;
        while (fed < FEED_RECORDS) {
            size_t n = 20000 + rng_below(&rng, 150000);
            n = n < FEED_RECORDS - fed ? n : FEED_RECORDS - fed;
            CHECK_EQ(sp_stream_submit(stream, in + fed * 4, n, out + fed * 4, batches++), SP_OK);
            fed += n;
        }
        sp_stream_event ev;
        while (done < batches && CHECK_EQ(sp_stream_next(stream, &ev, 60.0), SP_OK)) {
            if (ev.kind != SP_EVENT_DONE)
                continue;
            CHECK_MSG(ev.status == SP_OK && ev.tag == done, "batch %llu: %s",
                      (unsigned long long)ev.tag, sp_status_name(ev.status));
            done++;
        }
        CHECK_EQ(sp_stream_close(stream, NULL), SP_OK);
        output_right(in, out, 0, FEED_RECORDS);
        int depth_changed = 1;
        char reason[160];
        CHECK_MSG(chunk_changes(p, &depth_changed, reason, sizeof reason) >= 1,
                  "the stream made no change");
        CHECK(!depth_changed);
    }
    free(in);
    free(out);
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* A stream of batches from 1 record to 4 slots' worth, every element checked; 1 when right. */
static int stream_checked(sp_pipeline *p, test_rng *rng)
{
    size_t n_records = (size_t)SLOT_RECORDS * 64, bytes = n_records * REC;
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    sp_stream *stream = NULL;
    int ok = CHECK(in && out) && CHECK_EQ(sp_stream_open(p, NULL, &stream), SP_OK);
    if (ok) {
        rng_fill(rng, in, bytes);
        memset(out, 0xA5, bytes);
        size_t fed = 0, batches = 0, done = 0;
        while (fed < n_records) {
            size_t n = rng_below(rng, 2) ? 1 + rng_below(rng, 64) : rng_below(rng, 4 * SLOT_RECORDS);
            n = n == 0 ? 1 : n < n_records - fed ? n : n_records - fed;
            ok &= CHECK_EQ(sp_stream_submit(stream, in + fed * 4, n, out + fed * 4, batches++),
                           SP_OK);
            fed += n;
        }
        sp_stream_event ev;
        while (done < batches && CHECK_EQ(sp_stream_next(stream, &ev, 60.0), SP_OK))
            if (ev.kind == SP_EVENT_DONE)
                done += CHECK_MSG(ev.status == SP_OK, "batch %llu: %s",
                                  (unsigned long long)ev.tag, sp_status_name(ev.status));
        ok &= CHECK_EQ(sp_stream_close(stream, NULL), SP_OK) && done == batches &&
              output_right(in, out, 0, n_records);
    }
    free(in);
    free(out);
    return ok;
}

/* With the depth left to the library, a stream's ring is made deeper as it opens (its small
 * batches hold whole slots): SP_STREAM_DEPTH slots, or as many as a budget holds with the old
 * ring beside the new (the allocator's peak says so), never for a depth the user gave; the
 * change is listed, the stats count the new ring, and streams and runs after it are right. */
TEST(a_stream_gets_a_deeper_ring)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    cost_model m = {0.0, (size_t)-1};
    sp_stage stage;
    size_t slot_pinned = 2 * (size_t)SLOT_RECORDS * REC; /* in and out, per slot */
    struct {
        unsigned depth;    /* the config's */
        size_t max_pinned; /* in slots' worth */
        unsigned want;     /* after the stream opened */
    } cases[] = {{0, 0, SP_STREAM_DEPTH}, {0, 5 + 7, 7}, {0, 5 + 5, 5}, {3, 0, 3}};
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        sp_context *ctx = host_context();
        sp_pipeline_config cfg = config_of(&stage, &m, SLOT_RECORDS, cases[k].depth);
        cfg.max_pinned_bytes = cases[k].max_pinned * slot_pinned;
        sp_pipeline *p = NULL;
        if (!CHECK_EQ(sp_pipeline_create(ctx, &cfg, &p), SP_OK))
            break;
        unsigned at_create = sp_pipeline_depth(p);
        CHECK_EQ(at_create, cases[k].depth ? cases[k].depth : 5u);
        stream_checked(p, &rng);
        CHECK_MSG(sp_pipeline_depth(p) == cases[k].want, "case %zu: depth %u, want %u", k,
                  sp_pipeline_depth(p), cases[k].want);
        sp_stats st = {.size = sizeof st};
        size_t held[2], peak[2];
        sp_backend_host_memory_held(ctx->impl, held, peak);
        CHECK_EQ(sp_pipeline_stats(p, &st), SP_OK);
        CHECK_EQ(st.pinned_bytes, cases[k].want * slot_pinned);
        CHECK_EQ(held[0], st.pinned_bytes);
        if (cfg.max_pinned_bytes)
            CHECK_MSG(peak[0] <= cfg.max_pinned_bytes, "case %zu: peak %zu pinned over %zu", k,
                      peak[0], cfg.max_pinned_bytes);
        sp_tune_change list[SP_TUNE_CHANGES_KEPT];
        size_t got = 0;
        uint64_t total = 0;
        CHECK_EQ(sp_pipeline_tune_changes(p, list, SP_TUNE_CHANGES_KEPT, &got, &total), SP_OK);
        int deepened = cases[k].want != at_create;
        CHECK_EQ(got, (size_t)deepened);
        if (deepened && got)
            CHECK_MSG(list[0].from_depth == at_create && list[0].to_depth == cases[k].want &&
                          strstr(list[0].reason, "stream"),
                      "case %zu: change %u -> %u: %s", k, list[0].from_depth, list[0].to_depth,
                      list[0].reason);
        stream_checked(p, &rng); /* a second stream: the ring stays as deep */
        CHECK_EQ(sp_pipeline_depth(p), cases[k].want);
        run_checked(ctx, p, 0, &rng);
        run_checked(ctx, p, 1, &rng);
        sp_pipeline_destroy(p);
        sp_context_destroy(ctx);
    }
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(auto_chunk_is_repicked_in_budget_and_every_element_right),
        TEST_ENTRY(fixed_settings_never_change),
        TEST_ENTRY(run_io_across_changes),
        TEST_ENTRY(run_feed_across_changes),
        TEST_ENTRY(stream_across_changes),
        TEST_ENTRY(a_stream_gets_a_deeper_ring),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
