/* `streampipe run` end to end on HOST: a file 200 times larger than --max-pinned streamed
 * through sinmix, every output element compared with the C reference and the peak RSS
 * bounded; and every bad input (missing, unreadable, not whole records, a FIFO, the output
 * being the input, a disk without room) failing with its exit code and leaving no output,
 * nor any temporary file, behind; stage lists without a stage or with too many refused
 * (also straight at the parser, run_stages.c, built in). Usage: test_cli_run
 * PATH_TO_STREAMPIPE [filter] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "harness.h"
#include "run_cmd.h"
#include "streampipe_ops.h"

static const char *cli;
static char dir[256];

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* Runs `streampipe run ARGS REDIRECT` through the shell; its exit code (128 + N for a
 * signal N), what it prints in `out`: stdout, or what REDIRECT sends there. */
static int run_cli_redirected(const char *args, const char *redirect, char *out,
                              size_t out_size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' run --backend host %s %s", dir, cli, args,
             redirect);
    FILE *pipe = popen(cmd, "r");
    if (!pipe)
        return -1;
    size_t got = fread(out, 1, out_size - 1, pipe);
    out[got] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_cli(const char *args, char *out, size_t out_size)
{
    return run_cli_redirected(args, "2>/dev/null", out, out_size);
}

/* Its stderr in `err` instead. */
static int run_cli_err(const char *args, char *err, size_t err_size)
{
    return run_cli_redirected(args, "2>&1 >/dev/null", err, err_size);
}

static int write_file(const char *name, const void *bytes, size_t size)
{
    char path[512];
    path_in_dir(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(bytes, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

static float *random_floats(test_rng *rng, size_t n)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++)
        x[i] = (float)((double)(rng_next(rng) >> 40) / (double)(1ull << 24) * 8.0 - 4.0);
    return x;
}

/* Files in the folder other than the ones named: a temporary output left behind shows. */
static int stray_files(const char *keep1, const char *keep2)
{
    char cmd[512], line[256];
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    FILE *pipe = popen(cmd, "r");
    int stray = 0;
    while (pipe && fgets(line, sizeof line, pipe)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, keep1) != 0 && (!keep2 || strcmp(line, keep2) != 0)) {
            harness_fail(__FILE__, __LINE__, "left behind: %s", line);
            stray++;
        }
    }
    if (pipe)
        pclose(pipe);
    return stray;
}

static void remove_file(const char *name)
{
    char path[512];
    path_in_dir(path, sizeof path, name);
    unlink(path);
}

/* The peak RSS of `streampipe run` over n fresh records with --max-pinned 256k, its output
 * checked against the reference element by element; -1 when something failed. */
static double run_and_check(test_rng *rng, size_t n)
{
    float *x = random_floats(rng, n), *want = malloc(n * sizeof *want);
    float *got = malloc(n * sizeof *got + 4);
    double mib = -1.0;
    if (!CHECK(x && want && got && write_file("in.f32", x, n * sizeof *x)))
        goto out;
    sp_sinmix_reference(x, want, n, 2);
    char json[8192];
    if (!CHECK_EQ(run_cli("--input in.f32 --output out.f32 --stages sinmix:iters=2 "
                          "--max-pinned 256k --json", json, sizeof json), 0))
        goto out;
    const char *rss = strstr(json, "\"peak_rss_mib\":");
    const char *pinned = strstr(json, "\"pinned_bytes\":");
    if (!CHECK_MSG(rss && pinned, "no peak_rss_mib or pinned_bytes in: %.300s", json))
        goto out;
    double held = atof(pinned + strlen("\"pinned_bytes\":"));
    CHECK_MSG(held <= 256.0 * 1024, "pinned %.0f bytes > --max-pinned", held);
    char path[512];
    path_in_dir(path, sizeof path, "out.f32");
    FILE *f = fopen(path, "rb");
    size_t read = f ? fread(got, sizeof *got, n + 1, f) : 0;
    if (f)
        fclose(f);
    CHECK_EQ(read, n);
    size_t bad = 0;
    for (size_t i = 0; i < read && i < n; i++)
        bad += memcmp(&got[i], &want[i], sizeof *got) != 0;
    CHECK_MSG(bad == 0, "%zu of %zu records differ from the reference", bad, n);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0444) == 0444); /* not mkstemp's 0600 */
    stray_files("in.f32", "out.f32");
    mib = atof(rss + strlen("\"peak_rss_mib\":"));
out:
    remove_file("in.f32");
    remove_file("out.f32");
    free(x);
    free(want);
    free(got);
    return mib;
}

/* A file 200 times the pinned memory (50 MiB): the process grows by less than half the file
 * over the same run of a tiny file, whose baseline holds the code and, in a CUDA build, its
 * libraries (157 MiB on the H200). Growth seen: under 8 MiB plain and under ASan; reading the
 * file into memory would grow by all of it. */
