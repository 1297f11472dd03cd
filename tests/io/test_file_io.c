/*
 * test_file_io [filter]: the library's file source and sink (streampipe_io.h) on HOST.
 *
 * Files of fresh random records through a chain of mix stages (tests/rigs/stages.h) with
 * sp_pipeline_run_io, the output poisoned beforehand and every byte checked against the
 * reference: a whole file replacing an old output (its mode a new file's, no temporary name
 * left), two handles sharing one temporary output as two processes would (each its range),
 * and a pipe written in record order through output_is_fd. The temporary output exists from
 * temp_created (empty, locked) until commit, at its full size. Bad inputs (missing, a FIFO,
 * not whole records, the output being the input under another name, the output's folder
 * missing, record size 0, a range past the end, no config) fail with a message and leave the
 * old output as it was and no temporary file. A failing stage, an input that shrinks after
 * the open, and commit before any run are refused and leave nothing once closed. A killed
 * run's leftover is removed and named; a live handle's temporary output, names off the
 * pattern and another output's stay, as does a name another process holds a classic lock on.
 * /dev/full (skipped where missing) says "no space", and so does an output larger than the
 * free space of /dev/shm's tmpfs, at the open (skipped where /dev/shm is not tmpfs).
 */
#define _GNU_SOURCE /* F_OFD_SETLK: the lock the library's temporary outputs hold */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h> /* TMPFS_MAGIC */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "testbuf.h"

#define IN_REC 12
#define POISON 0xA5

static char dir[256];

/* ---- a scratch folder per test ------------------------------------------------------------ */

static int make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/sp-file-io-XXXXXX");
    return CHECK(mkdtemp(dir) != NULL);
}

