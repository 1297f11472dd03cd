/*
 * test_sampled [filter]: SP_TIMELINE_SAMPLED, the default timeline (src/core/timing.c,
 * timeline_windows.c). HOST backend with fault delays on the h2d copies (delay_op: the event
 * records and waits around them stay instant, as on a GPU) and a stage that sleeps for less, so that transfer is the bound and only part of it is hidden: the overlap
 * is neither none nor all, and a figure taken from the wrong chunks or weighed wrongly
 * shows.
 *
 * - The estimator against the full timeline of the same run: a run timed whole (EVENTS),
 *   its GPU spans then kept for the sampled windows' chunks only, must give hidden
 *   transfer, efficiency and bound within 2 percentage points of the full figures, the same
 *   bottleneck, with at most a quarter of the chunks timed. Same run, so no run-to-run noise.
 * - A real sampled run: GPU spans exactly on the windows' chunks, each timed operation
 *   after the end of every timed operation it depends on, the report's timed_chunks and
 *   notes saying so, figures near a full run's (two runs on HOST: sampled_run_once says
 *   why not 2 points).
 * - A run with the timeline off and a sampled one give the same output, each element
 *   checked against the stage's function.
 * White-box: the timeline is read from the pipeline (core_door.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_door.h"
#include "harness.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

#define CHUNK 16
#define CHUNKS 240
#define RECORDS (CHUNK * CHUNKS - 5) /* a short last chunk */
#define H2D_DELAY_US 3000u
#define H2D_RANDOM_US 100u
#define STAGE_SLEEP_US 1800u

static sp_status mix_host(const sp_chunk *c, void *user)
{
    (void)user;
    struct timespec ts = {0, STAGE_SLEEP_US * 1000L};
    nanosleep(&ts, NULL);
    const uint32_t *in = c->in;
    uint32_t *out = c->out;
    for (size_t k = 0; k < c->records; k++)
        out[k] = (in[k] ^ 0x5a5a5a5au) + (uint32_t)(c->first_record + k);
    return SP_OK;
}

typedef struct rig {
    sp_context *ctx;
    sp_pipeline *p;
    uint32_t *in, *out;
} rig;

static int rig_open(rig *r, sp_timeline_mode mode, size_t records)
{
    memset(r, 0, sizeof *r);
    sp_fault_config fault = {.size = sizeof fault, .delay_us = H2D_DELAY_US,
                             .random_delay_us = H2D_RANDOM_US, .seed = harness_seed(),
                             .delay_queue = "h2d", .delay_op = "copy_h2d"};
    static const sp_stage stage = {.name = "mix", .out_record_bytes = 4, .host = mix_host};
    sp_pipeline_config cfg = {.size = sizeof cfg, .in_record_bytes = 4, .stages = &stage,
                              .n_stages = 1, .chunk_records = CHUNK, .depth = 4,
                              .timeline = mode, .keep_timeline = 1};
    r->in = malloc(records * 4);
    r->out = malloc(records * 4);
    if (!CHECK_MSG(r->in && r->out, "no memory"))
        return 0;
    for (size_t k = 0; k < records; k++)
        r->in[k] = (uint32_t)rand() * 2654435761u + (uint32_t)k;
    return CHECK_EQ(sp_context_create_fault(SP_BACKEND_HOST, 0, &fault, &r->ctx), SP_OK) &&
           CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                        sp_context_last_error(r->ctx));
}

static void rig_close(rig *r)
{
    free(r->in);
    free(r->out);
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
}

/* One run, its output poisoned first and every element checked after. */
static int rig_run(rig *r, size_t records, sp_report *report)
{
    memset(r->out, 0xA5, records * 4);
    if (!CHECK_STATUS(sp_pipeline_run(r->p, r->in, records, r->out, report), SP_OK,
                      sp_pipeline_last_error(r->p)))
        return 0;
    size_t bad = 0;
    for (size_t k = 0; k < records; k++)
        bad += r->out[k] != (r->in[k] ^ 0x5a5a5a5au) + (uint32_t)k;
    return CHECK_MSG(bad == 0, "%zu of %zu output elements wrong", bad, records);
}

static int timed(const sp_timeline *t, size_t g, size_t c)
{
    sp_span s = t->spans[SP_TL_GPU(g) * t->chunks + c];
    return s.end >= s.start;
}

/* The full figures next to the sampled ones: `points` on fractions, as much relative on the
 * bound, the same bottleneck. Says what differed in *why. */
