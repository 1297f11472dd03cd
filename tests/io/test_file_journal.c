/*
 * test_file_journal [filter]: the file sink's journal (streampipe_io.h, "Journals") on HOST.
 *
 * Files of fresh random floats through sinmix (a record's result depends on that record
 * alone, so a resumed run's gaps give the bytes an uninterrupted run gives). A run is
 * interrupted by a sink that fails after a random number of records (the data written,
 * the journal behind it, as after kill -9) or by the simulated power cut at a random byte;
 * the handle is closed (the temporary output and the journal stay), and a resumed open runs
 * the gaps sp_file_io_todo gives: the output must equal the reference byte for byte, the
 * journal be gone and nothing else left. Before each resume the records the journal claims
 * are read straight from the temporary output and compared: a journal may claim less than
 * is durable, never more. Damaged journals (cut at a random byte, one random bit flipped)
 * resume from what still checks or start afresh, never to a wrong output; a journal of
 * another input (same size, mtime put back), an input touched, grown or rewritten, other
 * stages (journal_tag) or record sizes are refused with a message naming what differs; a
 * write limit below the output (RLIMIT_FSIZE, as a full disk) fails the resumed run, which
 * resumes again once lifted; a live handle's temporary output refuses a second resume; a
 * killed run's other leftovers are removed while the journal's is kept; records written and
 * then left are journaled by the journal's own thread. The range set and
 * the journal's encoding are checked on their own too.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "io/file_journal.h"
#include "io/journal.h"
#include "io/range_set.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "streampipe_ops.h"
#include "testbuf.h"

#define ITERS 3

static char dir[256];

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

static unsigned char *read_path(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    unsigned char *b = NULL;
    *size = 0;
    if (f && fstat(fileno(f), &st) == 0 && (b = malloc((size_t)st.st_size + 1)) != NULL)
        *size = fread(b, 1, (size_t)st.st_size, f);
    if (f)
        fclose(f);
    return b;
}

/* The folder's entries other than `keep` (NULL-terminated) and, when partial is set, one
 * temporary output of out.bin and its journal. */
