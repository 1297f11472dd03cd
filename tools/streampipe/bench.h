/* `streampipe bench`: the types its files pass between them. The flow, in bench.c:
 * options (bench_args.c) -> plan (bench_plan.c) -> buffers and input (bench_data.c) ->
 * expected values and checks (bench_verify.c, bench_compare.c) -> timed runs (bench_run.c)
 * -> text or JSON (bench_report.c, bench_json.c). */
#ifndef SP_CLI_BENCH_H
#define SP_CLI_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "streampipe.h"

#define BENCH_UNSET (~0ULL) /* an option the user did not give */
#define BENCH_MAX_REPEAT 100
#define BENCH_SHOW_BAD 5    /* mismatches printed before giving up */

typedef enum bench_memory { BENCH_MEMORY_PAGEABLE = 0, BENCH_MEMORY_PINNED = 1 } bench_memory;

/* What the user asked for. BENCH_UNSET values are filled in by bench_plan_resolve once the
 * backend is known, because the defaults differ between CUDA and HOST. */
typedef struct bench_options {
    sp_backend_kind backend;
    int device;
    int workload;                    /* index from bench_find_workload; -1 = default */
    unsigned long long records;
    unsigned long long iters;
    unsigned long long chunk_records;        /* 0 = let the library choose */
    unsigned long long serial_chunk_records;
    unsigned long long depth;                /* 0 = let the library choose */
    unsigned long long staging_threads;      /* 0 = let the library choose */
    unsigned long long repeat;
    unsigned long long seed;
    bench_memory memory;
    int json;
} bench_options;

/* The job, every value decided. */
typedef struct bench_plan {
    const char *workload;
    int workload_changed;       /* records, iters or chunk set by an option */
    sp_backend_kind backend;    /* what the context resolved to: HOST or CUDA */
    int device;
    size_t records;
    unsigned iters;
    size_t chunk_records;        /* pipelined run; 0 = library's choice */
    size_t serial_chunk_records; /* serial baseline; 0 = library's choice */
    unsigned depth;
    unsigned staging_threads;
    unsigned repeat;
    unsigned long long seed;
    bench_memory memory;
    unsigned host_workers;       /* threads for filling and verifying on the host */
    int json;
} bench_plan;

/* Input and output of the job, and pinned buffers of the same size for the ceiling check. */
typedef struct bench_buffers {
    sp_context *ctx;
    size_t records;
    bench_memory memory;
    float *in;
    float *out;
    float *ceiling_in;  /* == in / out when memory is pinned */
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

/* One kind of run, repeated. */
typedef struct bench_series {
    const char *name;
    size_t runs;
    double seconds[BENCH_MAX_REPEAT];
    sp_report reports[BENCH_MAX_REPEAT];
} bench_series;

typedef struct bench_results {
    bench_series serial;
    bench_series pipelined;   /* timed without a report: no timing events at all */
    bench_series traced;      /* the same pipeline with a report: per-chunk timings */
    bench_series ceiling;     /* 0 stages, pinned: what the copy engines alone reach */
    double max_abs_error;     /* the largest seen by any check against the host reference */
    double max_rel_error;
    size_t elements_checked;  /* over every run */
    double verify_s;          /* host time spent checking outputs */
} bench_results;

/* bench_args.c */
/* Returns CLI_EXIT_OK to go on, or an exit code to stop with; *help_shown = 1 after --help. */
int bench_parse_args(int argc, char **argv, bench_options *options, int *help_shown);

/* bench_plan.c */
int bench_find_workload(const char *name);
void bench_print_workloads(FILE *out);
void bench_plan_resolve(const bench_options *options, sp_backend_kind backend,
                        bench_plan *plan);

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
void bench_describe_check(const bench_expected *expected, FILE *out);
/* Checks the output of a sinmix run (serial or pipelined). Under SAMPLED, the first run
 * checked must be a serial one: its output, once it passes, is adopted as the expected value.
 * Returns 0 when every element is right. */
int bench_check_sinmix(bench_expected *expected, const float *got, size_t n,
                       bench_check *check);
/* A 0-stage run must give back its input exactly. */
int bench_check_copy(const float *got, const float *in, size_t n, unsigned workers,
                     bench_check *check);
void bench_print_mismatches(const bench_check *check, const char *run, FILE *out);

/* bench_run.c */
int bench_run_all(sp_context *ctx, const bench_plan *plan, bench_buffers *buffers,
                  bench_expected *expected, bench_results *results);

/* bench_stats.c */
double bench_median(const double *values, size_t n);
/* The report of the run with the (lower) median time. */
const sp_report *bench_median_report(const bench_series *series);
size_t bench_bytes_in(const bench_plan *plan);
size_t bench_bytes_out(const bench_plan *plan);
double bench_gbps(double bytes, double seconds);
/* Input + output bytes over the series' median time. */
double bench_series_gbps(const bench_plan *plan, const bench_series *series);

/* bench_names.c */
const char *bench_memory_name(bench_memory memory);
const char *bench_engine_kind_name(sp_engine_kind kind);

/* bench_report.c, bench_json.c */
void bench_print_text(const bench_plan *plan, const bench_expected *expected,
                      const bench_results *results, FILE *out);
void bench_print_json(const bench_plan *plan, const bench_expected *expected,
                      const bench_results *results, FILE *out);

#endif /* SP_CLI_BENCH_H */
