/* `streampipe bench`: the types its files pass between them. The flow, in bench.c:
 * options and defaults (bench_plan.c) -> buffers and input (bench_data.c) -> expected
 * values and checks (bench_verify.c) -> timed, verified runs (bench_timed.c): the comparison
 * (bench_run.c), a row per combination of the --workload, --group-size, --iters, --chunk
 * and --depth lists (bench_sweep.c), one sp_group run over several devices (bench_group.c),
 * one run against batches through a stream (bench_batches.c) or a generator source against
 * arrays (bench_source.c) -> text or JSON from one description (bench_output.c, bench_sweep_output.c), trace and SVG files
 * (bench_export.c), progress (bench_progress.c). */
#ifndef SP_CLI_BENCH_H
#define SP_CLI_BENCH_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "streampipe.h"
#include "streampipe_group.h"
#include "figures.h"
#include "flight.h"
#include "live.h"
#include "options.h"
#include "report_out.h"
#include "stats.h"
#include "streampipe_ops.h"

#define BENCH_MAX_REPEAT CLI_MAX_SAMPLES
#define BENCH_NOTES_BYTES 512
#define BENCH_MAX_DEVICES 64 /* --devices */
#define BENCH_MAX_ROWS 256   /* combinations of the --workload, --iters, --chunk and --depth
                                lists */
#define BENCH_MAX_WORKLOADS 8 /* items of a --workload list */

typedef enum bench_memory { BENCH_MEMORY_PAGEABLE = 0, BENCH_MEMORY_PINNED = 1 } bench_memory;

/* Options the user did not give; bench_plan_resolve sets defaults that differ by backend. */
#define BENCH_UNSET_SIZE SIZE_MAX
#define BENCH_UNSET_UINT UINT_MAX
#define BENCH_UNSET_SEED (~0ULL)
#define BENCH_UNSET_TIMELINE ((sp_timeline_mode)-1)

/* The job: what the options say, then, once the backend is known, every value decided. */
typedef struct bench_plan {
    size_t n_workloads;          /* --workload's items (0: not given, the backend's default;
                                    once resolved, at least 1) */
    int workload_indices[BENCH_MAX_WORKLOADS];
    const char *workload;        /* its name, once resolved (the list's, comma-separated) */
    char workload_names[96];
    int workload_changed;        /* records, iters or chunk set by an option */
    int records_given, iters_given, chunk_given, serial_chunk_given; /* by an option: the
                                    same in every workload's rows */
    sp_backend_kind backend;     /* asked for; once resolved, HOST or CUDA */
    int device;
    size_t records;
    unsigned iters;
    size_t chunk_records;        /* pipelined run; 0 = library's choice */
    size_t serial_chunk_records; /* serial baseline; 0 = library's choice */
    unsigned depth;              /* 0 = library's choice */
    unsigned staging_threads;    /* 0 = library's choice */
    unsigned stage_streams;      /* sp_stage.streams of the sinmix stage; 0 = one queue */
    size_t copy_piece_bytes;     /* 0 = whole copies */
    size_t max_pinned, max_device; /* the pipelined runs' memory budget; 0 = none */
    sp_graph_mode graph;         /* not OFF: stream mode is timed beside */
    sp_timeline_mode timeline;   /* how the run with a report is timed (--timeline); unset
                                    (BENCH_UNSET_TIMELINE): sampled, or events for --trace
                                    and --svg, which show every operation */
    int timeline_full;           /* --timeline-full: also time a run with the full timeline
                                    (events) in every repeat, beside the sampled one */
    cli_flight_options flight;   /* --flight-recorder: the pipelined pipeline's */
    int copy_kernel;             /* pipelined runs copy by kernel; the ceiling keeps engines */
    unsigned repeat;
    unsigned long long seed;
    bench_memory memory;         /* the host ends' memory */
    int in_device, out_device;   /* --in, --out device: that end is device memory */
    unsigned host_workers;       /* threads for filling and verifying on the host */
    int json;
    cli_live_options live;       /* --live, --metrics */
    const char *trace_path, *svg_path;     /* NULL = none */
    int group;                   /* --devices (or one --group-size): one sp_group run over
                                    several devices */
    size_t batches;              /* --batches B: one run against B batches through a stream;
                                    0 = none */
    int source;                  /* --source generator (1): a generator source against the
                                    arrays, the input its values; 0: array */
    size_t n_devices;            /* 0: every visible device */
    int devices[BENCH_MAX_DEVICES];
    /* --iters, --chunk and --depth as given (n 0: not given); once resolved, every value of
       each, the one above where the option was no list */
    cli_list iters_list, chunk_list, depth_list;
    cli_list group_list;         /* --group-size: 0 = the plain pipeline, N = an sp_group of N
                                    pipelines on --device */
    int rows;                    /* a list or "sweep" among them (or several workloads): the
                                    pipelined run timed for every combination
                                    (bench_sweep.c), no comparison */
    char notes[BENCH_NOTES_BYTES]; /* what the plan changed from the options, and why */
} bench_plan;

