#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "par_for.h"

typedef struct par_task {
    par_range_fn fn;
    void *arg;
    size_t begin;
    size_t end;
    unsigned worker;
    pthread_t thread;
    int started;
} par_task;

unsigned par_default_workers(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1)
        return 1;
    return online > 256 ? 256u : (unsigned)online;
}

/* Where range w of `workers` near-equal ranges of [0, n) begins; the first n % workers ranges
 * are one longer. */
static size_t range_begin(size_t n, unsigned workers, unsigned w)
{
    size_t extra = n % workers;
    return n / workers * w + (w < extra ? w : extra);
}

static void *run_task(void *p)
{
    par_task *task = p;
    task->fn(task->begin, task->end, task->worker, task->arg);
    return NULL;
}

void par_for(size_t n, unsigned workers, par_range_fn fn, void *arg)
{
    if (workers < 1)
        workers = 1;
    if (workers > n)
        workers = n > 0 ? (unsigned)n : 1;
    par_task *tasks = calloc(workers, sizeof *tasks);
    if (tasks == NULL) {
        /* No memory for bookkeeping: still do the work, on this thread. */
        fn(0, n, 0, arg);
        return;
    }
    for (unsigned w = 0; w < workers; w++) {
        tasks[w].fn = fn;
        tasks[w].arg = arg;
        tasks[w].begin = range_begin(n, workers, w);
        tasks[w].end = range_begin(n, workers, w + 1);
        tasks[w].worker = w;
    }
    /* Worker 0 is the calling thread, so one worker costs no thread at all. */
    for (unsigned w = 1; w < workers; w++)
        tasks[w].started = pthread_create(&tasks[w].thread, NULL, run_task, &tasks[w]) == 0;
    run_task(&tasks[0]);
    for (unsigned w = 1; w < workers; w++) {
        if (tasks[w].started)
            pthread_join(tasks[w].thread, NULL);
        else
            run_task(&tasks[w]);
    }
    free(tasks);
}
