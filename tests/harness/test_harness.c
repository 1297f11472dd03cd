/*
 * test_harness: the runner's own test. `test_harness --victims [filter]` is a table of tests
 * that pass, fail a check, crash, abort, hang (leaving a process of their own behind), leak a
 * context, exit without a verdict and skip; the tests here run it and check what the runner
 * made of each: the verdict line, that the tests after a crash or hang still ran, the summary
 * line and exit status, that a hung test's processes are all killed, and the in-process mode.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "streampipe.h"

static const char *self_path; /* this binary, run again with --victims */
static pid_t runner_pid;      /* the process harness_run was called in */

/* ---- the victims ---------------------------------------------------------------------------- */

TEST(passes_first) { return TEST_OK; }

TEST(fails_a_check)
{
    int two = 2;
    CHECK(two == 3);
    return TEST_OK;
}

/* The null pointer is read from a volatile so that the compiler cannot see it and put a trap
 * there instead; the sanitizers are kept out so that the signal is what ends the process. */
#if defined(__GNUC__)
__attribute__((no_sanitize("address", "undefined")))
#endif
static void write_through_null(void)
{
    static int *volatile null_pointer = NULL;
    int *p = null_pointer;
    *p = 1;
}

TEST(crashes)
{
    write_through_null();
    return TEST_OK;
}

TEST(aborts)
{
    abort();
}

TEST(passes_after_the_crash) { return TEST_OK; }

/* With SP_SELFTEST_HOLD_FD set, a process of the test's own writes its pid to that pipe and
 * holds it open for as long as it lives, so the driver can tell it was killed with the test
 * (and kill it if not). It lets go of stdout, which the driver reads to its end. */
TEST(hangs)
{
    const char *hold = getenv("SP_SELFTEST_HOLD_FD");
    if (hold != NULL && fork() == 0) {
        pid_t me = getpid();
        if (write(atoi(hold), &me, sizeof me) != (ssize_t)sizeof me)
            _exit(1);
        close(STDOUT_FILENO);
        close(STDERR_FILENO);
        for (;;)
            pause();
    }
    for (;;)
        pause();
}

TEST(leaks_a_context)
{
    static sp_context *kept; /* still reachable: only the runner's count may complain */
    CHECK(sp_context_create(SP_BACKEND_HOST, 0, &kept) == SP_OK);
    return TEST_OK;
}

TEST(exits_early) { exit(0); }

TEST(skips)
{
    harness_skip_reason("asked to");
    return TEST_SKIP;
}

TEST(reports_its_process)
{
    printf("same process: %s\n", getpid() == runner_pid ? "yes" : "no");
    return TEST_OK;
}

TEST(passes_last) { return TEST_OK; }

static const test_case victims[] = {
    TEST_ENTRY(passes_first),
    TEST_ENTRY(fails_a_check),
    TEST_ENTRY(crashes),
    TEST_ENTRY(aborts),
    TEST_ENTRY(passes_after_the_crash),
    TEST_ENTRY_T(hangs, 1),
    TEST_ENTRY(leaks_a_context),
    TEST_ENTRY(exits_early),
    TEST_ENTRY(skips),
    TEST_ENTRY(reports_its_process),
    TEST_ENTRY(passes_last),
};

/* ---- running them ---------------------------------------------------------------------------- */

typedef struct victim_run {
    char output[64 * 1024];
    int status; /* exit status, -1 when it did not exit */
} victim_run;

/* The victims' environment: the runner's own settings come from the command line only, and
 * the sanitizers, which would catch the crash themselves and exit, let the signal through. */
static void victim_environment(void)
{
    unsetenv("SP_TEST_TIMEOUT");
    unsetenv("SP_TEST_NOFORK");
    unsetenv("SP_TEST_LIST");
    const char *names[] = {"ASAN_OPTIONS", "TSAN_OPTIONS"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        const char *old = getenv(names[i]);
        char value[1024];
        snprintf(value, sizeof value, "%s%shandle_segv=0", old ? old : "", old && *old ? ":" : "");
        setenv(names[i], value, 1);
    }
}

/* Runs `self --victims filter` under `env` (a shell prefix, "" for none); 1 when it ran. */
static int run_victims(const char *env, const char *filter, victim_run *run)
{
    char command[4096];
    snprintf(command, sizeof command, "%s '%s' --victims %s 2>&1", env, self_path, filter);
    victim_environment();
    FILE *out = popen(command, "r");
    if (!CHECK_MSG(out != NULL, "popen(%s): %s", command, strerror(errno)))
        return 0;
    size_t used = fread(run->output, 1, sizeof run->output - 1, out);
    run->output[used] = '\0';
    int status = pclose(out);
    run->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("---- %s\n%s----\n", command, run->output);
    return 1;
}

#define CHECK_OUTPUT(run, text) CHECK_MSG(strstr((run)->output, (text)) != NULL, \
                                          "the output lacks \"%s\"", (text))

/* 1 when the last line is `summary`. */
static int ends_with_line(const char *output, const char *summary)
{
    size_t n = strlen(output), m = strlen(summary);
    return n > m && output[n - 1] == '\n' && strncmp(output + n - 1 - m, summary, m) == 0 &&
           (n == m + 1 || output[n - m - 2] == '\n');
}

/* ---- the runner's tests --------------------------------------------------------------------- */

