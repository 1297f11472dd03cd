/* What a test calls (checks, skips, seeds, random numbers); the runner is harness_run.c and
 * one test's life harness_test.c. */
#include "harness_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PRINTED_FAILURES 40ul

static atomic_ulong failures;
static char skip_text[256];
static _Thread_local char context_text[320];

/* ---- environment ------------------------------------------------------------------------- */

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

double harness_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- failures ---------------------------------------------------------------------------- */

unsigned long harness_failures(void) { return atomic_load(&failures); }

void harness_begin_test(void)
{
    atomic_store(&failures, 0);
    skip_text[0] = '\0';
    context_text[0] = '\0';
}

const char *harness_skip_text(void) { return skip_text[0] != '\0' ? skip_text : "skipped"; }

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
