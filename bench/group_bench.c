/* Issue 13's one-GPU benchmarks, in one process (medians of --repeat): a run of the seed and
 * transfer workloads (sinmix 100 and 0 iterations, float32 records) as
 *   plain     sp_pipeline_run on one pipeline
 *   group 1   sp_group_run over a group of that one device
 *   group 2   sp_group_run over a group of two pipelines on the same device
 * over the same pinned (or --pageable) arrays. Every output element of every timed run is
 * checked bit for bit against the plain run's first output, which is itself checked against
 * the C reference on 2^16 sampled elements. Prints a table and one JSON line per workload.
 *
 * usage: group_bench [--backend host|cuda] [--device N] [--records N] [--repeat R]
 *                    [--pageable] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streampipe.h"
#include "streampipe_group.h"
#include "streampipe_ops.h"

#include "bench_util.h"

enum { PLAIN, GROUP1, GROUP2, N_MODES };
static const char *const mode_names[N_MODES] = {"plain pipeline", "group of 1 device",
                                                "group of 2 on 1 device"};

typedef struct bench_args {
    sp_backend_kind backend;
    int device, repeat, pageable;
    size_t records;
} bench_args;

typedef struct workload {
    const char *name;
    unsigned iters;
} workload;

static size_t count_bad(const float *got, const float *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(&got[i], &want[i], sizeof *got) != 0;
    return bad;
}

typedef struct runners {
    sp_context *ctx;
    sp_pipeline *plain;
    sp_group *group[2]; /* of 1 and of 2 members */
} runners;

static sp_status run_mode(const runners *r, int mode, const float *in, size_t n, float *out)
{
    sp_report report; /* every mode makes a report, as a user asking for figures would */
    if (mode == PLAIN)
        return sp_pipeline_run(r->plain, in, n, out, &report);
    return sp_group_run(r->group[mode - GROUP1], in, n, out, &report);
}

static int failed(const char *what, sp_status st, const char *why)
{
    fprintf(stderr, "group_bench: %s: %s: %s\n", what, sp_status_name(st), why);
    return 1;
}

static int make_runners(const bench_args *a, const sp_pipeline_config *cfg, runners *r)
{
    int same_twice[2] = {a->device, a->device};
    sp_status st = sp_context_create(a->backend, a->device, &r->ctx);
    if (st != SP_OK)
        return failed("opening the device", st, sp_context_last_error(r->ctx));
    st = sp_pipeline_create(r->ctx, cfg, &r->plain);
    if (st != SP_OK)
        return failed("making the pipeline", st, sp_context_last_error(r->ctx));
    sp_backend_kind kind = sp_context_backend(r->ctx);
    for (size_t g = 0; g < 2; g++) {
        st = sp_group_create(kind, same_twice, g + 1, cfg, &r->group[g]);
        if (st != SP_OK)
            return failed("making a group", st, sp_group_last_error(r->group[g]));
    }
    return 0;
}

static void free_runners(runners *r)
{
    for (size_t g = 0; g < 2; g++)
        sp_group_destroy(r->group[g]);
    sp_pipeline_destroy(r->plain);
    sp_context_destroy(r->ctx);
}

/* Times every mode over the same arrays; returns the bad elements, or SIZE_MAX on failure. */
static size_t time_modes(const bench_args *a, const runners *r, const workload *w,
                         const float *in, float *out, float *want, double t[N_MODES])
{
    size_t n = a->records, bad = 0;
    double times[N_MODES][64];
    for (int rep = -1; rep < a->repeat; rep++) {
        for (int mode = 0; mode < N_MODES; mode++) {
            memset(out, 0xFF, n * sizeof(float));
            double t0 = now_s();
            sp_status st = run_mode(r, mode, in, n, out);
            double dt = now_s() - t0;
            if (st != SP_OK) {
                failed(mode_names[mode], st, mode == PLAIN
                                                 ? sp_pipeline_last_error(r->plain)
                                                 : sp_group_last_error(r->group[mode - 1]));
                return SIZE_MAX;
            }
            if (rep == -1 && mode == PLAIN) { /* the expected output, checked once */
                memcpy(want, out, n * sizeof(float));
                bad += sampled_bad(in, want, n, w->iters);
            }
            bad += count_bad(out, want, n);
            if (rep >= 0)
                times[mode][rep] = dt;
        }
    }
    for (int mode = 0; mode < N_MODES; mode++)
        t[mode] = median(times[mode], a->repeat);
    return bad;
}