static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int write_file(const char *name, const void *bytes, size_t size)
{
    FILE *f = fopen(at(name), "wb");
    if (!f)
        return 0;
    int ok = fwrite(bytes, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* The file's bytes (malloc'd, *size of them), or NULL. */
static unsigned char *read_file(const char *name, size_t *size)
{
    FILE *f = fopen(at(name), "rb");
    struct stat st;
    unsigned char *b = NULL;
    if (f && fstat(fileno(f), &st) == 0 && (b = malloc((size_t)st.st_size + 1)) != NULL)
        *size = fread(b, 1, (size_t)st.st_size, f);
    if (f)
        fclose(f);
    return b;
}

/* Entries of the folder other than those listed (NULL-terminated): a temporary output or
 * anything else left behind shows. */
static int stray_files(const char *const *keep)
{
    DIR *d = opendir(dir);
    int stray = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int kept = 0;
        for (size_t i = 0; keep[i] && !kept; i++)
            kept = strcmp(e->d_name, keep[i]) == 0;
        if (!kept) {
            harness_fail(__FILE__, __LINE__, "left behind: %s", e->d_name);
            stray++;
        }
    }
    if (d)
        closedir(d);
    return stray;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlink(at(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

static int old_output_intact(const char *name)
{
    size_t size = 0;
    unsigned char *b = read_file(name, &size);
    int ok = b && size == 3 && memcmp(b, "OLD", 3) == 0;
    free(b);
    return CHECK_MSG(ok, "the old output %s was changed", name);
}

/* ---- a pipeline of mix stages and its reference ------------------------------------------- */

typedef struct rig {
    test_rng rng;
    sp_context *ctx;
    sp_pipeline *p;
    mix_chain chain;
    size_t n, out_rec;
    unsigned char *in;
} rig;

static int rig_make(rig *r, size_t n, size_t chunk)
{
    static const size_t outs[] = {20, 28};
    r->n = n;
    mix_chain_init(&r->chain, IN_REC, 2, outs, (uint32_t)rng_next(&r->rng));
    r->out_rec = mix_chain_out_rec(&r->chain);
    sp_pipeline_config cfg = mix_chain_config(&r->chain, chunk, 3);
    cfg.staging_threads = 4;
    if (!CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)) ||
        !CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    r->in = malloc(n * IN_REC + 1);
    if (!CHECK(r->in))
        return 0;
    rng_fill(&r->rng, r->in, n * IN_REC);
    return CHECK(write_file("in.bin", r->in, n * IN_REC));
}

static void rig_free(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
    free(r->in);
}

/* A test's start: its folder, its seed (the harness's ^ salt), a rig of n records plus up to
 * `spread` more at random. 0, with the folder gone, when any of it fails. */
static int rig_open(rig *r, uint64_t salt, size_t n, size_t spread, size_t chunk)
{
    memset(r, 0, sizeof *r);
    rng_init(&r->rng, harness_seed() ^ salt);
    if (spread)
        n += rng_below(&r->rng, spread);
    if (make_dir() && rig_make(r, n, chunk))
        return 1;
    rig_free(r);
    remove_dir();
    return 0;
}

/* A test's end: the rig freed, the folder removed. */
static void rig_close(rig *r)
{
    rig_free(r);
    remove_dir();
}

/* What records [first, first + count) of the input become when they are run as records
 * 0.. of a run (the mix stages hash the record's number in the run). */
static void reference(const rig *r, size_t first, size_t count, unsigned char *out)
{
    mix_reference(r->chain.stages, r->chain.n_stages, IN_REC, r->in + first * IN_REC, count,
                  0, out + first * r->out_rec);
}

static sp_file_io_config config_for(const rig *r, const char *output)
{
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at("in.bin");
    c.output = at(output);
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = r->out_rec;
    return c;
}

/* The file holds exactly `want` (n records). */
static void check_output(const rig *r, const char *name, const unsigned char *want)
{
    size_t size = 0;
    unsigned char *got = read_file(name, &size);
    if (CHECK_MSG(got && size == r->n * r->out_rec, "%s holds %zu bytes, want %zu", name, size,
                  r->n * r->out_rec))
        CHECK_EQ(compare_records(want, got, r->n, r->out_rec, name), 0);
    free(got);
}

typedef struct temp_seen {
    char path[1024];
    long long size;
    int locked;
    int calls;
} temp_seen;

/* temp_created: the name exists, empty, and this process cannot take its lock. */
static void note_temp(const char *path, void *user)
{
    temp_seen *s = user;
    struct stat st;
    s->calls++;
    snprintf(s->path, sizeof s->path, "%s", path);
    s->size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    int fd = open(path, O_WRONLY);
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    s->locked = fd >= 0 && fcntl(fd, F_OFD_SETLK, &lock) != 0;
    if (fd >= 0)
        close(fd);
}

/* ---- runs that succeed ----------------------------------------------------------------------- */

TEST(a_file_through_mix_stages_replaces_the_old_output)
{
    rig r;
    if (!rig_open(&r, 0, 5000, 5000, 97))
        return TEST_FAIL;
    unsigned char *want = malloc(r.n * r.out_rec), *poison = malloc(r.n * r.out_rec);
    CHECK(want && poison);
    reference(&r, 0, r.n, want);
    memset(poison, POISON, r.n * r.out_rec);
    CHECK(write_file("out.bin", poison, r.n * r.out_rec));
    temp_seen seen = {.size = -2};
    sp_file_io_config c = config_for(&r, "out.bin");
    c.temp_created = note_temp;
    c.temp_created_user = &seen;
    sp_file_io *f = NULL;
    sp_report report;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_EQ(sp_file_io_records(f), r.n);
    CHECK_EQ(seen.calls, 1);
    CHECK_EQ(seen.size, 0); /* before it was sized */
    CHECK_MSG(seen.locked, "the temporary output was not locked when temp_created came");
    const char *temp = sp_file_io_temp_path(f);
    struct stat st;
    CHECK(temp && strcmp(temp, seen.path) == 0 && strstr(temp, "/.out.bin.partial-"));
    CHECK(temp && stat(temp, &st) == 0 && (size_t)st.st_size == r.n * r.out_rec);
    const sp_io *io = sp_file_io_get(f);
    CHECK(io && io->positional == 1 && io->n_records == r.n);
    CHECK_STATUS(sp_pipeline_run_io(r.p, io, &report), SP_OK, sp_pipeline_last_error(r.p));
    CHECK_EQ(report.records, r.n);
    check_output(&r, "out.bin", poison); /* untouched until the commit */
    CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
    CHECK(sp_file_io_temp_path(f) == NULL);
    CHECK(sp_file_io_get(f) == NULL);
    CHECK_STATUS(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    sp_file_io_close(f);
    check_output(&r, "out.bin", want);
    mode_t mask = umask(0);
    umask(mask);
    CHECK(stat(at("out.bin"), &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    stray_files(keep);
    free(want);
    free(poison);
    rig_close(&r);
    return TEST_OK;
}

/* Two handles over one output, as two processes would share it: the first makes the
 * temporary output and runs [0, k), the second opens it by name and runs [k, n). */
TEST(two_handles_run_their_ranges_of_one_output)
{
    rig r;
    if (!rig_open(&r, 1, 3000, 3000, 64))
        return TEST_FAIL;
    size_t k = 1 + rng_below(&r.rng, r.n - 1);
    unsigned char *want = malloc(r.n * r.out_rec);
    CHECK(want);
    reference(&r, 0, k, want);
    reference(&r, k, r.n - k, want);
    sp_file_io_config c = config_for(&r, "out.bin");
    c.n_records = k;
    c.regular_output = 1;
    sp_file_io *owner = NULL, *other = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &owner), SP_OK, sp_file_io_last_error(owner));
    const char *temp = sp_file_io_temp_path(owner);
    sp_file_io_config c2 = config_for(&r, "out.bin");
    c2.temp_output = temp;
    CHECK_STATUS(sp_file_io_open(&c2, &other), SP_OK, sp_file_io_last_error(other));
    CHECK(sp_file_io_temp_path(other) == NULL);
    CHECK_STATUS(sp_file_io_set_range(other, k, r.n - k), SP_OK, sp_file_io_last_error(other));
    CHECK_STATUS(sp_file_io_set_range(other, k, r.n - k + 1), SP_ERR_INVALID_ARGUMENT,
                 sp_file_io_last_error(other));
    CHECK_HAS(sp_file_io_last_error(other), "past the end");
    CHECK_STATUS(sp_file_io_set_range(other, k, r.n - k), SP_OK, sp_file_io_last_error(other));
    CHECK_EQ(sp_file_io_get(owner)->n_records, k);
    CHECK_EQ(sp_file_io_get(other)->n_records, r.n - k);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(other), NULL), SP_OK,
                 sp_pipeline_last_error(r.p));
    CHECK_STATUS(sp_file_io_commit(other), SP_OK, sp_file_io_last_error(other)); /* a flush */
    sp_file_io_close(other);
    struct stat st;
    CHECK_MSG(temp && stat(temp, &st) == 0, "the other handle removed the temporary output");
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(owner), NULL), SP_OK,
                 sp_pipeline_last_error(r.p));
    CHECK_STATUS(sp_file_io_commit(owner), SP_OK, sp_file_io_last_error(owner));
    sp_file_io_close(owner);
    check_output(&r, "out.bin", want);
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    stray_files(keep);
    free(want);
    rig_close(&r);
    return TEST_OK;
}

