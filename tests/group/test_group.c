/*
 * test_group host|cuda [filter]: sp_group, one run over several devices (HOST: several host
 * backends standing in for GPUs).
 *
 * 1-4 devices, random record counts (0, 1, primes, many units), record sizes, chains of 0-3
 * mix stages, chunk and unit sizes: every output record checked against the reference of one
 * whole run (stages see the run's record numbers), in place too, and through a positional
 * source and sink (every record read and written once); units and records per device add up
 * to the run and to the merged report. One device on a fault context delaying its queues
 * 16 times as long as the others' takes less than an equal share, and fewer units than the
 * busiest other. A stage failing on one unit, and a device whose every launch fails, fail the
 * run with that device's index and reason; the others drain and the group runs correctly right
 * after. Bad arguments are refused with a reason. A member pipeline cannot be destroyed by
 * the user; a member busy with a stream fails the run with its device and reason.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stage_wrap.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_group.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

#define MAX_DEVICES 4

/* ---- a scenario ---------------------------------------------------------------------------- */

typedef struct group_case {
    size_t devices, n, in_rec, n_stages, chunk, unit;
    size_t out_recs[CHAIN_MAX];
    unsigned depth;
} group_case;

static void describe(const group_case *c, const char *what)
{
    harness_context("%s: devices=%zu n=%zu in_rec=%zu stages=%zu chunk=%zu unit=%zu depth=%u",
                    what, c->devices, c->n, c->in_rec, c->n_stages, c->chunk, c->unit,
                    c->depth);
}

static void random_case(test_rng *rng, size_t devices, group_case *c)
{
    static const size_t sizes[] = {0, 1, 2, 97, 255, 256, 257, 1021, 4096, 10007, 65537};
    memset(c, 0, sizeof *c);
    c->devices = devices;
    c->n = harness_quick() && rng_below(rng, 2) ? sizes[rng_below(rng, 8)]
                                                : sizes[rng_below(rng, ARRAY_LEN(sizes))];
    c->in_rec = 1 + rng_below(rng, 24);
    c->n_stages = rng_below(rng, 4);
    for (size_t s = 0; s < c->n_stages; s++)
        c->out_recs[s] = 1 + rng_below(rng, 24);
    c->chunk = rng_below(rng, 3) ? 1 + rng_below(rng, 300) : 0;
    c->unit = rng_below(rng, 3) ? 1 + rng_below(rng, 1200) : 0;
    c->depth = 1 + (unsigned)rng_below(rng, 6);
}

static sp_group *make_group(const group_case *c, mix_chain *chain, uint32_t seed)
{
    mix_chain_init(chain, c->in_rec, c->n_stages, c->out_recs, seed);
    sp_pipeline_config cfg = mix_chain_config(chain, c->chunk, c->depth);
    cfg.staging_threads = 4;
    /* HOST: that many host backends; CUDA: that many pipelines on GPU 0, the one GPU sure to
     * be there (NULL would mean every visible GPU, however many there are) */
    static const int gpu0[MAX_DEVICES] = {0};
    sp_group *g = NULL;
    sp_status st = sp_group_create(g_kind, g_kind == SP_BACKEND_CUDA ? gpu0 : NULL, c->devices,
                                   &cfg, &g);
    if (!CHECK_STATUS(st, SP_OK, sp_group_last_error(g))) {
        sp_group_destroy(g); /* a failed creation still yields a handle */
        return NULL;
    }
    sp_group_set_unit_records(g, c->unit);
    return g;
}

