/* Issue 28's stream rows (bench/tune_auto.sh runs this on the H200), in one process:
 *
 *   mixed   a stream of batches from 1K to 16M records (4 KiB to 64 MiB of floats each,
 *           log-uniform, the same sequence every pass) through sinmix: the library's own
 *           settings (chunk and depth 0: "auto") against fixed chunks and fixed depths, each
 *           the median of --repeat passes over --records records
 *   shift   a stream whose stage gets 10x dearer mid-stream: sinmix at --iters for --phase-s
 *           seconds, then at --iters-b (the stage reads its iters at each chunk; the bench
 *           changes it between batches, with none in flight), under a memory budget (a
 *           quarter of what the default settings hold, unless --max-pinned/--max-device say),
 *           so that the run-time re-pick is on. Reports when each change was made after the
 *           shift, each phase's rate (over its second half: where it ends) against fixed chunks
 *           under the same budget run phase by phase, a steady stream's changes after its
 *           first second (--steady-s of phase A alone), and the memory the pipeline holds
 *           (sp_stats' pinned_bytes and device_bytes: the pipeline's own allocations)
 *
 * Every output element of every batch is checked, on checker threads while the stream goes:
 * the input repeats a pattern of PATTERN values, whose outputs at each iters were made first
 * by a pipeline on the same backend (the same kernel, so equal bit for bit) and checked
 * against the C reference within the bench's tolerance. Prints one JSON object.
 *
 * usage: tune_stream_bench --mode mixed|shift [--backend host|cuda] [--records N] [--repeat R]
 *          [--iters A] [--iters-b B] [--phase-s S] [--steady-s S] [--batch-records M]
 *          [--max-batch M] [--max-pinned BYTES] [--max-device BYTES] [--checkers T] */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streampipe.h"
#include "streampipe_ops.h"

#include "bench_util.h"

#define PATTERN 16384u
#define MAX_SLOTS 64
#define MAX_BATCHES 4096
#define IN_FLIGHT 8
#define MAX_ROWS 16

typedef struct args {
    sp_backend_kind backend;
    int shift;
    size_t records, batch_records, min_batch, max_batch;
    int repeat;
    unsigned iters, iters_b;
    double phase_s, steady_s;
    size_t max_pinned, max_device;
    unsigned checkers;
} args;

static float g_pattern[PATTERN];

/* ---- checking: each batch's output against the pattern's, on checker threads ------------ */

typedef struct slot {
    float *out;
    const float *want; /* the pattern's outputs at the batch's iters, twice over */
    size_t records, offset; /* the batch read the input from `offset` (< PATTERN) on */
    int busy;          /* submitted or being checked: not to be reused */
    int queued;        /* done, waiting for a checker */
    int checking;      /* a checker has it */
} slot;

typedef struct checker {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    slot slots[MAX_SLOTS];
    size_t n_slots;
    size_t bad, checked;
    double wait_s; /* the submitter's time waiting for a slot: checks falling behind */
    int stop;
    pthread_t thread[16];
    unsigned n_threads;
} checker;

/* out[j] must be want[offset + j mod PATTERN] (want holds the pattern's outputs twice). A
 * slot is not poisoned between batches (a memset of every batch on the submitting thread
 * would be timed): each batch reads the input from another offset, so an element a batch
 * left unwritten still holds another offset's value and fails (the slots start as NaN). */
static size_t bad_in(const float *out, const float *want, size_t n, size_t offset)
{
    size_t bad = 0;
    for (size_t at = 0; at < n; at += PATTERN) {
        size_t len = n - at < PATTERN ? n - at : PATTERN;
        const float *w = want + offset;
        if (memcmp(out + at, w, len * sizeof(float)) == 0)
            continue;
        for (size_t i = 0; i < len; i++)
            bad += memcmp(&out[at + i], &w[i], sizeof(float)) != 0;
    }
    return bad;
}