typedef struct drain {
    int fd;
    unsigned char *got;
    size_t size, cap;
} drain;

static void *drain_pipe(void *arg)
{
    drain *d = arg;
    ssize_t n;
    while (d->size < d->cap && (n = read(d->fd, d->got + d->size, d->cap - d->size)) > 0)
        d->size += (size_t)n;
    unsigned char extra;
    while (read(d->fd, &extra, 1) > 0)
        d->size++; /* more than the output: counted, not kept */
    return NULL;
}

/* A pipe (output_is_fd): written in record order, sequentially; the caller's descriptor stays
 * open; nothing is made in the folder. */
TEST(a_pipe_is_written_in_record_order)
{
    rig r;
    if (!rig_open(&r, 2, 4000, 4000, 50))
        return TEST_FAIL;
    unsigned char *want = malloc(r.n * r.out_rec);
    drain d = {.cap = r.n * r.out_rec};
    d.got = malloc(d.cap + 1);
    CHECK(want && d.got);
    memset(d.got, POISON, d.cap);
    reference(&r, 0, r.n, want);
    int fds[2];
    CHECK(pipe(fds) == 0);
    d.fd = fds[0];
    pthread_t reader;
    CHECK(pthread_create(&reader, NULL, drain_pipe, &d) == 0);
    sp_file_io_config c = config_for(&r, "unused");
    c.output = NULL;
    c.output_is_fd = 1;
    c.output_fd = fds[1];
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK(sp_file_io_temp_path(f) == NULL);
    CHECK(sp_file_io_get(f) && sp_file_io_get(f)->positional == 0);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_OK,
                 sp_pipeline_last_error(r.p));
    CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
    sp_file_io_close(f);
    CHECK(fcntl(fds[1], F_GETFD) != -1); /* the caller's */
    close(fds[1]);
    pthread_join(reader, NULL);
    close(fds[0]);
    CHECK_EQ(d.size, r.n * r.out_rec);
    CHECK_EQ(compare_records(want, d.got, r.n, r.out_rec, "the pipe"), 0);
    static const char *const keep[] = {"in.bin", NULL};
    stray_files(keep);
    free(want);
    free(d.got);
    rig_close(&r);
    return TEST_OK;
}

