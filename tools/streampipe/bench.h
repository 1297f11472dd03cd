/* `streampipe bench`: the types its files pass between them. The flow, in bench.c:
 * options (bench_args.c, bench_sweep_args.c) -> plan (bench_plan.c) -> buffers and input
 * (bench_data.c) -> expected values and checks (bench_verify.c, bench_compare.c) -> timed,
 * verified runs (bench_timed.c), either the comparison (bench_run.c) or a sweep of one
 * setting (bench_sweep.c, bench_sweep_run.c), or one sp_group run over several devices
 * (bench_group.c, --devices) -> text or JSON from one description
 * (bench_output.c, bench_sweep_output.c), trace and SVG files (bench_export.c). The
 * progress line on stderr is bench_progress.c. */
#ifndef SP_CLI_BENCH_H
#define SP_CLI_BENCH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "streampipe.h"
#include "streampipe_group.h"
#include "figures.h"
#include "stats.h"
#include "streampipe_ops.h"

#define BENCH_MAX_REPEAT CLI_MAX_SAMPLES
#define BENCH_SHOW_BAD 5    /* mismatches printed before giving up */
#define BENCH_NOTES_BYTES 512
#define BENCH_MAX_DEVICES 64 /* --devices */

typedef enum bench_memory { BENCH_MEMORY_PAGEABLE = 0, BENCH_MEMORY_PINNED = 1 } bench_memory;

/* --sweep: the one setting that changes from row to row. */
typedef enum bench_sweep_parameter {
    BENCH_SWEEP_NONE = 0, /* no sweep: the serial / pipelined / ceiling comparison */
    BENCH_SWEEP_CHUNK,    /* records per chunk */
    BENCH_SWEEP_DEPTH,    /* slots in the ring */
    BENCH_SWEEP_ITERS     /* sinmix iterations: the compute weight */
} bench_sweep_parameter;

#define BENCH_SWEEP_MAX_VALUES 32

/* The values to sweep; n_values == 0 until bench_plan_resolve fills in the defaults. */
typedef struct bench_sweep_request {
    bench_sweep_parameter parameter;
    size_t n_values;
    unsigned long long values[BENCH_SWEEP_MAX_VALUES];
} bench_sweep_request;

/* The job: what the options say (bench_args.c), then, once the backend is known, every value
 * decided (bench_plan_resolve). Values the options leave BENCH_UNSET_* get defaults that
 * differ between CUDA and HOST. */
#define BENCH_UNSET_SIZE SIZE_MAX
#define BENCH_UNSET_UINT UINT_MAX
#define BENCH_UNSET_SEED (~0ULL)

typedef struct bench_plan {
    int workload_index;          /* from bench_find_workload; -1 = the backend's default */
    const char *workload;        /* its name, once resolved */
    int workload_changed;        /* records, iters or chunk set by an option */
    sp_backend_kind backend;     /* asked for; once resolved, HOST or CUDA */
    int device;
    size_t records;
    unsigned iters;
    size_t chunk_records;        /* pipelined run; 0 = library's choice */
    size_t serial_chunk_records; /* serial baseline; 0 = library's choice */
    unsigned depth;              /* 0 = library's choice */
    unsigned staging_threads;    /* 0 = library's choice */
    unsigned stage_streams;      /* sp_stage.streams of the sinmix stage; 0 = one queue */
    size_t copy_piece_bytes;     /* sp_pipeline_config.copy_piece_bytes; 0 = whole copies */
    sp_graph_mode graph;         /* pipelined runs; not OFF: stream mode is timed beside */
    int copy_kernel;             /* pipelined runs copy by kernel (copy_by_kernel); the
                                    ceiling keeps the copy engines */
    unsigned repeat;
    unsigned long long seed;
    bench_memory memory;
    unsigned host_workers;       /* threads for filling and verifying on the host */
    int json;
    const char *trace_path;      /* NULL = none */
    const char *svg_path;
    const char *sweep_name, *sweep_values; /* --sweep and --sweep-values as given */
    int group;                   /* --devices: one sp_group run over several devices */
    size_t n_devices;            /* 0: every visible device */
    int devices[BENCH_MAX_DEVICES];
    bench_sweep_request sweep;   /* values filled in; parameter NONE without --sweep */
    char notes[BENCH_NOTES_BYTES]; /* what the plan changed from the options, and why;
                                      "" when nothing (printed with the job, and in JSON) */
} bench_plan;

