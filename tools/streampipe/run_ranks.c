/* One rank of `streampipe run` under mpirun: rank r of R takes an even contiguous share of
 * the records still to do, and reads and writes them positionally in the one output. The
 * order of agreement, so that no rank waits for one that has stopped:
 *   1. every rank opens its context, stages and input; rank 0 creates the temporary output
 *      at full size (on a resume: claims the one the killed job's journals name, taking
 *      their records); all agree that this worked, then rank 0 says the temporary name and
 *      how many records the journals hold
 *   2. every rank opens that output (on a resume taking the same journals' records, which
 *      must come to rank 0's count) and makes its pipeline; all agree again
 *   3. every rank runs its share and makes it durable: fsync of the output, then a last
 *      journal record and fdatasync of its journal (the library's order: data before the
 *      record that claims it); all agree a third time, so every rank's data is durable
 *   4. rank 0 merges the other ranks' journals (the commit needs every record of the input
 *      in a journal), fsyncs and renames the output into place, removes every journal of
 *      this job and of the job it resumed, and flushes the folder; all agree on that, the
 *      others commit their handles (their journals already gone), rank 0 prints the report.
 * Journals: one per rank (run_rank_journal.h), ".NAME.journal.R-of-N.TOKEN" beside the
 * temporary output; --no-journal keeps none. A resume takes every journal of that pattern,
 * whatever rank count wrote it, and splits what they lack over this job's ranks.
 * Whenever an agreement fails every rank exits 1; with journals rank 0 keeps the temporary
 * output and they stay for --resume, without them rank 0 removes it (run_files_close).
 * STREAMPIPE_TEST_FAIL_RANK=r makes rank r fail its range as if its source had failed: for
 * the tests of that path only (.ci/run), never set otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "stats.h"
#include "figures.h"
#include "run_cmd.h"
#include "run_mpi.h"
#include "run_rank_journal.h"

/* The figures each rank sends rank 0. */
enum { FIG_RECORDS, FIG_FIRST, FIG_SECONDS, FIG_DEVICE, FIG_N };

/* This rank's share: the first n % size ranks take one record more. */
static void rank_range_of(size_t n, const run_mpi *m, size_t *first, size_t *count)
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

/* The job's journals (run_rank_journal.h): rank 0 picks the token and, on a resume, lists
 * the killed job's journals (on a fresh start it removes them); every rank gets both. */
typedef struct rank_journals {
    int on;                  /* journaled: not --no-journal */
    char token[32];
    char list[65536];        /* the killed job's journals, one path a line */
    const char *paths[1024]; /* list's lines, NULL-terminated */
    size_t n_paths;
    char name[4096];         /* this rank's journal's file name */
} rank_journals;

static int share_journals(const run_options *o, const run_mpi *m, rank_journals *rj)
{
    int rc = CLI_EXIT_OK;
    if (m->rank == 0) {
        snprintf(rj->token, sizeof rj->token, "%lx%x", (unsigned long)time(NULL),
                 (unsigned)getpid());
        if (rank_journals_found(o->output_path, !o->resume, rj->list, sizeof rj->list) != 0) {
            fprintf(stderr, "streampipe: run: too many journals beside '%s' to resume from\n",
                    o->output_path);
            rc = CLI_EXIT_FAILURE;
        }
    }
    if (run_mpi_broadcast_text(m, rj->token, sizeof rj->token) != 0 ||
        run_mpi_broadcast_text(m, rj->list, sizeof rj->list) != 0)
        rc = CLI_EXIT_FAILURE;
    rj->n_paths = rank_journals_split(rj->list, rj->paths,
                                      sizeof rj->paths / sizeof rj->paths[0]);
    if (rank_journal_name(rj->name, sizeof rj->name, o->output_path, rj->token, m->rank,
                          m->size) != 0)
        rc = CLI_EXIT_FAILURE;
    return rc;
}

static int open_rank_files(run_job *job, const run_options *o, const rank_journals *rj,
                           const char *temp, int resume)
{
    run_rank_journal j = {o->stages_text, resume, rj->name, rj->paths};
    return run_files_open_rank(&job->files, o->input_path, o->output_path,
                               job->stages.in_record_bytes, job->stages.out_record_bytes, temp,
                               o->input_format, rj->on ? &j : NULL);
}

/* Steps 1 and 2. On a resume rank 0 claims the temporary output the journals name and says
 * how many records they hold; the others take them only when it did (a temporary output
 * gone is a fresh start for all), and all must have found the same. */