/* Units and records of the devices add up to the run, and the reports agree. */
static void check_figures(sp_group *g, const group_case *c, const sp_report *merged)
{
    size_t units = 0, records = 0;
    for (size_t k = 0; k < sp_group_size(g); k++) {
        sp_group_device_stats s;
        sp_report r;
        CHECK_EQ(sp_group_device_stats_get(g, k, &s), SP_OK);
        CHECK_EQ(sp_group_device_report(g, k, &r), SP_OK);
        CHECK_EQ(r.records, s.records);
        CHECK_EQ(r.batches, s.units);
        CHECK_EQ(s.status, SP_OK);
        units += s.units;
        records += s.records;
    }
    CHECK_EQ(records, c->n);
    CHECK_EQ(merged->records, c->n);
    CHECK_EQ(merged->batches, units);
    CHECK(merged->makespan_s >= 0.0);
    /* every device's busy time lies within the run's wall time */
    CHECK_MSG(merged->bound_s <= merged->makespan_s + 1e-6, "busiest device %.6f s, run %.6f s",
              merged->bound_s, merged->makespan_s);
    CHECK(c->n == 0 || merged->chunks >= units);
    CHECK_EQ(sp_group_failed_device(g), -1);
    CHECK_EQ(sp_group_last_error(g)[0], '\0');
}

/* One run from `in` to a poisoned `out` (or in place), checked against the reference. */
static void run_checked(sp_group *g, const group_case *c, const mix_chain *chain,
                        const unsigned char *in, int in_place)
{
    size_t out_rec = mix_chain_out_rec(chain);
    size_t in_bytes = c->n * c->in_rec, out_bytes = c->n * out_rec;
    unsigned char *want = malloc(out_bytes + 1);
    unsigned char *out = malloc((in_place ? in_bytes : out_bytes) + 1);
    if (!CHECK(want && out)) {
        free(want);
        free(out);
        return;
    }
    mix_reference(chain->stages, c->n_stages, c->in_rec, in, c->n, 0, want);
    if (in_place)
        memcpy(out, in, in_bytes);
    else
        memset(out, 0xA5, out_bytes);
    sp_report report;
    sp_status st = sp_group_run(g, in_place ? out : in, c->n, out, &report);
    if (CHECK_STATUS(st, SP_OK, sp_group_last_error(g))) {
        compare_records(want, out, c->n, out_rec, "group output");
        check_figures(g, c, &report);
    }
    free(want);
    free(out);
}

static unsigned char *random_input(test_rng *rng, size_t bytes)
{
    unsigned char *in = malloc(bytes + 1);
    if (in)
        rng_fill(rng, in, bytes);
    return in;
}

TEST(random_runs)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6701);
    size_t per_size = harness_quick() ? 4 : 12;
    for (size_t devices = 1; devices <= MAX_DEVICES; devices++) {
        for (size_t i = 0; i < per_size; i++) {
            group_case c;
            random_case(&rng, devices, &c);
            describe(&c, "random");
            mix_chain chain;
            sp_group *g = make_group(&c, &chain, (uint32_t)rng_next(&rng));
            unsigned char *in = random_input(&rng, c.n * c.in_rec);
            if (g && CHECK(in)) {
                CHECK_EQ(sp_group_size(g), devices);
                run_checked(g, &c, &chain, in, 0);
                run_checked(g, &c, &chain, in, 0); /* the group runs again */
            }
            free(in);
            sp_group_destroy(g);
        }
    }
    harness_context("%s", "");
    return TEST_OK;
}

TEST(in_place_runs)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6702);
    for (size_t devices = 1; devices <= MAX_DEVICES; devices++) {
        group_case c;
        random_case(&rng, devices, &c);
        c.n = 5000 + rng_below(&rng, 5000);
        for (size_t s = 0; s < c.n_stages; s++)
            c.out_recs[s] = c.in_rec;
        describe(&c, "in place");
        mix_chain chain;
        sp_group *g = make_group(&c, &chain, (uint32_t)rng_next(&rng));
        unsigned char *in = random_input(&rng, c.n * c.in_rec);
        if (g && CHECK(in))
            run_checked(g, &c, &chain, in, 1);
        free(in);
        sp_group_destroy(g);
    }
    harness_context("%s", "");
    return TEST_OK;
}

/* ---- a positional source and sink over arrays ---------------------------------------------- */

typedef struct array_io {
    const unsigned char *in;
    unsigned char *out;
    size_t in_rec, out_rec, n;
    atomic_uchar *read_count, *write_count; /* per record */
    atomic_ulong outside;                   /* calls for records outside the run */
} array_io;

