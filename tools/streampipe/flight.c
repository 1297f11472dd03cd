/* The command's side of the flight recorder (flight.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flight.h"
#include "streampipe_trace.h"

/* Set by the handler, on whichever thread the signal lands, and taken by the watcher: a
 * lock-free atomic, which a handler may store to and another thread read. */
static atomic_int usr1_seen;

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno; /* the interrupted call's errno stays as it was */
    atomic_store(&usr1_seen, 1); /* async-signal-safe: the watcher thread writes the file */
    errno = saved;
}

void cli_flight_dump(cli_flight *f, const char *why)
{
    if (!f->pipeline)
        return;
    sp_status st = sp_pipeline_dump_recent(f->pipeline, f->path);
    if (st == SP_OK)
        fprintf(stderr, "streampipe: flight recorder written to %s (%s)\n", f->path, why);
    else
        fprintf(stderr, "streampipe: flight recorder: writing %s failed: %s\n", f->path,
                st == SP_ERR_BACKEND ? strerror(errno) : sp_status_message(st));
}

static void *watch(void *arg)
{
    cli_flight *f = arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    while (!atomic_load(&f->stop)) {
        if (atomic_exchange(&usr1_seen, 0))
            cli_flight_dump(f, "SIGUSR1");
        nanosleep(&tick, NULL);
    }
    return NULL;
}

int cli_flight_start(cli_flight *f, const cli_flight_options *o, const sp_pipeline *pipeline)
{
    memset(f, 0, sizeof *f);
    if (o->seconds == 0)
        return 0;
    f->pipeline = pipeline;
    if (o->path)
        snprintf(f->path, sizeof f->path, "%s", o->path);
    else
        snprintf(f->path, sizeof f->path, "streampipe-flight-%ld.json", (long)getpid());
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, &sa, NULL) != 0 || pthread_create(&f->thread, NULL, watch, f) != 0) {
        fprintf(stderr, "streampipe: flight recorder: cannot watch for SIGUSR1: %s\n",
                strerror(errno));
        return -1;
    }
    f->started = 1;
    return 0;
}

void cli_flight_stop(cli_flight *f)
{
    if (!f->started)
        return;
    atomic_store(&f->stop, 1);
    pthread_join(f->thread, NULL);
    f->started = 0;
    signal(SIGUSR1, SIG_DFL);
}
