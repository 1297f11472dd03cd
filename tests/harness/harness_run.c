/*
 * The runner: every test of the list in a child process of its own (libuv's runner is the
 * model), so a test that crashes, hangs or calls exit() fails alone and the next one still
 * runs from a clean state. The child is the leader of a new process group, so a timeout kills
 * whatever the test started as well. It writes its verdict to a pipe before it exits: an exit
 * without one (exit(0) deep in a test) is a failure, and an exit status that disagrees with it
 * (a sanitizer's report at exit) too. The runner process itself never touches the library, so
 * no CUDA context exists before a fork.
 *
 * SP_TEST_NOFORK=1 runs the tests in this process instead (for a debugger), bounded by alarm().
 */
#include "harness_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define DEFAULT_TIMEOUT_S 120u

typedef struct tally {
    unsigned long passed, failed, skipped;
} tally;

static volatile tally counts; /* read by the NOFORK alarm handler */
static const char *volatile running_test = "";
static volatile sig_atomic_t running_child; /* the test's process (group), 0 between tests */

static int env_flag(const char *name)
{
    const char *env = getenv(name);
    return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

static unsigned timeout_for(const test_case *t)
{
    const char *env = getenv("SP_TEST_TIMEOUT");
    if (env != NULL && atoi(env) > 0)
        return (unsigned)atoi(env);
    return t->timeout_s != 0 ? t->timeout_s : DEFAULT_TIMEOUT_S;
}

static void count(int verdict)
{
    if (verdict == TEST_OK)
        counts.passed++;
    else if (verdict == TEST_SKIP)
        counts.skipped++;
    else
        counts.failed++;
}

/* ---- in this process (SP_TEST_NOFORK): async-signal-safe report, then _exit ---------------- */

static void put_raw(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void put_count(unsigned long v, const char *suffix)
{
    char digits[24];
    size_t i = sizeof digits - 1;
    digits[i] = '\0';
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && i > 0);
    put_raw(digits + i);
    put_raw(suffix);
}

/* Nothing can stop a test thread from outside, so the whole run ends here. */
static void on_alarm(int sig)
{
    (void)sig;
    put_raw("\n[ FAIL ] TIMEOUT ");
    put_raw(running_test);
    put_raw(" (SP_TEST_NOFORK: the tests after it do not run)\n");
    put_count(counts.passed, " passed, ");
    put_count(counts.failed + 1, " failed, ");
    put_count(counts.skipped, " skipped\n");
    _exit(1);
}

static int run_here(const test_case *t)
{
    running_test = t->name;
    signal(SIGALRM, on_alarm);
    alarm(timeout_for(t));
    int verdict = harness_test_body(t);
    alarm(0);
    return verdict;
}

/* ---- in a child --------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void child_main(const test_case *t, int verdict_fd, pid_t runner)
{
    setpgid(0, 0);
#ifdef __linux__
    /* A runner killed from outside (CTest's timeout) takes its test with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != runner)
        _exit(1);
#else
    (void)runner;
#endif
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    int verdict = harness_test_body(t);
    fflush(stdout);
    fflush(stderr);
    unsigned char byte = (unsigned char)verdict;
    if (write(verdict_fd, &byte, 1) != 1)
        perror("harness: writing the verdict");
    close(verdict_fd);
    exit(verdict); /* not _exit: the sanitizers' exit-time checks (leaks) run for each test */
}

/* ---- in the runner: waiting for a child ----------------------------------------------------- */

typedef struct child_end {
    int timed_out;
    int status;  /* from waitpid */
    int verdict; /* the byte the child wrote, -1 for none */
    double seconds;
} child_end;

/* Waits up to ms for the verdict byte; returns 0 once the pipe is closed (the child is gone,
 * or going), 1 while it may still come. */
static int take_verdict(int fd, int ms, int *verdict)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return 1;
    unsigned char byte;
    ssize_t r = read(fd, &byte, 1);
    if (r == 1) {
        *verdict = byte;
        return 1;
    }
    return r < 0 && (errno == EAGAIN || errno == EINTR);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void kill_group(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL); /* in case it died before its setpgid */
}

