/* --flight-recorder SECONDS and --flight-recorder-file PATH, the same words in `run` and
 * `bench`: the pipeline keeps the last SECONDS of its timeline (sp_pipeline_config
 * .flight_recorder_s) and the command writes it as a Perfetto trace (sp_pipeline_dump_recent)
 * when a run fails, and whenever the process gets SIGUSR1. The library writes no file by
 * itself: these writes are the command's. The signal handler only sets a flag; a thread of
 * the command's polls it and writes the file, never the handler. */
#ifndef SP_CLI_FLIGHT_H
#define SP_CLI_FLIGHT_H

#include <pthread.h>
#include <stdatomic.h>

#include "streampipe.h"

typedef struct cli_flight_options {
    unsigned long long seconds; /* 0: no recorder */
    const char *path;           /* NULL: streampipe-flight-PID.json in the working directory */
} cli_flight_options;

#define CLI_FLIGHT_OPTIONS(type, field)                                                      \
    CLI_COUNT("flight-recorder", "SECONDS", type, field.seconds, 1, 86400,                  \
              "keep the last SECONDS of the timeline (bounded: 2 MiB)\n"                     \
              "and write it as a Perfetto trace when a run fails or\n"                       \
              "on SIGUSR1 (default: none kept)"),                                            \
    CLI_STRING("flight-recorder-file", "FILE.json", type, field.path,                       \
               "where the flight recorder is written (default\n"                             \
               "streampipe-flight-PID.json here)")

typedef struct cli_flight {
    const sp_pipeline *pipeline;
    char path[4096];
    pthread_t thread;
    atomic_int stop;
    int started;
} cli_flight;

/* Starts watching for SIGUSR1 for this pipeline (nothing when o->seconds is 0); 0 or -1 (a
 * message printed). */
int cli_flight_start(cli_flight *f, const cli_flight_options *o, const sp_pipeline *pipeline);
/* Writes the recorder now, saying why on stderr ("the run failed"); nothing when off. */
void cli_flight_dump(cli_flight *f, const char *why);
void cli_flight_stop(cli_flight *f);

#endif