/* Input and output of the job, and pinned buffers of the same size for the ceiling check. */
typedef struct bench_buffers {
    sp_context *ctx;
    size_t records;
    bench_memory memory;
    float *in;
    float *out;
    float *ceiling_in;  /* == in / out when memory is pinned, and in a sweep (no ceiling) */
    float *ceiling_out;
} bench_buffers;

typedef enum bench_check_method {
    BENCH_CHECK_FULL,   /* host reference of every element, every run checked against it */
    BENCH_CHECK_SAMPLED /* sampled reference checks the first serial run, which then becomes
                           the expected output of every later run, bit for bit */
} bench_check_method;

typedef struct bench_expected {
    bench_check_method method;
    size_t records;
    unsigned iters;
    unsigned workers;
    float *values;          /* the expected value of every element */
    int have_values;        /* SAMPLED: 0 until the first serial run has been adopted */
    size_t n_samples;
    size_t *sample_index;   /* SAMPLED only */
    float *sample_value;
    double reference_s;     /* host time spent computing reference values */
} bench_expected;

/* The outcome of checking one run's output. */
typedef struct bench_check {
    size_t checked;
    size_t mismatches;
    size_t n_shown;
    size_t bad_index[BENCH_SHOW_BAD];
    float bad_got[BENCH_SHOW_BAD];
    float bad_want[BENCH_SHOW_BAD];
    double max_abs_error;   /* against the host reference; 0 for bitwise checks */
    double max_rel_error;   /* |got - want| / max(1, |want|) */
} bench_check;

/* One kind of run, repeated. `seconds` is the caller's wall time around each run, what the
 * rates are computed from; `makespan` is the library's own (sp_pipeline_last_makespan_s),
 * which leaves out what a run does before its first enqueue and, with a report, after its
 * drain. */
typedef struct bench_series {
    const char *name;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT];
    double makespan[BENCH_MAX_REPEAT];
    sp_report reports[BENCH_MAX_REPEAT];
} bench_series;

/* What the checks of every run, taken together, found. */
typedef struct bench_totals {
    double max_abs_error;     /* the largest seen by any check against the host reference */
    double max_rel_error;
    size_t elements_checked;  /* over every run */
    double verify_s;          /* host time spent checking outputs */
} bench_totals;

typedef struct bench_results {
    bench_series serial;
    bench_series pipelined;   /* timed without a report: no timing events at all */
    bench_series traced;      /* the same pipeline with a report: per-chunk timings */
    bench_series ceiling;     /* 0 stages, pinned: what the copy engines alone reach */
    bench_series stream;      /* with --graph: the pipelined runs in stream mode, the baseline
                                 graph mode is measured against (no runs otherwise) */
    bench_totals checks;
} bench_results;

/* One row of a sweep: the pipelined run at one value of the swept setting. */
typedef struct bench_sweep_row {
    unsigned long long value;        /* the setting in effect (a chosen one resolved) */
    unsigned long long config_value; /* what the pipeline was created with; 0 = chosen */
    int is_default;                  /* the setting the bench uses without --sweep */
    sp_sinmix_params params;         /* the stage's parameters: must outlive its pipeline */
    bench_check_method method;       /* how this row's outputs were checked */
    size_t runs;
    double seconds[BENCH_MAX_REPEAT]; /* runs without a report */
    double median_s;
    double gbps;                     /* input + output bytes over median_s */
    double speedup;                  /* the default row's median / this one's */
    sp_report report;                /* the one run with a report */
} bench_sweep_row;

