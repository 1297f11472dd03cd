/* The journal's own thread for its sync points (file_journal.h's steps 1-3), so that the
 * staging threads that write the output never wait for the disk: a writer's note only wakes
 * it. Before, the writer that found a sync point due ran it, fdatasync included, and the
 * ring waited behind that writer: a file-to-file run on the lent H200's disk moved 1.3 GB/s
 * journaled against 4.1 GB/s without (bench/PERF.md, tenth session). The order of each sync
 * point is the same on either thread, so every crash point stays as safe.
 *
 * Started by the first note; stopped before a commit and a close. Once stopped (or if it
 * could not start) it stays stopped and the writers take the sync points themselves, as
 * before. Its fields are under the journal's lock (j->lock). */
#ifndef SP_IO_JOURNAL_FLUSHER_H
#define SP_IO_JOURNAL_FLUSHER_H

#include <pthread.h>

typedef enum { SP_FLUSHER_IDLE, SP_FLUSHER_RUNNING, SP_FLUSHER_STOPPED } sp_flusher_state;

typedef struct sp_journal_flusher {
    sp_flusher_state state;
    int stop;                /* asked to stop */
    pthread_t thread;
    pthread_cond_t wake;     /* a sync point is due, or stop (CLOCK_MONOTONIC) */
    int err;                 /* the errno its last sync point failed with; then it stops */
    const char *what;        /* ... and what it was doing */
} sp_journal_flusher;

struct sp_file_io;

void sp_journal_flusher_init(sp_journal_flusher *fl);
void sp_journal_flusher_destroy(sp_journal_flusher *fl);
/* From a writer's note, with j->lock held: starts the thread (the first time) and wakes it
 * (wake: a sync point is due, or the first bytes since the last one start its clock). 1 when the thread takes it, 0 when the writer must (the thread
 * is stopped or could not start). */
int sp_journal_flusher_kick(struct sp_file_io *f, int wake);
/* The thread stopped and joined (it finishes the sync point it is in); j->lock not held.
 * Returns the errno its sync points failed with (*what says what it was doing), or 0. */
int sp_journal_flusher_stop(struct sp_file_io *f, const char **what);
/* The errno the thread's sync points failed with, or 0; with j->lock held. */
int sp_journal_flusher_failed(const sp_journal_flusher *fl, const char **what);

#endif
