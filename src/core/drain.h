/* Waiting for queues before the memory their work uses is handed back or reused. */
#ifndef SP_DRAIN_H
#define SP_DRAIN_H

#include "core/batch.h"

/* Syncs q. When the sync fails, records that as the work's failure ("<what>: <reason>") and
 * waits with the backend's queue_drain (or a second sync); if that fails too, q may still be
 * running, and the context is made lost (SP_ERR_DEVICE_LOST becomes the failure, and b's
 * status when b is given). Returns the sync's status. */
sp_status sp_drain_queue(sp_pipeline *p, sp_batch *b, sp_bqueue *q, const char *what);
/* Every queue of the pipeline, graph queues included, even after a failure: nothing of its
 * work is in flight when it returns. The first sync's failure, or SP_OK. */
sp_status sp_drain_all(sp_pipeline *p, sp_batch *b);

#endif