/* Input and output of the job, and pinned buffers of the same size for the ceiling run. */
typedef struct bench_buffers {
    sp_context *ctx;
    size_t records;
    bench_memory memory;
    float *in, *out;
    float *ceiling_in, *ceiling_out; /* == in, out when pinned, and with no ceiling run */
    /* --in/--out device: the ends the runs read and write (sp_device_alloc; NULL for a host
       end); in and out are then the host copies filled, poisoned and checked */
    float *device_in, *device_out;
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

/* One kind of run, repeated. `seconds` is the caller's wall time around each run, what rates
 * come from; `makespan` the library's own (sp_pipeline_last_makespan_s). */
typedef struct bench_series {
    const char *name;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT];
    double makespan[BENCH_MAX_REPEAT];
    sp_report reports[BENCH_MAX_REPEAT];
} bench_series;

/* What the checks of every run, taken together, found. */
typedef struct bench_totals {
    double max_abs_error, max_rel_error; /* against the host reference */
    size_t elements_checked;
    double verify_s;                     /* host time spent checking outputs */
} bench_totals;

typedef struct bench_results {
    bench_series serial;
    bench_series pipelined; /* timed without a report: no timing events at all */
    bench_series traced;    /* the same pipeline with a report: per-chunk timings */
    bench_series ceiling;   /* 0 stages, pinned: what the copy engines alone reach */
    bench_series stream;    /* with --graph: the pipelined runs in stream mode */
    bench_series full;      /* with --timeline-full: the same pipeline's config, timed whole
                               (SP_TIMELINE_EVENTS), with a report */
    sp_report full_sampled[BENCH_MAX_REPEAT]; /* each of those runs' figures from the
                               sampled windows alone (sp_report_sampled_figures) */
    bench_totals checks;
    cli_tune_list tune;     /* the pipelined pipeline's chunk and depth changes */
} bench_results;

/* One row of the lists' product: the pipelined run at one combination of the settings. */
typedef struct bench_sweep_row {
    const char *workload;
    unsigned group_size;             /* 0: the plain pipeline; N: a group of N on --device */
    size_t pipelines;                /* what ran: 1, or the group's sp_group_size */
    size_t records;                  /* the workload's, or --records */
    unsigned iters;
    size_t set_chunk_records;        /* as asked: 0 = auto, the library's choice */
    unsigned set_depth;              /* the same */
    sp_sinmix_params params;         /* the stage's parameters: must outlive its pipeline */
    bench_check_method method;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT]; /* runs without a report */
    double median_s, gbps;
    double vs_best;                  /* the fastest row's median / this one's */
    sp_report report;                /* the one run with a report */
} bench_sweep_row;

typedef struct bench_sweep_result {
    size_t n_rows;
    bench_sweep_row rows[BENCH_MAX_ROWS];
    size_t workload_of[BENCH_MAX_ROWS]; /* each row's index in the --workload list */
    size_t best_row;                 /* the lowest median, the first of equals */
    bench_totals checks;
} bench_sweep_result;

/* --devices */
typedef struct bench_group_result {
    size_t n_devices;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT];  /* runs without a report */
    sp_report report;                  /* the merged report of the run with one */
    sp_group_device_stats stats[BENCH_MAX_DEVICES]; /* each device's part in that run */
    bench_totals checks;
} bench_group_result;

/* --batches, --source: one kind of run, repeated. */
typedef struct bench_kind_series {
    const char *name;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT]; /* runs without a report */
    double median_s, gbps;
    sp_report report;                 /* the run with one */
} bench_kind_series;

#define BENCH_BATCHES_KINDS 3
typedef struct bench_batches_result {
    size_t batches;
    bench_kind_series series[BENCH_BATCHES_KINDS]; /* one sp_pipeline_run, B runs of the
                                         batches, then the batches through one stream */
    double vs_run[BENCH_BATCHES_KINDS - 1]; /* one run's median / the runs', the stream's */
    bench_totals checks;
} bench_batches_result;

/* --source generator: the generator source (two ways of copying) against arrays. */
#define BENCH_SOURCE_KINDS 4
typedef struct bench_source_result {
    size_t n_kinds;                   /* 3 when the job's memory is pinned: no second array */
    bench_kind_series series[BENCH_SOURCE_KINDS];
    double vs_array[BENCH_SOURCE_KINDS]; /* the array's median / each kind's */
    bench_totals checks;
} bench_source_result;

