/* A batch: what the scheduler feeds into the ring in one go. A run (sp_pipeline_run,
 * sp_pipeline_run_io) is one batch; a stream's submits and sp_pipeline_run_feed's units are
 * one each, fed behind each other without draining. Written by the scheduler (sched.c) and
 * the files it calls for the batch's chunks; made by batch.c's checks. */
#ifndef SP_BATCH_H
#define SP_BATCH_H

#include "core/pipeline_state.h"
#include "core/plan.h"

typedef struct sp_batch {
    sp_pipeline *p;
    const char *in;
    char *out;
    const sp_io *io;         /* a source and sink instead of in and out (run_io) */
    void *owner;             /* the caller's handle for it (a stream's batch), handed back as
                                its chunks leave the ring (sched.h); NULL: nothing handed back */
    sp_run_plan plan;        /* plan.chunk_records: the current segment's chunk size */
    size_t seg_chunk;        /* the current segment of equal chunks begins at chunk
                                base + seg_chunk ... */
    size_t seg_first;        /* ... and at this record of the batch (tune_run.c starts
                                segments when it re-picks the chunk size; 0, 0: one segment) */
    int tuned;               /* its chunk size is re-picked while it runs (tune_run.c) */
    int chunk_by_tuner;      /* 1: it began at the tuner's pick from the runs before; 2: it
                                was re-picked while it ran (for the report's note) */
    int chunk_by_decode;     /* its chosen chunk is whole blocks for the decompression in the
                                ring (ring_chunk.c), not cut for a short run (the note) */
    size_t base;             /* the ring's index of this batch's chunk 0: chunk i of the ring
                                is chunk i - base of the batch, in slot i mod K */
    size_t end;              /* one past the batch's last chunk (base + chunks once known) */
    size_t next;             /* the next chunk to feed (sched.c) */
    size_t record_base;      /* records before this batch in its stream (first_record) */
    int source_done;         /* run_io: the source has ended */
    int stage_in, stage_out; /* user memory is pageable: go through pinned staging */
    int in_device, out_device; /* user memory is device memory: copied device to device */
    int timing;              /* a report was asked for: record per-chunk times */
    int event_timing;        /* GPU operations were timed by events (timing.c) */
    int activity_timing;     /* ... or by the backend's activity records (timing.c) */
    double activity_start_s, activity_read_s; /* what starting and reading them took */
    char activity_note[200]; /* why they were asked for and not used, or are incomplete */
    double t0;               /* host clock at the first enqueue */
    double t_submitted;      /* host clock when the last chunk had been enqueued */
    double wait_s;           /* of that, host time spent waiting for slots to come free */
    int graphs;              /* its full chunks go as graph bundles (submit_graph.c) */
    size_t graph_first;      /* the first chunk a bundle may start at */
    size_t graph_end;        /* chunks [graph_first, graph_end) ran as graph replays */
    int replayed;            /* a graph was launched */
    int group_copies;        /* graph mode: one copy per direction for a whole bundle */
    char graph_note[200];    /* graph mode's line for the report's notes; "" when none */
    const atomic_int *stop;  /* set by its caller: feed no more chunks (a stream's cancel) */
    int stopped;             /* feeding stopped there: [base, end) is what went in */
    sp_status status;        /* the first failure */
    struct sp_ring_decode *decode; /* run_io of compressed blocks: ring_decode.h; NULL: none */
} sp_batch;

/* Checks the arguments and fills b->plan; SP_OK means the batch may start. Nothing is
 * touched on failure. */
sp_status sp_batch_prepare(sp_batch *b, sp_pipeline *p, const void *in, size_t n_records,
                           void *out, int timing);
/* A run_io batch's ends (after its plan is made): the source and sink go through pinned
 * staging; memory given instead (in, out; NULL: none) is checked and used as a run's. */
sp_status sp_batch_io_ends(sp_batch *b, const void *in, void *out);
/* Whether the batch's input comes from a source, its output goes to a sink (run_io). */
static inline int sp_batch_has_source(const sp_batch *b) { return b->io && b->io->read; }
static inline int sp_batch_has_sink(const sp_batch *b) { return b->io && b->io->write; }
/* The checks of in, out and their sizes alone, with the reason in why: for a stream's submit,
 * which may not write the pipeline's error text while its engine thread runs. */
sp_status sp_batch_check_buffers(const sp_pipeline *p, const void *in, size_t n_records,
                                 const void *out, char *why, size_t why_size);
/* A backend call for the batch failed: recorded by failure.h's rule as "<what>: <backend
 * reason>", and kept as the batch's status unless it has one. Returns `status`. */
sp_status sp_batch_fail(sp_batch *b, sp_status status, const char *fmt, ...) SP_PRINTF(3, 4);
/* A failure of chunk i's own (a source or sink), no backend text; the batch is left alone
 * (the staging threads call it, several at once). Returns SP_ERR_STAGE_FAILED. */
sp_status sp_batch_fail_chunk(sp_batch *b, size_t i, const char *fmt, ...) SP_PRINTF(3, 4);

/* Chunk geometry: chunk i's first record within its batch (a chunk is full but for the
 * batch's last), and its records, for a chunk of the current segment (i at or past its
 * start): a chunk fed before a change of size is read from its slot (ring_state.h), never
 * from here. A source's chunk holds what was read into its slot. */
static inline size_t sp_chunk_first(const sp_batch *b, size_t i)
{
    return b->seg_first + (i - b->base - b->seg_chunk) * b->plan.chunk_records;
}
/* A new segment from chunk i (the next to feed) on, of `chunk` records each; a batch of
 * known length gets its end and its count of chunks again. */
void sp_batch_resegment(sp_batch *b, size_t i, size_t chunk);
static inline size_t sp_chunk_records(const sp_batch *b, size_t i)
{
    if (b->io)
        return b->p->slots[i % b->p->depth].records;
    size_t first = sp_chunk_first(b, i);
    size_t left = b->plan.n_records - first;
    return left < b->plan.chunk_records ? left : b->plan.chunk_records;
}

#endif