static int stray_files(const char *const *keep, int partial)
{
    DIR *d = opendir(dir);
    int stray = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        const char *n = e->d_name;
        int kept = strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
                   (partial && (strncmp(n, ".out.bin.partial-", 17) == 0 ||
                                strcmp(n, ".out.bin.journal") == 0));
        for (size_t i = 0; keep[i] && !kept; i++)
            kept = strcmp(n, keep[i]) == 0;
        if (!kept)
            stray += harness_fail(__FILE__, __LINE__, "left behind: %s", n);
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

/* ---- the rig: an input, a sinmix pipeline, the reference ------------------------------------ */

typedef struct rig {
    test_rng rng;
    sp_context *ctx;
    sp_pipeline *p;
    sp_sinmix_params params;
    size_t n;
    float *in, *want;
} rig;

static int rig_open(rig *r, uint64_t salt, size_t n)
{
    memset(r, 0, sizeof *r);
    rng_init(&r->rng, harness_seed() ^ salt);
    r->n = n + rng_below(&r->rng, n);
    snprintf(dir, sizeof dir, "/tmp/sp-journal-XXXXXX");
    if (!CHECK(mkdtemp(dir)))
        return 0;
    r->params.iters = ITERS;
    sp_stage stage = sp_sinmix_stage(&r->params);
    sp_pipeline_config cfg = SP_PIPELINE_CONFIG_INIT;
    cfg.in_record_bytes = sizeof(float);
    cfg.stages = &stage;
    cfg.n_stages = 1;
    cfg.chunk_records = 61 + rng_below(&r->rng, 200);
    cfg.depth = 3;
    cfg.staging_threads = 4;
    r->in = malloc(r->n * sizeof(float) + 1);
    r->want = malloc(r->n * sizeof(float) + 1);
    if (!CHECK(r->in && r->want) ||
        !CHECK_STATUS(sp_context_create(SP_BACKEND_HOST, 0, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)) ||
        !CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    for (size_t i = 0; i < r->n; i++)
        r->in[i] = (float)((double)(rng_next(&r->rng) >> 40) / (double)(1ull << 24) * 8 - 4);
    sp_sinmix_reference(r->in, r->want, r->n, ITERS);
    return CHECK(write_file("in.bin", r->in, r->n * sizeof(float)));
}

static void rig_close(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
    free(r->in);
    free(r->want);
    remove_dir();
}

static sp_file_io_config journal_config(const char *tag)
{
    static char in[512], out[512]; /* at()'s texts are reused */
    snprintf(in, sizeof in, "%s", at("in.bin"));
    snprintf(out, sizeof out, "%s", at("out.bin"));
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = in;
    c.output = out;
    c.in_record_bytes = c.out_record_bytes = sizeof(float);
    c.journal = 1;
    c.journal_tag = tag;
    c.journal_sync_bytes = 2048; /* many records, so that a resume has something to take */
    return c;
}

/* A sink that fails once `limit` records were written: a run cut off as by kill -9, its data
 * written and its journal behind. */
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

/* A journaled run of the whole input that stops after about `limit` records; closed. */
static void interrupted_run(rig *r, const char *tag, size_t limit)
{
    sp_file_io_config c = journal_config(tag);
    sp_file_io *f = NULL;
    if (!CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f))) {
        sp_file_io_close(f);
        return;
    }
    cut_sink sink = {.inner = sp_file_io_get(f), .limit = limit};
    atomic_init(&sink.written, 0);
    sp_io io = *sp_file_io_get(f);
    io.write = cut_write;
    io.write_user = &sink;
    CHECK_EQ(sp_pipeline_run_io(r->p, &io, NULL), SP_ERR_STAGE_FAILED);
    sp_file_io_close(f);
}

/* The records the journal claims (the resumed handle's done set, white-box), read from the
 * temporary output, equal the reference: a journal may claim less than is durable, never
 * more. */
static void check_claimed(rig *r, sp_file_io *f)
{
    size_t size, bad = 0;
    unsigned char *got = read_path(sp_file_io_temp_path(f), &size);
    CHECK_EQ(size, r->n * sizeof(float));
    const sp_range_set *done = &f->journal->done;
    CHECK_EQ(sp_range_set_count(done), sp_file_io_resumed(f));
    for (size_t k = 0; got && size == r->n * sizeof(float) && k < done->n; k++)
        for (size_t i = done->r[k].first; i < done->r[k].end; i++)
            bad += memcmp(got + i * sizeof(float), &r->want[i], sizeof(float)) != 0;
    CHECK_MSG(bad == 0, "the journal claims %zu records the temporary output does not hold",
              bad);
    free(got);
}

/* Resumes and runs every gap; 1 when the committed output equals the reference. */
static int resume_to_end(rig *r, const char *tag, size_t *resumed)
{
    sp_file_io_config c = journal_config(tag);
    c.resume = 1;
    sp_file_io *f = NULL;
    sp_status st = sp_file_io_open(&c, &f);
    CHECK_STATUS(st, SP_OK, sp_file_io_last_error(f));
    if (resumed)
        *resumed = sp_file_io_resumed(f);
    if (st == SP_OK)
        check_claimed(r, f);
    size_t first, n, runs = 0;
    while (st == SP_OK && sp_file_io_todo(f, &first, &n) && runs++ < 1000) {
        st = sp_file_io_set_range(f, first, n);
        if (st == SP_OK)
            st = sp_pipeline_run_io(r->p, sp_file_io_get(f), NULL);
        CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(r->p));
    }
    if (st == SP_OK)
        CHECK_EQ(sp_file_io_done(f), r->n);
    if (st == SP_OK)
        CHECK_STATUS(st = sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f));
    sp_file_io_close(f);
    size_t size = 0;
    unsigned char *got = read_path(at("out.bin"), &size);
    int same = got && size == r->n * sizeof(float) && memcmp(got, r->want, size) == 0;
    CHECK_MSG(same, "the resumed output differs from an uninterrupted run's");
    free(got);
    static const char *const keep[] = {"in.bin", "out.bin", NULL};
    stray_files(keep, 0);
    return same;
}

