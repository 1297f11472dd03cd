/*
 * Fault injection for testing pipelines and stages: a context whose backend wraps a real one
 * (HOST or CUDA) and can fail the Nth backend call (or every call from the Nth on) or delay
 * queues before each operation, so that a missing dependency becomes a certain wrong answer
 * rather than a rare one.
 * Modelled on SQLite's test VFS. Not for production use: delays cost time.
 */
#ifndef STREAMPIPE_FAULT_H
#define STREAMPIPE_FAULT_H

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sized (streampipe.h, top): SP_FAULT_CONFIG_INIT, or size 0 for the 0.5 layout. */
typedef struct sp_fault_config {
    size_t size;              /* sizeof(sp_fault_config) as built; 0: the 0.5 layout */
    unsigned long fail_call;  /* fail the Nth status-returning backend call (1-based); 0 = none */
    sp_status fail_status;    /* what the failed call returns; 0 means SP_ERR_BACKEND */
    unsigned delay_us;        /* fixed delay before every queued operation on delayed queues */
    unsigned random_delay_us; /* plus a uniform random delay in [0, random_delay_us] */
    unsigned long seed;       /* for the random delays */
    const char *delay_queue;  /* delay only queues whose name starts with this ("h2d", "d2h",
                                 "stage-in", "graph" (graph mode's slot queues), or a stage's
                                 name); NULL delays every queue */
    const char *fail_op;      /* also fail every call of the backend operations of these names,
                                 separated by commas ("capture_end", "graph_rebase",
                                 "copy_h2d,queue_sync", ...); NULL: none. "queue_drain" names
                                 the wait the library falls back on when a queue_sync of a
                                 failed run fails: it is never failed otherwise (an injected
                                 failure is not a real one, and the wrapped backend can still
                                 wait for its queues), so failing it acts out a device that
                                 cannot be waited for */
    int fail_persist;         /* 1: every status-returning call from the fail_call-th on fails,
                                 not only that one (a device that stopped working); 0: only
                                 the fail_call-th */
    const char *delay_op;     /* 0.7: delay only these queued operations, by backend name,
                                 separated by commas ("copy_h2d", "launch,copy_d2h"), so that an
                                 operation's own time grows and the event records and waits
                                 around it stay instant; NULL: every queued operation */
} sp_fault_config;

#define SP_FAULT_CONFIG_INIT {.size = sizeof(sp_fault_config)}

/* Fixed (streampipe.h, top). */
typedef struct sp_fault_stats {
    unsigned long calls;        /* status-returning backend calls since the last sp_fault_set */
    unsigned long injected;     /* failures injected */
    unsigned long delays;       /* delays enqueued */
    long live_objects;          /* queues + events + allocations not yet released */
} sp_fault_stats;

/* Like sp_context_create, with the fault backend around the chosen one. cfg may be NULL.
 * As sp_context_create, *out is a handle also on failure, whose last error says why. */
SP_API sp_status sp_context_create_fault(sp_backend_kind kind, int device,
                                         const sp_fault_config *cfg, sp_context **out);
/* Replaces the configuration and restarts the call count. SP_ERR_INVALID_ARGUMENT if ctx was
 * not made by sp_context_create_fault. Call it while no run is in progress on the context: the
 * count is shared by every pipeline of the context. */
SP_API sp_status sp_fault_set(sp_context *ctx, const sp_fault_config *cfg);
SP_API sp_status sp_fault_get_stats(const sp_context *ctx, sp_fault_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_FAULT_H */