static void *check_loop(void *arg)
{
    checker *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        slot *s = NULL;
        for (size_t k = 0; k < c->n_slots && !s; k++)
            if (c->slots[k].queued)
                s = &c->slots[k];
        if (!s) {
            if (c->stop)
                break;
            pthread_cond_wait(&c->cond, &c->lock);
            continue;
        }
        s->queued = 0;
        s->checking = 1;
        pthread_mutex_unlock(&c->lock);
        size_t bad = bad_in(s->out, s->want, s->records, s->offset);
        pthread_mutex_lock(&c->lock);
        c->bad += bad;
        c->checked += s->records;
        s->busy = s->checking = 0;
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* A free slot, waited for (its last batch checked), marked busy. */
static slot *take_slot(checker *c, size_t records, size_t offset, const float *want)
{
    pthread_mutex_lock(&c->lock);
    slot *s = NULL;
    double t0 = 0.0;
    while (!s) {
        for (size_t k = 0; k < c->n_slots && !s; k++)
            if (!c->slots[k].busy)
                s = &c->slots[k];
        if (!s) {
            t0 = t0 > 0.0 ? t0 : now_s();
            pthread_cond_wait(&c->cond, &c->lock);
        }
    }
    if (t0 > 0.0)
        c->wait_s += now_s() - t0;
    s->busy = 1;
    s->records = records;
    s->offset = offset;
    s->want = want;
    pthread_mutex_unlock(&c->lock);
    return s;
}

static void queue_check(checker *c, slot *s)
{
    pthread_mutex_lock(&c->lock);
    s->queued = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Every queued check done (a batch that never completed, after a failure, is not waited for). */
static void checks_done(checker *c)
{
    pthread_mutex_lock(&c->lock);
    for (;;) {
        int busy = 0;
        for (size_t k = 0; k < c->n_slots; k++)
            busy |= c->slots[k].queued || c->slots[k].checking;
        if (!busy)
            break;
        pthread_cond_wait(&c->cond, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
}

/* ---- one stream ------------------------------------------------------------------------------ */

typedef struct job {
    sp_context *ctx;
    const args *a;
    sp_sinmix_params params; /* the stage reads it at each chunk */
    sp_stage stage;
    const float *in;         /* PATTERN + the largest batch's records: the pattern repeated */
    const float *want_a, *want_b;
    checker *chk;
} job;

typedef struct stream_run {
    sp_pipeline *p;
    sp_stream *s;
    slot *slot_of[MAX_BATCHES];
    size_t submitted, done, records_done;
    double t[MAX_BATCHES];  /* when each batch's DONE was taken */
    size_t cum[MAX_BATCHES];/* records done by then */
    sp_status st;
} stream_run;

static void take_one(job *j, stream_run *r)
{
    sp_stream_event ev;
    r->st = sp_stream_next(r->s, &ev, -1.0);
    if (r->st != SP_OK || ev.kind != SP_EVENT_DONE)
        return;
    if ((r->st = ev.status) != SP_OK)
        return;
    size_t b = (size_t)ev.tag;
    r->records_done += ev.records;
    if (r->done < MAX_BATCHES) {
        r->t[r->done] = now_s();
        r->cum[r->done] = r->records_done;
    }
    r->done++;
    queue_check(j->chk, r->slot_of[b % MAX_BATCHES]);
}

static void submit_one(job *j, stream_run *r, size_t records, const float *want)
{
    while (r->st == SP_OK && r->submitted - r->done >= IN_FLIGHT)
        take_one(j, r);
    if (r->st != SP_OK)
        return;
    /* odd steps over every batch of the process: two batches share an offset only when
     * a multiple of PATTERN batches apart */
    static size_t serial;
    size_t offset = (serial++ * 977u) % PATTERN;
    slot *s = take_slot(j->chk, records, offset, want);
    r->slot_of[r->submitted % MAX_BATCHES] = s;
    r->st = sp_stream_submit(r->s, j->in + offset, records, s->out, r->submitted);
    if (r->st == SP_OK) {
        r->submitted++;
        return;
    }
    pthread_mutex_lock(&j->chk->lock);
    s->busy = 0;
    pthread_mutex_unlock(&j->chk->lock);
}

static void drain(job *j, stream_run *r)
{
    while (r->st == SP_OK && r->done < r->submitted)
        take_one(j, r);
}

static sp_status open_run(job *j, stream_run *r, size_t chunk, unsigned depth, size_t max_pinned,
                          size_t max_device)
{
    memset(r, 0, sizeof *r);
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = 4;
    cfg.stages = &j->stage;
    cfg.n_stages = 1;
    cfg.chunk_records = chunk;
    cfg.depth = depth;
    cfg.max_pinned_bytes = max_pinned;
    cfg.max_device_bytes = max_device;
    sp_stream_config scfg = SP_STREAM_CONFIG_INIT;
    scfg.max_in_flight = IN_FLIGHT;
    r->st = sp_pipeline_create(j->ctx, &cfg, &r->p);
    if (r->st != SP_OK) {
        fprintf(stderr, "tune_stream_bench: create: %s\n", sp_context_last_error(j->ctx));
        return r->st;
    }
    r->st = sp_stream_open(r->p, &scfg, &r->s);
    return r->st;
}

static sp_status close_run(stream_run *r, sp_report *report, sp_stats *stats)
{
    sp_status st = sp_stream_close(r->s, report);
    r->s = NULL;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->size = sizeof *stats;
        sp_pipeline_stats(r->p, stats);
    }
    if (r->st == SP_OK)
        r->st = st;
    if (r->st != SP_OK)
        fprintf(stderr, "tune_stream_bench: %s: %s\n", sp_status_name(r->st),
                sp_pipeline_last_error(r->p));
    return r->st;
}

/* Records per second over the part of batches [from, to) done after `after`. */
static double rate_after(const stream_run *r, size_t from, size_t to, double after)
{
    size_t k = from;
    while (k + 1 < to && r->t[k] < after)
        k++;
    if (to == 0 || k + 1 >= to || to > MAX_BATCHES)
        return 0.0;
    return (double)(r->cum[to - 1] - r->cum[k]) / (r->t[to - 1] - r->t[k]);
}

/* ---- mixed batches ----------------------------------------------------------------------- */

typedef struct setting {
    const char *label;
    size_t chunk;   /* 0: the library's */
    unsigned depth; /* 0: the library's */
} setting;

/* The batch sizes: log-uniform in [min_batch, max_batch], the same sequence every call. */
static size_t batch_sizes(const args *a, size_t *sizes)
{
    uint64_t x = 88172645463325252ull;
    size_t n = 0, total = 0;
    double span = log((double)a->max_batch / (double)a->min_batch);
    while (total < a->records && n < MAX_BATCHES) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double u = (double)(x >> 11) * (1.0 / 9007199254740992.0);
        size_t m = (size_t)((double)a->min_batch * exp(u * span));
        if (m > a->records - total)
            m = a->records - total;
        sizes[n++] = m;
        total += m;
    }
    return n;
}

static int mixed(job *j)
{
    const args *a = j->a;
    static size_t sizes[MAX_BATCHES];
    size_t n = batch_sizes(a, sizes), total = 0;
    for (size_t b = 0; b < n; b++)
        total += sizes[b];
    setting rows[MAX_ROWS];
    size_t n_rows = 0;
    rows[n_rows++] = (setting){"auto", 0, 0};
    static const size_t chunks[] = {262144, 524288, 1048576, 2097152, 4194304};
    static const unsigned depths[] = {3, 4, 6, 8, 16};
    static char names[MAX_ROWS][24];
    for (size_t k = 0; k < 5; k++) {
        size_t c = a->backend == SP_BACKEND_HOST ? chunks[k] / 64 : chunks[k];
        snprintf(names[n_rows], sizeof names[0], "chunk%zu", c);
        rows[n_rows] = (setting){names[n_rows], c, 0};
        n_rows++;
    }
    for (size_t k = 0; k < 5; k++) {
        snprintf(names[n_rows], sizeof names[0], "depth%u", depths[k]);
        rows[n_rows] = (setting){names[n_rows], 0, depths[k]};
        n_rows++;
    }
    j->params.iters = a->iters;
    printf("{\"mode\":\"mixed\",\"batches\":%zu,\"records\":%zu,\"min_batch\":%zu,"
           "\"max_batch\":%zu,\"iters\":%u,\"rows\":[", n, total, a->min_batch, a->max_batch,
           a->iters);
    int rc = 0;
    for (size_t k = 0; k < n_rows && rc == 0; k++) {
        double times[64];
        size_t chunk = 0, changes = 0;
        unsigned depth = 0;
        for (int rep = -1; rep < a->repeat && rc == 0; rep++) { /* -1: warm-up */
            stream_run r;
            if (open_run(j, &r, rows[k].chunk, rows[k].depth, 0, 0) != SP_OK) {
                rc = 1;
                break;
            }
            double t0 = now_s();
            for (size_t b = 0; b < n && r.st == SP_OK; b++)
                submit_one(j, &r, sizes[b], j->want_a);
            drain(j, &r);
            double dt = now_s() - t0;
            sp_report rep_out;
            sp_stats stats;
            rc = close_run(&r, &rep_out, &stats) != SP_OK;
            chunk = rep_out.slot_records;
            depth = rep_out.depth;
            changes = (size_t)stats.tune_changes;
            sp_pipeline_destroy(r.p);
            if (rep >= 0)
                times[rep] = dt;
        }
        checks_done(j->chk);
        if (rc)
            break;
        double t = median(times, a->repeat);
        printf("%s{\"label\":\"%s\",\"chunk\":%zu,\"depth\":%u,\"seconds\":%.6f,"
               "\"gbps\":%.3f,\"tune_changes\":%zu,\"check_wait_s\":%.4f}", k ? "," : "",
               rows[k].label, chunk, depth, t, (double)total * 8.0 / t / 1e9, changes,
               j->chk->wait_s / (a->repeat + 1));
        j->chk->wait_s = 0.0;
        fflush(stdout);
    }
    printf("],\"checked\":%zu,\"bad\":%zu}\n", j->chk->checked, j->chk->bad);
    return rc || j->chk->bad ? 1 : 0;
}

/* ---- a 10x shift under a budget -------------------------------------------------------------- */

typedef struct phase_out {
    double rate_end, rate_all; /* records/s: the second half, the whole phase */
    double t0, t1;
    size_t first, last;        /* the phase's batches [first, last) */
} phase_out;

/* Batches at j->params.iters for `seconds`, then drained. */
static void run_phase(job *j, stream_run *r, double seconds, const float *want, phase_out *o)
{
    o->first = r->submitted;
    o->t0 = now_s();
    while (r->st == SP_OK && now_s() - o->t0 < seconds && r->submitted < MAX_BATCHES)
        submit_one(j, r, j->a->batch_records, want);
    drain(j, r);
    o->t1 = now_s();
    o->last = r->submitted;
    o->rate_end = rate_after(r, o->first, o->last, o->t0 + 0.5 * (o->t1 - o->t0));
    o->rate_all = o->last > o->first && o->t1 > o->t0
                      ? (double)(o->last - o->first) * (double)j->a->batch_records /
                            (o->t1 - o->t0)
                      : 0.0;
}

static void print_changes(sp_pipeline *p, double since)
{
    sp_tune_change ch[SP_TUNE_CHANGES_KEPT];
    size_t n = 0;
    uint64_t total = 0;
    sp_pipeline_tune_changes(p, ch, SP_TUNE_CHANGES_KEPT, &n, &total);
    printf("\"changes_total\":%llu,\"changes\":[", (unsigned long long)total);
    for (size_t k = 0; k < n; k++) {
        printf("%s{\"at_s\":%.4f,\"from_chunk\":%zu,\"to_chunk\":%zu,\"from_depth\":%u,"
               "\"to_depth\":%u,\"reason\":\"", k ? "," : "", ch[k].at_s - since,
               ch[k].from_chunk, ch[k].to_chunk, ch[k].from_depth, ch[k].to_depth);
        for (const char *c = ch[k].reason; *c; c++)
            putchar(*c == '"' || *c == '\\' ? '\'' : *c);
        printf("\"}");
    }
    printf("]");
}

static int shift(job *j)
{
    const args *a = j->a;
    size_t budget_p = a->max_pinned, budget_d = a->max_device;
    stream_run r;
    sp_stats stats;
    if (!budget_p && !budget_d) { /* a quarter of what the default settings hold */
        if (open_run(j, &r, 0, 0, 0, 0) != SP_OK || close_run(&r, NULL, &stats) != SP_OK)
            return 1;
        sp_pipeline_destroy(r.p);
        budget_p = stats.pinned_bytes / 4;
        budget_d = stats.device_bytes / 4;
        printf("{\"mode\":\"shift\",\"default_pinned\":%zu,\"default_device\":%zu,",
               stats.pinned_bytes, stats.device_bytes);
    } else {
        printf("{\"mode\":\"shift\",");
    }
    printf("\"max_pinned\":%zu,\"max_device\":%zu,\"iters_a\":%u,\"iters_b\":%u,"
           "\"batch_records\":%zu,", budget_p, budget_d, a->iters, a->iters_b, a->batch_records);
    /* auto: phase A, the shift, phase B */
    phase_out pa, pb;
    j->params.iters = a->iters;
    if (open_run(j, &r, 0, 0, budget_p, budget_d) != SP_OK)
        return 1;
    double opened = now_s();
    run_phase(j, &r, a->phase_s, j->want_a, &pa);
    j->params.iters = a->iters_b; /* nothing in flight: the stage reads it at the next chunk */
    run_phase(j, &r, a->phase_s, j->want_b, &pb);
    sp_report rep;
    if (close_run(&r, &rep, &stats) != SP_OK)
        return 1;
    printf("\"auto\":{\"chunk\":%zu,\"depth\":%u,\"pinned_bytes\":%zu,\"device_bytes\":%zu,"
           "\"a_rate\":%.0f,\"a_rate_all\":%.0f,\"b_rate\":%.0f,\"b_rate_all\":%.0f,"
           "\"shift_at_s\":%.4f,\"a_s\":%.3f,\"b_s\":%.3f,", rep.slot_records, rep.depth,
           stats.pinned_bytes, stats.device_bytes, pa.rate_end, pa.rate_all, pb.rate_end,
           pb.rate_all, pb.t0 - opened, pa.t1 - pa.t0, pb.t1 - pb.t0);
    print_changes(r.p, pb.t0); /* at_s: seconds after the shift */
    printf("},");
    size_t capacity = rep.slot_records;
    sp_pipeline_destroy(r.p);
    checks_done(j->chk);
    /* steady: phase A alone; changes counted from the stream's open */
    j->params.iters = a->iters;
    if (open_run(j, &r, 0, 0, budget_p, budget_d) != SP_OK)
        return 1;
    opened = now_s();
    run_phase(j, &r, a->steady_s, j->want_a, &pa);
    if (close_run(&r, &rep, &stats) != SP_OK)
        return 1;
    printf("\"steady\":{\"seconds\":%.3f,\"rate\":%.0f,", pa.t1 - opened, pa.rate_all);
    print_changes(r.p, opened);
    printf("},\"fixed\":[");
    sp_pipeline_destroy(r.p);
    checks_done(j->chk);
    /* fixed chunks under the same budget (the depth fitted to it), phase by phase */
    for (size_t k = 0, div = 1; k < 4; k++, div *= 2) {
        size_t chunk = capacity / div ? capacity / div : 1;
        if (open_run(j, &r, chunk, 0, budget_p, budget_d) != SP_OK)
            return 1;
        j->params.iters = a->iters;
        run_phase(j, &r, a->phase_s / 2, j->want_a, &pa);
        j->params.iters = a->iters_b;
        run_phase(j, &r, a->phase_s / 2, j->want_b, &pb);
        if (close_run(&r, &rep, &stats) != SP_OK)
            return 1;
        printf("%s{\"chunk\":%zu,\"depth\":%u,\"a_rate\":%.0f,\"b_rate\":%.0f,\"s\":%.3f}",
               k ? "," : "", chunk, rep.depth, pa.rate_end, pb.rate_end,
               (pa.t1 - pa.t0) + (pb.t1 - pb.t0));
        fflush(stdout);
        sp_pipeline_destroy(r.p);
    }
    checks_done(j->chk);
    printf("],\"check_wait_s\":%.4f,\"checked\":%zu,\"bad\":%zu}\n", j->chk->wait_s,
           j->chk->checked, j->chk->bad);
    return j->chk->bad ? 1 : 0;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* The pattern's outputs at `iters`, from a pipeline run on this backend, checked against the
 * C reference. */
static int pattern_outputs(sp_context *ctx, unsigned iters, float *want)
{
    sp_sinmix_params params = {.iters = iters};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1,
                              .chunk_records = PATTERN};
    sp_pipeline *p = NULL;
    sp_status st = sp_pipeline_create(ctx, &cfg, &p);
    if (st == SP_OK)
        st = sp_pipeline_run(p, g_pattern, PATTERN, want, NULL);
    sp_pipeline_destroy(p);
    if (st != SP_OK)
        return 1;
    size_t bad = 0;
    for (size_t i = 0; i < PATTERN; i++)
        bad += (size_t)sinmix_off(want[i], sp_sinmix_one(g_pattern[i], iters), iters);
    if (bad)
        fprintf(stderr, "tune_stream_bench: %zu of the pattern's outputs at iters %u are off the "
                "C reference\n", bad, iters);
    return bad != 0;
}

static int parse(int argc, char **argv, args *a)
{
    *a = (args){.backend = SP_BACKEND_AUTO, .records = (size_t)1 << 28, .repeat = 3,
                .iters = 100, .iters_b = 1000, .phase_s = 2.0, .steady_s = 4.0,
                .batch_records = (size_t)16 << 20, .min_batch = 1024,
                .max_batch = (size_t)16 << 20, .checkers = 8};
    int mode = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--mode") && (mode = !strcmp(v, "mixed") ? 1 : !strcmp(v, "shift") ? 2 : 0))
            a->shift = mode == 2;
        else if (!strcmp(k, "--backend"))
            a->backend = !strcmp(v, "host") ? SP_BACKEND_HOST : SP_BACKEND_CUDA;
        else if (!strcmp(k, "--records"))
            a->records = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--repeat"))
            a->repeat = atoi(v);
        else if (!strcmp(k, "--iters"))
            a->iters = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--iters-b"))
            a->iters_b = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--phase-s"))
            a->phase_s = atof(v);
        else if (!strcmp(k, "--steady-s"))
            a->steady_s = atof(v);
        else if (!strcmp(k, "--batch-records"))
            a->batch_records = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--max-batch"))
            a->max_batch = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--max-pinned"))
            a->max_pinned = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--max-device"))
            a->max_device = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--checkers"))
            a->checkers = (unsigned)strtoul(v, NULL, 0);
        else
            return 0;
    }
    return mode && (argc % 2) == 1 && a->records && a->repeat >= 1 && a->repeat <= 64 &&
           a->batch_records && a->max_batch >= a->min_batch && a->checkers >= 1 &&
           a->checkers <= 16;
}

int main(int argc, char **argv)
{
    args a;
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: tune_stream_bench --mode mixed|shift [--backend host|cuda] "
                "[--records N] [--repeat R] [--iters A] [--iters-b B] [--phase-s S] "
                "[--steady-s S] [--batch-records M] [--max-batch M] [--max-pinned BYTES] "
                "[--max-device BYTES] [--checkers T]\n");
        return 2;
    }
    for (uint32_t k = 0; k < PATTERN; k++)
        g_pattern[k] = (float)(int32_t)((k * 2654435761u) >> 8) * (8.0f / 16777216.0f) - 4.0f;
    sp_context *ctx = NULL;
    if (sp_context_create(a.backend, 0, &ctx) != SP_OK) {
        fprintf(stderr, "tune_stream_bench: %s\n", sp_context_last_error(ctx));
        return 1;
    }
    static float want_a[2 * PATTERN], want_b[2 * PATTERN];
    size_t slot_records = a.shift ? a.batch_records : a.max_batch;
    size_t in_records = slot_records + PATTERN, n_slots = IN_FLIGHT + a.checkers + 1;
    static checker chk;
    job j = {.ctx = ctx, .a = &a, .want_a = want_a, .want_b = want_b, .chk = &chk};
    j.stage = sp_sinmix_stage(&j.params);
    float *in = NULL;
    int rc = pattern_outputs(ctx, a.iters, want_a) || pattern_outputs(ctx, a.iters_b, want_b);
    memcpy(want_a + PATTERN, want_a, sizeof want_a / 2);
    memcpy(want_b + PATTERN, want_b, sizeof want_b / 2);
    rc = rc || n_slots > MAX_SLOTS ||
         sp_host_alloc(ctx, in_records * sizeof(float), (void **)&in) != SP_OK;
    for (size_t i = 0; !rc && i < in_records; i++)
        in[i] = g_pattern[i % PATTERN];
    j.in = in;
    pthread_mutex_init(&chk.lock, NULL);
    pthread_cond_init(&chk.cond, NULL);
    for (size_t k = 0; !rc && k < n_slots; k++) {
        rc = sp_host_alloc(ctx, slot_records * sizeof(float), (void **)&chk.slots[k].out) != SP_OK;
        if (!rc)
            memset(chk.slots[k].out, 0xFF, slot_records * sizeof(float)); /* NaN */
    }
    chk.n_slots = rc ? 0 : n_slots;
    for (unsigned t = 0; !rc && t < a.checkers; t++)
        if (pthread_create(&chk.thread[t], NULL, check_loop, &chk) == 0)
            chk.n_threads++;
    if (rc)
        fprintf(stderr, "tune_stream_bench: set-up failed: %s\n", sp_context_last_error(ctx));
    else
        rc = a.shift ? shift(&j) : mixed(&j);
    pthread_mutex_lock(&chk.lock);
    chk.stop = 1;
    pthread_cond_broadcast(&chk.cond);
    pthread_mutex_unlock(&chk.lock);
    for (unsigned t = 0; t < chk.n_threads; t++)
        pthread_join(chk.thread[t], NULL);
    if (chk.bad)
        fprintf(stderr, "tune_stream_bench: %zu of %zu output elements wrong\n", chk.bad,
                chk.checked);
    for (size_t k = 0; k < MAX_SLOTS; k++)
        sp_host_free(ctx, chk.slots[k].out);
    sp_host_free(ctx, in);
    sp_context_destroy(ctx);
    return rc;
}
