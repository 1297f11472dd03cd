/* `streampipe run`: a file of records streamed through a stage chain into another file, with
 * sp_pipeline_run_io, positional reads and writes on the staging threads, in pinned memory
 * bounded by --max-pinned whatever the file's size. */
#ifndef SP_CLI_RUN_CMD_H
#define SP_CLI_RUN_CMD_H

#include <stddef.h>

#include "flight.h"
#include "streampipe.h"
#include "streampipe_mlp.h"
#include "streampipe_ops.h"
#include "figures.h"
#include "live.h"
#include "run_files.h"

typedef struct run_options {
    const char *input_path, *output_path, *stages_text;
    sp_backend_kind backend;
    int device;
    int input_format; /* sp_input_format: --input-format's choices are in its order */
    int decompress;   /* sp_decompress_where: --decompress's, in its order */
    int output_format; /* --output-format: raw|lz4|zstd, sp_input_format's order from RAW */
    unsigned long long chunk_records, depth, max_pinned, max_device, staging_threads;
    int json;
    int resume;          /* --resume: carry on from the journal beside the output */
    int no_journal;      /* --no-journal: none kept (the output flushed once, at the end) */
    cli_live_options live; /* --live, --metrics (not under mpirun) */
    cli_flight_options flight; /* --flight-recorder, --flight-recorder-file */
    int argc;            /* the command's arguments, for the line saying how to resume */
    char **argv;
} run_options;

/* The stage chain named by --stages: "sinmix:iters=N" (float32 records) and
 * "mlp:MODEL.safetensors[:fp32|tf32]" (64-byte images to the head's output), joined by ','. */
typedef struct run_stage_list {
    sp_stage stages[SP_MAX_STAGES];
    size_t n;
    sp_sinmix_params sinmix[SP_MAX_STAGES]; /* sinmix stages point here */
    const char *mlp_path;                   /* at most one MLP, expanded into its stages */
    sp_mlp_precision mlp_precision;
    size_t mlp_at;                          /* its place in the list */
    sp_mlp *model;
    sp_mlp_stages *mlp;
    size_t in_record_bytes, out_record_bytes;
    /* tests only: STREAMPIPE_TEST_FAIL_AT_RECORD=R makes the last stage fail the chunk that
       holds record R (a failing stage in a long run, for the flight recorder's test) */
    sp_stage fail_inner;
    unsigned long long fail_at;
} run_stage_list;

/* Where a run's wall time went, in seconds (cli_now_s marks; 0 where a phase did not run): the
 * part before the first chunk and the commit after the last are what a file run pays beyond
 * its makespan, and a short run of a large file can be bound by them (issue 26's end to end). */
typedef struct run_phases {
    double start;     /* run_main entered */
    double mark;      /* the last phase's end (run_phase_end) */
    double context_s; /* the backend's context opened (CUDA: the driver's first call) */
    double stages_s;  /* the stages built (an MLP: the model loaded, cuBLASLt opened) */
    double open_s;    /* the files opened: a compressed input indexed, the output allocated */
    double pipeline_s; /* the pipeline made: the ring's pinned and device memory */
    double run_s;     /* the records streamed (sp_pipeline_run_io, every range) */
    double commit_s;  /* the output flushed and renamed into place */
} run_phases;

/* What one run holds (run_cmd.c; run_ranks.c for a rank under mpirun). */
typedef struct run_job {
    sp_context *ctx;
    sp_pipeline *pipeline;
    run_stage_list stages;
    run_files files;
    run_phases phases;
} run_job;

struct run_mpi;

/* The phase that ends now: its seconds since the last mark into *phase. */
void run_phase_end(run_phases *p, double *phase);

/* The pipeline for the job's stages and files (--chunk, --depth, --max-pinned, --max-device, --threads). */
int run_make_pipeline(run_job *job, const run_options *o);
double run_peak_rss_mib(void);
/* The first figures of the result, the same with one process or several ranks. */
void run_print_job(fig_out *out, const run_job *job, const run_options *o);
/* One rank's part of a run under mpirun (run_ranks.c): its contiguous range of the records,
 * read and written in place in the one output, which rank 0 creates and, once every rank
 * has succeeded, moves into place. rc: how opening the context went on this rank (every
 * rank must come here, to take part in the reductions). Exit status, the same on all ranks. */
int run_ranks_go(run_job *job, const run_options *o, const struct run_mpi *mpi, int rc,
                 int device);
/* Parses --stages into `list` (CLI_EXIT_USAGE with a message when it is not valid). */
int run_parse_stages(const char *text, run_stage_list *list);
/* Loads the MLP, if any, builds its stages on ctx and fills list->stages; CLI_EXIT_OK or
 * CLI_EXIT_FAILURE with a message. */
int run_build_stages(run_stage_list *list, sp_context *ctx);
void run_free_stages(run_stage_list *list);

/* The mlp stage's model, in the program that links the MLP library: streampipe-mlp
 * (tools/streampipe-mlp/run_mlp.c: run_mlp_linked 1). `streampipe` links instead
 * run_mlp_absent.c (0, and no model is ever built): its run_main hands a run with an mlp stage
 * to streampipe-mlp (cli_exec_mlp) before anything starts. run_mlp_build loads list->mlp_path
 * and puts its stages in list->stages; run_free_stages frees them (after the pipeline, before
 * the context). */
extern const int run_mlp_linked;
int run_mlp_build(run_stage_list *list, sp_context *ctx);

#endif
