/* The files of `streampipe run`: the input read and the output written positionally (pread,
 * pwrite: several staging threads at once), the output under a temporary name until the run
 * has succeeded, so that a failed or interrupted run never leaves a file that looks whole.
 * An output that exists and is not a regular file (a device, a FIFO) or is "-" (stdout) is
 * written where it is instead (run_output.c): renaming over it would replace the node. */
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
    int in_place;            /* written where it is (a device, a FIFO, stdout): no temporary */
    int positional;          /* pwrite at the records' offsets; 0: write(), in record order */
    int sync_output;         /* fsync it at the end (not a character device or a FIFO) */
    int to_stdout;           /* --output -: the report goes to stderr */
    int ranked;              /* under mpirun: the ranks write their ranges at their offsets */
    atomic_size_t written;   /* records written so far (for the progress line) */
    int progress;            /* stderr is a terminal: show a progress line */
    double started, shown;   /* host clock at the start and at the last line */
    pthread_mutex_t lock;    /* the first I/O error and the progress line */
    char io_error[512];      /* the first read or write that failed, with errno's text */
} run_files;

/* Opens the input (a regular file of whole records) and refuses an output that is the input;
 * creates the temporary output beside OUTPUT with its final size allocated (a disk without
 * room fails here, before any work), after removing the temporary outputs of killed runs
 * (run_output_remove_stale), or opens a non-regular OUTPUT in place; or, on the other ranks
 * under MPI, opens it by the name rank 0 gave; flushes this process's writes to disk. Each
 * prints why and returns CLI_EXIT_FAILURE on a missing, unreadable or wrongly sized file. */
int run_files_open_input(run_files *f, const char *input, const char *output,
                         size_t in_record_bytes, size_t out_record_bytes);
int run_files_create_output(run_files *f);
int run_files_open_output(run_files *f, const char *temp_path);
int run_files_sync(run_files *f);
/* sp_source_fn and sp_sink_fn over the files (user = run_files *). */
sp_status run_files_read(void *dst, size_t first_record, size_t max_records, size_t *records,
                         void *user);
sp_status run_files_write(const void *src, size_t first_record, size_t records, void *user);
/* Flushes the output to disk and renames it into place (an output written in place is only
 * flushed and closed); CLI_EXIT_OK or CLI_EXIT_FAILURE. */
int run_files_commit(run_files *f);
/* Closes both files; removes the temporary output unless it was committed. */
void run_files_close(run_files *f);

/* run_output.c. An existing OUTPUT that is not a regular file, or "-": opened to be written
 * where it is (*in_place = 1: devices and FIFOs, in record order but for block devices), or
 * refused with a message (a directory, a socket; any of them under mpirun, whose ranks write
 * at their offsets). *in_place = 0: a regular file or a new name, for the temporary output. */
int run_output_open_in_place(run_files *f, int *in_place);
/* Removes the temporary outputs of OUTPUT (".NAME.partial-XXXXXX" beside it, that pattern
 * exactly) that no live run holds: a run killed by SIGKILL, which no handler sees, leaves
 * one. A writer holds a write lock (fcntl) on its temporary output from creation to rename;
 * the kernel drops it when the process dies, so a file that can be locked is a leftover. */
void run_output_remove_stale(const char *output);
/* The writer's lock on its new temporary output. 1 when a cleanup removed the file before
 * the lock was taken (make another), else 0 (also where the file system has no locks: its
 * leftovers are then never removed). */
int run_output_claim(int fd);

#endif