TEST(file_200x_the_pinned_memory)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    const size_t n = 200 * 256 * 1024 / sizeof(float) + 17;
    double small = run_and_check(&rng, 1000);
    double large = run_and_check(&rng, n);
    double file_mib = (double)(n * sizeof(float)) / (1 << 20);
    CHECK(small >= 0 && large >= 0);
#if defined(__SANITIZE_THREAD__)
    /* TSan's own records grow with the synchronisations a run makes (0.5 MiB per MiB of
     * file here), so the bound holds only in the other builds, which check it */
    printf("  peak RSS %.1f MiB for a %.0f MiB file against %.1f MiB for a tiny one (TSan: "
           "not bounded)\n", large, file_mib, small);
#else
    CHECK_MSG(large - small < file_mib / 2,
              "peak RSS %.1f MiB for a %.0f MiB file against %.1f MiB for a tiny one", large,
              file_mib, small);
#endif
    return TEST_OK;
}

/* A failed run leaves an existing output as it was and nothing else behind. */
static void expect_failure(const char *args, int want_rc, const char *extra_keep)
{
    char out[4096];
    harness_context("streampipe run %s", args);
    CHECK_EQ(run_cli(args, out, sizeof out), want_rc);
    char path[512];
    path_in_dir(path, sizeof path, "out.f32");
    FILE *f = fopen(path, "rb");
    char old[8] = "";
    size_t got = f ? fread(old, 1, sizeof old - 1, f) : 0;
    if (f)
        fclose(f);
    CHECK_MSG(got == 3 && memcmp(old, "OLD", 3) == 0, "the old output was changed");
    stray_files("out.f32", extra_keep);
    harness_context("%s", "");
}

TEST(bad_inputs_fail_and_leave_nothing)
{
    CHECK(write_file("out.f32", "OLD", 3));
    expect_failure("--input missing.f32 --output out.f32 --stages sinmix", 1, NULL);
    CHECK(write_file("odd.f32", "1234567", 7));
    expect_failure("--input odd.f32 --output out.f32 --stages sinmix", 1, "odd.f32");
    remove_file("odd.f32");
    char fifo[512];
    path_in_dir(fifo, sizeof fifo, "fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    expect_failure("--input fifo --output out.f32 --stages sinmix", 1, "fifo");
    unlink(fifo);
    CHECK(write_file("in.f32", "12345678", 8));
    expect_failure("--input in.f32 --output in.f32 --stages sinmix", 64, "in.f32");
    expect_failure("--input in.f32 --output out.f32 --stages nosuch", 64, "in.f32");
    expect_failure("--input in.f32 --output out.f32 --stages sinmix --max-pinned 100", 64,
                   "in.f32");
    expect_failure("--input in.f32 --output out.f32", 64, "in.f32");
    expect_failure("--input in.f32 --output /nonexistent-dir/out.f32 --stages sinmix", 1,
                   "in.f32");
    remove_file("in.f32");
    remove_file("out.f32");
    return TEST_OK;
}

/* A disk without room for the output: here a file size limit (RLIMIT_FSIZE) below it. */
TEST(no_room_for_the_output)
{
    test_rng rng;
    rng_init(&rng, harness_seed() ^ 3);
    size_t n = 1 << 20;
    float *x = random_floats(&rng, n);
    CHECK(x && write_file("in.f32", x, n * sizeof *x));
    CHECK(write_file("out.f32", "OLD", 3));
    char args[512];
    snprintf(args, sizeof args, "--input in.f32 --output out.f32 --stages sinmix");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && (ulimit -f 1024; trap '' XFSZ; '%s' run "
             "--backend host %s) >/dev/null 2>&1", dir, cli, args);
    int status = system(cmd);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit %d, want 1",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    expect_failure("--input in.f32 --output out.f32 --stages sinmix:iters=x", 64, "in.f32");
    remove_file("in.f32");
    remove_file("out.f32");
    free(x);
    return TEST_OK;
}

TEST(an_empty_file_gives_an_empty_output)
{
    CHECK(write_file("empty.f32", "", 0));
    char out[4096];
    CHECK_EQ(run_cli("--input empty.f32 --output out.f32 --stages sinmix", out, sizeof out), 0);
    char path[512];
    path_in_dir(path, sizeof path, "out.f32");
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 0);
    stray_files("empty.f32", "out.f32");
    remove_file("empty.f32");
    remove_file("out.f32");
    return TEST_OK;
}

/* ---- Hardening, round 2 ------------------------------------------------------------------ */

/* A list naming no stage (",", ",,,") or with an empty entry is a usage error before any
 * file is opened; "," used to leave the input record size 0 and divide by it (SIGFPE). */
