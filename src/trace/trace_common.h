/* What the trace writers (trace_json.c, trace_svg*.c) share: the checked way in to a
 * report's own timeline (core/report_timeline.h, read-only), a FILE writer that remembers its first failure, text escaping
 * for JSON and XML, and the colour of each chunk. */
#ifndef SP_TRACE_COMMON_H
#define SP_TRACE_COMMON_H

#include <stdio.h>

#include "core/report_timeline.h"

typedef struct sp_trace_writer {
    FILE *f;
    int error; /* errno of the first failed write; 0 while every write succeeded */
} sp_trace_writer;

/* The report's timeline, or SP_ERR_INVALID_ARGUMENT with the thread's report error set
 * (sp_report_last_error) when an argument is NULL or there is none. `fn` names the caller in
 * the message. */
sp_status sp_trace_begin(const sp_report *report, FILE *f, const char *fn, sp_trace_writer *w,
                         const sp_timeline **timeline);
/* Flushes; SP_ERR_BACKEND ("writing the trace failed: <strerror>") if any write failed. */
sp_status sp_trace_end(sp_trace_writer *w);

/* fprintf that does nothing once a write has failed. */
void sp_trace_printf(sp_trace_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* `text` as the inside of a JSON string or as XML character data / attribute value. Bytes
 * that are not valid UTF-8, and control characters XML cannot hold, become '?', so a stage
 * name can never break the document. */
void sp_trace_put_json_text(sp_trace_writer *w, const char *text);
void sp_trace_put_xml_text(sp_trace_writer *w, const char *text);

/* A number with a fixed count of decimals (0..6), written without the C locale's help: a
 * program that set LC_NUMERIC to a decimal comma must not break the JSON or the SVG.
 * Use the .text of the returned value inside the same expression (C11 keeps it alive). */
typedef struct sp_trace_number {
    char text[48]; /* room for any long long, a point and the decimals */
} sp_trace_number;
sp_trace_number sp_trace_fixed(double value, int decimals);

/* "512 B", "64.0 KiB", "6.40 MiB", "1.00 GiB": three significant figures or so. */
sp_trace_number sp_trace_size(size_t bytes);

/* "#rrggbb" for chunk c: hues a golden angle apart, so neighbouring chunks differ strongly
 * and a chunk has the same colour in every lane. */
void sp_trace_chunk_colour(size_t chunk, char out[8]);
/* 1 when text on chunk c's colour reads better in white than in black (blues, purples). */
int sp_trace_chunk_colour_is_dark(size_t chunk);

/* As sp_trace_put_xml_text, cut to at most max_bytes (at a character boundary) with a '~'
 * marking the cut, for names in narrow columns. */
void sp_trace_put_xml_clipped(sp_trace_writer *w, const char *text, size_t max_bytes);

/* Lanes (SVG) or tracks (JSON) of engine e: one per queue of a stage that takes turns on
 * several (sp_stage.streams), whose chunks would otherwise overlap and hide each other in one
 * lane; one for every other engine. */
static inline unsigned sp_trace_lanes(const sp_timeline *t, size_t e)
{
    return t->streams[e] > 1 ? t->streams[e] : 1u;
}
/* The lane of engine e that chunk c ran on: chunk i runs on queue i mod streams. */
static inline unsigned sp_trace_lane_of(const sp_timeline *t, size_t e, size_t c)
{
    return (unsigned)(c % sp_trace_lanes(t, e));
}


#endif