/* ---- tests ------------------------------------------------------------------------------------ */

TEST(the_range_set_merges_and_finds_gaps)
{
    sp_range_set s = {0};
    size_t a, b;
    CHECK(sp_range_set_add(&s, 10, 20) && sp_range_set_add(&s, 30, 40));
    CHECK(sp_range_set_add(&s, 0, 5) && sp_range_set_add(&s, 20, 25));
    CHECK_EQ(s.n, 3);
    CHECK(sp_range_set_first_gap(&s, 50, &a, &b) && a == 5 && b == 10);
    CHECK(sp_range_set_add(&s, 5, 30));
    CHECK_EQ(s.n, 1);
    CHECK(sp_range_set_first_gap(&s, 50, &a, &b) && a == 40 && b == 50);
    CHECK(!sp_range_set_first_gap(&s, 40, &a, &b));
    CHECK(sp_range_set_covers(&s, 0, 40) && !sp_range_set_covers(&s, 0, 41));
    CHECK_EQ(sp_range_set_count(&s), 40);
    sp_range_set_free(&s);
    return TEST_OK;
}

TEST(the_journal_encoding_checks_every_byte)
{
    sp_journal_id id = {.input_size = 1234, .input_mtime_s = 5, .input_mtime_ns = 6,
                        .input_hash = 7, .in_record_bytes = 4, .out_record_bytes = 8,
                        .n_records = 100, .out_bytes = 800, .format = 1, .tag = "sinmix",
                        .tag_len = 6, .temp_name = ".o.partial-abcdef", .name_len = 17};
    unsigned char buf[512], rec[SP_JOURNAL_RECORD_BYTES];
    uint64_t key, key2;
    size_t n = sp_journal_header_encode(&id, buf, sizeof buf, &key);
    sp_journal_id back;
    CHECK(n > 0 && sp_journal_header_decode(buf, n, &back, &key2) == n && key == key2);
    CHECK(back.tag_len == 6 && memcmp(back.tag, "sinmix", 6) == 0 && back.out_bytes == 800);
    for (size_t i = 0; i < n * 8; i++) { /* every bit of the header */
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
        if (sp_journal_header_decode(buf, n, &back, &key2) != 0)
            harness_fail(__FILE__, __LINE__, "header bit %zu flipped still checks", i);
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
    CHECK(sp_journal_header_decode(buf, n - 1, &back, &key2) == 0);
    size_t a, b;
    sp_journal_record_encode(key, 10, 20, rec);
    CHECK(sp_journal_record_decode(key, rec, 100, &a, &b) && a == 10 && b == 20);
    CHECK(!sp_journal_record_decode(key ^ 1, rec, 100, &a, &b)); /* another journal's */
    CHECK(!sp_journal_record_decode(key, rec, 15, &a, &b));       /* past the records */
    for (size_t i = 0; i < sizeof rec * 8; i++) {
        rec[i / 8] ^= (unsigned char)(1u << (i % 8));
        if (sp_journal_record_decode(key, rec, 100, &a, &b))
            harness_fail(__FILE__, __LINE__, "record bit %zu flipped still checks", i);
        rec[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
    return TEST_OK;
}

TEST(a_resumed_run_gives_the_uninterrupted_output)
{
    rig r;
    if (!rig_open(&r, 1, 20000))
        return TEST_FAIL;
    size_t resumed_in_all = 0;
    for (int round = 0; round < 6; round++) {
        harness_context("round %d", round);
        size_t resumed = 0, limit = r.n / 8 + rng_below(&r.rng, r.n * 7 / 8);
        interrupted_run(&r, "sinmix:iters=3", limit);
        static const char *const keep[] = {"in.bin", NULL};
        stray_files(keep, 1);
        resume_to_end(&r, "sinmix:iters=3", &resumed);
        CHECK_MSG(resumed <= limit, "the journal held %zu records of the %zu written", resumed,
                  limit);
        resumed_in_all += resumed;
        unlink(at("out.bin"));
    }
    CHECK_MSG(resumed_in_all > 0, "no resume took anything from its journal");
    harness_context("%s", "");
    rig_close(&r);
    return TEST_OK;
}

/* The power cut at random bytes: what was written since the last flush is lost (0xA5), so a
 * journal that claimed it would show in check_claimed and in the output. */
TEST(power_cuts_at_random_bytes_never_give_a_wrong_output)
{
    rig r;
    if (!rig_open(&r, 2, 20000))
        return TEST_FAIL;
    for (int round = 0; round < 20; round++) {
        sp_file_io_config c = journal_config("sinmix:iters=3");
        c.resume = round % 2; /* a cut during a resumed run too */
        c.test_power_cut = 1;
        c.test_power_cut_at = rng_below(&r.rng, r.n * sizeof(float));
        harness_context("round %d, the cut at byte %llu", round, c.test_power_cut_at);
        sp_file_io *f = NULL;
        CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
        size_t first, n;
        sp_status st = SP_OK;
        while (st == SP_OK && sp_file_io_todo(f, &first, &n)) {
            st = sp_file_io_set_range(f, first, n);
            if (st == SP_OK)
                st = sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL);
        }
        if (st == SP_OK) { /* a resumed run with fewer bytes to write than the cut's */
            CHECK(c.resume && sp_file_io_commit(f) == SP_OK);
            sp_file_io_close(f);
            size_t size;
            unsigned char *got = read_path(at("out.bin"), &size);
            CHECK(got && size == r.n * sizeof(float) && memcmp(got, r.want, size) == 0);
            free(got);
            unlink(at("out.bin"));
            continue;
        }
        CHECK_EQ(st, SP_ERR_STAGE_FAILED);
        CHECK_HAS(sp_file_io_last_error(f), "power was cut");
        CHECK(sp_file_io_sync(f) != SP_OK);
        sp_file_io_close(f);
        if (round % 2 == 1 || round == 19) {
            resume_to_end(&r, "sinmix:iters=3", NULL);
            unlink(at("out.bin"));
        }
    }
    harness_context("%s", "");
    rig_close(&r);
    return TEST_OK;
}

/* The journal cut at a random byte, or one random bit of it flipped: the resume takes what
 * still checks (or starts afresh), and the output is right. */
TEST(a_damaged_journal_falls_back_and_never_gives_a_wrong_output)
{
    rig r;
    if (!rig_open(&r, 3, 20000))
        return TEST_FAIL;
    for (int round = 0; round < 16; round++) {
        interrupted_run(&r, "t", r.n / 4 + rng_below(&r.rng, r.n / 2));
        size_t size;
        unsigned char *j = read_path(at(".out.bin.journal"), &size);
        if (!CHECK(j && size > 0))
            break;
        size_t where = rng_below(&r.rng, size);
        harness_context("round %d: journal of %zu bytes, %s at %zu", round, size,
                        round % 2 ? "a bit flipped" : "cut", where);
        if (round % 2)
            j[where] ^= (unsigned char)(1u << rng_below(&r.rng, 8));
        CHECK(write_file(".out.bin.journal", j, round % 2 ? size : where));
        free(j);
        resume_to_end(&r, "t", NULL);
        unlink(at("out.bin"));
    }
    harness_context("%s", "");
    rig_close(&r);
    return TEST_OK;
}

/* Opening with resume fails with `says`; the journal and the temporary output stay. */
static void expect_refused(const char *tag, size_t out_rec, const char *says)
{
    sp_file_io_config c = journal_config(tag);
    c.resume = 1;
    c.out_record_bytes = out_rec;
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_ERR_INVALID_ARGUMENT, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), says);
    CHECK_HAS(sp_file_io_last_error(f), "without resume");
    sp_file_io_close(f);
    struct stat st;
    CHECK_MSG(stat(at(".out.bin.journal"), &st) == 0, "a refused resume removed the journal");
    static const char *const keep[] = {"in.bin", NULL};
    stray_files(keep, 1);
}

