/*
 * A stream under test: a chain of mix stages, a plan of batches (sizes, memory kinds, in
 * place or not) made before the stream opens, and the loop that submits them and takes their
 * events. Each batch gets fresh random input and poisoned output just before its submit and
 * is checked byte for byte against the host reference when its DONE comes: DONE events in
 * submission order with the batch's tag and records, INPUT_RELEASED (when asked for) once per
 * batch and before its DONE, the input overwritten with garbage as soon as it is released
 * (the output must not change), records numbered from the stream's start.
 *
 * Every stage is wrapped by a check of the chunk it is given: a chunk lies inside one batch,
 * is cut from the batch's start in chunks of the pipeline's size, is numbered (index) from
 * the stream's start and has no scratch (none was asked for).
 *
 * Blocking streams are driven by two threads (this one submits, a consumer takes events);
 * nonblocking ones by one thread that takes an event whenever submit says SP_ERR_WOULD_BLOCK
 * (which it may say only when max_in_flight batches are held) and polls now and then.
 */
#ifndef SP_TEST_STREAM_RIG_H
#define SP_TEST_STREAM_RIG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "stage_wrap.h"
#include "stages.h"
#include "streampipe.h"
#include "testbuf.h"

#define RIG_MAX_BATCHES 48
#define RIG_EVENT_TIMEOUT_S 30.0 /* a stream that gives no event for this long hangs */

typedef struct rig_batch {
    size_t n;           /* records */
    size_t first;       /* its first record, counted from the stream's start */
    size_t first_chunk; /* its first chunk, counted from the stream's start */
    size_t chunks;
    mem_kind in_kind, out_kind;
    int in_place;
    uint64_t tag;
    test_buf in, out; /* out is unused in place */
    unsigned char *want, *in_copy;
    int released;  /* its INPUT_RELEASED came */
    int clobbered; /* and its input was overwritten then */
    int done;
    sp_status status; /* its DONE's */
    char error[256];  /* sp_stream_last_error when its DONE was a failure */
} rig_batch;

struct stream_rig;

typedef struct bound_stage {
    stage_wrap wrap; /* the chain's stage, behind the plan's checks */
    const struct stream_rig *rig;
    atomic_ulong calls;
    atomic_ulong violations;
} bound_stage;

typedef struct stream_rig {
    /* set by the caller before rig_open */
    size_t chunk;
    unsigned depth;
    int graph;               /* SP_GRAPH_ON and position-free stages */
    unsigned stage_streams;  /* sp_stage.streams of every stage */
    sp_stream_config cfg;
    int allow_failures;      /* a DONE may carry an error; its output is then not checked */
    mix_chain chain;         /* mix_chain_init'ed by the caller (rig_open wraps it) */
    sp_stage tail;           /* when tail.name is set: a stage after the chain that copies
                                its records unchanged (so the reference stays the chain's) */
    /* when set: called with every chunk stage 0 of the chain is given (on its thread) */
    void (*on_chunk)(struct stream_rig *r, const sp_chunk *c);
    void *user;
    char describe[200];      /* rig_describe's line, for the consumer thread's context too */
    /* the rest is the rig's */
    sp_context *ctx;
    sp_pipeline *p;
    sp_stream *s;
    bound_stage bounds[CHAIN_MAX];
    sp_stage descs[CHAIN_MAX + 1];
    size_t in_rec, out_rec;
    size_t n_batches;            /* planned (fixed once the stream is open) */
    size_t run_to;               /* rig_run's goal */
    rig_batch b[RIG_MAX_BATCHES];
    atomic_size_t submitted;     /* batches submitted (counted once submit returned) */
    atomic_size_t submitting;    /* batches whose submit has begun (an event may come for
                                    one before its submit returns) */
    atomic_size_t done;          /* DONE events taken */
    test_rng rng;                /* the submitting thread's */
    test_rng garbage;            /* the event thread's */
    unsigned long would_block;   /* SP_ERR_WOULD_BLOCK answers */
    atomic_int broken;           /* an event did not come: stop */
    atomic_int producing;        /* rig_run's submitting thread is not done yet */
} stream_rig;

/* The tag batch k is submitted with. */
uint64_t rig_tag(size_t k);

/* Adds batch k (the next) to the plan. in_place needs equal first and last record sizes. */
void rig_plan(stream_rig *r, size_t n, mem_kind in_kind, mem_kind out_kind, int in_place);
/* Whether out == in is possible with this chain. */
int rig_can_be_in_place(const mix_chain *chain);
/* A random plan of `batches` batches: sizes 0, 1, 2, primes, chunk-1, chunk, chunk+1 and
 * many chunks; memory kinds at random per batch; in place at random when possible. */
void rig_plan_random(stream_rig *r, size_t batches, test_rng *rng);
/* One of those sizes. */
size_t rig_random_size(size_t chunk, test_rng *rng);

/* Creates the pipeline (the chain wrapped by the chunk checks) and opens the stream on ctx.
 * Returns 0 (after a failed check) when it cannot. */
int rig_open(stream_rig *r, sp_context *ctx, uint64_t seed);
/* Submits batches [from, to) of the plan and takes events until all their DONEs came. */
void rig_run(stream_rig *r, size_t from, size_t to);
/* Takes one event (waiting up to RIG_EVENT_TIMEOUT_S) and checks it; 0 when none came. */
int rig_take_event(stream_rig *r);
/* Closes the stream (checking its report against the plan's batches so far), destroys the
 * pipeline, checks the stage calls and chunk checks when no batch failed, and frees what
 * is left. Returns sp_stream_close's status. */
sp_status rig_close(stream_rig *r);
/* Chunks of the batches so far, and whether every DONE so far said SP_OK. */
size_t rig_chunks(const stream_rig *r, size_t batches);
int rig_all_ok(const stream_rig *r);

void rig_describe(stream_rig *r, const char *prefix);

#endif /* SP_TEST_STREAM_RIG_H */