/* Reaps the child, killing its group at the deadline; then kills what it left behind. */
static void await_child(pid_t pid, int fd, unsigned timeout_s, child_end *end)
{
    double t0 = harness_now(), deadline = t0 + timeout_s;
    int pipe_open = 1;
    end->timed_out = 0;
    end->verdict = -1;
    for (;;) {
        pid_t r = waitpid(pid, &end->status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        double left = deadline - harness_now();
        if (left <= 0) {
            kill_group(pid);
            while (waitpid(pid, &end->status, 0) < 0 && errno == EINTR)
                continue;
            end->timed_out = 1;
            break;
        }
        int ms = left > 1.0 ? 1000 : (int)(left * 1000.0) + 1;
        if (pipe_open)
            pipe_open = take_verdict(fd, ms, &end->verdict);
        else
            sleep_ms(ms < 2 ? ms : 2); /* the verdict is in; the exit is near */
    }
    if (pipe_open && end->verdict < 0)
        take_verdict(fd, 0, &end->verdict);
    kill(-pid, SIGKILL); /* a process the test started and did not wait for */
    end->seconds = harness_now() - t0;
}

/* ---- in the runner: the verdict ------------------------------------------------------------- */

static const char *signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
        {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
        {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "signal";
}

/* The child printed its own verdict line unless it died first; say what happened then. */
static int judge(const test_case *t, const child_end *e, unsigned timeout_s)
{
    if (e->timed_out) {
        printf("[ FAIL ] TIMEOUT %s after %u s (its process group was killed)\n", t->name,
               timeout_s);
        return TEST_FAIL;
    }
    if (WIFSIGNALED(e->status)) {
        int sig = WTERMSIG(e->status);
        printf("[ FAIL ] %s: killed by %s (%d, %s) after %.2f s\n", t->name, signal_name(sig),
               sig, strsignal(sig), e->seconds);
        return TEST_FAIL;
    }
    int code = WIFEXITED(e->status) ? WEXITSTATUS(e->status) : -1;
    if (e->verdict < 0) {
        printf("[ FAIL ] %s: exited with status %d before its verdict, after %.2f s\n",
               t->name, code, e->seconds);
        return TEST_FAIL;
    }
    if (code != e->verdict) {
        printf("[ FAIL ] %s: exited with status %d after its verdict %d (a sanitizer's report "
               "at exit?)\n",
               t->name, code, e->verdict);
        return TEST_FAIL;
    }
    return e->verdict;
}

/* ---- in the runner: one test ---------------------------------------------------------------- */

static int open_verdict_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return 0;
    /* a program the test runs must not hold the pipe open, and a read must never block */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return 1;
}

static int run_forked(const test_case *t)
{
    unsigned timeout_s = timeout_for(t);
    int fds[2];
    if (!open_verdict_pipe(fds)) {
        printf("[ FAIL ] %s: pipe: %s\n", t->name, strerror(errno));
        return TEST_FAIL;
    }
    fflush(stdout); /* or the child would print the runner's buffered text again */
    fflush(stderr);
    pid_t runner = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_main(t, fds[1], runner);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        printf("[ FAIL ] %s: fork: %s\n", t->name, strerror(errno));
        return TEST_FAIL;
    }
    setpgid(pid, pid); /* as the child does: the group exists whichever runs first */
    running_child = pid;
    child_end end;
    await_child(pid, fds[0], timeout_s, &end);
    running_child = 0;
    close(fds[0]);
    return judge(t, &end, timeout_s);
}

/* Ctrl-C or a kill of the runner must not leave a test running in its own process group. */
static void on_stop(int sig)
{
    pid_t child = (pid_t)running_child;
    if (child > 0)
        kill(-child, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- the list ------------------------------------------------------------------------------- */

static int matches(const test_case *t, const char *filter)
{
    return filter == NULL || strstr(t->name, filter) != NULL;
}

static int list_tests(const test_case *tests, size_t n_tests, const char *filter)
{
    for (size_t i = 0; i < n_tests; i++)
        if (matches(&tests[i], filter))
            printf("%s\n", tests[i].name);
    return 0;
}

int harness_run(const test_case *tests, size_t n_tests, const char *filter)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (env_flag("SP_TEST_LIST"))
        return list_tests(tests, n_tests, filter);
    harness_seed();
    int in_process = env_flag("SP_TEST_NOFORK");
    if (!in_process) {
        signal(SIGINT, on_stop);
        signal(SIGTERM, on_stop);
        signal(SIGHUP, on_stop);
    }
    for (size_t i = 0; i < n_tests; i++) {
        if (!matches(&tests[i], filter))
            continue;
        printf("[ RUN  ] %s\n", tests[i].name);
        count(in_process ? run_here(&tests[i]) : run_forked(&tests[i]));
    }
    if (counts.passed + counts.failed + counts.skipped == 0) {
        printf("no test matches \"%s\"\n", filter != NULL ? filter : "");
        counts.failed = 1;
    }
    printf("%lu passed, %lu failed, %lu skipped\n", counts.passed, counts.failed,
           counts.skipped);
    fflush(stdout);
    if (counts.failed > 0)
        return 1;
    return counts.passed == 0 ? TEST_SKIP : 0;
}