/* ---- failures ---------------------------------------------------------------------------------- */

/* sp_file_io_open(c) fails with `status`, a message holding `says`, no sp_io, and leaves
 * out.bin as it was and nothing else but `keep`. */
static void expect_open_failure(const sp_file_io_config *c, sp_status status, const char *says,
                                const char *const *keep)
{
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(c, &f), status, sp_file_io_last_error(f));
    CHECK(f != NULL);
    CHECK_HAS(sp_file_io_last_error(f), says);
    CHECK(sp_file_io_get(f) == NULL);
    CHECK(sp_file_io_temp_path(f) == NULL);
    CHECK_EQ(sp_file_io_records(f), 0);
    CHECK_EQ(sp_file_io_commit(f), status); /* the open's status again */
    sp_file_io_close(f);
    old_output_intact("out.bin");
    stray_files(keep);
}

TEST(bad_inputs_fail_with_a_message_and_leave_nothing)
{
    rig r;
    if (!rig_open(&r, 3, 100, 0, 16))
        return TEST_FAIL;
    CHECK(write_file("out.bin", "OLD", 3));
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    sp_file_io_config c = config_for(&r, "out.bin");
    c.input = at("missing.bin");
    harness_context("a missing input");
    expect_open_failure(&c, SP_ERR_BACKEND, "No such file", keep);

    harness_context("a FIFO as the input");
    CHECK(mkfifo(at("fifo"), 0600) == 0);
    static const char *const keep_fifo[] = {"in.bin", "out.bin", "fifo", NULL};
    c.input = at("fifo");
    expect_open_failure(&c, SP_ERR_UNSUPPORTED, "not a regular file", keep_fifo);
    unlink(at("fifo"));

    harness_context("not whole records");
    CHECK(write_file("odd.bin", r.in, 5 * IN_REC + 7));
    static const char *const keep_odd[] = {"in.bin", "out.bin", "odd.bin", NULL};
    c.input = at("odd.bin");
    expect_open_failure(&c, SP_ERR_UNSUPPORTED, "not a whole number of 12-byte records",
                        keep_odd);
    unlink(at("odd.bin"));

    harness_context("the output is the input, under its name and another (a hard link)");
    c = config_for(&r, "in.bin");
    expect_open_failure(&c, SP_ERR_INVALID_ARGUMENT, "is the input file", keep);
    CHECK(link(at("in.bin"), at("same.bin")) == 0);
    static const char *const keep_link[] = {"in.bin", "out.bin", "same.bin", NULL};
    c = config_for(&r, "same.bin");
    expect_open_failure(&c, SP_ERR_INVALID_ARGUMENT, "is the input file", keep_link);
    unlink(at("same.bin"));

    harness_context("the output's folder is missing");
    c = config_for(&r, "no-such-folder/out.bin");
    expect_open_failure(&c, SP_ERR_BACKEND, "cannot create the output beside", keep);

    harness_context("the output is a directory");
    CHECK(mkdir(at("sub"), 0700) == 0);
    static const char *const keep_sub[] = {"in.bin", "out.bin", "sub", NULL};
    c = config_for(&r, "sub");
    expect_open_failure(&c, SP_ERR_UNSUPPORTED, "is a directory", keep_sub);
    rmdir(at("sub"));

    harness_context("bad configs");
    c = config_for(&r, "out.bin");
    c.out_record_bytes = 0;
    expect_open_failure(&c, SP_ERR_INVALID_ARGUMENT, "record size of 0", keep);
    c = config_for(&r, "out.bin");
    c.first_record = 50;
    c.n_records = 51;
    expect_open_failure(&c, SP_ERR_INVALID_ARGUMENT, "past the end", keep);
    c = config_for(&r, "out.bin");
    c.output_is_fd = 1;
    c.regular_output = 1;
    expect_open_failure(&c, SP_ERR_INVALID_ARGUMENT, "several writers", keep);
    c = config_for(&r, "out.bin");
    c.temp_output = at("no-such-temp");
    expect_open_failure(&c, SP_ERR_BACKEND, "cannot open the temporary output", keep);
    c = config_for(&r, "out.bin");
    c.size = sizeof c + 8; /* a newer header's, with a field set beyond this one's */
    harness_context("a config from a newer header");
    {
        unsigned char bigger[sizeof c + 8];
        memset(bigger, 0, sizeof bigger);
        memcpy(bigger, &c, sizeof c);
        bigger[sizeof c] = 1;
        expect_open_failure((const sp_file_io_config *)(void *)bigger, SP_ERR_UNSUPPORTED,
                            "newer", keep);
    }
    c = config_for(&r, "out.bin");
    expect_open_failure(NULL, SP_ERR_INVALID_ARGUMENT, "no config", keep);
    CHECK_EQ(sp_file_io_open(&c, NULL), SP_ERR_INVALID_ARGUMENT);
    sp_file_io_close(NULL);
    CHECK(sp_file_io_last_error(NULL)[0] != '\0');
    harness_context("%s", "");
    rig_close(&r);
    return TEST_OK;
}

