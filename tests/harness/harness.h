/*
 * A tiny test runner in the manner of libuv's: a table of tests, each run in a child process
 * of its own with a wall timeout, so that a crash or a hang fails that test alone and the
 * next ones still run; the library's live handles counted after every test (a leak fails
 * it); CHECK macros that report file:line and the values and let the test go on; explicit
 * skips; fresh random data from a printed seed. The last line a binary prints is always
 * "N passed, N failed, N skipped". tests/README.md describes the output.
 *
 * Environment: SP_TEST_SEED (reproduce), SP_TEST_QUICK (shorter lists), SP_TEST_TIMEOUT
 * (seconds per test), SP_TEST_VERBOSE (print every failed check, not the first 40),
 * SP_TEST_NOFORK=1 (run the tests in this process, one after another, for a debugger),
 * SP_TEST_LIST=1 (print the tests' names and run none).
 *
 * A test returns TEST_OK, TEST_FAIL or TEST_SKIP; a test that returns TEST_OK after a failed
 * CHECK counts as failed. CHECKs may be used from any thread.
 *
 * Nothing may open a context (or otherwise start CUDA) before harness_run: a CUDA context does
 * not survive fork. Work every test needs goes in the setup function (harness_set_setup),
 * which runs in each test's process.
 */
#ifndef SP_TEST_HARNESS_H
#define SP_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

enum { TEST_OK = 0, TEST_FAIL = 1, TEST_SKIP = 77 };

typedef int (*test_fn)(void);

typedef struct test_case {
    const char *name;
    test_fn fn;
    unsigned timeout_s; /* 0: the default (120 s, or SP_TEST_TIMEOUT) */
} test_case;

#define TEST(name) static int name(void)
#define TEST_ENTRY(fn) { #fn, fn, 0 }
#define TEST_ENTRY_T(fn, seconds) { #fn, fn, seconds }
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Runs every test whose name contains `filter` (NULL: all), each in a process of its own;
 * prints the summary line. Returns the process exit status: 1 if any failed (crashed, timed
 * out, leaked), 77 if all were skipped, else 0. */
int harness_run(const test_case *tests, size_t n_tests, const char *filter);

/* Work done in each test's process around every test of the binary: `setup` runs first and
 * returns TEST_OK to run the test, or TEST_SKIP (with harness_skip_reason: the backend is
 * absent, the build lacks a dependency) or TEST_FAIL (after a failed CHECK) to give that
 * verdict without running it; `teardown` (may be NULL) runs after the test, or after a setup
 * that did not return TEST_OK, before the live objects are counted. Call before harness_run. */
void harness_set_setup(test_fn setup, void (*teardown)(void));

/* Seed for this process: SP_TEST_SEED when set, else from the clock. Printed once. */
uint64_t harness_seed(void);
/* 1 when SP_TEST_QUICK is set to a non-zero value: sanitizer runs use smaller scenario lists. */
int harness_quick(void);
/* Why the running test returns TEST_SKIP (printed beside it). */
void harness_skip_reason(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A line that describes what the calling thread is doing ("n=97 depth=3 ..."); printed with
 * every failed CHECK from that thread. "" clears it. */
void harness_context(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Failed CHECKs so far in the running test (all threads). */
unsigned long harness_failures(void);

/* Record a failure; the CHECK macros call these. Each returns 1 when the check passed. */
int harness_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int harness_check_eq(long long a, long long b, const char *sa, const char *sb,
                     const char *file, int line);
int harness_check_has(const char *hay, const char *needle, const char *shay,
                      const char *file, int line);

#define CHECK(cond) ((cond) ? 1 : harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond))
#define CHECK_MSG(cond, ...) ((cond) ? 1 : harness_fail(__FILE__, __LINE__, __VA_ARGS__))
#define CHECK_EQ(a, b) \
    harness_check_eq((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)
/* Case-insensitive: `hay` contains `needle`. */
#define CHECK_HAS(hay, needle) harness_check_has((hay), (needle), #hay, __FILE__, __LINE__)

/* Small, fast, reproducible random numbers (splitmix64); one state per thread of use. */
typedef struct test_rng {
    uint64_t state;
} test_rng;

void rng_init(test_rng *rng, uint64_t seed);
uint64_t rng_next(test_rng *rng);
/* Uniform in [0, n); n > 0. */
size_t rng_below(test_rng *rng, size_t n);
void rng_fill(test_rng *rng, void *buf, size_t bytes);

#endif /* SP_TEST_HARNESS_H */
