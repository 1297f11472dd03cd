/* The files of `streampipe run`: the input read and the output written positionally (pread,
 * pwrite: several staging threads at once), the output under a temporary name until the run
 * has succeeded, so that a failed or interrupted run never leaves a file that looks whole. */
#ifndef SP_CLI_RUN_FILES_H
#define SP_CLI_RUN_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "streampipe.h"

typedef struct run_files {
    int in_fd, out_fd;
    size_t in_record_bytes, out_record_bytes;
    size_t n_records;
    const char *input_path, *output_path;
    size_t out_bytes;        /* the output's size */
    char temp_path[4096];    /* the output's name until run_files_commit */
    int owns_temp;           /* this process created it: it removes or renames it */
    atomic_size_t written;   /* records written so far (for the progress line) */
    int progress;            /* stderr is a terminal: show a progress line */
    double started, shown;   /* host clock at the start and at the last line */
    pthread_mutex_t lock;    /* the first I/O error and the progress line */
    char io_error[512];      /* the first read or write that failed, with errno's text */
} run_files;

/* Opens the input (a regular file of whole records) and refuses an output that is the input;
 * creates the temporary output beside OUTPUT with its final size allocated (a disk without
 * room fails here, before any work), or, on the other ranks under MPI, opens it by the name
 * rank 0 gave; flushes this process's writes to disk. Each prints why and returns
 * CLI_EXIT_FAILURE on a missing, unreadable or wrongly sized file. */
int run_files_open_input(run_files *f, const char *input, const char *output,
                         size_t in_record_bytes, size_t out_record_bytes);
int run_files_create_output(run_files *f);
int run_files_open_output(run_files *f, const char *temp_path);
int run_files_sync(run_files *f);
/* sp_source_fn and sp_sink_fn over the files (user = run_files *). */
sp_status run_files_read(void *dst, size_t first_record, size_t max_records, size_t *records,
                         void *user);
sp_status run_files_write(const void *src, size_t first_record, size_t records, void *user);
/* Flushes the output to disk and renames it into place; CLI_EXIT_OK or CLI_EXIT_FAILURE. */
int run_files_commit(run_files *f);
/* Closes both files; removes the temporary output unless it was committed. */
void run_files_close(run_files *f);

#endif