static sp_status array_read(void *dst, size_t first, size_t max, size_t *records, void *user)
{
    array_io *a = user;
    if (first > a->n || max > a->n - first) {
        atomic_fetch_add(&a->outside, 1);
        return SP_ERR_INVALID_ARGUMENT;
    }
    memcpy(dst, a->in + first * a->in_rec, max * a->in_rec);
    for (size_t r = first; r < first + max; r++)
        atomic_fetch_add(&a->read_count[r], 1);
    *records = max;
    return SP_OK;
}

static sp_status array_write(const void *src, size_t first, size_t records, void *user)
{
    array_io *a = user;
    if (first > a->n || records > a->n - first) {
        atomic_fetch_add(&a->outside, 1);
        return SP_ERR_INVALID_ARGUMENT;
    }
    memcpy(a->out + first * a->out_rec, src, records * a->out_rec);
    for (size_t r = first; r < first + records; r++)
        atomic_fetch_add(&a->write_count[r], 1);
    return SP_OK;
}

static void run_io_checked(sp_group *g, const group_case *c, const mix_chain *chain,
                           const unsigned char *in)
{
    size_t out_rec = mix_chain_out_rec(chain);
    array_io a = {in, malloc(c->n * out_rec + 1), c->in_rec, out_rec, c->n,
                  calloc(c->n + 1, 1), calloc(c->n + 1, 1), 0};
    unsigned char *want = malloc(c->n * out_rec + 1);
    if (CHECK(a.out && a.read_count && a.write_count && want)) {
        mix_reference(chain->stages, c->n_stages, c->in_rec, in, c->n, 0, want);
        memset(a.out, 0xA5, c->n * out_rec);
        sp_io io = {sizeof(sp_io), array_read, &a, array_write, &a, c->n, 1, NULL, NULL, NULL};
        sp_report report;
        sp_status st = sp_group_run_io(g, &io, &report);
        if (CHECK_STATUS(st, SP_OK, sp_group_last_error(g))) {
            compare_records(want, a.out, c->n, out_rec, "group io output");
            check_figures(g, c, &report);
        }
        size_t wrong = 0;
        for (size_t r = 0; r < c->n; r++)
            wrong += a.read_count[r] != 1 || a.write_count[r] != 1;
        CHECK_EQ(wrong, 0);
        CHECK_EQ(atomic_load(&a.outside), 0);
    }
    free(want);
    free(a.out);
    free((void *)a.read_count);
    free((void *)a.write_count);
}

TEST(io_runs)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6703);
    size_t per_size = harness_quick() ? 3 : 8;
    for (size_t devices = 1; devices <= MAX_DEVICES; devices++) {
        for (size_t i = 0; i < per_size; i++) {
            group_case c;
            random_case(&rng, devices, &c);
            if (c.n == 0)
                c.n = 1 + rng_below(&rng, 20000); /* a positional io has a length */
            describe(&c, "io");
            mix_chain chain;
            sp_group *g = make_group(&c, &chain, (uint32_t)rng_next(&rng));
            unsigned char *in = random_input(&rng, c.n * c.in_rec);
            if (g && CHECK(in))
                run_io_checked(g, &c, &chain, in);
            free(in);
            sp_group_destroy(g);
        }
    }
    harness_context("%s", "");
    return TEST_OK;
}

/* ---- groups over the caller's contexts --------------------------------------------------- */

/* n contexts; the one at `odd` (if < n) is a fault context with cfg, the others with
 * others_cfg (NULL: plain contexts). */
static int open_contexts(sp_context **ctx, size_t n, size_t odd, const sp_fault_config *cfg,
                         const sp_fault_config *others_cfg)
{
    memset(ctx, 0, n * sizeof *ctx);
    for (size_t k = 0; k < n; k++) {
        const sp_fault_config *mine = k == odd ? cfg : others_cfg;
        sp_status st = mine ? sp_context_create_fault(g_kind, 0, mine, &ctx[k])
                            : sp_context_create(g_kind, 0, &ctx[k]);
        if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx[k])))
            return 0;
    }
    return 1;
}

