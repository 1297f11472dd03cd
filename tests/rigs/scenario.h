/*
 * One pipeline scenario: a chain of mix stages, sizes, depth and the kinds of memory, run a
 * few times with fresh random input and poisoned output, every byte checked against the host
 * reference, plus the report's countable figures. Shared by the conformance and concurrency
 * tests.
 */
#ifndef SP_TEST_SCENARIO_H
#define SP_TEST_SCENARIO_H

#include <stddef.h>

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "testbuf.h"

typedef struct scenario {
    size_t n;                  /* records */
    size_t chunk;              /* chunk_records; 0 lets the library choose */
    unsigned depth;            /* 0 lets the library choose */
    size_t n_stages;           /* 0..CHAIN_MAX */
    size_t in_rec;
    size_t out_recs[CHAIN_MAX];
    mem_kind in_kind, out_kind;
    int in_place;              /* out == in (needs equal first and last record sizes) */
    int runs;                  /* runs of one pipeline; 0 means 2 */
    int serial;                /* the last run goes through sp_pipeline_run_serial */
    int no_report;             /* never ask for a report (else every other run does) */
    unsigned staging_threads;
    unsigned streams;          /* queues per stage (sp_stage.streams); 0 means 1 */
    size_t copy_piece_bytes;   /* sp_pipeline_config.copy_piece_bytes; 0: whole copies */
    int copy_by_kernel;        /* sp_pipeline_config.copy_by_kernel */
    const size_t *run_sizes;   /* when set: run r moves run_sizes[r] records (each <= n) */
} scenario;

/* Record-size shapes: shape k gives in_rec and the stage output sizes. Shapes for in-place
 * runs end where they start. */
#define SHAPES 3
void scenario_shape(scenario *sc, unsigned shape);
void scenario_shape_in_place(scenario *sc);

/* Sets the harness context line to a description of sc. */
void scenario_describe(const scenario *sc, const char *prefix);

/* Graph mode for every scenario from now on (SP_GRAPH_ON, position-free stages, and the
 * checks graph mode allows: no per-operation figures, fewer stage calls). */
void scenario_set_graph(int on);
int scenario_graph(void);
/* Whether graph mode, when on, replays sc's full chunks: not when its copies are done by
 * kernel on the user's own (pinned or registered) memory, which a replay cannot follow. */
int scenario_graph_replays(const scenario *sc);

/* Creates the pipeline on ctx, runs it sc->runs times, checks everything (failures go to the
 * harness), destroys it. */
void scenario_run(sp_context *ctx, const scenario *sc, test_rng *rng);

/* One run of an existing pipeline over n fresh random records in pageable memory, output
 * poisoned and compared with the reference of stages[0..n_stages). Returns the run's status
 * (a failed check when it is not SP_OK). */
sp_status check_pipeline_run(sp_pipeline *p, const mix_stage *stages, size_t n_stages,
                             size_t in_rec, size_t n, test_rng *rng);

#endif /* SP_TEST_SCENARIO_H */