static int figures_agree(const sp_report *full, const sp_report *sampled, double points,
                         char *why, size_t size)
{
    snprintf(why, size, "full: hidden %.4f efficiency %.4f bound %.4f s %s; sampled: hidden "
             "%.4f efficiency %.4f bound %.4f s %s (%zu chunks timed)",
             full->hidden_transfer, full->efficiency, full->bound_s, full->bottleneck,
             sampled->hidden_transfer, sampled->efficiency, sampled->bound_s,
             sampled->bottleneck, sampled->timed_chunks);
    /* engines within 2% of each other are a tie: either may be named */
    const sp_engine_report *named = NULL;
    for (size_t k = 0; k < full->n_engines; k++)
        if (strcmp(full->engines[k].name, sampled->bottleneck) == 0)
            named = &full->engines[k];
    int bottleneck = strcmp(full->bottleneck, sampled->bottleneck) == 0 ||
                     (named && named->busy_s >= 0.98 * full->bound_s);
    return fabs(full->hidden_transfer - sampled->hidden_transfer) <= points &&
           fabs(full->efficiency - sampled->efficiency) <= points &&
           fabs(full->bound_s - sampled->bound_s) <= points * full->bound_s && bottleneck;
}

/* A host thread that wakes 10 ms late on a loaded two-core machine lengthens one chunk; a
 * sample that holds it is off by more than the points. Such noise seldom strikes five times
 * running; a wrong estimator fails every attempt. */
#define ATTEMPTS 5

/* The overlap is partial: a figure that ignored it, or counted it all, would show. */
static int overlap_is_partial(const sp_report *full)
{
    return CHECK_MSG(full->hidden_transfer > 0.15 && full->hidden_transfer < 0.85,
                     "hidden transfer %.3f: the delays did not make the overlap partial",
                     full->hidden_transfer) &&
           CHECK_MSG(strcmp(full->bottleneck, "h2d") == 0, "bottleneck %s, want h2d",
                     full->bottleneck);
}

/* ---- the estimator on simulated pipelines -------------------------------------------------
 * A ring of K slots and one stage, simulated with the dependency rules of ring.h (each queue
 * in order; h2d waits for the stage to be done with chunk i-K, the stage for the d2h; the host
 * enqueues chunk i once chunk i-K has left), every operation's time its chunk's records times
 * the engine's rate, each varied by up to 3% (jitter), chunks of two sizes (the chunk changes in the
 * run) and a short last one. Exact and free of host noise: the full figures against the windows'
 * must agree within 2 points whatever the shape. */
typedef struct shape {
    const char *name;
    double h2d, stage, d2h; /* seconds per record */
    unsigned depth;
    int partial;            /* copies only partly under compute: checked, so the shape tests
                               something */
} shape;

/* Operations of one size on a GPU take about the same time each (copies at the link's rate,
 * the same kernel on the same data size); 3% either way, drawn for every operation, is more
 * than that. The windows sample 12 to 25% of the chunks: with 10% the sample's own spread
 * exceeds 2 points in runs of under a hundred chunks, whatever the estimator. */
static double jitter(void) { return 0.97 + 0.06 * (double)rand() / RAND_MAX; }

static double max3(double a, double b, double c) { return fmax(a, fmax(b, c)); }

static void simulate(sp_timeline *t, const shape *sh, size_t n)
{
    enum { H2D = 1, STAGE = 2, D2H = 3 };
    static const char *const names[] = {"stage-in", "h2d", "mix", "d2h", "stage-out"};
    static const sp_engine_kind kinds[] = {SP_ENGINE_STAGE_IN, SP_ENGINE_H2D,
                                           SP_ENGINE_COMPUTE, SP_ENGINE_D2H,
                                           SP_ENGINE_STAGE_OUT};
    t->n_records = 0;
    for (size_t e = 0; e < 5; e++) {
        t->name[e] = names[e];
        t->kind[e] = kinds[e];
        t->active[e] = e >= H2D && e <= D2H;
    }
    size_t K = sh->depth;
    for (size_t i = 0; i < n; i++) {
        /* the chunk grows after chunk 7, outside every window: a change inside one is a
           transient no sample can stand for (bench/PERF.md would show it as noise) */
        size_t rec = i + 1 == n ? 7 : i < 8 ? 16 : 24;
        sp_timeline_set_records(t, i, rec);
        t->n_records += rec;
        sp_span *h = &t->spans[H2D * n + i], *s = &t->spans[STAGE * n + i],
                *d = &t->spans[D2H * n + i];
        double enq = i >= K ? t->spans[D2H * n + i - K].end : 0.0;
        double h_prev = i ? t->spans[H2D * n + i - 1].end : 0.0;
        double s_prev = i ? t->spans[STAGE * n + i - 1].end : 0.0;
        double d_prev = i ? t->spans[D2H * n + i - 1].end : 0.0;
        double war0 = i >= K ? t->spans[STAGE * n + i - K].end : 0.0;
        double war1 = i >= K ? t->spans[D2H * n + i - K].end : 0.0;
        h->start = max3(h_prev, war0, enq);
        h->end = h->start + (double)rec * sh->h2d * jitter();
        s->start = max3(s_prev, h->end, fmax(war1, enq));
        s->end = s->start + (double)rec * sh->stage * jitter();
        d->start = max3(d_prev, s->end, enq);
        d->end = d->start + (double)rec * sh->d2h * jitter();
    }
    t->chunk_records = 16;
    t->makespan_s = t->spans[D2H * n + n - 1].end;
}