static const char *const expected_lines[] = {
    "[  OK  ] passes_first",
    "[ FAIL ] fails_a_check (1 failed checks",
    "[ FAIL ] crashes: killed by SIGSEGV",
    "[ FAIL ] aborts: killed by SIGABRT",
    "[  OK  ] passes_after_the_crash",
    "[ FAIL ] TIMEOUT hangs after 1 s (its process group was killed)",
    "[ FAIL ] leaks_a_context: leaked 1 object (context +1",
    "[ FAIL ] exits_early: exited with status 0 before its verdict",
    "[ SKIP ] skips: asked to",
    "same process: no",
    "[  OK  ] passes_last",
};

/* Every victim reported as what it did, in table order, and the tests after each failure run. */
TEST(each_victim_is_reported_and_the_rest_run)
{
    int hold[2];
    if (!CHECK(pipe(hold) == 0))
        return TEST_FAIL;
    char env[64];
    snprintf(env, sizeof env, "SP_SELFTEST_HOLD_FD=%d", hold[1]);
    static victim_run run;
    if (!run_victims(env, "", &run))
        return TEST_FAIL;
    close(hold[1]);
    CHECK_EQ(run.status, 1);
    const char *at = run.output;
    for (size_t i = 0; i < ARRAY_LEN(expected_lines); i++) {
        const char *found = strstr(at, expected_lines[i]);
        if (!CHECK_MSG(found != NULL, "\"%s\" missing, or out of order", expected_lines[i]))
            continue;
        at = found;
    }
    CHECK_MSG(ends_with_line(run.output, "4 passed, 6 failed, 1 skipped"),
              "the last line is not the summary");
    /* the hung test's own process held the pipe: it is gone once the pipe reads EOF */
    pid_t left = 0;
    CHECK(read(hold[0], &left, sizeof left) == (ssize_t)sizeof left);
    struct pollfd p = {.fd = hold[0], .events = POLLIN};
    char byte;
    if (!CHECK_MSG(poll(&p, 1, 5000) == 1 && read(hold[0], &byte, 1) == 0,
                   "process %ld, started by the hung test, is still alive", (long)left) &&
        left > 0)
        kill(left, SIGKILL);
    close(hold[0]);
    return TEST_OK;
}

TEST(all_skipped_exits_77)
{
    static victim_run run;
    if (!run_victims("", "skips", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 77);
    CHECK(ends_with_line(run.output, "0 passed, 0 failed, 1 skipped"));
    return TEST_OK;
}

TEST(no_test_matching_fails)
{
    static victim_run run;
    if (!run_victims("", "no_such_test", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 1);
    CHECK_OUTPUT(&run, "no test matches \"no_such_test\"");
    CHECK(ends_with_line(run.output, "0 passed, 1 failed, 0 skipped"));
    return TEST_OK;
}

TEST(the_timeout_can_be_set_from_outside)
{
    static victim_run run;
    if (!run_victims("SP_TEST_TIMEOUT=2", "hangs", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 1);
    CHECK_OUTPUT(&run, "[ FAIL ] TIMEOUT hangs after 2 s");
    CHECK(ends_with_line(run.output, "0 passed, 1 failed, 0 skipped"));
    return TEST_OK;
}

TEST(nofork_runs_in_the_runners_process)
{
    static victim_run run;
    if (!run_victims("SP_TEST_NOFORK=1", "reports_its_process", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 0);
    CHECK_OUTPUT(&run, "same process: yes");
    CHECK(ends_with_line(run.output, "1 passed, 0 failed, 0 skipped"));
    return TEST_OK;
}

/* In one process a hang ends the run: it says so, and which test. */
TEST(nofork_timeout_ends_the_run)
{
    static victim_run run;
    if (!run_victims("SP_TEST_NOFORK=1", "hangs", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 1);
    CHECK_OUTPUT(&run, "[ FAIL ] TIMEOUT hangs (SP_TEST_NOFORK");
    CHECK(ends_with_line(run.output, "0 passed, 1 failed, 0 skipped"));
    return TEST_OK;
}

TEST(list_names_every_test)
{
    static victim_run run;
    if (!run_victims("SP_TEST_LIST=1", "", &run))
        return TEST_FAIL;
    CHECK_EQ(run.status, 0);
    for (size_t i = 0; i < ARRAY_LEN(victims); i++)
        CHECK_OUTPUT(&run, victims[i].name);
    CHECK(strstr(run.output, "[ RUN") == NULL);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    runner_pid = getpid();
    if (argc > 1 && strcmp(argv[1], "--victims") == 0)
        return harness_run(victims, ARRAY_LEN(victims), argc > 2 && *argv[2] ? argv[2] : NULL);
    static char path[4096];
    if (argv[0][0] != '/' && getcwd(path, sizeof path - 1024) != NULL)
        snprintf(path + strlen(path), 1024, "/%s", argv[0]);
    else
        snprintf(path, sizeof path, "%s", argv[0]);
    self_path = path;
    static const test_case tests[] = {
        TEST_ENTRY(each_victim_is_reported_and_the_rest_run),
        TEST_ENTRY(all_skipped_exits_77),
        TEST_ENTRY(no_test_matching_fails),
        TEST_ENTRY(the_timeout_can_be_set_from_outside),
        TEST_ENTRY(nofork_runs_in_the_runners_process),
        TEST_ENTRY(nofork_timeout_ends_the_run),
        TEST_ENTRY(list_names_every_test),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
