/* Graph mode's objects and what they were made for. Written only by submit_graph.c (and
 * zeroed by pipeline.c's create); made on first use. Per slot, a queue and a fork/join event
 * for capturing its chunk; per bundle of slots (at its first slot), a "bundle done" event and
 * a graph. The graphs fit one chunk size and one choice of staging, and are made again when
 * a batch needs another. */
#ifndef SP_GRAPH_STATE_H
#define SP_GRAPH_STATE_H

#include <stddef.h>

#include "backend/backend.h"
#include "streampipe.h"

typedef struct sp_graph_state {
    sp_bqueue *queue[SP_MAX_DEPTH];
    sp_bevent *join[SP_MAX_DEPTH];
    sp_bevent *done[SP_MAX_DEPTH];
    sp_bgraph *exec[SP_MAX_DEPTH];
    const void *in_base[SP_MAX_DEPTH]; /* host memory each slot's copies point at now */
    void *out_base[SP_MAX_DEPTH];
    const void *captured_in[SP_MAX_DEPTH]; /* and pointed at when captured: what a rebase */
    void *captured_out[SP_MAX_DEPTH];      /* names them by (backend.h) */
    size_t capture_chunk[SP_MAX_DEPTH];    /* the chunk index it was captured with */
    int checked[SP_MAX_DEPTH];             /* compared with direct submission already */
    size_t chunk_records;                  /* the chunk size the graphs were made for */
    int stage_in, stage_out;               /* and their staging */
    char *check_buffer;                    /* what a new graph's check compares with */
    size_t check_bytes;
    int off;                               /* a failure turned graph mode off for good */
    char why[160];                         /* why, for the report's notes */
} sp_graph_state;

#endif
