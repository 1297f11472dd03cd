/* One test's life in the process that runs it (its own child, or the runner's process under
 * SP_TEST_NOFORK): setup, the test, teardown, the library's live objects counted, and the
 * verdict line. The count is compared with the one taken before the setup, so objects made
 * before the test (there should be none) are not blamed on it. */
#include "harness_internal.h"

#include <stdio.h>

#include "core_door.h"

static test_fn suite_setup;
static void (*suite_teardown)(void);

void harness_set_setup(test_fn setup, void (*teardown)(void))
{
    suite_setup = setup;
    suite_teardown = teardown;
}

typedef struct live_counts {
    long of[SP_LIVE_KINDS];
} live_counts;

static void count_live(live_counts *c)
{
    for (int k = 0; k < SP_LIVE_KINDS; k++)
        c->of[k] = sp_live_objects_of((sp_live_kind)k);
}

/* Writes what changed ("context +1, pipeline +2") to text; returns the net change. */
static long live_change(const live_counts *before, const live_counts *after, char *text,
                        size_t size)
{
    long total = 0;
    size_t used = 0;
    text[0] = '\0';
    for (int k = 0; k < SP_LIVE_KINDS && used < size; k++) {
        long d = after->of[k] - before->of[k];
        if (d == 0)
            continue;
        int n = snprintf(text + used, size - used, "%s%s %+ld", used > 0 ? ", " : "",
                         sp_live_kind_name((sp_live_kind)k), d);
        used += n > 0 ? (size_t)n : 0;
        total += d;
    }
    return total;
}

/* A kind whose count went down while another went up nets to 0 but is still wrong. */
static int any_change(const live_counts *before, const live_counts *after)
{
    for (int k = 0; k < SP_LIVE_KINDS; k++)
        if (after->of[k] != before->of[k])
            return 1;
    return 0;
}

static int run_setup_test_teardown(const test_case *t)
{
    int rc = suite_setup != NULL ? suite_setup() : TEST_OK;
    if (rc == TEST_OK)
        rc = t->fn();
    if (suite_teardown != NULL)
        suite_teardown();
    return rc;
}

int harness_test_body(const test_case *t)
{
    harness_begin_test();
    live_counts before, after;
    count_live(&before);
    double t0 = harness_now();
    int rc = run_setup_test_teardown(t);
    double dt = harness_now() - t0;
    count_live(&after);
    unsigned long fails = harness_failures();
    if (any_change(&before, &after)) {
        char what[256];
        long net = live_change(&before, &after, what, sizeof what);
        if (net > 0)
            printf("[ FAIL ] %s: leaked %ld object%s (%s; %lu failed checks, %.2f s)\n",
                   t->name, net, net == 1 ? "" : "s", what, fails, dt);
        else
            printf("[ FAIL ] %s: live objects changed by %s (%lu failed checks, %.2f s)\n",
                   t->name, what, fails, dt);
        return TEST_FAIL;
    }
    if (rc == TEST_SKIP && fails == 0) {
        printf("[ SKIP ] %s: %s\n", t->name, harness_skip_text());
        return TEST_SKIP;
    }
    if (rc == TEST_OK && fails == 0) {
        printf("[  OK  ] %s (%.2f s)\n", t->name, dt);
        return TEST_OK;
    }
    printf("[ FAIL ] %s (%lu failed checks, %.2f s)\n", t->name, fails, dt);
    return TEST_FAIL;
}
