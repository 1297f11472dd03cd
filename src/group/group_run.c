/* One run of a group. Work units (unit_records records each, the last one short) are
 * numbered 0..n_units-1; every device's thread takes the next number from one atomic counter
 * and runs that slice of the run on its own pipeline, so devices are balanced by what they
 * manage, not by a fixed split. An array run's units go through each device's ring one after
 * another without draining it (sp_pipeline_run_feed), so a device takes its next unit when its
 * ring has room; a source's units are a run each. The calling thread is device 0's thread. A
 * failure stops every device from taking another unit; the units already taken finish (each
 * device drains its ring) before the run returns. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/pipeline.h"
#include "core/plan.h"
#include "core/runs.h"
#include "core/sized.h"
#include "group/group.h"

/* Unit size when the caller chose none: this many chunks of a device's share of the run. */
#define SP_GROUP_UNIT_CHUNKS 4

typedef struct group_job {
    sp_group *g;
    const char *in;
    char *out;
    const sp_io *io;          /* instead of in and out */
    size_t n_records, unit_records, n_units;
    size_t in_rec, out_rec;
    int want_report;
    atomic_size_t next_unit;
    atomic_int stop;          /* a device failed: take no more units */
    pthread_mutex_t lock;     /* the group's failure fields */
    sp_status status;
} group_job;

typedef struct member_thread {
    group_job *job;
    size_t k;
    pthread_t thread;
    int started;
} member_thread;

/* The first failure of the run is the group's; a later one on another device is usually a
 * consequence (or as likely a cause), and stays in that member's own text. */
static void note_failure(group_job *job, size_t k, sp_status st)
{
    sp_group_member *m = &job->g->members[k];
    m->stats.status = st;
    /* a member that was busy (a stream of the user's open on it) refused the call: its reason
     * is this thread's refusal, since the pipeline's text is its holder's */
    const char *refused = st == SP_ERR_INVALID_ARGUMENT ? sp_pipeline_claim_refusal() : "";
    snprintf(m->error, sizeof m->error, "%s",
             refused[0] ? refused : sp_pipeline_last_error(m->pipeline));
    atomic_store(&job->stop, 1);
    pthread_mutex_lock(&job->lock);
    if (job->g->failed_device < 0) {
        job->g->failed_device = (int)k;
        job->status = st;
        sp_group_fail(job->g, st, "device %zu: %s", k, m->error);
    }
    pthread_mutex_unlock(&job->lock);
}

/* The next unit for device k: its slice's first record and count; 0 when none is left or
 * the run is stopping. */
static int take_unit(group_job *job, size_t *first, size_t *count)
{
    if (atomic_load(&job->stop))
        return 0;
    size_t u = atomic_fetch_add(&job->next_unit, 1);
    if (u >= job->n_units)
        return 0;
    *first = u * job->unit_records; /* < n_records: no overflow */
    size_t left = job->n_records - *first;
    *count = left < job->unit_records ? left : job->unit_records;
    return 1;
}

/* A source's units: a run each, since a run_io is one source read in order. */
static sp_status member_io_units(group_job *job, sp_group_member *m)
{
    size_t first, count;
    while (take_unit(job, &first, &count)) {
        sp_report unit_report;
        sp_io unit = *job->io;
        unit.n_records = count;
        m->stats.units++; /* counted when taken, as an array run's are (streampipe_group.h) */
        m->stats.records += count;
        sp_status st = sp_pipeline_run_io_at(m->pipeline, &unit, first,
                                             job->want_report ? &unit_report : NULL);
        if (st != SP_OK)
            return st;
        if (job->want_report)
            sp_group_report_add(&m->report, &unit_report);
    }
    return SP_OK;
}

typedef struct member_feed {
    group_job *job;
    sp_group_member *m;
} member_feed;