static void close_contexts(sp_context **ctx, size_t n)
{
    for (size_t k = 0; k < n; k++)
        sp_context_destroy(ctx[k]);
}

/* A chain of one stage, 64 records a chunk, one chunk a unit: many units to share out. */
static sp_group *context_group(sp_context **ctx, size_t n, mix_chain *chain, group_case *c)
{
    memset(c, 0, sizeof *c);
    *c = (group_case){.devices = n, .n = 64 * 120, .in_rec = 8, .n_stages = 1, .chunk = 64,
                      .unit = 64, .depth = 3};
    c->out_recs[0] = 12;
    mix_chain_init(chain, c->in_rec, c->n_stages, c->out_recs, 77);
    sp_pipeline_config cfg = mix_chain_config(chain, c->chunk, c->depth);
    sp_group *g = NULL;
    sp_status st = sp_group_create_contexts(ctx, n, &cfg, &g);
    if (!CHECK_STATUS(st, SP_OK, sp_group_last_error(g)))
        return NULL;
    sp_group_set_unit_records(g, c->unit);
    return g;
}

TEST(slow_device_takes_fewer)
{
    enum { N = 3, SLOW = 1 };
    /* Every device's queues are delayed, the slow one's 16 times as long: the run then lasts
     * long enough (120 units) for each device's thread to be scheduled. Undelayed, the run
     * took 40 ms under ASan on two busy cores, and a fast device's thread could wait all of
     * it and take no unit (CI, stop 42: units 119 1 0). */
    sp_fault_config slow = {0}, fast = {0};
    slow.delay_us = 4000; /* before every operation on its queues */
    fast.delay_us = 250;
    sp_context *ctx[N];
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6704);
    mix_chain chain;
    group_case c = {0};
    sp_group *g = open_contexts(ctx, N, SLOW, &slow, &fast) ? context_group(ctx, N, &chain, &c)
                                                            : NULL;
    unsigned char *in = random_input(&rng, c.n * c.in_rec);
    if (g && CHECK(in)) {
        describe(&c, "slow device 1");
        run_checked(g, &c, &chain, in, 0);
        sp_group_device_stats s[N];
        size_t units = 0, most = 0;
        for (size_t k = 0; k < N; k++) {
            CHECK_EQ(sp_group_device_stats_get(g, k, &s[k]), SP_OK);
            units += s[k].units;
            if (k != SLOW)
                most = s[k].units > most ? s[k].units : most;
        }
        printf("  units per device (device %d slowed): %zu %zu %zu\n", SLOW, s[0].units,
               s[1].units, s[2].units);
        /* Fixed equal shares would fail both. Whether the slow device also takes fewer than
         * the *least* busy fast one depends on the OS scheduling that one's thread, which a
         * test on two shared cores cannot promise, so it is not claimed. */
        CHECK_MSG(s[SLOW].units * N < units, "the slow device took %zu of %zu units, not "
                  "less than an equal share", s[SLOW].units, units);
        CHECK_MSG(s[SLOW].units < most, "the slow device took %zu units, as many as the "
                  "busiest other (%zu)", s[SLOW].units, most);
    }
    free(in);
    sp_group_destroy(g);
    close_contexts(ctx, N);
    harness_context("%s", "");
    return TEST_OK;
}

/* ---- failures ------------------------------------------------------------------------------ */

/* A mix stage that fails the chunk holding record fail_record (SIZE_MAX: none), so that the
 * one device that takes that unit fails. */
typedef struct failing_stage {
    stage_wrap wrap;
    atomic_size_t fail_record;
} failing_stage;

static sp_status fail_at_record(const sp_chunk *c, void *arg)
{
    failing_stage *f = arg;
    size_t r = atomic_load(&f->fail_record);
    return r >= c->first_record && r - c->first_record < c->records ? SP_ERR_INVALID_ARGUMENT
                                                                      : SP_OK;
}