static int open_everything(run_job *job, const run_options *o, const run_mpi *m, int rc,
                           rank_journals *rj)
{
    if (rc == CLI_EXIT_OK)
        rc = run_build_stages(&job->stages, job->ctx);
    if (rj->on && share_journals(o, m, rj) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK && m->rank == 0)
        rc = open_rank_files(job, o, rj, NULL, o->resume);
    if ((rc = agree(m, rc)) != CLI_EXIT_OK)
        return rc;
    char temp[4096] = "", resumed[32] = "";
    if (m->rank == 0 &&
        (size_t)snprintf(temp, sizeof temp, "%s", run_files_temp_path(&job->files)) >=
            sizeof temp) {
        fprintf(stderr, "streampipe: run: the temporary output's name is too long for the "
                "other ranks: %s\n", run_files_temp_path(&job->files));
        rc = CLI_EXIT_FAILURE;
    }
    if (m->rank == 0)
        snprintf(resumed, sizeof resumed, "%zu", sp_file_io_resumed(job->files.io));
    if (run_mpi_broadcast_text(m, temp, sizeof temp) != 0 ||
        run_mpi_broadcast_text(m, resumed, sizeof resumed) != 0)
        rc = CLI_EXIT_FAILURE;
    size_t held = strtoull(resumed, NULL, 10);
    if (rc == CLI_EXIT_OK && m->rank != 0) /* rank 0's output, opened by its name */
        rc = open_rank_files(job, o, rj, temp, o->resume && held > 0);
    if (rc == CLI_EXIT_OK && sp_file_io_resumed(job->files.io) != held) {
        fprintf(stderr, "streampipe: rank %d: the journals hold %zu records here, %zu on "
                "rank 0 (changed while the ranks read them?)\n", m->rank,
                sp_file_io_resumed(job->files.io), held);
        rc = CLI_EXIT_FAILURE;
    }
    if (rc == CLI_EXIT_OK)
        rc = run_make_pipeline(job, o);
    return agree(m, rc);
}

/* This rank's ranges: [lo, lo + n) of the records' share without a journal, its share of
 * the gaps the journals leave with one. NULL and *n 0 when it has none. */
static rank_range *my_ranges(const run_job *job, const run_mpi *m, size_t *n)
{
    const sp_file_io *io = job->files.io;
    size_t gaps = 0, from = 0, first, count;
    while (job->files.journaled && sp_file_io_todo_from(io, from, &first, &count)) {
        gaps++;
        from = first + count;
    }
    rank_range *r = calloc(gaps + 1, sizeof *r);
    if (!r) {
        *n = 0;
        return NULL;
    }
    if (job->files.journaled) {
        *n = rank_share(io, job->files.n_records - sp_file_io_done(io), m->rank, m->size, r,
                        gaps + 1);
    } else {
        rank_range_of(job->files.n_records, m, &r->first, &r->count);
        *n = 1;
    }
    return r;
}

/* Step 3 on this rank: its ranges through the pipeline, then flushed to disk. */
static int run_range(run_job *job, const run_mpi *m, size_t *records, size_t *first)
{
    size_t n = 0;
    rank_range *r = my_ranges(job, m, &n);
    sp_status st = SP_OK;
    *records = 0;
    *first = n ? r[0].first : 0;
    if (test_fail_rank(m)) {
        fprintf(stderr, "streampipe: rank %d: failing on purpose (STREAMPIPE_TEST_FAIL_RANK)\n",
                m->rank);
        free(r);
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < n && st == SP_OK; i++) {
        const sp_io *io = run_files_range(&job->files, r[i].first, r[i].count);
        if (r[i].count)
            st = io ? sp_pipeline_run_io(job->pipeline, io, NULL) : SP_ERR_INVALID_ARGUMENT;
        if (st == SP_OK)
            *records += r[i].count;
    }
    free(r);
    if (st != SP_OK) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "rank %d: ", m->rank);
        run_files_print_io_error(&job->files, prefix);
        return cli_report_failure("streaming the file", st,
                                  sp_pipeline_last_error(job->pipeline));
    }
    return run_files_sync(&job->files);
}

/* Step 4 on rank 0: the other ranks' journals merged (each has made its records durable and
 * said so, step 3's agreement), then the output renamed into place and every journal of the
 * job and of the job it resumed removed. */