typedef struct bench_sweep_result {
    bench_sweep_parameter parameter;
    size_t n_rows;
    bench_sweep_row rows[BENCH_SWEEP_MAX_VALUES + 1]; /* + the default when not listed */
    size_t default_row;
    size_t best_row;                 /* the lowest median */
    bench_totals checks;
} bench_sweep_result;

/* The progress line on stderr (bench_progress.c). */
typedef struct bench_progress {
    int live;  /* rewrite one line in place: stderr is a terminal, no --json, no NO_PROGRESS */
    int shown; /* columns of the line now on screen; 0 = none */
} bench_progress;

/* --trace and --svg files, opened before the runs and written after them (bench_export.c). */
typedef enum bench_export_kind { BENCH_EXPORT_TRACE, BENCH_EXPORT_SVG, BENCH_EXPORT_KINDS }
    bench_export_kind;

typedef struct bench_exports {
    const char *path[BENCH_EXPORT_KINDS]; /* NULL = not asked for */
    FILE *file[BENCH_EXPORT_KINDS];       /* open until written or abandoned */
    int opened[BENCH_EXPORT_KINDS];       /* a regular file we created or truncated: ours to
                                             remove if it cannot be written completely */
    int written[BENCH_EXPORT_KINDS];
    char describes[96];                   /* which run the files show, for the output */
} bench_exports;

/* Everything a timed run needs, passed as one. */
typedef struct bench_session {
    sp_context *ctx;
    const bench_plan *plan;
    bench_buffers *buffers;
    bench_expected *expected;
    bench_totals *checks;     /* where each run's check is added */
    bench_progress *progress;
    bench_exports *exports;
} bench_session;

/* The pipelined run's pipeline settings from the plan; no stages yet (bench_timed.c). */
sp_pipeline_config bench_pipeline_config(const bench_plan *plan);

typedef sp_status (*bench_run_fn)(sp_pipeline *pipeline, const void *in, size_t n_records,
                                  void *out, sp_report *report);

/* One kind of run: which pipeline, how, and on which memory. */
typedef struct bench_run_spec {
    const char *name;
    sp_pipeline *pipeline;
    bench_run_fn run;
    const float *in;
    float *out;
    int copy_only; /* the output must equal the input */
    sp_group *group; /* not NULL: sp_group_run over its devices instead of pipeline, run */
} bench_run_spec;

/* bench_args.c */
/* Returns CLI_EXIT_OK to go on, or an exit code to stop with; *help_shown = 1 after --help. */
int bench_parse_args(int argc, char **argv, bench_plan *plan, int *help_shown);

/* bench_plan.c */
int bench_find_workload(const char *name);
void bench_print_workloads(FILE *out);
/* Fills in what the options left unset, now that the context says which backend runs. */
void bench_plan_resolve(bench_plan *plan, sp_backend_kind backend);

/* bench_data.c */
/* Prints what failed and returns CLI_EXIT_FAILURE when memory runs out. */
int bench_buffers_alloc(sp_context *ctx, const bench_plan *plan, bench_buffers *buffers);
void bench_buffers_free(bench_buffers *buffers);
/* Fresh floats in [-2, 2] from `seed`; the same seed gives the same data at any thread count. */
void bench_fill_input(float *in, size_t n, unsigned long long seed, unsigned workers);

/* bench_verify.c */
/* Computes the host reference (timed); prints what failed and returns CLI_EXIT_FAILURE when
 * host memory runs out. */
