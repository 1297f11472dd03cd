/* Input and output files of `streampipe run` (run_files.h). */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "stats.h"
#include "run_files.h"
#include "run_signal.h"

/* The temporary output exists: from now on a signal removes it and ends the run. */
static void arm_signals(const char *temp_path, void *user)
{
    (void)user;
    run_signal_install();
    run_signal_arm(temp_path);
}

/* Journaled: a signal stops the run and the temporary output stays for --resume. */
static void arm_stop(const char *temp_path, void *user)
{
    (void)temp_path;
    (void)user;
    run_signal_install();
    run_signal_arm_stop();
}

static const char *kind_name(mode_t mode)
{
    return S_ISFIFO(mode)  ? "a FIFO"
           : S_ISCHR(mode) ? "a character device"
           : S_ISBLK(mode) ? "a block device"
                           : "not a regular file";
}

/* Under mpirun the ranks write at their offsets: stdout and existing devices and FIFOs are
 * refused with the reason (the library refuses them too, regular_output, without it); a
 * directory or a socket the library refuses as it always does. */
static int refuse_for_ranks(const char *output)
{
    struct stat st;
    if (strcmp(output, "-") == 0) {
        fprintf(stderr, "streampipe: run: --output - under mpirun: the ranks write their "
                "ranges at their offsets, so the output must be a file\n");
        return CLI_EXIT_FAILURE;
    }
    if (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
        !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "streampipe: run: the output '%s' is %s: under mpirun the ranks write "
                "their ranges at their offsets, so the output must be a regular file or a new "
                "name\n", output, kind_name(st.st_mode));
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

/* --decompress, for every open of the process (the runs of one command share it). */
static int g_decompress = SP_DECOMPRESS_AUTO;

void run_files_set_decompress(int where) { g_decompress = where; }

/* --output-format, likewise. */
static int g_output_format = SP_INPUT_FORMAT_RAW;

void run_files_set_output_format(int format) { g_output_format = format; }

static int open_files(run_files *f, const char *input, const char *output,
                      size_t in_record_bytes, size_t out_record_bytes, int ranked,
                      const char *temp_output, int input_format,
                      const sp_file_io_config *journal)
{
    memset(f, 0, sizeof *f);
    f->in_record_bytes = in_record_bytes;
    f->out_record_bytes = out_record_bytes;
    f->input_path = input;
    f->output_path = output;
    f->ranked = ranked;
    f->to_stdout = strcmp(output, "-") == 0;
    f->from_stdin = strcmp(input, "-") == 0;
    atomic_init(&f->written, 0);
    f->lock_made = pthread_mutex_init(&f->lock, NULL) == 0;
    f->progress = !ranked && isatty(STDERR_FILENO); /* R lines on one terminal: noise */
    f->started = f->shown = cli_now_s();
    if (ranked && refuse_for_ranks(output) != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    if (ranked && (f->from_stdin || g_output_format != SP_INPUT_FORMAT_RAW)) {
        /* the ranks read and write their ranges at their offsets: neither has offsets */
        fprintf(stderr, "streampipe: run: %s under mpirun: the ranks read and write their "
                "ranges at their offsets; use a file --input and --output-format raw\n",
                f->from_stdin ? "--input -" : "--output-format lz4|zstd");
        return CLI_EXIT_USAGE;
    }
    sp_file_io_config config = SP_FILE_IO_CONFIG_INIT;
    config.input = f->from_stdin ? "standard input" : input;
    config.input_is_fd = f->from_stdin;
    config.input_fd = STDIN_FILENO;
    config.output_format = g_output_format;
    config.output = output;
    config.in_record_bytes = in_record_bytes;
    config.out_record_bytes = out_record_bytes;
    config.output_is_fd = f->to_stdout;
    config.output_fd = STDOUT_FILENO;
    config.regular_output = ranked;
    config.temp_output = temp_output;
    config.temp_created = arm_signals;
    config.input_format = input_format;
    config.decompress = g_decompress;
    if (journal) {
        config.journal = f->journaled = 1;
        config.resume = journal->resume;
        config.journal_tag = journal->journal_tag;
        config.journal_sync_ms = journal->journal_sync_ms;
        config.test_power_cut = journal->test_power_cut;
        config.test_power_cut_at = journal->test_power_cut_at;
        config.journal_name = journal->journal_name;
        config.resume_journals = journal->resume_journals;
        config.temp_created = arm_stop;
    }
    sp_status st = sp_file_io_open(&config, &f->io);
    for (size_t i = 0; sp_file_io_removed(f->io, i); i++)
        fprintf(stderr, "streampipe: run: removed '%s', left by a run that was killed\n",
                sp_file_io_removed(f->io, i));
    if (st != SP_OK) {
        fprintf(stderr, "streampipe: %s\n", sp_file_io_last_error(f->io));
        return st == SP_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    }
    f->n_records = sp_file_io_records(f->io);
    return CLI_EXIT_OK;
}

int run_files_open(run_files *f, const char *input, const char *output,
                   size_t in_record_bytes, size_t out_record_bytes, int ranked,
                   const char *temp_output, int input_format)
{
    return open_files(f, input, output, in_record_bytes, out_record_bytes, ranked,
                      temp_output, input_format, NULL);
}

static unsigned long long test_env(const char *name, int *set)
{
    const char *v = getenv(name);
    *set = v && *v;
    return *set ? strtoull(v, NULL, 10) : 0;
}

int run_files_open_journaled(run_files *f, const char *input, const char *output,
                             size_t in_record_bytes, size_t out_record_bytes,
                             const char *journal_tag, int resume, int input_format)
{
    struct stat st;
    int journal = strcmp(output, "-") != 0 && (stat(output, &st) != 0 || S_ISREG(st.st_mode));
    if (!journal && resume)
        fprintf(stderr, "streampipe: run: --resume: the output '%s' is written in place, "
                "without a journal: starting from the first record\n", output);
    sp_file_io_config j = SP_FILE_IO_CONFIG_INIT;
    int set;
    j.resume = resume;
    j.journal_tag = journal_tag;
    j.journal_sync_ms = (unsigned)test_env("STREAMPIPE_TEST_JOURNAL_MS", &set);
    j.test_power_cut_at = test_env("STREAMPIPE_TEST_POWER_CUT_AT", &j.test_power_cut);
    return open_files(f, input, output, in_record_bytes, out_record_bytes, 0, NULL,
                      input_format, journal ? &j : NULL);
}

int run_files_open_rank(run_files *f, const char *input, const char *output,
                        size_t in_record_bytes, size_t out_record_bytes,
                        const char *temp_output, int input_format, const run_rank_journal *rj)
{
    if (!rj)
        return open_files(f, input, output, in_record_bytes, out_record_bytes, 1, temp_output,
                          input_format, NULL);
    sp_file_io_config j = SP_FILE_IO_CONFIG_INIT;
    int set;
    j.resume = rj->resume;
    j.journal_tag = rj->tag;
    j.journal_name = rj->name;
    j.resume_journals = rj->resume_journals;
    j.journal_sync_ms = (unsigned)test_env("STREAMPIPE_TEST_JOURNAL_MS", &set);
    return open_files(f, input, output, in_record_bytes, out_record_bytes, 1, temp_output,
                      input_format, &j);
}

const char *run_files_temp_path(const run_files *f)
{
    const char *path = sp_file_io_temp_path(f->io);
    return path ? path : "";
}

/* The progress line is on screen, ours to show and to end: not once the panel shows. */
static int line_is_ours(const run_files *f)
{
    return f->progress && !cli_live_flag_shown(f->panel);
}

static void show_progress(run_files *f)
{
    double now = cli_now_s();
    if (!line_is_ours(f))
        return;
    if (pthread_mutex_trylock(&f->lock) != 0)
        return; /* another writer is showing it */
    if (now - f->shown >= 0.25) {
        f->shown = now;
        size_t done = atomic_load(&f->written);
        double mib = (double)(done * f->in_record_bytes) / (1 << 20);
        if (f->from_stdin) /* no size known before it ends */
            fprintf(stderr, "\rstreampipe run: %.0f MiB from stdin, %.2f GB/s    ", mib,
                    cli_gbps((double)(done * f->in_record_bytes), now - f->started));
        else
            fprintf(stderr, "\rstreampipe run: %.0f of %.0f MiB (%.0f%%), %.2f GB/s    ", mib,
                    (double)(f->n_records * f->in_record_bytes) / (1 << 20),
                    f->n_records ? 100.0 * (double)done / (double)f->n_records : 100.0,
                    cli_gbps((double)(done * f->in_record_bytes), now - f->started));
    }
    pthread_mutex_unlock(&f->lock);
}

/* The library's sink, then the progress line. */
static sp_status progress_write(const void *src, size_t first_record, size_t records,
                                void *user)
{
    run_files *f = user;
    const sp_io *io = sp_file_io_get(f->io);
    sp_status st = io->write(src, first_record, records, io->write_user);
    if (st == SP_OK) {
        atomic_fetch_add(&f->written, records);
        show_progress(f);
    }
    return st;
}

/* Journaled: once a signal asked to stop, the source fails, so the run stops feeding and
 * drains what is in flight (at most the ring's depth of chunks). */
static sp_status stop_aware_read(void *dst, size_t first_record, size_t max_records,
                                 size_t *records, void *user)
{
    run_files *f = user;
    if (run_signal_stop_requested())
        return SP_ERR_CANCELLED;
    const sp_io *io = sp_file_io_get(f->io);
    return io->read(dst, first_record, max_records, records, io->read_user);
}

const sp_io *run_files_range(run_files *f, size_t first, size_t count)
{
    if (sp_file_io_set_range(f->io, first, count) != SP_OK)
        return NULL; /* cannot happen: the ranges are the input's */
    f->run_io = *sp_file_io_get(f->io);
    if (f->progress && f->lock_made) {
        f->run_io.write = progress_write;
        f->run_io.write_user = f;
    }
    if (f->journaled) {
        f->run_io.read = stop_aware_read;
        f->run_io.read_user = f;
    }
    return &f->run_io;
}

void run_files_print_io_error(const run_files *f, const char *prefix)
{
    if (line_is_ours(f))
        fputs("\n", stderr);
    const char *error = sp_file_io_last_error(f->io);
    if (error[0])
        fprintf(stderr, "streampipe: %s%s\n", prefix, error);
}

int run_files_sync(run_files *f)
{
    if (sp_file_io_sync(f->io) == SP_OK)
        return CLI_EXIT_OK;
    fprintf(stderr, "streampipe: %s\n", sp_file_io_last_error(f->io));
    return CLI_EXIT_FAILURE;
}

int run_files_commit(run_files *f)
{
    if (line_is_ours(f))
        fputs("\n", stderr);
    /* flushed while a signal still removes it; from the rename on, a signal is re-raised
     * once the run is over */
    sp_status st = sp_file_io_sync(f->io);
    if (st == SP_OK) {
        run_signal_disarm();
        st = sp_file_io_commit(f->io);
    }
    if (st == SP_OK)
        return CLI_EXIT_OK;
    fprintf(stderr, "streampipe: %s\n", sp_file_io_last_error(f->io));
    return CLI_EXIT_FAILURE;
}

void run_files_close(run_files *f)
{
    if (sp_file_io_temp_path(f->io))
        run_signal_disarm(); /* the handler must not unlink a name that may be reused */
    sp_file_io_close(f->io);
    f->io = NULL;
    if (f->lock_made)
        pthread_mutex_destroy(&f->lock);
    f->lock_made = 0;
}