TEST(other_work_is_refused)
{
    rig r;
    if (!rig_open(&r, 4, 5000))
        return TEST_FAIL;
    interrupted_run(&r, "sinmix:iters=3", r.n / 2);
    expect_refused("sinmix:iters=4", sizeof(float), "the stages");
    expect_refused("sinmix:iters=3", 2 * sizeof(float), "the record sizes");
    struct stat st;
    CHECK(stat(at("in.bin"), &st) == 0);
    /* another input of the same size with the old mtime put back */
    float *other = malloc(r.n * sizeof(float));
    CHECK(other);
    for (size_t i = 0; other && i < r.n; i++)
        other[i] = r.in[i] + 1.0f;
    CHECK(write_file("in.bin", other, r.n * sizeof(float)));
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    CHECK(utimensat(AT_FDCWD, at("in.bin"), times, 0) == 0);
    expect_refused("sinmix:iters=3", sizeof(float), "the input's first and last blocks");
    /* the input touched, then grown */
    CHECK(write_file("in.bin", r.in, r.n * sizeof(float)));
    expect_refused("sinmix:iters=3", sizeof(float), "modification time");
    CHECK(utimensat(AT_FDCWD, at("in.bin"), times, 0) == 0);
    CHECK(truncate(at("in.bin"), (off_t)((r.n + 1) * sizeof(float))) == 0);
    expect_refused("sinmix:iters=3", sizeof(float), "the input's size");
    CHECK(truncate(at("in.bin"), (off_t)(r.n * sizeof(float))) == 0);
    CHECK(utimensat(AT_FDCWD, at("in.bin"), times, 0) == 0);
    resume_to_end(&r, "sinmix:iters=3", NULL); /* the same input again: resumed */
    free(other);
    rig_close(&r);
    return TEST_OK;
}

