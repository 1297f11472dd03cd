/* The flight recorder (sp_pipeline_config.flight_recorder_s): a ring of the last spans of
 * the timeline, fixed in size at creation, so that the seconds before a failure can be
 * written as a trace (sp_pipeline_dump_recent) during a run or after it. timing.c is its
 * only writer (as it is the timeline's), on the thread that runs the pipeline; any thread
 * may copy it out. The mutex is held for one chunk's spans or one copy: the engine never
 * waits on anything else there. */
#ifndef SP_FLIGHT_H
#define SP_FLIGHT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Spans kept at most: 64K spans of 32 bytes, 2 MiB, whatever the seconds asked for. At
 * 8 MiB chunks on an H200 (about 8 chunks a millisecond... five spans each) that is several
 * seconds of a full timeline, and ten times that sampled. */
#define SP_FLIGHT_CAPACITY 65536u

typedef struct sp_flight_span {
    double start, end;  /* host clock (sp_now), seconds */
    uint64_t chunk;     /* ring numbering of the run or stream */
    uint32_t engine;    /* timeline engine: 0 stage-in, 1 h2d, ..., M+3 stage-out */
    uint32_t run;       /* sp_stats.run of the run it belongs to */
} sp_flight_span;

typedef struct sp_flight {
    double seconds;     /* kept: spans that ended within this of the newest one */
    pthread_mutex_t lock;
    sp_flight_span *spans; /* SP_FLIGHT_CAPACITY, a ring */
    size_t next, count;
    uint64_t dropped;   /* spans pushed out by the capacity while younger than `seconds` */
} sp_flight;

/* NULL when seconds is 0 or there is no memory (*failed says which). */
sp_flight *sp_flight_create(double seconds, int *failed);
void sp_flight_destroy(sp_flight *f);
size_t sp_flight_bytes(const sp_flight *f);
void sp_flight_push(sp_flight *f, const sp_flight_span *spans, size_t n);
/* The spans that ended within f->seconds of the newest, oldest first, into a new array
 * (*out, free it); *dropped as above. SP_ERR_OUT_OF_MEMORY or SP_OK (none: *n 0). */
int sp_flight_copy_recent(sp_flight *f, sp_flight_span **out, size_t *n, uint64_t *dropped);

#endif
