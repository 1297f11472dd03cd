/*
 * For the white-box tests that drive a backend table (backend.h) directly, below the core:
 * a backend and its open context, status checks that print the backend's own error text, and
 * the two ways each such test runs, on HOST and on the fault backend wrapping HOST.
 */
#ifndef SP_TEST_BACKEND_UNDER_TEST_H
#define SP_TEST_BACKEND_UNDER_TEST_H

#include "backend/backend.h"
#include "backend/fault/fault_backend.h"
#include "harness.h"
#include "streampipe_fault.h"

typedef struct backend {
    const sp_backend_ops *ops;
    void *impl;
} backend;

/* Reports got != want with the expression, both values and sp_backend_error(); returns 1 when
 * equal. */
int backend_check_status(sp_status got, sp_status want, const char *expr, const char *file,
                         int line);
#define CHECK_STATUS(call, want) backend_check_status((call), (want), #call, __FILE__, __LINE__)
#define CHECK_OK(call) CHECK_STATUS(call, SP_OK)

/* Opens the fault backend over a fresh HOST backend; on failure, a failed check and 0. */
int open_fault(const sp_fault_config *cfg, backend *out);
/* The fault backend's counters (all bits set where it could not say). */
sp_fault_stats fault_stats(backend b);

/* A test body for both backends below. */
typedef void (*backend_test)(backend b);

/* Runs fn on a fresh HOST backend and closes it. Returns TEST_OK (failed checks decide). */
int run_on_host(backend_test fn);
/* Runs fn on the fault backend over HOST with `cfg` (delays, no failures), then checks that
 * nothing was injected and no queue, event or allocation is left, and, when `queued` (fn
 * enqueues work), that delays were applied. */
int run_on_fault(backend_test fn, const sp_fault_config *cfg, int queued);

#endif /* SP_TEST_BACKEND_UNDER_TEST_H */