/* One simulated run of the shape over n chunks: its full figures against its windows'.
 * 1 when within 2 points; *within_5 whether within 5. */
static int simulated_agree(sp_timeline *t, const shape *sh, size_t n, char *why, size_t size,
                           int *within_5)
{
    *within_5 = 0;
    if (!CHECK_EQ(sp_timeline_reset(t, 5, n), SP_OK))
        return 0;
    simulate(t, sh, n);
    sp_report full, sampled;
    memset(&full, 0, sizeof full);
    full.makespan_s = t->makespan_s;
    sp_timeline_figures(t, &full);
    sp_sample_windows w = {sh->depth + 2, SP_TIMELINE_SAMPLE_WINDOW, SP_TIMELINE_SAMPLE_TAIL};
    size_t kept = 0;
    for (size_t c = 0; c < n; c++) {
        int in = sp_timing_in_sample(c, n, &w);
        kept += (size_t)in;
        for (size_t e = 1; !in && e <= 3; e++)
            t->spans[e * n + c] = (sp_span){0.0, -1.0};
    }
    sampled = full;
    sp_timeline_figures(t, &sampled);
    CHECK_MSG(kept <= n / 4 + w.first + w.middle + w.last, "%zu of %zu chunks timed", kept, n);
    CHECK_MSG(!sh->partial || (full.hidden_transfer > 0.05 && full.hidden_transfer < 0.95),
              "hidden %.3f: the shape makes no partial overlap", full.hidden_transfer);
    *within_5 = figures_agree(&full, &sampled, 0.05, why, size);
    return figures_agree(&full, &sampled, 0.02, why, size);
}

/* The windows sample 12 to 25% of the chunks of runs of 64 to 1000, and the simulation
 * varies every operation by up to 3%: one draw in about thirty strays past 2 points by
 * sampling alone (seen as a CI flake), however right the estimator. So each case is drawn
 * five times: three must agree within 2 points (the median) and none stray past 5. A wrong
 * estimator, off by its construction, misses in every draw. */
TEST(estimator_matches_full_timeline_simulated)
{
    static const shape shapes[] = {
        {"transfer-bound", 2e-6, 1e-6, 1.5e-6, 4, 1},
        {"compute-bound, slow copies", 1.5e-6, 2.2e-6, 1.2e-6, 5, 0},
        {"balanced", 2e-6, 2e-6, 2e-6, 4, 0},
        {"deep ring, d2h-bound", 0.8e-6, 0.5e-6, 1.4e-6, 8, 1},
    };
    const size_t sizes[] = {30, 64, 128, 240, 1000};
    sp_timeline t;
    memset(&t, 0, sizeof t);
    for (size_t k = 0; k < ARRAY_LEN(shapes); k++)
        for (size_t z = 0; z < ARRAY_LEN(sizes); z++) {
            harness_context("%s, %zu chunks", shapes[k].name, sizes[z]);
            char why[5][320];
            int within_2 = 0, within_5 = 0;
            for (int draw = 0; draw < 5; draw++) {
                int in_5;
                within_2 += simulated_agree(&t, &shapes[k], sizes[z], why[draw], 320, &in_5);
                within_5 += in_5;
            }
            CHECK_MSG(within_2 >= 3 && within_5 == 5, "%d of 5 draws within 2 points, %d "
                      "within 5; the first: %s", within_2, within_5, why[0]);
        }
    sp_timeline_free(&t);
    return TEST_OK;
}