static int next_array_unit(void *user, sp_feed_batch *b)
{
    member_feed *f = user;
    size_t first, count;
    if (!take_unit(f->job, &first, &count))
        return 0;
    /* in bounds: first + count <= n_records, whose byte sizes were checked */
    *b = (sp_feed_batch){f->job->in + first * f->job->in_rec, count,
                         f->job->out + first * f->job->out_rec, first};
    f->m->stats.units++;
    f->m->stats.records += count;
    return 1;
}

/* An array run's units: fed one after another through the member's ring, which stays full
 * between them (a run per unit would drain it each time). */
static sp_status member_array_units(group_job *job, sp_group_member *m)
{
    member_feed feed = {job, m};
    sp_report report;
    sp_status st = sp_pipeline_run_feed(m->pipeline, next_array_unit, &feed,
                                        job->want_report ? &report : NULL);
    if (st == SP_OK && job->want_report)
        sp_group_report_add(&m->report, &report);
    return st;
}

static void member_units(group_job *job, size_t k)
{
    sp_group_member *m = &job->g->members[k];
    double t0 = sp_now();
    sp_status st = job->io ? member_io_units(job, m) : member_array_units(job, m);
    m->stats.busy_s = sp_now() - t0;
    if (st != SP_OK)
        note_failure(job, k, st);
}

static void *member_main(void *arg)
{
    member_thread *t = arg;
    member_units(t->job, t->k);
    return NULL;
}

static size_t choose_unit_records(const sp_group *g, size_t n_records)
{
    if (g->unit_records)
        return g->unit_records;
    size_t share = n_records / g->n + (n_records % g->n != 0);
    size_t chunk = sp_pipeline_chunk_records(g->members[0].pipeline, share);
    int overflow = 0;
    size_t unit = sp_mul_size(chunk ? chunk : 1, SP_GROUP_UNIT_CHUNKS, &overflow);
    return overflow || unit > n_records ? n_records : unit;
}

/* Threads for devices 1..n-1 (device 0 runs on the caller's). A thread that cannot start
 * leaves its device idle: the others take its units. */
static void run_members(group_job *job, member_thread *threads)
{
    size_t n = job->g->n;
    for (size_t k = 1; k < n; k++) {
        threads[k] = (member_thread){job, k, 0, 0};
        threads[k].started = pthread_create(&threads[k].thread, NULL, member_main,
                                            &threads[k]) == 0;
    }
    member_units(job, 0);
    for (size_t k = 1; k < n; k++)
        if (threads[k].started)
            pthread_join(threads[k].thread, NULL);
}

/* What a whole run asks of in and out, beyond what each unit's run checks of its slice: the
 * slices of different units must not overlap either (only in == out, record for record). */
static sp_status check_arrays(group_job *job)
{
    sp_group *g = job->g;
    int overflow = 0;
    size_t in_bytes = sp_mul_size(job->n_records, job->in_rec, &overflow);
    size_t out_bytes = sp_mul_size(job->n_records, job->out_rec, &overflow);
    if (overflow)
        return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_run: %zu records x the "
                             "record size overflow size_t", job->n_records);
    if (!job->in || !job->out)
        return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_run: %s is NULL",
                             !job->in ? "in" : "out");
    uintptr_t a = (uintptr_t)job->in, b = (uintptr_t)job->out;
    int overlap = a < b + out_bytes && b < a + in_bytes;
    if (overlap && !(a == b && job->in_rec == job->out_rec))
        return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_run: in and out overlap "
                             "(only in == out with equal record sizes is allowed)");
    return SP_OK;
}

static sp_status check_io(group_job *job)
{
    const sp_io *io = job->io;
    if (!io || !io->read || !io->write)
        return sp_group_fail(job->g, SP_ERR_INVALID_ARGUMENT, "sp_group_run_io: %s is NULL",
                             !io ? "io" : !io->read ? "io->read" : "io->write");
    if (!io->positional || io->n_records == 0)
        return sp_group_fail(job->g, SP_ERR_INVALID_ARGUMENT, "sp_group_run_io: the io must be "
                             "positional with n_records known: devices read and write their "
                             "units at once");
    return SP_OK;
}

