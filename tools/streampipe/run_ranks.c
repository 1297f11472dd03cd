/* One rank of `streampipe run` under mpirun: rank r of R takes records [lo, hi) of the input,
 * an even contiguous share, and reads and writes them positionally in the one output. The
 * order of agreement, so that no rank waits for one that has stopped:
 *   1. every rank opens its context, stages and input; rank 0 creates the temporary output
 *      at full size; all agree that this worked, then rank 0 says the temporary name
 *   2. every rank opens that output and makes its pipeline; all agree again
 *   3. every rank runs its range and flushes its writes; all agree a third time
 *   4. rank 0 moves the output into place; all agree on that, and rank 0 prints the report
 * Whenever an agreement fails every rank exits 1, and rank 0 removes the temporary output
 * (run_files_close). STREAMPIPE_TEST_FAIL_RANK=r makes rank r fail its range as if its source
 * had failed: for the tests of that path only (.ci/run), never set otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stats.h"
#include "figures.h"
#include "run_cmd.h"
#include "run_mpi.h"

/* The figures each rank sends rank 0. */
enum { FIG_RECORDS, FIG_FIRST, FIG_SECONDS, FIG_DEVICE, FIG_N };

/* This rank's share: the first n % size ranks take one record more. */
static void rank_range(size_t n, const run_mpi *m, size_t *first, size_t *count)
{
    size_t size = (size_t)m->size, rank = (size_t)m->rank;
    size_t base = n / size, extra = n % size;
    *first = base * rank + (rank < extra ? rank : extra); /* <= n: no overflow */
    *count = base + (rank < extra);
}

static int test_fail_rank(const run_mpi *m)
{
    const char *v = getenv("STREAMPIPE_TEST_FAIL_RANK");
    return v && *v && atoi(v) == m->rank;
}

/* Every rank's rc agreed on: this rank's failure, or a plain failure when only another
 * rank failed (that rank has said why). */
static int agree(const run_mpi *m, int rc)
{
    if (run_mpi_all_ok(m, rc == CLI_EXIT_OK))
        return CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK && m->rank == 0)
        fprintf(stderr, "streampipe: run: stopping: another rank failed\n");
    return rc != CLI_EXIT_OK ? rc : CLI_EXIT_FAILURE;
}

/* Steps 1 and 2. */
static int open_everything(run_job *job, const run_options *o, const run_mpi *m, int rc)
{
    if (rc == CLI_EXIT_OK)
        rc = run_build_stages(&job->stages, job->ctx);
    if (rc == CLI_EXIT_OK && m->rank == 0)
        rc = run_files_open(&job->files, o->input_path, o->output_path,
                            job->stages.in_record_bytes, job->stages.out_record_bytes, 1, NULL,
                            o->input_format);
    if ((rc = agree(m, rc)) != CLI_EXIT_OK)
        return rc;
    char temp[4096] = "";
    if (m->rank == 0 &&
        (size_t)snprintf(temp, sizeof temp, "%s", run_files_temp_path(&job->files)) >=
            sizeof temp) {
        fprintf(stderr, "streampipe: run: the temporary output's name is too long for the "
                "other ranks: %s\n", run_files_temp_path(&job->files));
        rc = CLI_EXIT_FAILURE;
    }
    if (run_mpi_broadcast_text(m, temp, sizeof temp) != 0)
        rc = CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK && m->rank != 0) /* rank 0's output, opened by its name */
        rc = run_files_open(&job->files, o->input_path, o->output_path,
                            job->stages.in_record_bytes, job->stages.out_record_bytes, 1, temp,
                            o->input_format);
    if (rc == CLI_EXIT_OK)
        rc = run_make_pipeline(job, o);
    return agree(m, rc);
}

/* Step 3 on this rank: its range through the pipeline, then flushed to disk. */
static int run_range(run_job *job, const run_mpi *m, size_t first, size_t count)
{
    const sp_io *io = run_files_range(&job->files, first, count);
    sp_status st = SP_OK;
    if (test_fail_rank(m)) {
        fprintf(stderr, "streampipe: rank %d: failing on purpose (STREAMPIPE_TEST_FAIL_RANK)\n",
                m->rank);
        return CLI_EXIT_FAILURE;
    }
    if (count)
        st = io ? sp_pipeline_run_io(job->pipeline, io, NULL) : SP_ERR_INVALID_ARGUMENT;
    if (st != SP_OK) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "rank %d: ", m->rank);
        run_files_print_io_error(&job->files, prefix);
        return cli_report_failure("streaming the file", st,
                                  sp_pipeline_last_error(job->pipeline));
    }
    return run_files_sync(&job->files);
}

