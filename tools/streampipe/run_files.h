/* The files of `streampipe run`, over the library's file source and sink
 * (streampipe_io.h): the input read and the output written positionally by the staging
 * threads, the output under a temporary name until the run has succeeded, so that a failed or
 * interrupted run never leaves a file that looks whole; an existing device or FIFO written in
 * place, "-" for stdout. What the CLI adds: its messages and exit statuses, the progress line,
 * the signal handler armed with the temporary output's name (run_signal.h), and under mpirun
 * the ranks sharing rank 0's temporary output. */
#ifndef SP_CLI_RUN_FILES_H
#define SP_CLI_RUN_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "streampipe.h"
#include "streampipe_io.h"

typedef struct run_files {
    sp_file_io *io;          /* NULL until run_files_open */
    sp_io run_io;            /* the library's, its write counted for the progress line */
    size_t in_record_bytes, out_record_bytes;
    size_t n_records;        /* the whole input's */
    const char *input_path, *output_path;
    int to_stdout;           /* --output -: the report goes to stderr */
    int ranked;              /* under mpirun: the ranks write their ranges at their offsets */
    atomic_size_t written;   /* records written so far (for the progress line) */
    int progress;            /* stderr is a terminal: show a progress line */
    const atomic_int *panel; /* non-zero once the live panel shows instead (it went over
                                the line: none is shown or ended from then on); or NULL */
    double started, shown;   /* host clock at the start and at the last line */
    pthread_mutex_t lock;    /* the progress line */
    int lock_made;
    int journaled;           /* a journal (".NAME.journal") beside the temporary output */
    int from_stdin;          /* --input -: raw records read until stdin ends (n_records: so
                                far, then all of them once the run has ended) */
} run_files;

/* Opens the input and the output (sp_file_io_open): the temporary output beside OUTPUT, made
 * at its full size (with the signal handler armed as soon as it exists), after removing, and
 * naming, the temporary outputs of killed runs; or a non-regular OUTPUT in place; or "-".
 * ranked: under mpirun (progress off; an output that is not a regular file or a new name is
 * refused), where ranks other than 0 pass rank 0's temporary name as temp_output. Prints why
 * and returns CLI_EXIT_FAILURE (CLI_EXIT_USAGE: the output is the input) when it fails.
 * input_format: sp_input_format (--input-format). */
/* sp_decompress_where (--decompress) for the opens that follow. */
void run_files_set_decompress(int where);
/* The output's format (--output-format: SP_INPUT_FORMAT_RAW, _LZ4 or _ZSTD) for the opens
 * that follow. INPUT "-" is stdin, for every open. */
void run_files_set_output_format(int format);
int run_files_open(run_files *f, const char *input, const char *output,
                   size_t in_record_bytes, size_t out_record_bytes, int ranked,
                   const char *temp_output, int input_format);
/* The same for a process of its own with a journal (a regular file or a new name; other
 * outputs are opened as above, without): journal_tag names the stages, resume carries on
 * from the journal there. A signal then stops the run (run_signal_arm_stop). The tests'
 * STREAMPIPE_TEST_POWER_CUT_AT=BYTES (the library's simulated power cut) and
 * STREAMPIPE_TEST_JOURNAL_MS=MS (a journal record at least that often) are read here and
 * must never be set otherwise. */
int run_files_open_journaled(run_files *f, const char *input, const char *output,
                             size_t in_record_bytes, size_t out_record_bytes,
                             const char *journal_tag, int resume, int input_format);
/* A rank's journal under mpirun (run_ranks.c names them): the stages' text, --resume, its
 * own journal's file name and the journals of the killed job to take on a resume. */
typedef struct run_rank_journal {
    const char *tag;
    int resume;
    const char *name;
    const char *const *resume_journals; /* NULL-terminated, or NULL */
} run_rank_journal;
/* run_files_open's ranked open (under mpirun), with a journal of the rank's own (rj; NULL:
 * none, --no-journal), which a signal then leaves for --resume (run_signal_arm_stop). */
int run_files_open_rank(run_files *f, const char *input, const char *output,
                        size_t in_record_bytes, size_t out_record_bytes,
                        const char *temp_output, int input_format, const run_rank_journal *rj);
/* The temporary output this process made ("" when none). */
const char *run_files_temp_path(const run_files *f);
/* The source and sink for records [first, first + count) of the input (all of them for a
 * process of its own), for sp_pipeline_run_io. */
const sp_io *run_files_range(run_files *f, size_t first, size_t count);
/* After a failed run: the first read or write that failed, printed, if one did (prefix:
 * "" or "rank N: "). */
void run_files_print_io_error(const run_files *f, const char *prefix);
/* Flushes this process's writes to disk; CLI_EXIT_OK or CLI_EXIT_FAILURE with a message. */
int run_files_sync(run_files *f);
/* Flushes the output and moves it into place (an output written in place is flushed and
 * closed); CLI_EXIT_OK or CLI_EXIT_FAILURE. */
int run_files_commit(run_files *f);
/* Closes both files; removes the temporary output unless it was committed or is kept with
 * its journal for --resume (the journal's last record made durable first). Any state. */
void run_files_close(run_files *f);

#endif
