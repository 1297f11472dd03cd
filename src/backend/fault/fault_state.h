/* The fault backend's configuration and counters: which call to fail, which queues to delay
 * and by how much, and the statistics sp_fault_get_stats reports. Safe to use from any
 * thread. */
#ifndef SP_FAULT_STATE_H
#define SP_FAULT_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "streampipe_fault.h"

typedef struct fault_state {
    atomic_ulong fail_call; /* 1-based call number to fail; 0 = none */
    atomic_int fail_persist; /* 1: also every call after fail_call */
    char fail_op[128];      /* operation names to fail every time, separated by commas; "" =
                               none (set while no run is in progress, like the rest of the
                               configuration) */
    atomic_int fail_status;
    atomic_ulong calls;    /* since the last configure */
    atomic_ulong injected; /* since open */
    atomic_ulong delays;   /* since open */
    atomic_long live_objects;

    pthread_mutex_t lock; /* guards the delay settings and the random state */
    unsigned delay_us;
    unsigned random_delay_us;
    char *delay_queue; /* queue-name prefix to delay; NULL = every queue */
    char delay_op[128]; /* operation names to delay, separated by commas; "" = every one */
    uint64_t random;   /* xorshift64 state, never 0 */
} fault_state;

/* cfg may be NULL (no faults). */
sp_status sp_fault_state_init(fault_state *state, const sp_fault_config *cfg);
void sp_fault_state_destroy(fault_state *state);
/* Replaces the configuration, restarts the call count and reseeds the random delays. On
 * failure (no memory for the queue prefix) delays are off and the reason is set. */
sp_status sp_fault_state_configure(fault_state *state, const sp_fault_config *cfg);

/* Counts one status-returning call named `op`. SP_OK to go ahead; when this is the call to
 * fail, the configured status, with the reason set. */
sp_status sp_fault_state_count_call(fault_state *state, const char *op);
/* For an operation that is never counted (the drain): the configured status, with the reason
 * set, when fail_op names `op`; else SP_OK. */
sp_status sp_fault_state_named_failure(fault_state *state, const char *op);
/* Microseconds to delay the next operation `op` on the queue named `queue_name`; 0 for none. */
unsigned sp_fault_state_next_delay(fault_state *state, const char *queue_name, const char *op);
void sp_fault_state_count_delay(fault_state *state);
/* +1 when an object is made, -1 when one is released. */
void sp_fault_state_count_live(fault_state *state, long change);
void sp_fault_state_read(fault_state *state, sp_fault_stats *out);

#endif /* SP_FAULT_STATE_H */