/* A write limit below the output's end (RLIMIT_FSIZE, what a full disk does to a write):
 * the resumed run fails there, and resumes again once the limit is lifted. */
TEST(a_full_disk_during_the_resumed_run_fails_then_resumes)
{
    rig r;
    if (!rig_open(&r, 5, 200000))
        return TEST_FAIL;
    interrupted_run(&r, "t", r.n / 8);
    struct rlimit old, low;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    low = old;
    low.rlim_cur = r.n * sizeof(float) * 3 / 4;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &low) == 0);
    sp_file_io_config c = journal_config("t");
    c.resume = 1;
    sp_file_io *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f));
    size_t first, n;
    sp_status st = SP_OK;
    while (st == SP_OK && sp_file_io_todo(f, &first, &n)) {
        st = sp_file_io_set_range(f, first, n);
        if (st == SP_OK)
            st = sp_pipeline_run_io(r.p, sp_file_io_get(f), NULL);
    }
    CHECK_EQ(st, SP_ERR_STAGE_FAILED);
    CHECK_HAS(sp_file_io_last_error(f), "too large");
    CHECK_EQ(sp_file_io_commit(f), SP_ERR_INVALID_ARGUMENT);
    sp_file_io_close(f);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, was);
    resume_to_end(&r, "t", NULL);
    rig_close(&r);
    return TEST_OK;
}

/* A live handle's temporary output refuses a resume; without a journal, resume starts
 * afresh; a killed run's other leftover is removed while the journal's is kept. */