/* A run that fails (a stage, or an input that shrank after the open) cannot be committed, and
 * close leaves the old output and no temporary file. */
TEST(a_failed_run_leaves_nothing)
{
    rig r;
    if (!rig_open(&r, 4, 2000, 0, 40))
        return TEST_FAIL;
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    CHECK(write_file("out.bin", "OLD", 3));
    sp_file_io_config c = config_for(&r, "out.bin");
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    atomic_store(&r.chain.stages[1].fail_chunk, 7);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_ERR_STAGE_FAILED,
                 sp_pipeline_last_error(r.p));
    CHECK_STATUS(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), "not committed");
    const char *temp = sp_file_io_temp_path(f);
    struct stat st;
    CHECK(temp && stat(temp, &st) == 0); /* until close */
    sp_file_io_close(f);
    old_output_intact("out.bin");
    stray_files(keep);

    /* the input cut to half after the open: the read past its end fails, saying so */
    atomic_store(&r.chain.stages[1].fail_chunk, -1);
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK(truncate(at("in.bin"), (off_t)(r.n / 2 * IN_REC)) == 0);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_ERR_STAGE_FAILED,
                 sp_pipeline_last_error(r.p));
    CHECK_HAS(sp_file_io_last_error(f), "the file ended at byte");
    CHECK_HAS(sp_pipeline_last_error(r.p), "source");
    CHECK_STATUS(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), "the file ended at byte");
    sp_file_io_close(f);
    old_output_intact("out.bin");
    stray_files(keep);
    rig_close(&r);
    return TEST_OK;
}

