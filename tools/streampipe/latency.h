/* `streampipe latency`: the latency of small high-priority requests beside a bulk pipeline
 * that streams continuously, alone, under load, and under load with priority and pieces. */
#ifndef SP_CLI_LATENCY_H
#define SP_CLI_LATENCY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "streampipe.h"
#include "streampipe_ops.h"

#define LATENCY_UNSET (~0ULL) /* an option the user did not give */

typedef struct latency_options {
    sp_backend_kind backend;
    int device;
    unsigned long long bulk_records;  /* floats per bulk run */
    unsigned long long bulk_stages;   /* 0 (copy only) or 1 (sinmix, iters 0) */
    unsigned long long request_bytes; /* bytes of floats per request */
    unsigned long long requests;      /* timed requests per phase */
    unsigned long long piece_bytes;   /* the bulk pipeline's copy pieces in the last phase */
    unsigned long long bulk_chunk_bytes; /* its chunk in the last phase; 0 = the library's */
    unsigned long long bulk_depth;    /* its slots in the last phase; 0 = the library's */
    int request_copy_kernel;          /* the last phase's requests copy by kernel (default) */
    unsigned long long seed;
    int json;
} latency_options;


/* ---- the bulk pipeline, running on a thread of its own ------------------------------------ */

typedef struct latency_bulk {
    const float *in[2];  /* runs alternate inputs, so a stale output element cannot pass */
    float *out;
    size_t records;
    sp_pipeline *pipeline;        /* the pipeline of the phase under way */
    pthread_t thread;
    atomic_int started;
    atomic_int stop;
    unsigned long long total_runs; /* over all phases: run k reads in[k % 2] */
    /* Per phase; read by the main thread only after the join. */
    size_t runs;
    double first_start_s, last_end_s;
    sp_status status;
    char error[256];
} latency_bulk;

/* Starts the loop on `pipeline` and returns once its first run has begun; 0 or -1. */
int latency_bulk_start(latency_bulk *bulk, sp_pipeline *pipeline);
/* Stops after the run under way and joins; the phase's status. */
sp_status latency_bulk_stop(latency_bulk *bulk);
/* GB/s (input + output bytes) of the last phase's completed runs. */
double latency_bulk_gbps(const latency_bulk *bulk);
/* The input the last completed run read. */
const float *latency_bulk_last_input(const latency_bulk *bulk);

/* ---- requests ----------------------------------------------------------------------------- */

#define LATENCY_INPUT_SETS 8 /* requests rotate through these random inputs */

typedef struct latency_stats {
    double p50_us, p99_us, max_us;
} latency_stats;

typedef struct latency_requests {
    sp_context *ctx;
    size_t records;
    size_t count;                     /* timed requests per phase */
    float *in[LATENCY_INPUT_SETS];    /* pinned */
    float *out;                       /* pinned, poisoned before each request */
    double *latency_s;                /* count entries */
    size_t checked;                   /* requests verified so far, over all phases */
    size_t mismatches;                /* elements wrong, over all phases */
} latency_requests;

/* 0, or a CLI exit code after reporting. Inputs are random from `seed`. */
int latency_requests_alloc(latency_requests *r, sp_context *ctx, size_t records, size_t count,
                           unsigned long long seed);
void latency_requests_free(latency_requests *r);
/* Runs `n` requests one after another on `pipeline`, each timed and verified; when `times`
 * is nonzero, their latency goes into *stats. 0 or a CLI exit code after reporting. */
int latency_requests_run(latency_requests *r, sp_pipeline *pipeline, size_t n, int times,
                         latency_stats *stats);

/* ---- the whole job ------------------------------------------------------------------------ */

enum { LATENCY_ALONE, LATENCY_LOAD, LATENCY_PRIORITY, LATENCY_PHASES };

typedef struct latency_row {
    const char *name;
    latency_stats request;
    double bulk_gbps;
    size_t bulk_runs;
} latency_row;

typedef struct latency_job {
    latency_options options;
    sp_context *ctx;
    sp_sinmix_params params; /* iters 0; the stages point at it */
    sp_pipeline *request_plain, *request_high, *bulk_whole, *bulk_pieces;
    float *bulk_in[2], *bulk_out;
    latency_bulk bulk;
    latency_requests requests;
    latency_row rows[LATENCY_PHASES];
    double bulk_alone_s;   /* how long the bulk pipeline ran alone */
    size_t bulk_checked;   /* bulk runs whose every element was checked */
    size_t bulk_mismatches;
} latency_job;

/* The table and the verdict on the targets, as text or one JSON object (--json). */
void latency_print_result(const latency_job *job, FILE *out);

/* CUDA's highest stream priority, for the requests of the last phase; the library clamps it
 * to the device's range. */
#define LATENCY_HIGH_PRIORITY (-5)
#define LATENCY_P99_TARGET 2.0
#define LATENCY_BULK_TARGET 0.85

#endif /* SP_CLI_LATENCY_H */
