/* The test runner behind harness.h. */
#include "harness.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 120u
#define MAX_PRINTED_FAILURES 40ul

static atomic_ulong failures;
static const char *volatile running_test = "";
static volatile unsigned long passed_count, failed_count, skipped_count;
static char skip_text[256];
static _Thread_local char context_text[320];

/* ---- timeout: async-signal-safe reporting, then _exit ------------------------------------ */

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

static void on_alarm(int sig)
{
    (void)sig;
    put_raw("\nTIMEOUT: test ");
    put_raw(running_test);
    put_raw(" did not finish in time (hung?)\n");
    put_count(passed_count, " passed, ");
    put_count(failed_count + 1, " failed, ");
    put_count(skipped_count, " skipped\n");
    _exit(1);
}

/* ---- environment ------------------------------------------------------------------------- */

static unsigned timeout_for(const test_case *t)
{
    const char *env = getenv("SP_TEST_TIMEOUT");
    if (env != NULL && atoi(env) > 0)
        return (unsigned)atoi(env);
    return t->timeout_s != 0 ? t->timeout_s : DEFAULT_TIMEOUT_S;
}

uint64_t harness_seed(void)
{
    static uint64_t seed;
    static int chosen;
    if (!chosen) {
        const char *env = getenv("SP_TEST_SEED");
        if (env != NULL && *env != '\0') {
            seed = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^
                   ((uint64_t)getpid() << 32);
        }
        chosen = 1;
        printf("seed %llu (reproduce with SP_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    }
    return seed;
}

int harness_quick(void)
{
    const char *env = getenv("SP_TEST_QUICK");
    return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- failures ---------------------------------------------------------------------------- */

unsigned long harness_failures(void) { return atomic_load(&failures); }

void harness_skip_reason(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(skip_text, sizeof skip_text, fmt, ap);
    va_end(ap);
}

void harness_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context_text, sizeof context_text, fmt, ap);
    va_end(ap);
}

/* One fputs per report so lines from several threads do not interleave. */
static void report_failure(const char *file, int line, const char *what)
{
    unsigned long n = atomic_fetch_add(&failures, 1) + 1;
    char text[1200];
    if (n > MAX_PRINTED_FAILURES && getenv("SP_TEST_VERBOSE") == NULL) {
        if (n == MAX_PRINTED_FAILURES + 1)
            fputs("  (further failures of this test are not shown)\n", stdout);
        return;
    }
    snprintf(text, sizeof text, "  %s:%d: %s%s%s\n", file, line, what,
             context_text[0] != '\0' ? "\n    while: " : "", context_text);
    fputs(text, stdout);
}

int harness_fail(const char *file, int line, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    report_failure(file, line, what);
    return 0;
}

int harness_check_eq(long long a, long long b, const char *sa, const char *sb,
                     const char *file, int line)
{
    if (a == b)
        return 1;
    return harness_fail(file, line, "CHECK_EQ(%s, %s): %lld != %lld", sa, sb, a, b);
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay != '\0'; hay++) {
        size_t i = 0;
        while (i < n && hay[i] != '\0' &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

int harness_check_has(const char *hay, const char *needle, const char *shay, const char *file,
                      int line)
{
    if (hay != NULL && contains_nocase(hay, needle))
        return 1;
    return harness_fail(file, line, "CHECK_HAS(%s, \"%s\"): text is \"%s\"", shay, needle,
                        hay != NULL ? hay : "(null)");
}

/* ---- random numbers ---------------------------------------------------------------------- */

void rng_init(test_rng *rng, uint64_t seed) { rng->state = seed ^ 0x6a09e667f3bcc909ull; }

uint64_t rng_next(test_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t rng_below(test_rng *rng, size_t n) { return (size_t)(rng_next(rng) % n); }

void rng_fill(test_rng *rng, void *buf, size_t bytes)
{
    unsigned char *p = buf;
    while (bytes >= 8) {
        uint64_t v = rng_next(rng);
        memcpy(p, &v, 8);
        p += 8;
        bytes -= 8;
    }
    if (bytes > 0) {
        uint64_t v = rng_next(rng);
        memcpy(p, &v, bytes);
    }
}

/* ---- the runner -------------------------------------------------------------------------- */

static int run_one(const test_case *t)
{
    atomic_store(&failures, 0);
    skip_text[0] = '\0';
    context_text[0] = '\0';
    running_test = t->name;
    printf("[ RUN  ] %s\n", t->name);
    double t0 = now_s();
    alarm(timeout_for(t));
    int rc = t->fn();
    alarm(0);
    double dt = now_s() - t0;
    unsigned long fails = atomic_load(&failures);
    if (rc == TEST_SKIP && fails == 0) {
        printf("[ SKIP ] %s: %s\n", t->name, skip_text[0] != '\0' ? skip_text : "skipped");
        return TEST_SKIP;
    }
    if (rc == TEST_OK && fails == 0) {
        printf("[  OK  ] %s (%.2f s)\n", t->name, dt);
        return TEST_OK;
    }
    printf("[ FAIL ] %s (%lu failed checks, %.2f s)\n", t->name, fails, dt);
    return TEST_FAIL;
}

int harness_run(const test_case *tests, size_t n_tests, const char *filter)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    harness_seed();
    for (size_t i = 0; i < n_tests; i++) {
        if (filter != NULL && strstr(tests[i].name, filter) == NULL)
            continue;
        int rc = run_one(&tests[i]);
        if (rc == TEST_OK)
            passed_count++;
        else if (rc == TEST_SKIP)
            skipped_count++;
        else
            failed_count++;
    }
    if (passed_count + failed_count + skipped_count == 0) {
        printf("no test matches \"%s\"\n", filter != NULL ? filter : "");
        failed_count = 1;
    }
    printf("%lu passed, %lu failed, %lu skipped\n", passed_count, failed_count, skipped_count);
    fflush(stdout);
    if (failed_count > 0)
        return 1;
    return passed_count == 0 ? TEST_SKIP : 0;
}
