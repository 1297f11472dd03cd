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
    char bottleneck[40];                     /* the report's bottleneck as the files spell it */
    const sp_report *report;
} trace_expect;

/* Parses `text` as JSON and checks: metadata naming the process and one track per engine in
 * order; exactly one complete event per chunk per engine, named "<engine> c<chunk>", with
 * the right chunk, records and bytes in args; in-order, non-overlapping events on each track
 * inside the makespan; otherData repeating the report's figures. */
void check_trace_json(const char *text, const trace_expect *x);

/* Parses `text` as XML (no network) and checks: an <svg> root; one bar per chunk per engine,
 * each chunk in one colour across lanes and neighbouring chunks in different ones; a lane
 * label per engine; the figures' labels and the bottleneck's name. */
void check_trace_svg(const char *text, size_t bytes, const trace_expect *x);

#endif