/* After a failed run: the failing device is named, its status is the run's. */
static void check_failed(sp_group *g, sp_status st, sp_status want, int device,
                         const char *reason)
{
    CHECK_STATUS(st, want, sp_group_last_error(g));
    int k = sp_group_failed_device(g);
    CHECK(k >= 0 && (size_t)k < sp_group_size(g));
    if (device >= 0)
        CHECK_EQ(k, device);
    char name[32];
    snprintf(name, sizeof name, "device %d: ", k);
    CHECK_HAS(sp_group_last_error(g), name);
    CHECK_HAS(sp_group_last_error(g), reason);
    sp_group_device_stats s;
    if (k >= 0 && CHECK_EQ(sp_group_device_stats_get(g, (size_t)k, &s), SP_OK))
        CHECK_EQ(s.status, want);
}

TEST(stage_fails_on_one_unit)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6705);
    for (size_t devices = 1; devices <= MAX_DEVICES; devices++) {
        group_case c = {.devices = devices, .n = 64 * 40, .in_rec = 8, .n_stages = 1,
                        .chunk = 64, .unit = 128, .depth = 4};
        c.out_recs[0] = 8;
        describe(&c, "stage fails");
        mix_chain chain;
        mix_chain_init(&chain, c.in_rec, 1, c.out_recs, 5);
        failing_stage f = {{mix_stage_desc(&chain.stages[0]), fail_at_record, &f}, 0};
        atomic_init(&f.fail_record, rng_below(&rng, c.n));
        sp_stage stage = stage_wrap_desc(&f.wrap);
        sp_pipeline_config cfg = mix_chain_config(&chain, c.chunk, c.depth);
        cfg.stages = &stage;
        sp_group *g = NULL;
        sp_status st = sp_group_create(g_kind, NULL, devices, &cfg, &g);
        unsigned char *in = random_input(&rng, c.n * c.in_rec);
        unsigned char *out = malloc(c.n * c.out_recs[0] + 1);
        if (CHECK_STATUS(st, SP_OK, sp_group_last_error(g)) && CHECK(in && out)) {
            sp_group_set_unit_records(g, c.unit);
            st = sp_group_run(g, in, c.n, out, NULL);
            check_failed(g, st, SP_ERR_STAGE_FAILED, -1, "alpha");
            atomic_store(&f.fail_record, SIZE_MAX);
            run_checked(g, &c, &chain, in, 0); /* and the group runs again */
        }
        free(in);
        free(out);
        sp_group_destroy(g);
    }
    harness_context("%s", "");
    return TEST_OK;
}

TEST(device_fails)
{
    enum { N = 3, BAD = 2 };
    /* devices 0 and 1 slowed, so that device 2 surely takes a unit before they are done */
    sp_fault_config slow = {0}, failing = {0};
    slow.delay_us = 2000;
    failing.fail_op = "launch";
    sp_context *ctx[N] = {0};
    sp_status st = sp_context_create_fault(g_kind, 0, &slow, &ctx[0]);
    if (st == SP_OK)
        st = sp_context_create_fault(g_kind, 0, &slow, &ctx[1]);
    if (st == SP_OK)
        st = sp_context_create_fault(g_kind, 0, &failing, &ctx[BAD]);
    mix_chain chain;
    group_case c = {0};
    sp_group *g = CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx[BAD]))
                      ? context_group(ctx, N, &chain, &c) : NULL;
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 0x6706);
    unsigned char *in = random_input(&rng, c.n * c.in_rec);
    unsigned char *out = malloc(c.n * 12 + 1);
    if (g && CHECK(in && out)) {
        describe(&c, "device 2 fails");
        st = sp_group_run(g, in, c.n, out, NULL);
        check_failed(g, st, SP_ERR_BACKEND, BAD, "launch");
        sp_group_device_stats s;
        for (size_t k = 0; k < BAD; k++)
            if (CHECK_EQ(sp_group_device_stats_get(g, k, &s), SP_OK))
                CHECK_EQ(s.status, SP_OK);
        /* the device works again: every unit runs */
        CHECK_EQ(sp_fault_set(ctx[BAD], NULL), SP_OK);
        run_checked(g, &c, &chain, in, 0);
    }
    free(in);
    free(out);
    sp_group_destroy(g);
    close_contexts(ctx, N);
    harness_context("%s", "");
    return TEST_OK;
}