static int commit_all(run_job *job, const run_options *o, const run_mpi *m,
                      const rank_journals *rj)
{
    for (int r = 1; rj->on && r < m->size; r++) {
        char path[8400];
        sp_status st = rank_journal_path(path, sizeof path, o->output_path, rj->token, r,
                                         m->size) == 0
                           ? sp_file_io_journal_merge(job->files.io, path)
                           : SP_ERR_INVALID_ARGUMENT;
        if (st != SP_OK) {
            fprintf(stderr, "streampipe: run: rank %d's journal: %s\n", r,
                    sp_file_io_last_error(job->files.io));
            return CLI_EXIT_FAILURE;
        }
    }
    int rc = run_files_commit(&job->files);
    /* The killed jobs' journals found at the start: those taken are gone with the commit;
     * one not taken (its temporary output was gone: a job killed between its rename and its
     * journals' removal) describes nothing kept, and would be left behind for good. */
    for (size_t i = 0; rc == CLI_EXIT_OK && rj->on && i < rj->n_paths; i++)
        unlink(rj->paths[i]);
    return rc;
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
    double seconds = all[slowest * FIG_N + FIG_SECONDS], records = 0;
    for (size_t r = 0; r < (size_t)m->size; r++)
        records += all[r * FIG_N + FIG_RECORDS]; /* those run: a resume's gaps */
    double bytes = records * (double)f->in_record_bytes;
    fig_out out;
    fig_begin(&out, stdout, o->json);
    run_print_job(&out, job, o);
    fig_uint(&out, "ranks", "ranks", "%llu", (unsigned long long)m->size);
    fig_uint(&out, "resumed_records", "resumed records", "%llu",
             (unsigned long long)sp_file_io_resumed(f->io));
    fig_num(&out, "seconds", "seconds", "%.3f s (the slowest rank's)", seconds);
    fig_num(&out, "gbps_in", "rate in", "%.2f GB/s", cli_gbps(bytes, seconds));
    rank_table(&out, f, m, all);
    fig_uint(&out, "slowest_rank", "slowest rank", "%llu", slowest);
    fig_end(&out);
}

int run_ranks_go(run_job *job, const run_options *o, const run_mpi *m, int rc, int device)
{
    rank_journals *rj = calloc(1, sizeof *rj); /* 64 KiB of paths: not on the stack */
    if (!rj)
        fprintf(stderr, "streampipe: rank %d: no memory for the journals' names\n", m->rank);
    if ((rc = agree(m, rj ? rc : CLI_EXIT_FAILURE)) != CLI_EXIT_OK) {
        free(rj);
        return rc;
    }
    rj->on = !o->no_journal;
    if (o->resume && o->no_journal && m->rank == 0)
        fprintf(stderr, "streampipe: run: --resume needs the journals that --no-journal "
                "turns off\n");
    if (o->resume && o->no_journal)
        rc = CLI_EXIT_USAGE;
    rc = open_everything(job, o, m, rc, rj);
    if (rc == CLI_EXIT_OK && m->rank == 0 && o->resume)
        fprintf(stderr, "streampipe: run: resuming: %zu of %zu records were done (%zu "
                "journals of the ranks)\n", sp_file_io_resumed(job->files.io),
                job->files.n_records, rj->n_paths);
    if (rc != CLI_EXIT_OK) {
        free(rj);
        return rc;
    }
    size_t first, count;
    double t0 = cli_now_s();
    rc = run_range(job, m, &count, &first);
    double seconds = cli_now_s() - t0;
    /* every rank allocates, so that all agree before the gather, a collective call */
    double *all = calloc((size_t)m->size, FIG_N * sizeof *all);
    if (!all)
        fprintf(stderr, "streampipe: rank %d: no memory for the figures\n", m->rank);
    if ((rc = agree(m, all ? rc : CLI_EXIT_FAILURE)) != CLI_EXIT_OK) {
        if (rj->on && m->rank == 0)
            fprintf(stderr, "streampipe: run: the partial output and the ranks' journals are "
                    "kept for --resume (with any number of ranks); a run without --resume "
                    "starts again and replaces them\n");
        free(all);
        free(rj);
        return rc;
    }
    double mine[FIG_N] = {[FIG_RECORDS] = (double)count, [FIG_FIRST] = (double)first,
                          [FIG_SECONDS] = seconds, [FIG_DEVICE] = (double)device};
    rc = run_mpi_gather(m, mine, FIG_N, all) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK && m->rank == 0)
        rc = commit_all(job, o, m, rj);
    if ((rc = agree(m, rc)) == CLI_EXIT_OK && rj->on && m->rank != 0)
        rc = run_files_commit(&job->files); /* flushed already; its journal is rank 0's now */
    free(rj);
    if (rc != CLI_EXIT_OK) {
        free(all);
        return rc;
    }
    if (m->rank == 0)
        print_ranks(job, o, m, all);
    free(all);
    return CLI_EXIT_OK;
}