/* Commit before the range has been run is refused and the handle stays usable; a failed run
 * set again (set_range) and rerun commits. */
TEST(commit_only_after_a_run_that_succeeded)
{
    rig r;
    if (!rig_open(&r, 5, 1500, 0, 30))
        return TEST_FAIL;
    unsigned char *want = malloc(r.n * r.out_rec);
    CHECK(want);
    reference(&r, 0, r.n, want);
    sp_file_io_config c = config_for(&r, "out.bin");
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_STATUS(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), "0 of the 1500 records");
    CHECK(sp_file_io_get(f) != NULL);
    atomic_store(&r.chain.stages[0].fail_chunk, 20);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_ERR_STAGE_FAILED,
                 sp_pipeline_last_error(r.p));
    atomic_store(&r.chain.stages[0].fail_chunk, -1);
    CHECK_STATUS(sp_file_io_set_range(f, 0, 0), SP_OK, sp_file_io_last_error(f));
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_OK,
                 sp_pipeline_last_error(r.p));
    CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
    sp_file_io_close(f);
    check_output(&r, "out.bin", want);
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    stray_files(keep);
    free(want);
    rig_close(&r);
    return TEST_OK;
}

/* A killed run's leftover (unlocked, of the pattern) is removed and named; a live handle's
 * temporary output, a name locked by a classic lock, names off the pattern and another
 * output's stay. */
TEST(a_killed_runs_leftover_is_removed_and_live_ones_kept)
{
    rig r;
    if (!rig_open(&r, 6, 500, 0, 30))
        return TEST_FAIL;
    static const char *const kept[] = {".out.bin.partial-Lck9zz", ".other.bin.partial-Ab12Cd",
                                       ".out.bin.partial-Ab12C", ".out.bin.partial-Ab12Cde",
                                       ".out.bin.partial-Ab_2Cd", "out.bin.partial-Ab12Cd"};
    for (size_t i = 0; i < ARRAY_LEN(kept); i++)
        CHECK(write_file(kept[i], "x", 1));
    CHECK(write_file(".out.bin.partial-Zz09aB", "left", 4));
    /* a classic lock held by another process (a process's own classic locks go with any
     * descriptor of the file it closes, the cleanup's included) */
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t holder = fork();
    if (holder == 0) {
        close(ready[0]);
        close(done[1]);
        int fd = open(at(kept[0]), O_RDWR);
        struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        char ok = fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0;
        if (write(ready[1], &ok, 1) != 1 || read(done[0], &ok, 1) < 0)
            _exit(1);
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char locked = 0;
    CHECK(holder > 0 && read(ready[0], &locked, 1) == 1 && locked);
    sp_file_io_config c = config_for(&r, "out.bin");
    sp_file_io *live = NULL, *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &live), SP_OK, sp_file_io_last_error(live));
    CHECK(sp_file_io_removed(live, 0) && strstr(sp_file_io_removed(live, 0), "Zz09aB"));
    CHECK(sp_file_io_removed(live, 1) == NULL);
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK_MSG(sp_file_io_removed(f, 0) == NULL, "removed %s", sp_file_io_removed(f, 0));
    const char *live_temp = sp_file_io_temp_path(live);
    struct stat st;
    CHECK_MSG(live_temp && stat(live_temp, &st) == 0, "a live handle's temporary output was "
              "removed");
    for (size_t i = 0; i < ARRAY_LEN(kept); i++)
        CHECK_MSG(stat(at(kept[i]), &st) == 0, "%s was removed", kept[i]);
    CHECK(stat(at(".out.bin.partial-Zz09aB"), &st) != 0);
    sp_file_io_close(f);
    sp_file_io_close(live);
    close(done[1]); /* the holder ends */
    close(ready[0]);
    if (holder > 0)
        waitpid(holder, NULL, 0);
    for (size_t i = 0; i < ARRAY_LEN(kept); i++)
        unlink(at(kept[i]));
    static const char *const keep[] = {"in.bin", NULL};
    stray_files(keep);
    rig_close(&r);
    return TEST_OK;
}