/* ---- creation and arguments ------------------------------------------------------------- */

static void check_size(sp_backend_kind kind, const int *devices, size_t n, size_t want,
                       const int *want_numbers)
{
    mix_chain chain;
    size_t out_recs[1] = {4};
    mix_chain_init(&chain, 4, 1, out_recs, 1);
    sp_pipeline_config cfg = mix_chain_config(&chain, 0, 0);
    sp_group *g = NULL;
    sp_status st = sp_group_create(kind, devices, n, &cfg, &g);
    if (CHECK_STATUS(st, SP_OK, sp_group_last_error(g))) {
        CHECK_EQ(sp_group_size(g), want);
        for (size_t k = 0; want_numbers && k < want; k++) {
            sp_group_device_stats s;
            CHECK_EQ(sp_group_device_stats_get(g, k, &s), SP_OK);
            CHECK_EQ(s.device, want_numbers[k]);
        }
        CHECK(sp_group_pipeline(g, want - 1) != NULL);
        CHECK(sp_group_pipeline(g, want) == NULL);
    }
    sp_group_destroy(g);
}

TEST(create_sizes)
{
    if (g_kind != SP_BACKEND_HOST) {
        harness_skip_reason("%s", "host backends only: the GPU count is the machine's");
        return TEST_SKIP;
    }
    static const int all[] = {-1}, listed[] = {5, 7};
    static const int numbered[] = {0, 1, 2};
    check_size(SP_BACKEND_HOST, NULL, 0, 1, NULL);
    check_size(SP_BACKEND_HOST, all, 1, 1, NULL);
    check_size(SP_BACKEND_HOST, NULL, 3, 3, numbered);
    check_size(SP_BACKEND_HOST, listed, 2, 2, listed);
    return TEST_OK;
}

