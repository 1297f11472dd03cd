/* The journal's sync points on their own thread (journal_flusher.h). */
#include <math.h>
#include <time.h>

#include "io/file_journal.h"

void sp_journal_flusher_init(sp_journal_flusher *fl)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* sp_file_journal_due's clock */
    pthread_cond_init(&fl->wake, &attr);
    pthread_condattr_destroy(&attr);
    fl->state = SP_FLUSHER_IDLE;
}

void sp_journal_flusher_destroy(sp_journal_flusher *fl)
{
    pthread_cond_destroy(&fl->wake);
}

/* With j->lock held: wait until a sync point is due (sp_file_journal_due) or stop. 1 when
 * one is due. */
static int wait_until_due(sp_file_journal *j)
{
    sp_journal_flusher *fl = &j->flusher;
    double at;
    while (!fl->stop) {
        if (sp_file_journal_due(j, &at))
            return 1;
        if (isinf(at)) {
            pthread_cond_wait(&fl->wake, &j->lock);
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)at};
        ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&fl->wake, &j->lock, &ts);
    }
    return 0;
}

static void *flusher_main(void *arg)
{
    sp_file_io *f = arg;
    sp_file_journal *j = f->journal;
    pthread_mutex_lock(&j->lock);
    while (wait_until_due(j)) {
        pthread_mutex_unlock(&j->lock);
        const char *what = "";
        int err = sp_file_journal_sync(f, &what); /* steps 1-3, under sync_lock */
        pthread_mutex_lock(&j->lock);
        if (err) { /* the writers' next note fails the run with it */
            j->flusher.err = err;
            j->flusher.what = what;
            break;
        }
        if (atomic_load(&j->cut.fired))
            break; /* the (simulated) power is off: no sync point does anything any more,
                      and pending would stay due, so the loop would only spin */
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

int sp_journal_flusher_kick(sp_file_io *f, int wake)
{
    sp_journal_flusher *fl = &f->journal->flusher;
    if (fl->state == SP_FLUSHER_IDLE)
        fl->state = pthread_create(&fl->thread, NULL, flusher_main, f) == 0
                        ? SP_FLUSHER_RUNNING
                        : SP_FLUSHER_STOPPED;
    if (fl->state != SP_FLUSHER_RUNNING)
        return 0;
    if (wake)
        pthread_cond_signal(&fl->wake);
    return 1;
}

int sp_journal_flusher_stop(sp_file_io *f, const char **what)
{
    sp_file_journal *j = f->journal;
    sp_journal_flusher *fl = &j->flusher;
    pthread_mutex_lock(&j->lock);
    int join = fl->state == SP_FLUSHER_RUNNING;
    fl->state = SP_FLUSHER_STOPPED;
    fl->stop = 1;
    pthread_cond_signal(&fl->wake);
    pthread_mutex_unlock(&j->lock);
    if (join)
        pthread_join(fl->thread, NULL);
    pthread_mutex_lock(&j->lock);
    int err = sp_journal_flusher_failed(fl, what);
    pthread_mutex_unlock(&j->lock);
    return err;
}

int sp_journal_flusher_failed(const sp_journal_flusher *fl, const char **what)
{
    if (fl->err)
        *what = fl->what;
    return fl->err;
}