/* The progress line on stderr. */
typedef struct bench_progress {
    int live;  /* rewrite one line in place: stderr is a terminal, no --json, no NO_PROGRESS */
    int shown; /* columns of the line now on screen; 0 = none */
    const atomic_int *panel; /* non-zero once the live panel shows the runs instead: print
                                nothing (cli_live_panel_flag); NULL: no panel */
} bench_progress;

/* --trace and --svg files, opened before the runs and written after them. */
typedef enum bench_export_kind { BENCH_EXPORT_TRACE, BENCH_EXPORT_SVG, BENCH_EXPORT_KINDS }
    bench_export_kind;

typedef struct bench_exports {
    const char *path[BENCH_EXPORT_KINDS]; /* NULL = not asked for */
    FILE *file[BENCH_EXPORT_KINDS];       /* open until written or abandoned */
    int opened[BENCH_EXPORT_KINDS];       /* a regular file we opened: ours to remove */
    int written[BENCH_EXPORT_KINDS];
    char describes[128];                  /* which run the files show */
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
    cli_live *live;           /* --live and --metrics watch each timed run */
} bench_session;

typedef sp_status (*bench_run_fn)(sp_pipeline *pipeline, const void *in, size_t n_records,
                                  void *out, sp_report *report);

/* One kind of run: which pipeline (or group), how, and on which memory. */
typedef struct bench_run_spec {
    const char *name;
    sp_pipeline *pipeline;
    bench_run_fn run;
    const float *in;
    float *out;
    int copy_only;   /* the output must equal the input */
    sp_group *group; /* not NULL: sp_group_run over its devices instead */
    const float *run_in; /* what the run reads and writes when not in and out: device */
    float *run_out;      /* memory (out is then the host copy poisoned and checked) */
} bench_run_spec;

/* Input + output bytes (float32 each way) over `seconds`, in GB/s. */
static inline double bench_gbps(const bench_plan *plan, double seconds)
{
    return cli_gbps(2.0 * (double)plan->records * sizeof(float), seconds);
}

/* Bytes a run of the plan moves over PCIe: each host end's (a device end's stay on the
 * device); what every report's pcie_bytes must say. */
static inline size_t bench_pcie_bytes(const bench_plan *plan)
{
    size_t each_way = plan->records * sizeof(float);
    return (plan->in_device ? 0 : each_way) + (plan->out_device ? 0 : each_way);
}

/* bench_plan.c. CLI_EXIT_OK to go on, CLI_EXIT_HELP after --help, or a usage error. */
int bench_parse_args(int argc, char **argv, bench_plan *plan);
/* Fills in what the options left unset, now that the context says which backend runs. */
void bench_plan_resolve(bench_plan *plan, sp_backend_kind backend);
/* The resolved plan with the values of its workload number `index` (of the --workload list)
 * where no option set them: records, iters, chunk and serial chunk, each chunk cut to the
 * records. */
void bench_plan_workload(const bench_plan *plan, size_t index, bench_plan *setting);
const char *bench_memory_name(bench_memory memory);
/* bench_data.c */
int bench_buffers_alloc(sp_context *ctx, const bench_plan *plan, bench_buffers *buffers);
void bench_buffers_free(bench_buffers *buffers);
/* Fresh floats in [-2, 2] from `seed`; the same seed gives the same data at any thread count. */
void bench_fill_input(float *in, size_t n, unsigned long long seed, unsigned workers);

/* Indices for a sampled check: every one when n == records, else random ones from `seed`
 * (repeats do no harm). */
void bench_choose_samples(unsigned long long seed, size_t records, size_t *index, size_t n);

/* bench_verify.c */
/* Computes the host reference (timed) for the plan's iters. */
int bench_expected_prepare(const bench_plan *plan, const float *in, bench_expected *expected);
void bench_expected_free(bench_expected *expected);
const char *bench_check_method_name(bench_check_method method);
const char *bench_tolerance_text(void);
/* What the check does, in a sentence, into buf. */
const char *bench_check_description(const bench_expected *expected, char *buf, size_t size);
/* Checks every element of the run's output, adds to s->checks and prints what was wrong.
 * Under SAMPLED the first run checked must be a serial one: its output, once it passes, is
 * adopted as the expected value. */
int bench_check_output(const bench_session *s, const bench_run_spec *spec, const char *label);
/* Elements of got[0..n) that differ from in (`copy`: bit for bit) or from sinmix of it at
 * iters 0 within the tolerance; for the latency command. */
size_t bench_count_mismatches(const float *in, const float *got, size_t n, int copy,
                              unsigned workers);

/* bench_timed.c */
sp_pipeline_config bench_pipeline_config(const bench_plan *plan);
/* sp_sinmix_stage(params) on plan->stage_streams queues; params must outlive the pipeline. */
sp_stage bench_sinmix_stage(const bench_plan *plan, const sp_sinmix_params *params);
/* `config` with `stage` as its one stage (NULL: a copy-only pipeline). */
int bench_create_pipeline(sp_context *ctx, const sp_stage *stage, sp_pipeline_config config,
                          const char *what, sp_pipeline **out);