int bench_expected_prepare(const bench_plan *plan, const float *in, bench_expected *expected);
void bench_expected_free(bench_expected *expected);
const char *bench_check_method_name(bench_check_method method);
const char *bench_tolerance_text(void);
/* What the check does, in a sentence, into buf. */
const char *bench_check_description(const bench_expected *expected, char *buf, size_t size);
/* Checks the output of a sinmix run (serial or pipelined). Under SAMPLED, the first run
 * checked must be a serial one: its output, once it passes, is adopted as the expected value.
 * Returns 0 when every element is right. */
int bench_check_sinmix(bench_expected *expected, const float *got, size_t n,
                       bench_check *check);
/* A 0-stage run must give back its input exactly. */
int bench_check_copy(const float *got, const float *in, size_t n, unsigned workers,
                     bench_check *check);
void bench_print_mismatches(const bench_check *check, const char *run, FILE *out);

/* The range --NAME takes (for the values of a sweep of it). */
void bench_option_range(const char *name, unsigned long long *min, unsigned long long *max);

/* bench_sweep_args.c */
/* Parses --sweep NAME and --sweep-values LIST (either may be NULL). Returns CLI_EXIT_OK or
 * CLI_EXIT_USAGE after printing why. */
int bench_sweep_parse(const char *name, const char *values, bench_sweep_request *request);
/* The default values of each sweep, as --help lists them. */
void bench_sweep_print_defaults(FILE *out);
/* The default values of a sweep when --sweep-values is not given. */
void bench_sweep_default_values(sp_backend_kind backend, bench_sweep_request *request);
/* A chunk sweep's values above `records` become `records`, listed once where the first of
 * them was; returns how many values were above. Other sweeps are left alone. */
size_t bench_sweep_clamp_chunks(bench_sweep_request *request, size_t records);
const char *bench_sweep_parameter_name(bench_sweep_parameter parameter);

/* bench_timed.c */
/* `config` with `stage` as its one stage (NULL: a copy-only pipeline). Prints what failed and
 * returns CLI_EXIT_FAILURE. */
int bench_create_pipeline(sp_context *ctx, const sp_stage *stage, sp_pipeline_config config,
                          const char *what, sp_pipeline **out);
/* Fills the figures of a run made without a report that the library still tells. */
void bench_run_shape(const sp_pipeline *pipeline, size_t records, sp_report *shape);
/* Poisons the output, times one run (with a report when `report` is not NULL) and checks
 * every element. `label` ("pipelined run 2") names the run in messages. */
int bench_timed_run(const bench_session *session, const bench_run_spec *spec,
                    const char *label, sp_report *report, double *seconds);

/* --repeat runs without a report into seconds[] (*runs counts those done), then one with a
 * report into *report; on a terminal the progress line shows "[title] run 2/3 0.204 s". */
int bench_time_repeats(const bench_session *session, const bench_run_spec *spec,
                       const char *title, double *seconds, size_t *runs, sp_report *report);

/* bench_run.c */
/* The comparison: serial, pipelined, traced and ceiling runs, --repeat times. */
int bench_run_all(const bench_session *session, bench_results *results);

/* bench_sweep.c, bench_sweep_run.c */
/* Runs the sweep the plan asks for. The session's expected values are (re)computed here. */
int bench_sweep_all(const bench_session *session, bench_sweep_result *sweep);
/* Times the pipelined run with `setting` (the plan with the swept value put in) into `row`,
 * checking every output against expected values for the setting's iters. Leaves the
 * pipeline in *pipeline, even after a failure, for the caller to keep or destroy. `title`
 * ("chunk 262144 (1/7)") names the row in progress and messages. */
int bench_sweep_measure(const bench_session *session, const bench_plan *setting,
                        const char *title, bench_sweep_row *row, sp_pipeline **pipeline);

/* bench_sweep_run.c: under a SAMPLED check, a serial run whose output, once it passes, is the
 * expected value of every later run (nothing to do otherwise). */
int bench_adopt_serial_output(const bench_session *s, const bench_plan *setting,
                              const sp_sinmix_params *params);