static void print_rows(const bench_args *a, const runners *r, const workload *w,
                       const double t[N_MODES], size_t bad)
{
    double gb = (double)a->records * 8.0 / 1e9;
    const char *backend = sp_backend_name(sp_context_backend(r->ctx));
    printf("%s workload, %zu records (%s, %s), median of %d:\n", w->name, a->records, backend,
           a->pageable ? "pageable" : "pinned", a->repeat);
    for (int mode = 0; mode < N_MODES; mode++)
        printf("  %-24s %8.2f ms  %6.1f GB/s  %.3fx the plain run's speed\n", mode_names[mode],
               1e3 * t[mode], gb / t[mode], t[PLAIN] / t[mode]);
    printf("{\"tool\":\"group_bench\",\"workload\":\"%s\",\"backend\":\"%s\",\"memory\":\"%s\","
           "\"records\":%zu,\"plain_s\":%.6f,\"group1_s\":%.6f,\"group2_s\":%.6f,"
           "\"group1_vs_plain\":%.4f,\"group2_vs_plain\":%.4f,\"bad_elements\":%zu}\n",
           w->name, backend, a->pageable ? "pageable" : "pinned", a->records, t[PLAIN],
           t[GROUP1], t[GROUP2], t[PLAIN] / t[GROUP1], t[PLAIN] / t[GROUP2], bad);
}

static int bench_workload(const bench_args *a, const workload *w)
{
    sp_sinmix_params params = {.iters = w->iters};
    sp_stage stage = sp_sinmix_stage(&params);
    sp_pipeline_config cfg = {.in_record_bytes = 4, .stages = &stage, .n_stages = 1};
    runners r = {0};
    size_t n = a->records, bytes = n * sizeof(float);
    float *in = NULL, *out = NULL, *want = malloc(bytes);
    int rc = make_runners(a, &cfg, &r);
    if (rc == 0 && a->pageable) {
        in = malloc(bytes);
        out = malloc(bytes);
    } else if (rc == 0 && (sp_host_alloc(r.ctx, bytes, (void **)&in) != SP_OK ||
                           sp_host_alloc(r.ctx, bytes, (void **)&out) != SP_OK)) {
        rc = failed("pinning the arrays", SP_ERR_OUT_OF_MEMORY, sp_context_last_error(r.ctx));
    }
    if (rc == 0 && (!in || !out || !want))
        rc = failed("allocating the arrays", SP_ERR_OUT_OF_MEMORY, "malloc");
    if (rc == 0) {
        uint64_t x = (uint64_t)time(NULL) | 1; /* fresh data every run */
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in[i] = (float)(x >> 40) * (8.0f / 16777216.0f) - 4.0f;
        }
        double t[N_MODES];
        size_t bad = time_modes(a, &r, w, in, out, want, t);
        if (bad != SIZE_MAX)
            print_rows(a, &r, w, t, bad);
        rc = bad != 0;
    }
    if (a->pageable) {
        free(in);
        free(out);
    } else if (r.ctx) {
        sp_host_free(r.ctx, in);
        sp_host_free(r.ctx, out);
    }
    free(want);
    free_runners(&r);
    return rc;
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){SP_BACKEND_AUTO, 0, 5, 0, (size_t)1 << 27};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--pageable") == 0)
            a->pageable = 1;
        else if (!v)
            return 0;
        else if (strcmp(argv[i], "--backend") == 0 && ++i)
            a->backend = strcmp(v, "host") == 0 ? SP_BACKEND_HOST : SP_BACKEND_CUDA;
        else if (strcmp(argv[i], "--device") == 0 && ++i)
            a->device = atoi(v);
        else if (strcmp(argv[i], "--records") == 0 && ++i)
            a->records = strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "--repeat") == 0 && ++i)
            a->repeat = atoi(v);
        else
            return 0;
    }
    return a->records > 0 && a->repeat > 0 && a->repeat <= 64;
}

int main(int argc, char **argv)
{
    bench_args a;
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: group_bench [--backend host|cuda] [--device N] [--records N] "
                        "[--repeat R (1..64)] [--pageable]\n");
        return 64;
    }
    static const workload workloads[] = {{"seed", 100}, {"transfer", 0}};
    int rc = 0;
    for (size_t w = 0; w < 2 && rc == 0; w++)
        rc = bench_workload(&a, &workloads[w]);
    return rc;
}