static const fig_column rank_columns[] = {
    {"rank", "rank", 6, "%llu", FIG_UINT},
    {"device", "device", 6, "%llu", FIG_UINT},
    {"first_record", "first record", 14, "%llu", FIG_UINT},
    {"records", "records", 12, "%llu", FIG_UINT},
    {NULL, "share", 7, "%.1f%%", FIG_NUM},
    {"seconds", "seconds", 9, "%.3f", FIG_NUM},
    {"gbps_in", "GB/s in", 9, "%.2f", FIG_NUM},
};
#define N_RANK_COLUMNS (sizeof rank_columns / sizeof rank_columns[0])

static void rank_table(fig_out *out, const run_files *f, const run_mpi *m, const double *all)
{
    fig_table(out, "per_rank", rank_columns, N_RANK_COLUMNS);
    for (size_t r = 0; r < (size_t)m->size; r++) {
        const double *fig = &all[r * FIG_N];
        double share = f->n_records ? 100.0 * fig[FIG_RECORDS] / (double)f->n_records : 100.0;
        fig_value v[N_RANK_COLUMNS] = {
            {.uint = r}, {.uint = (unsigned long long)fig[FIG_DEVICE]},
            {.uint = (unsigned long long)fig[FIG_FIRST]},
            {.uint = (unsigned long long)fig[FIG_RECORDS]}, {.num = share},
            {.num = fig[FIG_SECONDS]},
            {.num = cli_gbps(fig[FIG_RECORDS] * (double)f->in_record_bytes, fig[FIG_SECONDS])}};
        fig_row(out, NULL, rank_columns, N_RANK_COLUMNS, v);
    }
    fig_table_end(out);
}

/* Rank 0's report from every rank's figures: the run takes as long as its slowest rank. */
static void print_ranks(const run_job *job, const run_options *o, const run_mpi *m,
                        const double *all)
{
    const run_files *f = &job->files;
    size_t slowest = 0;
    for (size_t r = 1; r < (size_t)m->size; r++)
        if (all[r * FIG_N + FIG_SECONDS] > all[slowest * FIG_N + FIG_SECONDS])
            slowest = r;
    double seconds = all[slowest * FIG_N + FIG_SECONDS];
    double bytes = (double)f->n_records * (double)f->in_record_bytes;
    fig_out out;
    fig_begin(&out, stdout, o->json);
    run_print_job(&out, job, o);
    fig_uint(&out, "ranks", "ranks", "%llu", (unsigned long long)m->size);
    fig_num(&out, "seconds", "seconds", "%.3f s (the slowest rank's)", seconds);
    fig_num(&out, "gbps_in", "rate in", "%.2f GB/s", cli_gbps(bytes, seconds));
    rank_table(&out, f, m, all);
    fig_uint(&out, "slowest_rank", "slowest rank", "%llu", slowest);
    fig_end(&out);
}

int run_ranks_go(run_job *job, const run_options *o, const run_mpi *m, int rc, int device)
{
    if (o->resume && m->rank == 0) /* the ranks share one temporary output, and no journal */
        fprintf(stderr, "streampipe: run: --resume is not available under mpirun: starting "
                "at the first record\n");
    rc = open_everything(job, o, m, rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t first, count;
    rank_range(job->files.n_records, m, &first, &count);
    double t0 = cli_now_s();
    rc = run_range(job, m, first, count);
    double seconds = cli_now_s() - t0;
    /* every rank allocates, so that all agree before the gather, a collective call */
    double *all = calloc((size_t)m->size, FIG_N * sizeof *all);
    if (!all)
        fprintf(stderr, "streampipe: rank %d: no memory for the figures\n", m->rank);
    if ((rc = agree(m, all ? rc : CLI_EXIT_FAILURE)) != CLI_EXIT_OK) {
        free(all);
        return rc;
    }
    double mine[FIG_N] = {[FIG_RECORDS] = (double)count, [FIG_FIRST] = (double)first,
                          [FIG_SECONDS] = seconds, [FIG_DEVICE] = (double)device};
    rc = run_mpi_gather(m, mine, FIG_N, all) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK && m->rank == 0)
        rc = run_files_commit(&job->files);
    if ((rc = agree(m, rc)) != CLI_EXIT_OK) {
        free(all);
        return rc;
    }
    if (m->rank == 0)
        print_ranks(job, o, m, all);
    free(all);
    return CLI_EXIT_OK;
}