/* One attempt: a full run, then its timeline cut down to the windows' chunks. */
static int estimate_once(char *why, size_t size)
{
    rig r;
    sp_report full;
    memset(&full, 0, sizeof full);
    int ok = rig_open(&r, SP_TIMELINE_EVENTS, RECORDS) && rig_run(&r, RECORDS, &full) &&
             overlap_is_partial(&full) && CHECK_EQ(full.timed_chunks, CHUNKS);
    int agree = 0;
    sp_sample_windows w = {0, 0, 0};
    size_t kept = 0;
    if (ok) {
        const sp_timeline *t = &r.p->timeline;
        w = sp_timing_sample_windows(r.p);
        for (size_t c = 0; c < t->chunks; c++)
            kept += (size_t)sp_timing_in_sample(c, t->chunks, &w);
    }
    rig_close(&r); /* the report's timeline is its own */
    if (ok) {
        sp_report sampled; /* the windows' figures of this same run, by the library */
        ok = CHECK_STATUS(sp_report_sampled_figures(&full, &sampled), SP_OK,
                          sp_report_last_error()) &&
             CHECK(sampled.timeline == NULL) && /* one owner: full */
             CHECK_EQ(sampled.timed_chunks, kept) && CHECK_EQ(sampled.records, full.records) &&
             CHECK(sampled.makespan_s == full.makespan_s) &&
             CHECK_MSG(kept * 4 <= CHUNKS && kept >= w.first + w.middle + w.last,
                       "%zu of %d chunks kept", kept,
                       CHUNKS);
        agree = ok && figures_agree(&full, &sampled, 0.02, why, size);
    }
    sp_report_release(&full);
    return ok ? agree : -1;
}

TEST(estimator_matches_full_timeline_of_same_run)
{
    if (harness_quick()) { /* sanitizer runs: threads 5-15 times slower, wake-ups erratic */
        harness_skip_reason("SP_TEST_QUICK (a sanitizer run): host timings are too erratic "
                            "to judge 2 points; estimator_matches_full_timeline_simulated "
                            "checks the estimator");
        return TEST_SKIP;
    }
    char why[ATTEMPTS][320];
    for (int k = 0; k < ATTEMPTS; k++) {
        int got = estimate_once(why[k], sizeof why[k]);
        if (got != 0)
            return got > 0 ? TEST_OK : TEST_FAIL;
    }
    for (int k = 0; k < ATTEMPTS; k++)
        CHECK_MSG(0, "attempt %d, not within 2 points: %s", k + 1, why[k]);
    return TEST_FAIL;
}

/* Every timed operation starts after the timed operations it depends on have ended (an
 * untimed one's end is not known: its start was recorded, not inferred). */
static void check_timed_order(const rig *r)
{
    const sp_timeline *t = &r->p->timeline;
    size_t G = r->p->n_stages + 2, K = r->p->depth;
    for (size_t i = 0; i < t->chunks; i++)
        for (size_t g = 0; g < G && timed(t, 0, i); g++) {
            sp_span s = t->spans[SP_TL_GPU(g) * t->chunks + i];
            harness_context("engine %zu chunk %zu [%.6f, %.6f]", g, i, s.start, s.end);
            CHECK_MSG(timed(t, g, i), "a timed chunk's engine has no span");
            CHECK_MSG(s.start <= s.end + 1e-7, "starts after it ends");
            size_t dg[3], di[3], n = 0;
            if (i >= 1) { dg[n] = g; di[n++] = i - 1; }
            if (g > 0) { dg[n] = g - 1; di[n++] = i; }
            if (g <= r->p->n_stages && i >= K) { dg[n] = g + 1; di[n++] = i - K; }
            for (size_t k = 0; k < n; k++)
                if (timed(t, dg[k], di[k]))
                    CHECK_MSG(s.start + 1e-7 >= t->spans[SP_TL_GPU(dg[k]) * t->chunks + di[k]].end,
                              "starts before engine %zu chunk %zu ends", dg[k], di[k]);
        }
}

/* A sampled run: its GPU spans exactly on the windows, in order, the report saying so;
 * returns whether its figures are near a full run's: the same bottleneck, hidden transfer
 * within 5 points, the bound within 15%. Not the 2 points of the same-run test: on HOST an
 * inferred start is the end of what it waited for, and a worker thread wakes some time
 * after that, so the full timeline's busy queues absorb those wake-ups (its efficiency reads
 * 0.99+) where the windows' recorded starts do not. On a GPU the inference is exact, and
 * bench/sampled_check.sh compares the two there. */
