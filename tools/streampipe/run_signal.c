/* The signal handler of `streampipe run` (run_signal.h). The signal may land on any thread
 * (the staging threads and the host backend's workers run while the main thread waits), so
 * the state it reads is lock-free atomics and a path written before `armed` is set. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run_signal.h"

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
#define N_HANDLED (sizeof handled / sizeof handled[0])

static struct sigaction previous[N_HANDLED];
static int installed[N_HANDLED];
static char partial[4096];   /* the temporary output, complete before `armed` is set */
static atomic_int armed;     /* 1: the handler removes `partial` */
static atomic_int caught;    /* the last signal seen, 0 for none */
static atomic_int stopping;  /* 1: journaled, a first signal only asks the run to stop */

/* Dies of `sig` as if no handler had been installed (async-signal-safe calls only). */
static void die_of(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* blocked while its handler runs */
    raise(sig);
}

static void on_signal(int sig)
{
    int saved = errno;
    int before = atomic_exchange(&caught, sig); /* before `armed`: run_signal_arm reads in
                                                   reverse */
    if (atomic_load(&stopping)) { /* the journal and the temporary output stay, resumable */
        if (before)
            die_of(sig); /* a second signal: at once (the journal claims only durable data) */
        errno = saved;
        return;
    }
    if (atomic_load(&armed)) {
        unlink(partial);
        die_of(sig);
    }
    errno = saved;
}

void run_signal_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < N_HANDLED; i++) {
        if (installed[i] || sigaction(handled[i], NULL, &previous[i]) != 0 ||
            previous[i].sa_handler == SIG_IGN)
            continue;
        installed[i] = sigaction(handled[i], &sa, NULL) == 0;
    }
}

void run_signal_arm(const char *path)
{
    if (strlen(path) >= sizeof partial)
        return; /* cannot happen: run_files' paths are as long; the name stays unarmed */
    memcpy(partial, path, strlen(path) + 1);
    atomic_store(&armed, 1);
    int sig = atomic_load(&caught); /* one noted before arming: act on it now */
    if (sig) {
        unlink(partial);
        die_of(sig);
    }
}

void run_signal_arm_stop(void)
{
    atomic_store(&stopping, 1);
}

int run_signal_stop_requested(void)
{
    return atomic_load(&stopping) ? atomic_load(&caught) : 0;
}

void run_signal_disarm(void)
{
    atomic_store(&armed, 0);
}

void run_signal_finish(void)
{
    atomic_store(&armed, 0);
    for (size_t i = 0; i < N_HANDLED; i++)
        if (installed[i])
            sigaction(handled[i], &previous[i], NULL);
    int sig = atomic_load(&caught);
    if (sig) {
        fflush(NULL);
        die_of(sig);
    }
}
