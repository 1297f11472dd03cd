/*
 * test_file_journal_writers [filter]: several writers of one output, each with a journal of
 * its own (streampipe_io.h, "Several writers": journal_name, resume_journals,
 * sp_file_io_todo_from, sp_file_io_journal_merge), on HOST, as `streampipe run` uses them
 * under mpirun.
 *
 * A "job" of W writers (a maker with the temporary output, the others with temp_output) runs
 * an even share each through sinmix, each cut off after a random number of records (as by
 * kill -9: its data written, its journal behind) and closed. A job of another number of
 * writers resumes from all the journals: every writer finds the same records done, the gaps
 * are split between them, each syncs, the maker merges the others' journals and commits:
 * the output must equal the reference byte for byte and no journal or temporary output be
 * left. A commit without the merge is refused (not every record is in its journal); a
 * journal of other work among resume_journals refuses the open, naming it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "streampipe_ops.h"
#include "testbuf.h"

#define ITERS 3
#define MOST_WRITERS 4

static char dir[256], in_path[300], out_path[300];

typedef struct rig {
    test_rng rng;
    sp_context *ctx;
    sp_pipeline *p;
    sp_sinmix_params params;
    size_t n;
    float *want;
} rig;

static void journal_path(char *path, size_t cap, const char *job, int w)
{
    snprintf(path, cap, "%s/.out.bin.j.%s%d", dir, job, w);
}

static int rig_open(rig *r, uint64_t salt)
{
    memset(r, 0, sizeof *r);
    rng_init(&r->rng, harness_seed() ^ salt);
    r->n = 20000 + rng_below(&r->rng, 20000);
    snprintf(dir, sizeof dir, "/tmp/sp-writers-XXXXXX");
    if (!CHECK(mkdtemp(dir)))
        return 0;
    snprintf(in_path, sizeof in_path, "%s/in.bin", dir);
    snprintf(out_path, sizeof out_path, "%s/out.bin", dir);
    r->params.iters = ITERS;
    sp_stage stage = sp_sinmix_stage(&r->params);
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = sizeof(float);
    cfg.stages = &stage;
    cfg.n_stages = 1;
    cfg.chunk_records = 61 + rng_below(&r->rng, 200);
    cfg.depth = 3;
    cfg.staging_threads = 3;
    float *in = malloc(r->n * sizeof(float));
    r->want = malloc(r->n * sizeof(float));
    if (!CHECK(in && r->want) ||
        !CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)) ||
        !CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                      sp_context_last_error(r->ctx))) {
        free(in);
        return 0;
    }
    for (size_t i = 0; i < r->n; i++)
        in[i] = (float)((double)(rng_next(&r->rng) >> 40) / (double)(1ull << 24) * 8 - 4);
    sp_sinmix_reference(in, r->want, r->n, ITERS);
    FILE *f = fopen(in_path, "wb");
    int ok = f && fwrite(in, sizeof(float), r->n, f) == r->n;
    ok = f && fclose(f) == 0 && ok;
    free(in);
    return CHECK(ok);
}

static void rig_close(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
    free(r->want);
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Entries of the folder other than in.bin and (when kept) out.bin. */
static int strays(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "in.bin") &&
            strcmp(e->d_name, "out.bin"))
            n += harness_fail(__FILE__, __LINE__, "left behind: %s", e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* A job's writer w: the maker (w 0) makes or claims the temporary output, the others write
 * it (temp). */
static sp_file_io *open_writer(const char *job, int w, const char *temp, const char *tag,
                               const char *const *resume_from)
{
    static char names[MOST_WRITERS][64];
    snprintf(names[w], sizeof names[w], ".out.bin.j.%s%d", job, w);
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = in_path;
    c.output = out_path;
    c.in_record_bytes = c.out_record_bytes = sizeof(float);
    c.journal = 1;
    c.journal_tag = tag;
    c.journal_sync_bytes = 2048;
    c.journal_name = names[w];
    c.temp_output = temp;
    c.resume = resume_from != NULL;
    c.resume_journals = resume_from;
    sp_file_io *f = NULL;
    sp_status st = sp_file_io_open(&c, &f);
    if (!CHECK_STATUS(st, SP_OK, sp_file_io_last_error(f))) {
        sp_file_io_close(f);
        return NULL;
    }
    return f;
}

typedef struct cut_sink {
    const sp_io *inner;
    atomic_size_t written;
    size_t limit;
} cut_sink;

static sp_status cut_write(const void *src, size_t first, size_t records, void *user)
{
    cut_sink *s = user;
    if (atomic_fetch_add(&s->written, records) + records > s->limit)
        return SP_ERR_STAGE_FAILED;
    return s->inner->write(src, first, records, s->inner->write_user);
}

/* Writer f's share, as sp_file_io_todo_from gives the gaps: the to-do records [lo, hi) in
 * the input's order, each piece run; limit: a cut after about that many records (0: none).
 * The pieces it ran (records) in *ran. */
static sp_status run_share(rig *r, sp_file_io *f, size_t lo, size_t hi, size_t limit,
                           size_t *ran)
{
    size_t from = 0, seen = 0, first, count;
    sp_status st = SP_OK;
    cut_sink sink = {.limit = limit ? limit : SIZE_MAX};
    atomic_init(&sink.written, 0);
    *ran = 0;
    while (st == SP_OK && seen < hi && sp_file_io_todo_from(f, from, &first, &count)) {
        size_t a = seen > lo ? seen : lo, b = seen + count < hi ? seen + count : hi;
        from = first + count;
        if (a < b && (st = sp_file_io_set_range(f, first + (a - seen), b - a)) == SP_OK) {
            sp_io io = *sp_file_io_get(f);
            sink.inner = sp_file_io_get(f);
            io.write = cut_write;
            io.write_user = &sink;
            st = sp_pipeline_run_io(r->p, &io, NULL);
            *ran += st == SP_OK ? b - a : 0;
        }
        seen += count;
    }
    return st;
}

/* A job of `writers`, resumed from `from` (NULL: a fresh start), each writer cut off at a
 * random point when `cut`; complete, the maker merges and commits. 1 when it ran through. */
static int job(rig *r, const char *name, int writers, const char *const *from, int cut)
{
    sp_file_io *f[MOST_WRITERS] = {NULL};
    f[0] = open_writer(name, 0, NULL, "sinmix:3", from);
    char temp[512] = "";
    if (f[0])
        snprintf(temp, sizeof temp, "%s", sp_file_io_temp_path(f[0]));
    size_t resumed = f[0] ? sp_file_io_resumed(f[0]) : 0;
    for (int w = 1; f[0] && w < writers; w++)
        if ((f[w] = open_writer(name, w, temp, "sinmix:3", resumed ? from : NULL)) != NULL)
            CHECK_EQ(sp_file_io_resumed(f[w]), resumed); /* the same union everywhere */
    if (from) /* the cuts left records to do; the journals may hold none (an early cut) */
        CHECK_MSG(resumed < r->n, "resumed %zu of %zu", resumed, r->n);
    size_t to_do = r->n - resumed, ran = 0, total = 0;
    int whole = 1;
    for (int w = 0; w < writers; w++) {
        size_t lo = to_do * (size_t)w / (size_t)writers;
        size_t hi = to_do * (size_t)(w + 1) / (size_t)writers;
        size_t limit = cut ? 1 + rng_below(&r->rng, hi - lo) : 0;
        sp_status st = f[w] ? run_share(r, f[w], lo, hi, limit, &ran) : SP_ERR_INVALID_ARGUMENT;
        if (!cut) /* a cut share may end just at its limit and succeed: either will do */
            whole &= CHECK_STATUS(st, SP_OK, f[w] ? sp_pipeline_last_error(r->p) : "no handle");
        total += ran;
        if (f[w] && !cut)
            CHECK_STATUS(sp_file_io_sync(f[w]), SP_OK, sp_file_io_last_error(f[w]));
    }
    if (!cut && whole) {
        CHECK_EQ(total, to_do);
        if (writers > 1) /* not every record is in the maker's journal yet */
            CHECK_EQ(sp_file_io_commit(f[0]), SP_ERR_INVALID_ARGUMENT);
        for (int w = 1; w < writers; w++) {
            char path[512];
            journal_path(path, sizeof path, name, w);
            CHECK_STATUS(sp_file_io_journal_merge(f[0], path), SP_OK,
                         sp_file_io_last_error(f[0]));
        }
        CHECK_STATUS(sp_file_io_commit(f[0]), SP_OK, sp_file_io_last_error(f[0]));
        for (int w = 1; w < writers; w++)
            CHECK_STATUS(sp_file_io_commit(f[w]), SP_OK, sp_file_io_last_error(f[w]));
    }
    for (int w = 0; w < writers; w++)
        sp_file_io_close(f[w]);
    return !cut && whole;
}

TEST(a_job_resumed_by_another_number_of_writers_gives_the_output)
{
    rig r;
    if (!rig_open(&r, 1))
        return TEST_FAIL;
    for (int round = 0; round < 6; round++) {
        int before = 1 + (int)rng_below(&r.rng, 3), after = 1 + (int)rng_below(&r.rng, 3);
        job(&r, "a", before, NULL, 1); /* cut off, as by kill -9 */
        char paths[MOST_WRITERS][512];
        const char *from[MOST_WRITERS + 1] = {NULL};
        for (int w = 0; w < before; w++) {
            journal_path(paths[w], sizeof paths[w], "a", w);
            from[w] = paths[w];
        }
        if (!job(&r, "b", after, from, 0))
            break;
        size_t size = 0;
        FILE *f = fopen(out_path, "rb");
        float *got = malloc(r.n * sizeof(float) + 1);
        if (f && got)
            size = fread(got, 1, r.n * sizeof(float) + 1, f);
        if (f)
            fclose(f);
        CHECK_MSG(got && size == r.n * sizeof(float) &&
                      memcmp(got, r.want, r.n * sizeof(float)) == 0,
                  "round %d (%d writers resumed by %d): the output differs", round, before,
                  after);
        free(got);
        strays();
        unlink(out_path);
    }
    rig_close(&r);
    return TEST_OK;
}

TEST(a_journal_of_other_work_among_them_is_refused)
{
    rig r;
    if (!rig_open(&r, 2))
        return TEST_FAIL;
    job(&r, "a", 2, NULL, 1);
    sp_file_io *other = open_writer("x", 0, NULL, "sinmix:4", NULL); /* other stages */
    char a0[512], a1[512], x0[512];
    journal_path(a0, sizeof a0, "a", 0);
    journal_path(a1, sizeof a1, "a", 1);
    journal_path(x0, sizeof x0, "x", 0);
    /* the other handle's journal stays once its open succeeded: close it without commit */
    sp_file_io_close(other);
    const char *from[] = {a0, x0, a1, NULL};
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = in_path;
    c.output = out_path;
    c.in_record_bytes = c.out_record_bytes = sizeof(float);
    c.journal = c.resume = 1;
    c.journal_tag = "sinmix:3";
    c.journal_name = ".out.bin.j.b0";
    c.resume_journals = from;
    sp_file_io *f = NULL;
    CHECK_EQ(sp_file_io_open(&c, &f), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_file_io_last_error(f), x0);
    CHECK_HAS(sp_file_io_last_error(f), "other work");
    sp_file_io_close(f);
    struct stat st;
    CHECK(stat(a0, &st) == 0 && stat(a1, &st) == 0); /* nothing lost */
    /* a writer with temp_output needs a journal_name of its own */
    c.journal_name = NULL;
    c.resume = 0;
    c.resume_journals = NULL;
    c.temp_output = in_path;
    CHECK_EQ(sp_file_io_open(&c, &f), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_file_io_last_error(f), "journal_name");
    sp_file_io_close(f);
    rig_close(&r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(a_job_resumed_by_another_number_of_writers_gives_the_output),
        TEST_ENTRY(a_journal_of_other_work_among_them_is_refused),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