static int sampled_run_once(char *why, size_t size)
{
    rig r, f;
    sp_report sampled, full;
    memset(&sampled, 0, sizeof sampled);
    memset(&full, 0, sizeof full);
    int ok = rig_open(&r, SP_TIMELINE_SAMPLED, RECORDS) && rig_open(&f, SP_TIMELINE_EVENTS,
                                                                      RECORDS);
    ok = ok && rig_run(&r, RECORDS, &sampled) && rig_run(&f, RECORDS, &full) &&
         overlap_is_partial(&full);
    int agree = 0;
    if (ok) {
        const sp_timeline *t = &r.p->timeline;
        sp_sample_windows w = sp_timing_sample_windows(r.p);
        size_t want = 0, wrong = 0;
        for (size_t c = 0; c < t->chunks; c++) {
            int in = sp_timing_in_sample(c, t->chunks, &w);
            want += (size_t)in;
            for (size_t g = 0; g < r.p->n_stages + 2; g++)
                wrong += (size_t)(timed(t, g, c) != in);
        }
        ok = CHECK_MSG(wrong == 0, "%zu GPU spans recorded outside the windows or missing in "
                       "them", wrong) &&
             CHECK_EQ(sampled.timed_chunks, want) &&
             CHECK_MSG(want < CHUNKS / 4, "%zu of %d chunks timed", want, CHUNKS) &&
             CHECK_HAS(sampled.notes, "timeline sampled");
        sp_report again = sampled; /* a sampled timeline has no full one to sample again */
        CHECK_STATUS(sp_report_sampled_figures(&sampled, &again), SP_ERR_INVALID_ARGUMENT,
                     "a sampled run's timeline taken as full");
        CHECK_HAS(sp_report_last_error(), "no full timeline");
        CHECK(memcmp(&again, &sampled, sizeof again) == 0);
        unsigned long before = harness_failures();
        check_timed_order(&r);
        ok = ok && harness_failures() == before;
        figures_agree(&full, &sampled, 0.05, why, size); /* the text */
        agree = ok && strcmp(full.bottleneck, sampled.bottleneck) == 0 &&
                fabs(full.hidden_transfer - sampled.hidden_transfer) <= 0.05 &&
                fabs(full.bound_s - sampled.bound_s) <= 0.15 * full.bound_s &&
                sampled.efficiency <= 1.0 + 1e-9;
    }
    rig_close(&r);
    rig_close(&f);
    sp_report_release(&sampled);
    sp_report_release(&full);
    return ok ? agree : -1;
}

TEST(sampled_run_times_its_windows)
{
    char why[ATTEMPTS][320];
    for (int k = 0; k < ATTEMPTS; k++) {
        int got = sampled_run_once(why[k], sizeof why[k]);
        if (got != 0 || harness_quick()) /* a sanitizer run: the windows and order only */
            return got >= 0 ? TEST_OK : TEST_FAIL;
    }
    for (int k = 0; k < ATTEMPTS; k++)
        CHECK_MSG(0, "attempt %d, not near the full run's: %s", k + 1, why[k]);
    return TEST_FAIL;
}

TEST(off_and_sampled_give_the_same_output)
{
    rig off, s;
    sp_report report;
    memset(&report, 0, sizeof report);
    int ok = rig_open(&off, SP_TIMELINE_OFF, RECORDS) && rig_open(&s, SP_TIMELINE_SAMPLED,
                                                                    RECORDS);
    if (ok) {
        memcpy(s.in, off.in, RECORDS * 4); /* the same fresh input for both */
        ok = rig_run(&off, RECORDS, &report) && CHECK_EQ(report.timed_chunks, 0) &&
             CHECK(report.timeline == NULL) && /* nothing timed: nothing kept */
             rig_run(&s, RECORDS, &report) && CHECK_EQ(report.n_engines, 5) &&
             CHECK_MSG(memcmp(off.out, s.out, RECORDS * 4) == 0, "outputs differ");
    }
    rig_close(&off);
    rig_close(&s);
    sp_report_release(&report);
    return ok ? TEST_OK : TEST_FAIL;
}

/* A run of at most four windows is timed whole, and the report says so. */
TEST(short_run_is_timed_whole)
{
    rig r;
    sp_report report;
    memset(&report, 0, sizeof report);
    size_t records = CHUNK * 12;
    int ok = rig_open(&r, SP_TIMELINE_SAMPLED, records) && rig_run(&r, records, &report);
    if (ok) {
        CHECK_EQ(report.timed_chunks, 12);
        CHECK_HAS(report.notes, "every chunk timed");
    }
    rig_close(&r);
    sp_report_release(&report);
    return ok ? TEST_OK : TEST_FAIL;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(estimator_matches_full_timeline_simulated),
        TEST_ENTRY(estimator_matches_full_timeline_of_same_run),
        TEST_ENTRY(sampled_run_times_its_windows),
        TEST_ENTRY(off_and_sampled_give_the_same_output),
        TEST_ENTRY(short_run_is_timed_whole),
    };
    srand((unsigned)harness_seed());
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