TEST(live_runs_missing_journals_and_leftovers)
{
    rig r;
    if (!rig_open(&r, 6, 5000))
        return TEST_FAIL;
    sp_file_io_config c = journal_config("t"), cr = journal_config("t");
    cr.resume = 1;
    sp_file_io *live = NULL, *f = NULL;
    CHECK_STATUS(sp_file_io_open(&c, &live), SP_OK, sp_file_io_last_error(live));
    CHECK(sp_file_io_journal_path(live) && strstr(sp_file_io_journal_path(live),
                                                  "/.out.bin.journal"));
    CHECK_STATUS(sp_file_io_open(&cr, &f), SP_ERR_BACKEND, sp_file_io_last_error(f));
    CHECK_HAS(sp_file_io_last_error(f), "a live run");
    sp_file_io_close(f);
    sp_file_io_close(live);
    CHECK(write_file(".out.bin.partial-Zz09aB", "left", 4));
    CHECK_STATUS(sp_file_io_open(&cr, &f), SP_OK, sp_file_io_last_error(f));
    CHECK(sp_file_io_removed(f, 0) && strstr(sp_file_io_removed(f, 0), "Zz09aB"));
    CHECK(sp_file_io_removed(f, 1) == NULL);
    CHECK_EQ(sp_file_io_resumed(f), 0);
    sp_file_io_close(f);
    unlink(at(".out.bin.journal"));
    CHECK_STATUS(sp_file_io_open(&cr, &f), SP_OK, sp_file_io_last_error(f)); /* afresh */
    CHECK_EQ(sp_file_io_removed(f, 0) != NULL, 1); /* the partial the lost journal named */
    sp_file_io_close(f);
    c.output_is_fd = 1;
    CHECK_EQ(sp_file_io_open(&c, &f), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_file_io_last_error(f), "a journal needs");
    sp_file_io_close(f);
    resume_to_end(&r, "t", NULL);
    rig_close(&r);
    return TEST_OK;
}

/* The sync points are the journal's own thread's (journal_flusher.h): records written, then
 * no further call into the handle, are journaled within journal_sync_ms all the same. Before,
 * the writer that found a sync point due took it, so these stayed unjournaled until the next
 * write, and every due sync point held a staging thread in fdatasync. */
TEST(the_journal_syncs_on_its_own_thread)
{
    rig r;
    if (!rig_open(&r, 7, 5000))
        return TEST_FAIL;
    sp_file_io_config c = journal_config("t");
    c.journal_sync_bytes = 0; /* by time alone */
    c.journal_sync_ms = 20;
    size_t k = r.n / 2;
    sp_file_io *f = NULL;
    if (CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f))) {
        struct stat before = {0}, now = {0};
        CHECK(stat(sp_file_io_journal_path(f), &before) == 0);
        CHECK_STATUS(sp_file_io_write(r.want, 0, k, f), SP_OK, sp_file_io_last_error(f));
        now = before;
        for (int ms = 0; ms < 10000 && now.st_size == before.st_size; ms += 5) {
            usleep(5000);
            CHECK(stat(sp_file_io_journal_path(f), &now) == 0);
        }
        CHECK_MSG(now.st_size > before.st_size, "no journal record within 10 s of the write");
    }
    sp_file_io_close(f);
    size_t resumed = 0;
    resume_to_end(&r, "t", &resumed);
    CHECK_EQ(resumed, k);
    rig_close(&r);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(the_range_set_merges_and_finds_gaps),
        TEST_ENTRY(the_journal_encoding_checks_every_byte),
        TEST_ENTRY(a_resumed_run_gives_the_uninterrupted_output),
        TEST_ENTRY(power_cuts_at_random_bytes_never_give_a_wrong_output),
        TEST_ENTRY(a_damaged_journal_falls_back_and_never_gives_a_wrong_output),
        TEST_ENTRY(other_work_is_refused),
        TEST_ENTRY(a_full_disk_during_the_resumed_run_fails_then_resumes),
        TEST_ENTRY(live_runs_missing_journals_and_leftovers),
        TEST_ENTRY(the_journal_syncs_on_its_own_thread),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