TEST(stage_lists_without_a_stage_are_usage_errors)
{
    static const char *lists[] = {",", ",,,", "sinmix,", ",sinmix", "sinmix,,sinmix"};
    char args[256], err[4096];
    CHECK(write_file("out.f32", "OLD", 3));
    CHECK(write_file("in.f32", "12345678", 8));
    for (size_t i = 0; i < ARRAY_LEN(lists); i++) {
        snprintf(args, sizeof args, "--input in.f32 --output out.f32 --stages '%s'", lists[i]);
        CHECK_MSG(run_cli_err(args, err, sizeof err) == 64 && strstr(err, "empty entry"),
                  "--stages '%s': %s", lists[i], err);
        expect_failure(args, 64, "in.f32");
        snprintf(args, sizeof args, "--input no-such.f32 --output out.f32 --stages '%s'",
                 lists[i]);
        expect_failure(args, 64, "in.f32"); /* 64, not 1: the input was not opened */
    }
    remove_file("in.f32");
    remove_file("out.f32");
    return TEST_OK;
}

/* "sinmix:iters=101,sinmix:iters=102,..." with `count` stages. */
static void sinmix_list(char *list, size_t size, int count)
{
    list[0] = '\0';
    for (int i = 0; i < count; i++) {
        size_t used = strlen(list);
        snprintf(list + used, size - used, "%ssinmix:iters=%d", i ? "," : "", 101 + i);
    }
}

/* 17 stages are refused, naming the limit, and 16 run; under UBSan the 17th was an index 16
 * out of bounds (a runtime error) before the check. */
TEST(too_many_stages_is_a_usage_error)
{
    char list[1024], args[1536], err[4096];
    CHECK(write_file("out.f32", "OLD", 3));
    CHECK(write_file("in.f32", "12345678", 8));
    sinmix_list(list, sizeof list, SP_MAX_STAGES + 1);
    snprintf(args, sizeof args, "--input in.f32 --output out.f32 --stages %s", list);
    CHECK_EQ(run_cli_err(args, err, sizeof err), 64);
    CHECK_HAS(err, "more than 16 stages");
    CHECK_MSG(!strstr(err, "runtime error"), "%s", err);
    expect_failure(args, 64, "in.f32");
    sinmix_list(list, sizeof list, SP_MAX_STAGES);
    snprintf(args, sizeof args, "--input in.f32 --output sixteen.f32 --stages %s", list);
    CHECK_EQ(run_cli_err(args, err, sizeof err), 0);
    remove_file("sixteen.f32");
    remove_file("in.f32");
    remove_file("out.f32");
    return TEST_OK;
}

/* The parser itself (run_stages.c, built into this test): nothing is written past the
 * 16-entry arrays. Past `stages` lie `n` and `sinmix`, past `sinmix` `mlp_path`: a write out
 * of bounds shows in them without a sanitizer. */
TEST(the_stage_parser_checks_bounds_before_writing)
{
    char list[1024];
    run_stage_list parsed;
    sinmix_list(list, sizeof list, SP_MAX_STAGES + 1);
    CHECK_EQ(run_parse_stages(list, &parsed), CLI_EXIT_USAGE);
    CHECK_EQ(parsed.n, SP_MAX_STAGES);
    CHECK(parsed.mlp_path == NULL);
    for (int i = 0; i < SP_MAX_STAGES; i++)
        CHECK_EQ(parsed.sinmix[i].iters, 101 + i);
    sinmix_list(list, sizeof list, SP_MAX_STAGES);
    CHECK_EQ(run_parse_stages(list, &parsed), CLI_EXIT_OK);
    CHECK_EQ(parsed.n, SP_MAX_STAGES);
    CHECK_EQ(parsed.in_record_bytes, sizeof(float));
    static const char *empty[] = {",", ",,,", "sinmix,", "sinmix,,sinmix", ""};
    for (size_t i = 0; i < ARRAY_LEN(empty); i++)
        CHECK_MSG(run_parse_stages(empty[i], &parsed) == CLI_EXIT_USAGE,
                  "'%s' was taken", empty[i]);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cli_run PATH_TO_STREAMPIPE [filter]\n");
        return 2;
    }
    static char cli_path[4096], cwd[2048]; /* the commands run in a scratch folder */
    if (argv[1][0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(cli_path, sizeof cli_path, "%s/%s", cwd, argv[1]);
    else
        snprintf(cli_path, sizeof cli_path, "%s", argv[1]);
    cli = cli_path;
    snprintf(dir, sizeof dir, "/tmp/sp-cli-run-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    static const test_case tests[] = {
        TEST_ENTRY(file_200x_the_pinned_memory),
        TEST_ENTRY(bad_inputs_fail_and_leave_nothing),
        TEST_ENTRY(no_room_for_the_output),
        TEST_ENTRY(an_empty_file_gives_an_empty_output),
        TEST_ENTRY(stage_lists_without_a_stage_are_usage_errors),
        TEST_ENTRY(too_many_stages_is_a_usage_error),
        TEST_ENTRY(the_stage_parser_checks_bounds_before_writing),
    };
    int rc = harness_run(tests, ARRAY_LEN(tests), argc > 2 ? argv[2] : NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