/* The figures of a run made without a report that the library still tells. */
void bench_run_shape(const sp_pipeline *pipeline, size_t records, sp_report *shape);
/* Poisons the output, times one run (with a report when `report` is not NULL) and checks
 * every element. `label` ("pipelined run 2") names the run in messages. */
int bench_timed_run(const bench_session *session, const bench_run_spec *spec,
                    const char *label, sp_report *report, double *seconds);
/* --repeat runs without a report into seconds[] (*runs counts those done), then one with a
 * report into *report; on a terminal the progress line shows "[title] run 2/3 0.204 s". */
int bench_time_repeats(const bench_session *session, const bench_run_spec *spec,
                       const char *title, double *seconds, size_t *runs, sp_report *report);
/* bench_time_repeats into `series`, with its median and rate. */
int bench_time_kind(const bench_session *session, const bench_run_spec *spec,
                    bench_kind_series *series);
/* Under a SAMPLED check, a serial run whose output, once it passes, is the expected value of
 * every later run (nothing to do otherwise). */
int bench_adopt_serial_output(const bench_session *s, const bench_plan *setting,
                              const sp_sinmix_params *params);

/* bench_run.c, bench_sweep.c, bench_group.c, bench_batches.c, bench_source.c: the kinds of
 * job (the comparison, a row per combination of the lists, one group run, batches through a
 * stream, a generator source against arrays). */
int bench_run_all(const bench_session *session, bench_results *results);
/* The session's expected values are (re)computed here, for each row's iters. */
int bench_sweep_all(const bench_session *session, bench_sweep_result *sweep);
int bench_group_all(const bench_session *session, bench_group_result *result);
/* An sp_group of the session plan's devices, each pipeline's one stage `sinmix`. */
int bench_create_group(const bench_session *s, const sp_stage *sinmix, sp_group **group);
int bench_batches_all(const bench_session *session, bench_batches_result *result);
int bench_source_all(const bench_session *session, bench_source_result *result);
/* bench_source.c: the generator's values, record i's at in[i], for the expected output. */
void bench_source_fill(float *in, size_t n);

/* bench_progress.c */
void bench_progress_init(bench_progress *progress, int json);
/* On a terminal: shows `text` in place of the line shown before. Elsewhere: nothing. */
void bench_progress_update(bench_progress *progress, const char *text);
/* Not on a terminal: prints `text` as a line of its own. On a terminal: nothing. */
void bench_progress_note(bench_progress *progress, const char *text);
/* Erases the line on a terminal: call before printing anything else on stderr. */
void bench_progress_clear(bench_progress *progress);

/* bench_export.c */
int bench_exports_open(const bench_plan *plan, bench_exports *exports);
int bench_exports_wanted(const bench_exports *exports);
/* Writes the run of `report` (its timeline: keep_timeline) into the open files and closes
 * them; `describes` says which run that is. */
int bench_exports_write(bench_exports *exports, const sp_report *report, const char *describes);
/* After a failure: closes the files and removes those we opened and did not write. */
void bench_exports_abandon(bench_exports *exports);
void bench_exports_figures(fig_out *o, const bench_exports *exports);

/* bench_output.c, bench_sweep_output.c, bench_group.c: the result as text or JSON. */
void bench_job_figures(fig_out *o, const bench_plan *plan);
void bench_totals_figures(fig_out *o, const bench_totals *totals);
/* The "verification" object: how every run was checked, and what the checks found. */
void bench_verification_figures(fig_out *o, const bench_expected *expected,
                                const bench_totals *totals);
/* The head of a job whose result is a table of kinds of run (--batches, --source): the job,
 * the repeats, the verification, then the group `name` the table goes in, opened. */
void bench_kinds_begin(fig_out *o, const bench_plan *plan, const bench_expected *expected,
                       const bench_totals *checks, const char *name);
void bench_print_result(const bench_plan *plan, const bench_expected *expected,
                        const bench_results *results, const bench_exports *exports, FILE *out);
void bench_sweep_print_result(const bench_plan *plan, const bench_sweep_result *sweep,
                              const bench_exports *exports, FILE *out);
void bench_group_print_result(const bench_plan *plan, const bench_expected *expected,
                              const bench_group_result *result, FILE *out);
void bench_batches_print_result(const bench_plan *plan, const bench_expected *expected,
                                const bench_batches_result *result, FILE *out);
void bench_source_print_result(const bench_plan *plan, const bench_expected *expected,
                               const bench_source_result *result, FILE *out);

#endif /* SP_CLI_BENCH_H */
