/* What the runner (harness_run.c), one test's life (harness_test.c) and the checks
 * (harness.c) share; tests include harness.h only. */
#ifndef SP_TEST_HARNESS_INTERNAL_H
#define SP_TEST_HARNESS_INTERNAL_H

#include "harness.h"

/* Seconds on the monotonic clock. */
double harness_now(void);
/* Forgets the failed checks, skip reason and context of the test before. */
void harness_begin_test(void);
/* The reason given by harness_skip_reason, or "skipped". */
const char *harness_skip_text(void);

/* Runs one test in the calling process: setup, the test, teardown, then the live objects
 * counted; prints its verdict line ([  OK  ], [ FAIL ], [ SKIP ]) and returns TEST_OK,
 * TEST_FAIL or TEST_SKIP. */
int harness_test_body(const test_case *t);

#endif /* SP_TEST_HARNESS_INTERNAL_H */
