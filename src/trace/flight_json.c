/* sp_pipeline_dump_recent: the flight recorder's spans (src/core/flight.h) as a Chrome trace
 * JSON file, which Perfetto's UI and trace processor load: one track per engine, one
 * complete event per span, times in microseconds on the host's monotonic clock (so that
 * dumps of one process line up), and what was kept in "otherData". The spans are copied out
 * under the recorder's lock and written after it, so a dump during a run holds the engine up
 * for one copy of at most 2 MiB. It reads nothing else the running engine writes: not the
 * timeline, not the error text (a failure is its status, and errno for the file). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/flight.h"
#include "core/pipeline.h"
#include "core/timeline.h"
#include "streampipe_trace.h"

static const char *engine_name(const sp_pipeline *p, uint32_t e)
{
    if (e == SP_TL_STAGE_IN)
        return "stage-in";
    if (e == SP_TL_GPU(0))
        return "h2d";
    if (e == SP_TL_GPU(p->n_stages + 1))
        return "d2h";
    if (e == SP_TL_STAGE_OUT_OF(p->n_stages))
        return "stage-out";
    return e >= 2 && e - 2 < p->n_stages ? p->stage_names[e - 2] : "engine";
}

/* Names go into JSON strings: stage names are the user's, so anything but plain printable
 * ASCII is left out rather than escaped wrongly. */
static void put_name(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\')
            fputc(*s, f);
}

/* A track for each engine that has spans here (Perfetto makes tracks of those alone). */
static void put_tracks(FILE *f, const sp_pipeline *p, const sp_flight_span *spans, size_t n)
{
    int used[SP_MAX_ENGINES] = {0};
    for (size_t k = 0; k < n; k++)
        if (spans[k].engine < SP_MAX_ENGINES)
            used[spans[k].engine] = 1;
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":"
               "{\"name\":\"streampipe flight recorder\"}}");
    for (uint32_t e = 0; e < SP_TL_STAGE_OUT_OF(p->n_stages) + 1; e++) {
        if (!used[e])
            continue;
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":"
                   "{\"name\":\"", e + 1);
        put_name(f, engine_name(p, e));
        fprintf(f, "\"}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                   "\"args\":{\"sort_index\":%u}}", e + 1, e + 1);
    }
}

static void put_span(FILE *f, const sp_pipeline *p, const sp_flight_span *s)
{
    long long start_ns = llround(s->start * 1e9), end_ns = llround(s->end * 1e9);
    if (end_ns < start_ns)
        end_ns = start_ns;
    fprintf(f, ",\n{\"name\":\"");
    put_name(f, engine_name(p, s->engine));
    fprintf(f, " c%llu\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%lld.%03lld,\"dur\":"
               "%lld.%03lld,\"args\":{\"chunk\":%llu,\"run\":%u}}",
            (unsigned long long)s->chunk, s->engine + 1, start_ns / 1000, start_ns % 1000,
            (end_ns - start_ns) / 1000, (end_ns - start_ns) % 1000,
            (unsigned long long)s->chunk, s->run);
}

sp_status sp_pipeline_dump_recent(const sp_pipeline *p, const char *path)
{
    if (!p || !path || !p->flight)
        return SP_ERR_INVALID_ARGUMENT;
    sp_flight_span *spans;
    size_t n;
    uint64_t dropped;
    if (sp_flight_copy_recent(p->flight, &spans, &n, &dropped) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    FILE *f = fopen(path, "w");
    if (!f) {
        int saved = errno;
        free(spans);
        errno = saved;
        return SP_ERR_BACKEND;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    put_tracks(f, p, spans, n);
    for (size_t k = 0; k < n; k++)
        put_span(f, p, &spans[k]);
    fprintf(f, "\n],\n\"otherData\":{\"flight_recorder_s\":%.6f,\"spans\":%zu,\"capacity\":%u,"
               "\"bytes\":%zu,\"dropped_by_capacity\":%llu,\"clock\":\"host monotonic, us\"}}\n",
            p->flight->seconds, n, SP_FLIGHT_CAPACITY, sp_flight_bytes(p->flight),
            (unsigned long long)dropped);
    free(spans);
    int bad = ferror(f);
    int saved = errno;
    if (fclose(f) != 0 || bad) {
        errno = bad ? saved : errno;
        return SP_ERR_BACKEND;
    }
    return SP_OK;
}