/* /dev/full: written in place (a character device, in record order), "no space". */
TEST(a_full_device_says_no_space)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
        harness_skip_reason("no /dev/full here");
        return TEST_SKIP;
    }
    rig r;
    if (!rig_open(&r, 7, 800, 0, 40))
        return TEST_FAIL;
    sp_file_io_config c = config_for(&r, "unused");
    c.output = "/dev/full";
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    CHECK(sp_file_io_temp_path(f) == NULL);
    CHECK(sp_file_io_get(f) && sp_file_io_get(f)->positional == 0);
    CHECK_STATUS(sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL), SP_ERR_STAGE_FAILED,
                 sp_pipeline_last_error(r.p));
    CHECK_HAS(sp_file_io_last_error(f), "no space");
    CHECK_HAS(sp_pipeline_last_error(r.p), "sink");
    CHECK_STATUS(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    sp_file_io_close(f);
    CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
    c.regular_output = 1; /* refused where several writers need offsets */
    CHECK(write_file("out.bin", "OLD", 3));
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    expect_open_failure(&c, SP_ERR_UNSUPPORTED, "is a character device", keep);
    rig_close(&r);
    return TEST_OK;
}

/* On tmpfs the output's room is checked, not reserved page by page (file_io.c size_output): an
 * output larger than the free space fails the open with "no space" before anything runs, and
 * leaves no temporary file. The input is a sparse file of the needed size in the scratch folder. */
TEST(an_output_larger_than_a_tmpfs_says_no_space)
{
    struct statfs fs;
    struct statvfs v;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC || statvfs("/dev/shm", &v) != 0) {
        harness_skip_reason("/dev/shm is not tmpfs here");
        return TEST_SKIP;
    }
    rig r;
    if (!rig_open(&r, 8, 100, 0, 40))
        return TEST_FAIL;
    unsigned long long room = (unsigned long long)v.f_bavail * v.f_frsize;
    unsigned long long records = room / r.out_rec + (1u << 20);
    int fd = open(at("big.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)(records * IN_REC)) == 0);
    if (fd >= 0)
        close(fd);
    char shm[64] = "/dev/shm/sp-file-io-XXXXXX", out[96];
    if (CHECK(mkdtemp(shm) != NULL)) {
        snprintf(out, sizeof out, "%s/out.bin", shm);
        sp_file_io_config c = config_for(&r, "unused");
        c.input = at("big.bin");
        c.output = out;
        sp_file_io *f = NULL;
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_ERR_BACKEND, sp_file_io_last_error(f));
        CHECK_HAS(sp_file_io_last_error(f), "no space for the output");
        CHECK(sp_file_io_temp_path(f) == NULL);
        sp_file_io_close(f);
        CHECK_MSG(rmdir(shm) == 0, "%s is not empty: a temporary output was left", shm);
    }
    rig_close(&r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(a_file_through_mix_stages_replaces_the_old_output),
        TEST_ENTRY(two_handles_run_their_ranges_of_one_output),
        TEST_ENTRY(a_pipe_is_written_in_record_order),
        TEST_ENTRY(bad_inputs_fail_with_a_message_and_leave_nothing),
        TEST_ENTRY(a_failed_run_leaves_nothing),
        TEST_ENTRY(commit_only_after_a_run_that_succeeded),
        TEST_ENTRY(a_killed_runs_leftover_is_removed_and_live_ones_kept),
        TEST_ENTRY(a_full_device_says_no_space),
        TEST_ENTRY(an_output_larger_than_a_tmpfs_says_no_space),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