/* Runs the job's units over every device and fills the figures. */
static sp_status run_job(group_job *job, sp_report *report)
{
    sp_group *g = job->g;
    for (size_t k = 0; k < g->n; k++)
        sp_group_report_reset(&g->members[k]);
    member_thread *threads = calloc(g->n, sizeof *threads);
    if (!threads)
        return sp_group_fail(g, SP_ERR_OUT_OF_MEMORY, "no memory for %zu device threads", g->n);
    job->unit_records = choose_unit_records(g, job->n_records);
    if (job->n_records)
        job->n_units = job->n_records / job->unit_records +
                       (job->n_records % job->unit_records != 0);
    pthread_mutex_init(&job->lock, NULL);
    double t0 = sp_now();
    run_members(job, threads);
    double wall = sp_now() - t0;
    pthread_mutex_destroy(&job->lock);
    free(threads);
    for (size_t k = 0; k < g->n; k++)
        sp_group_report_finish_member(&g->members[k]);
    if (report && job->status == SP_OK)
        sp_group_report_merge(g, wall, report);
    return job->status;
}

/* The group runs on one thread at a time: its members' figures are the run's. */
static sp_status group_enter(sp_group *g)
{
    if (g->n == 0)
        return g->create_status; /* its last error still says why it was not created */
    int idle = 0;
    if (!atomic_compare_exchange_strong(&g->running, &idle, 1))
        return SP_ERR_INVALID_ARGUMENT; /* the running call owns the error text */
    g->error[0] = '\0';
    g->failed_device = -1;
    return SP_OK;
}

static void job_init(group_job *job, sp_group *g)
{
    memset(job, 0, sizeof *job);
    job->g = g;
    job->in_rec = g->members[0].pipeline->in_record_bytes;
    job->out_rec = sp_pipeline_out_record_bytes(g->members[0].pipeline);
    atomic_init(&job->next_unit, 0);
    atomic_init(&job->stop, 0);
}

sp_status sp_group_run(sp_group *g, const void *in, size_t n_records, void *out,
                       sp_report *report)
{
    if (!g)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = group_enter(g);
    if (st != SP_OK)
        return st;
    group_job job;
    job_init(&job, g);
    job.in = in;
    job.out = out;
    job.n_records = n_records;
    job.want_report = report != NULL;
    st = n_records ? check_arrays(&job) : SP_OK;
    if (st == SP_OK)
        st = run_job(&job, report);
    atomic_store(&g->running, 0);
    return st;
}

sp_status sp_group_run_io(sp_group *g, const sp_io *given, sp_report *report)
{
    if (!g)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = group_enter(g);
    if (st != SP_OK)
        return st;
    sp_io io_read; /* the library's layout of the caller's (sized: streampipe.h) */
    const char *why;
    st = given ? sp_sized_read(&io_read, sizeof io_read, given, SP_IO_SIZE_0_5, &why) : SP_OK;
    if (st != SP_OK) {
        atomic_store(&g->running, 0);
        return sp_group_fail(g, st, "sp_group_run_io: io: %s", why);
    }
    if (given && (io_read.in || io_read.out)) {
        atomic_store(&g->running, 0);
        return sp_group_fail(g, SP_ERR_UNSUPPORTED, "sp_group_run_io: io->%s is memory at "
                             "one end, which is for one pipeline's sp_pipeline_run_io",
                             io_read.in ? "in" : "out");
    }
    const sp_io *io = given ? &io_read : NULL;
    group_job job;
    job_init(&job, g);
    job.io = io;
    job.want_report = report != NULL;
    st = check_io(&job);
    job.n_records = st == SP_OK ? io->n_records : 0;
    if (st == SP_OK)
        st = run_job(&job, report);
    atomic_store(&g->running, 0);
    return st;
}
