/* Watching a command's runs while they go (issue 27): a panel redrawn on a terminal from
 * the library's live counters (sp_pipeline_stats; once the runs have gone on
 * LIVE_AUTO_AFTER_S, from the start with --live, never with --no-live), and --metrics
 * serving them in the Prometheus text format. Both read through one watch: the pipeline
 * running now, and the counts of the command's earlier runs, so that what the endpoint
 * serves only grows across the runs of a command (bench's kinds and repeats, run's resumed
 * ranges). The panel's flag (cli_live_panel_flag) tells the threads that write the
 * command's progress line when the panel has taken its place.
 *
 * Threads: the command's thread sets what is watched (live_watch_set, _fold) between runs;
 * the panel's thread and the server's threads read (live_watch_sample). The watch's mutex
 * is never held by the engine: reading the counters takes no lock of the library's. */
#ifndef SP_CLI_LIVE_H
#define SP_CLI_LIVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

/* The options, the same words in every command that has them (CLI_LIVE_OPTIONS). */
typedef struct cli_live_options {
    int live;            /* --live: the panel from the start, on a terminal */
    int no_live;         /* --no-live: no panel (else: on a terminal after LIVE_AUTO_AFTER_S) */
    const char *metrics; /* --metrics HOST:PORT, or NULL */
    int metrics_any;     /* --metrics-any: a HOST that is not loopback is allowed */
} cli_live_options;

/* Without --live or --no-live the panel shows on a terminal once the watched runs have gone
 * on this long (seconds), so that a short command prints exactly what it did without it. */
#define LIVE_AUTO_AFTER_S 2
#define LIVE_TEXT_(x) #x
#define LIVE_TEXT(x) LIVE_TEXT_(x)

#define CLI_LIVE_OPTIONS(type, field)                                                         \
    CLI_FLAG("live", type, field.live,                                                        \
             "redraw a panel on stderr 5 times a second from the start, when\n"              \
             "stderr is a terminal (elsewhere, and with --json: nothing but the\n"           \
             "final report): progress and ETA, rate per engine, the bottleneck\n"            \
             "guess, memory. Without it the panel shows on a terminal once the\n"            \
             "runs have gone on for " LIVE_TEXT(LIVE_AUTO_AFTER_S) " s"),                     \
    CLI_FLAG("no-live", type, field.no_live, "no panel, even on a terminal"),                 \
    CLI_STRING("metrics", "HOST:PORT", type, field.metrics,                                   \
               "serve the live counters in the Prometheus text format at\n"                  \
               "http://HOST:PORT/metrics while the command runs (libmicrohttpd);\n"           \
               "HOST must be loopback (127.0.0.1, ::1, localhost) unless\n"                  \
               "--metrics-any; PORT 0 picks one (said on stderr) (default: none)"),           \
    CLI_FLAG("metrics-any", type, field.metrics_any,                                          \
             "let --metrics listen on an address that is not loopback")

#define LIVE_MAX_ENGINES 64 /* engine names a command's pipelines have, together */

/* Counts by engine name, added up over the command's runs. */
typedef struct live_engine_total {
    char name[32];
    int busy_measured;
    uint64_t records, bytes;
    double busy_s;
} live_engine_total;

typedef struct live_totals {
    uint64_t records_done, errors, runs;
    double wait_s;
    size_t n_engines;
    live_engine_total engines[LIVE_MAX_ENGINES];
} live_totals;

typedef struct live_watch {
    pthread_mutex_t lock;
    const sp_pipeline *p;     /* watched now, or NULL */
    char label[64];           /* what runs now ("pipelined run 2/3"), or "" */
    uint64_t counted_run;     /* p's run whose counts are in `done` already */
    live_totals done;         /* the command's finished runs */
    uint64_t planned_records; /* the whole command's, for progress (0: the run's own) */
    uint64_t records_before;  /* done before this command began (a resumed run's) */
    double busy_served[LIVE_MAX_ENGINES]; /* each total's busy_s as last sampled: a GPU
                                             engine's estimate is held there so that what
                                             is served only grows (live_watch.c) */
} live_watch;

/* What a reader sees at one moment. */
typedef struct live_sample {
    int have;                 /* a pipeline is watched and has run */
    sp_stats now;             /* its counters (zero when it adds nothing new) */
    live_totals total;        /* `done` plus now's */
    char label[64];
    uint64_t planned_records, records_before;
    double t;                 /* when it was taken (cli_now_s) */
} live_sample;

void live_watch_init(live_watch *w);
void live_watch_destroy(live_watch *w);
/* Watch p (NULL: nothing) from its next run on, labelled. */
void live_watch_set(live_watch *w, const sp_pipeline *p, const char *label);
/* After a run of the watched pipeline has returned: its final counts join the totals. */
void live_watch_fold(live_watch *w);
void live_watch_sample(live_watch *w, live_sample *out);

/* A command's live view and endpoint, started from its options. */
typedef struct cli_live {
    live_watch watch;
    struct live_view *view;      /* NULL: no panel */
    struct live_metrics *metrics;/* NULL: no endpoint */
    atomic_int panel_shown;      /* the panel is on screen (the view's thread sets it) */
} cli_live;

/* Starts what the options ask for; CLI_EXIT_OK, or a usage error or failure said on stderr
 * (a bad or refused address, a port in use, a build without libmicrohttpd, --live with
 * --no-live). `json`: the panel stays off. Call cli_live_stop whatever it returned. */
int cli_live_start(cli_live *live, const cli_live_options *o, int json);
/* Ends the panel (erasing it) and the endpoint, for the report to follow; again: nothing. */
void cli_live_end(cli_live *live);
/* Ends them if still on, and frees the watch. */
void cli_live_stop(cli_live *live);
/* Whether the panel shows the runs now (from the start with --live; without it, once shown
 * after LIVE_AUTO_AFTER_S): the command's own progress line then keeps quiet. The flag, for
 * the threads that write that line to read as they go, stays readable until cli_live_stop's
 * caller leaves: it never goes back to 0 once set. */
int cli_live_panel_on(const cli_live *live);
const atomic_int *cli_live_panel_flag(const cli_live *live);
/* 1 once the panel behind a flag cli_live_panel_flag gave has shown (NULL: no panel): a
 * progress line is then no longer its writer's to draw or erase. */
static inline int cli_live_flag_shown(const atomic_int *flag) { return flag && atomic_load(flag); }

#endif
