/* One queued operation of the host backend and how a worker runs it. */
#ifndef SP_HOST_OP_H
#define SP_HOST_OP_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/host/host_event.h"

typedef enum host_op_kind {
    HOST_OP_COPY,
    HOST_OP_LAUNCH,
    HOST_OP_RECORD,
    HOST_OP_WAIT,
    HOST_OP_DELAY
} host_op_kind;

typedef struct host_op {
    host_op_kind kind;
    union {
        struct {
            void *dst;
            const void *src;
            size_t bytes;
            int to_device; /* which side is the host's, for graph_rebase: 1 h2d, 0 d2h;
                              -1 copy_kernel, which graph_rebase leaves alone */
        } copy;
        struct {
            sp_launch_fn fn;
            void *arg;
            sp_chunk chunk; /* by value: the caller's chunk may be gone when this runs */
        } launch;
        struct {
            host_event *event; /* holds a reference until the op has run */
            unsigned long long generation;
        } mark; /* RECORD: the generation to complete; WAIT: the one to wait for */
        unsigned delay_us;
    } u;
} host_op;

/* Runs the operation on the calling (worker) thread, then releases what it holds. */
void sp_host_op_run(host_op *op);

#endif /* SP_HOST_OP_H */
