/* The checks test_trace.c applies to the files it writes: the Chrome trace JSON read by cJSON,
 * the SVG read by libxml2. Failures go to the harness. */
#ifndef SP_TEST_TRACE_H
#define SP_TEST_TRACE_H

#include <stddef.h>

#include "streampipe.h"

/* What a run should have produced, worked out from the pipeline's shape, not from the
 * library's own numbers (except the report, whose figures the files must repeat). */
typedef struct trace_expect {
    size_t records, chunks, chunk_records;
    size_t n_engines;
    char names[SP_MAX_ENGINES][40];          /* engine names as the files must spell them */
    size_t record_bytes[SP_MAX_ENGINES];     /* bytes each engine moves or reads per record */
    unsigned streams[SP_MAX_ENGINES];        /* queues of each engine: 0 or 1 for one; more
                                                for a stage on several (a lane each) */
    char bottleneck[40];                     /* the report's bottleneck as the files spell it */
    const sp_report *report;
} trace_expect;

/* Parses `text` as JSON and checks: metadata naming the process and one track per engine in
 * order, or one per queue ("<engine> q<k>") for an engine on several; exactly one complete
 * event per chunk per engine, named "<engine> c<chunk>", on the track of its queue (chunk c
 * on queue c mod streams), with the right chunk, records and bytes in args; in-order,
 * non-overlapping events on each track inside the makespan; otherData repeating the
 * report's figures. */
void check_trace_json(const char *text, const trace_expect *x);

/* Parses `text` as XML (no network) and checks: an <svg> root; one bar per chunk per engine,
 * each chunk in one colour across lanes and neighbouring chunks in different ones; one lane
 * label left of the bars per engine, or per queue ("<engine> q<k>") for an engine on several,
 * top to bottom in pipeline order; every bar in the lane of its engine and queue (the nearest
 * label); the figures' labels and the bottleneck's name. Names must be short enough for the
 * lane labels not to cut them (11 bytes). */
void check_trace_svg(const char *text, size_t bytes, const trace_expect *x);

#endif