/* bench_group.c: --devices */
typedef struct bench_group_result {
    size_t n_devices;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT];  /* runs without a report */
    sp_report report;                  /* the merged report of the run with one */
    sp_group_device_stats stats[BENCH_MAX_DEVICES]; /* each device's part in that run */
} bench_group_result;

int bench_group_all(const bench_session *session, bench_group_result *result);
void bench_group_print_result(const bench_plan *plan, const bench_expected *expected,
                              const bench_totals *checks, const bench_group_result *result,
                              FILE *out);

/* bench_progress.c */
void bench_progress_init(bench_progress *progress, int json);
/* On a terminal: shows `text` in place of the line shown before. Elsewhere: nothing. */
void bench_progress_update(bench_progress *progress, const char *text);
/* Not on a terminal: prints `text` as a line of its own. On a terminal: nothing. */
void bench_progress_note(bench_progress *progress, const char *text);
/* Erases the line on a terminal: call before printing anything else on stderr. */
void bench_progress_clear(bench_progress *progress);

/* bench_export.c */
/* Opens the files the plan names; prints what failed and returns CLI_EXIT_FAILURE. */
int bench_exports_open(const bench_plan *plan, bench_exports *exports);
int bench_exports_wanted(const bench_exports *exports);
/* Writes the pipeline's last run made with a report (`report` is that run's) into the open
 * files and closes them; `describes` says which run that is. */
int bench_exports_write(bench_exports *exports, const sp_pipeline *pipeline,
                        const sp_report *report, const char *describes);
/* After a failure: closes the files and removes those not written (regular files we opened
 * only). */
void bench_exports_abandon(bench_exports *exports);
/* The files written and the run they show. */
void bench_exports_figures(fig_out *o, const bench_exports *exports);

/* bench_stats.c */
/* The report of the run with the (lower) median time. */
const sp_report *bench_median_report(const bench_series *series);
/* The bytes of the job each way: float32 in, float32 out. */
size_t bench_bytes(const bench_plan *plan);
/* The median run's host submit time per chunk, in microseconds. */
double bench_submit_us_per_chunk(const bench_series *series);
/* Of that, the microseconds per chunk the host waited for a free slot. */
double bench_wait_us_per_chunk(const bench_series *series);
/* Input + output bytes over the series' median time. */
double bench_series_gbps(const bench_plan *plan, const bench_series *series);
/* What the per-chunk timeline costs the run itself: the median makespan with a report over
 * the median without, less 1. */
double bench_timeline_cost(const bench_results *results);
/* What reading the timeline costs after the run has drained: the median, over the runs with
 * a report, of wall time less makespan (seconds). It also holds the call's work before the
 * first enqueue (argument checks, pinned detection, the timeline's reset), which is small
 * and which a run without a report does too, but for the reset. */
double bench_timeline_read_s(const bench_results *results);

/* bench_plan.c: the name text and JSON give the memory */
const char *bench_memory_name(bench_memory memory);

/* bench_alone.c: the GPU engines' totals in the pipelined run beside the serial run's */
void bench_alone_figures(fig_out *o, const bench_results *results);

/* bench_output.c, bench_sweep_output.c: the result as text or JSON (plan->json) */
/* The job's settings, shared by the comparison and the sweep. */
void bench_job_figures(fig_out *o, const bench_plan *plan);
/* What the checks of every run found. */
void bench_totals_figures(fig_out *o, const bench_totals *totals);
/* How every run was checked (the "verification" object), and what the checks found. */
void bench_verification_figures(fig_out *o, const bench_expected *expected,
                                const bench_totals *totals);
void bench_print_result(const bench_plan *plan, const bench_expected *expected,
                        const bench_results *results, const bench_exports *exports, FILE *out);
void bench_sweep_print_result(const bench_plan *plan, const bench_sweep_result *sweep,
                              const bench_exports *exports, FILE *out);

#endif /* SP_CLI_BENCH_H */
