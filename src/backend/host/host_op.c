/* Executing one host operation on a queue's worker thread. */
#include "backend/host/host_op.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static void sleep_us(unsigned usec)
{
    struct timespec left = {(time_t)(usec / 1000000u), (long)(usec % 1000000u) * 1000L};
    /* A signal may cut the sleep short; a delay exists to be at least this long. */
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

void sp_host_op_run(host_op *op)
{
    switch (op->kind) {
    case HOST_OP_COPY:
        if (op->u.copy.bytes > 0)
            memcpy(op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
        break;
    case HOST_OP_LAUNCH:
        /* The core records stage failures itself (backend.h), so the status is not ours. */
        (void)op->u.launch.fn(&op->u.launch.chunk, op->u.launch.arg);
        break;
    case HOST_OP_RECORD:
        sp_host_event_complete(op->u.mark.event, op->u.mark.generation);
        sp_host_event_release(op->u.mark.event);
        break;
    case HOST_OP_WAIT:
        sp_host_event_wait_for(op->u.mark.event, op->u.mark.generation);
        sp_host_event_release(op->u.mark.event);
        break;
    case HOST_OP_DELAY:
        sleep_us(op->u.delay_us);
        break;
    }
}