TEST(bad_arguments)
{
    mix_chain chain;
    size_t out_recs[1] = {8};
    mix_chain_init(&chain, 8, 1, out_recs, 3);
    sp_pipeline_config cfg = mix_chain_config(&chain, 16, 2);
    sp_group *g = NULL;
    /* a failed creation yields a group whose last error says why, and that runs nothing */
    CHECK_EQ(sp_group_create(g_kind, NULL, 2, NULL, &g), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_group_last_error(g), "config");
    CHECK_EQ(sp_group_size(g), 0);
    CHECK_EQ(sp_group_run(g, out_recs, 1, out_recs, NULL), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_group_last_error(g), "config");
    sp_group_destroy(g);
    sp_context *none[2] = {NULL, NULL};
    CHECK_EQ(sp_group_create_contexts(none, 2, &cfg, &g), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_group_last_error(g), "NULL");
    sp_group_destroy(g);
    sp_pipeline_config bad = cfg;
    bad.in_record_bytes = 0;
    CHECK(sp_group_create(g_kind, NULL, 2, &bad, &g) != SP_OK);
    CHECK_HAS(sp_group_last_error(g), "device 0");
    sp_group_destroy(g);
    sp_status st = sp_group_create(g_kind, NULL, 2, &cfg, &g);
    unsigned char *buf = calloc(1000, 8);
    if (CHECK_STATUS(st, SP_OK, sp_group_last_error(g)) && CHECK(buf)) {
        CHECK_EQ(sp_group_run(g, NULL, 10, buf, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_group_last_error(g), "in is NULL");
        CHECK_EQ(sp_group_run(g, buf, 100, buf + 8, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_group_last_error(g), "overlap");
        CHECK_EQ(sp_group_run(g, buf, (size_t)-1 / 4, buf, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_group_last_error(g), "overflow");
        CHECK_EQ(sp_group_run(g, buf, 0, buf, NULL), SP_OK); /* nothing to do */
        CHECK_EQ(sp_group_run_io(g, NULL, NULL), SP_ERR_INVALID_ARGUMENT);
        sp_io seq = {sizeof(sp_io), array_read, NULL, array_write, NULL, 10, 0, NULL, NULL, NULL};
        CHECK_EQ(sp_group_run_io(g, &seq, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_group_last_error(g), "positional");
        sp_report r;
        CHECK_EQ(sp_group_device_report(g, 2, &r), SP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(sp_group_run(g, buf, 1000, buf, &r), SP_OK); /* in place, equal sizes */
        CHECK_EQ(r.records, 1000);
    }
    free(buf);
    sp_group_destroy(g);
    sp_group_destroy(NULL);
    return TEST_OK;
}

/* Two members on contexts of the test's own (their texts say why a call was refused), one
 * mix stage, and random records for them. */
typedef struct pair_rig {
    sp_context *ctx[2];
    group_case c;
    mix_chain chain;
    sp_group *g;
    unsigned char *in, *out;
} pair_rig;

static int pair_open(pair_rig *r, uint32_t seed)
{
    memset(r, 0, sizeof *r);
    if (!open_contexts(r->ctx, 2, SIZE_MAX, NULL, NULL))
        return 0;
    r->g = context_group(r->ctx, 2, &r->chain, &r->c);
    test_rng rng;
    rng_init(&rng, harness_seed() ^ seed);
    r->in = random_input(&rng, r->c.n * r->c.in_rec);
    r->out = malloc(r->c.n * mix_chain_out_rec(&r->chain) + 1);
    return r->g && CHECK(r->in && r->out);
}

static void pair_close(pair_rig *r)
{
    free(r->in);
    free(r->out);
    sp_group_destroy(r->g); /* destroys the members too: ASan and the live counts check that */
    close_contexts(r->ctx, 2);
}

/* A member pipeline got from sp_group_pipeline stays the group's: destroying it is refused,
 * the reason in its context's text (it used to be freed, and the group's next run or destroy
 * used it after). */
TEST(a_member_cannot_be_destroyed_by_the_user)
{
    pair_rig r;
    if (pair_open(&r, 11)) {
        sp_pipeline_destroy(sp_group_pipeline(r.g, 1)); /* refused: the group still has it */
        CHECK_HAS(sp_context_last_error(r.ctx[1]), "sp_group_destroy");
        run_checked(r.g, &r.c, &r.chain, r.in, 0);
    }
    pair_close(&r);
    return TEST_OK;
}

/* A member busy with a stream of the user's: the group run fails, and its error says which
 * device and why (it used to say "device 1: " and nothing, or an older failure). */
TEST(a_busy_member_fails_the_run_with_its_reason)
{
    pair_rig r;
    sp_stream *s = NULL;
    if (pair_open(&r, 12) &&
        CHECK_STATUS(sp_stream_open(sp_group_pipeline(r.g, 1), NULL, &s), SP_OK,
                     sp_pipeline_last_error(sp_group_pipeline(r.g, 1)))) {
        CHECK_EQ(sp_group_run(r.g, r.in, r.c.n, r.out, NULL), SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(sp_group_last_error(r.g), "device 1");
        CHECK_HAS(sp_group_last_error(r.g), "stream is open");
        CHECK_EQ(sp_stream_close(s, NULL), SP_OK);
        run_checked(r.g, &r.c, &r.chain, r.in, 0); /* and it runs once the member is free */
    }
    pair_close(&r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(random_runs),
        TEST_ENTRY(in_place_runs),
        TEST_ENTRY(io_runs),
        TEST_ENTRY(slow_device_takes_fewer),
        TEST_ENTRY(stage_fails_on_one_unit),
        TEST_ENTRY(device_fails),
        TEST_ENTRY(create_sizes),
        TEST_ENTRY(bad_arguments),
        TEST_ENTRY(a_member_cannot_be_destroyed_by_the_user),
        TEST_ENTRY(a_busy_member_fails_the_run_with_its_reason),
    };
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
