/* The journal of a resumable output (include/streampipe_io.h, "Journals"): file_journal.c
 * makes, loads, appends to and removes ".NAME.journal"; file_power_cut.c is the tests' power
 * cut. The journal's fields are written by these two files alone; the handle (file_io.h)
 * points at it.
 *
 * The order that makes every crash point safe, at each sync point:
 *   1. the records written so far are taken (a piece counts only once its pwrite returned);
 *   2. fdatasync(output): those records are durable;
 *   3. the journal records saying so are appended, then fdatasync(journal).
 * A crash before 3 completes leaves a journal that claims less than is durable, never more;
 * a torn record in 3 fails its checksum and is ignored with all that follows it.
 *
 * Several writers of one temporary output (journal_name, temp_output): each keeps its own
 * journal in the same order. The maker's commit needs every record in a journal it holds: it
 * merges the writers' journals (sp_file_journal_merge) only after each writer's last sync
 * point (the caller's barrier: under mpirun, run_ranks.c's agreement after every rank's
 * sp_file_io_sync), then renames, then removes its journal and every journal it took,
 * before the folder's flush. A crash before the rename leaves every journal, resumable by
 * any number of writers (resume_journals: the union of their records); after it, the whole
 * output. */
#ifndef SP_IO_FILE_JOURNAL_H
#define SP_IO_FILE_JOURNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/file_io.h"
#include "io/journal.h"
#include "io/journal_flusher.h"
#include "io/range_set.h"

/* The simulated power cut (config.test_power_cut): writes go through it one at a time. */
typedef struct sp_power_cut {
    int armed;
    uint64_t at;             /* after this many bytes of output */
    uint64_t written;        /* bytes written through it */
    int pending;             /* at reached: the power goes at the next flush */
    atomic_int fired;
    pthread_mutex_t lock;
    sp_range_set unsynced;   /* output bytes written since the last flush began */
    sp_range_set syncing;    /* ... and those a flush in progress may not yet hold */
} sp_power_cut;

typedef struct sp_file_journal {
    int fd;                  /* -1 until made or loaded */
    char *path;              /* ".NAME.journal" beside OUTPUT */
    char *resume_temp;       /* the temporary output a loaded journal names, to claim */
    int created;             /* this handle made the file: a failed open removes it */
    int keep;                /* the open succeeded: close keeps both files, resumable */
    sp_journal_id id;        /* what the output is made of (tag owned) */
    uint64_t key;            /* the header's checksum, seeding the records' */
    off_t end;               /* where the next record goes */
    size_t sync_bytes;
    double sync_s;
    size_t resumed;          /* records the journal held at open */
    pthread_mutex_t lock;    /* done, pending, last_sync_s: the staging threads' */
    sp_range_set done;       /* records written (the input's numbering), durable or not */
    size_t pending;          /* output bytes written since the last sync point */
    double last_sync_s;
    sp_journal_flusher flusher; /* takes the sync points the notes make due (its fields
                                   under lock) */
    pthread_mutex_t sync_lock; /* one sync point at a time; journaled and snapshot */
    sp_range_set journaled, snapshot;
    sp_power_cut cut;
    char **taken;            /* other writers' journals taken (resume_journals, merges): the
                                commit removes them with its own */
    size_t n_taken;
} sp_file_journal;

/* Called by the open once the input is open and the output's size known: checks the config,
 * names the input, and with resume loads a journal that is there (refusing one made for
 * something else). SP_OK with f->journal NULL when config.journal is 0. */
sp_status sp_file_journal_prepare(sp_file_io *f, const sp_file_io_config *c);
/* A new journal for the temporary output at temp_path (just made and sized, claimed on a
 * resume, or another handle's: temp_output). */
sp_status sp_file_journal_create(sp_file_io *f, const char *temp_path);
/* sp_file_io_journal_merge's work: another writer's journal's records taken as written. */
sp_status sp_file_journal_merge(sp_file_io *f, const char *path);
/* The loaded journal's temporary output is gone: start afresh (its records are dropped). */
void sp_file_journal_forget(sp_file_journal *j);
/* With j->lock held: 1 when a sync point is due (journal_sync_bytes written since the last,
 * or journal_sync_ms passed with something written); else 0 with *at the CLOCK_MONOTONIC
 * second it falls due (INFINITY: only more bytes will make it). The one rule of when, for
 * the writers' notes and the flusher alike. */
int sp_file_journal_due(const sp_file_journal *j, double *at);
/* From the sink, after records [first, first + records) of the input (bytes of output) were
 * written: noted, and the flusher woken when a sync point is due (the writer takes it only
 * when the flusher is stopped). 0, or an errno with *what: this note's, or a failed sync
 * point's of the flusher. */
int sp_file_journal_note(sp_file_io *f, size_t first, size_t records, size_t bytes,
                         const char **what);
/* A sync point now (steps 1-3 above). 0, or an errno with *what (the flusher's, when one
 * of its sync points failed: a later fdatasync need not report what an earlier one lost). */
int sp_file_journal_sync(sp_file_io *f, const char **what);
/* Before a commit: the flusher stopped (the writers take any later sync point), then a sync
 * point. 0, or the errno of the flusher's failed sync point or of this one, with *what. */
int sp_file_journal_settle(sp_file_io *f, const char **what);
/* 1 when every record of the input is written. */
int sp_file_journal_complete(sp_file_journal *j, size_t n_input);
/* The output was moved into place (taken 1: and the other writers' journals taken are
 * removed), or a writer of another handle's output committed (taken 0): the journal is
 * removed. */
void sp_file_journal_committed(sp_file_io *f, int taken);
/* Close: a kept journal gets a last sync point (none after a power cut), and stays. */
void sp_file_journal_close(sp_file_io *f);

/* file_power_cut.c */
void sp_power_cut_init(sp_power_cut *c, int armed, unsigned long long at);
void sp_power_cut_free(sp_power_cut *c);
/* pwrite of n bytes at `at` through the cut: 0; -1 when the cut was reached (now or
 * before); else an errno. */
int sp_power_cut_pwrite(sp_power_cut *c, int fd, const void *src, size_t n, off_t at);
/* Around a flush of the output: begin before fdatasync; end after it, 0 when the cut came
 * meanwhile (the flush must then be treated as not done). */
void sp_power_cut_flush_begin(sp_power_cut *c, int fd);
int sp_power_cut_flush_end(sp_power_cut *c);

#endif
