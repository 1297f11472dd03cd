/* The Chrome trace JSON of a report's run, from its timeline ("JSON object format", which Perfetto
 * and chrome://tracing read): a metadata event naming the process and each track, one
 * complete ("X") event per chunk per engine, and the run's figures in "otherData". Each
 * engine has a track; a stage on several queues has one per queue ("name q0", "name q1", ...;
 * chunk i on queue i mod streams), since its chunks overlap and one track would stack them.
 * Times are microseconds with nanosecond decimals. */
#include <math.h>

#include "trace/trace_common.h"
#include "streampipe_trace.h"

#define TRACE_PID 1 /* one process: the pipeline; its tracks are numbered from 1 (tid) */

static const char *engine_category(sp_engine_kind kind)
{
    switch (kind) {
    case SP_ENGINE_H2D:
    case SP_ENGINE_D2H: return "copy";
    case SP_ENGINE_COMPUTE: return "compute";
    default: return "host staging";
    }
}

/* The tid of engine e's lane k: tracks in pipeline order, the lanes of an engine together. */
static size_t track_of(const sp_timeline *t, size_t e, unsigned k)
{
    size_t track = 1;
    for (size_t i = 0; i < e; i++)
        track += t->active[i] ? sp_trace_lanes(t, i) : 0;
    return track + k;
}

static void put_track_name(sp_trace_writer *w, const sp_timeline *t, size_t e, unsigned k)
{
    size_t tid = track_of(t, e, k);
    sp_trace_printf(w, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%zu,"
                       "\"args\":{\"name\":\"", TRACE_PID, tid);
    sp_trace_put_json_text(w, t->name[e]);
    if (sp_trace_lanes(t, e) > 1)
        sp_trace_printf(w, " q%u", k);
    sp_trace_printf(w, "\"}}");
    /* keep the tracks in pipeline order rather than alphabetical */
    sp_trace_printf(w, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                       "\"tid\":%zu,\"args\":{\"sort_index\":%zu}}", TRACE_PID, tid, tid);
}

static void put_track_names(sp_trace_writer *w, const sp_report *report, const sp_timeline *t)
{
    sp_trace_printf(w, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                       "\"args\":{\"name\":\"streampipe %s pipeline: %zu chunks, depth %u\"}}",
                    TRACE_PID, sp_report_timeline_backend(report), t->chunks,
                    sp_report_timeline_depth(report));
    for (size_t e = 0; e < t->engines; e++)
        for (unsigned k = 0; t->active[e] && k < sp_trace_lanes(t, e); k++)
            put_track_name(w, t, e, k);
}

/* seconds as whole nanoseconds */
static long long to_ns(double seconds) { return llround(seconds * 1e9); }

/* whole nanoseconds as microseconds with three decimals (exact below 2^53 ns) */
static sp_trace_number ns_as_us(long long ns) { return sp_trace_fixed((double)ns / 1e3, 3); }

static void put_chunk_event(sp_trace_writer *w, const sp_timeline *t, size_t e, size_t c)
{
    sp_span s = t->spans[e * t->chunks + c];
    if (s.end < s.start)
        return; /* never recorded */
    /* Both ends are rounded, and the duration is their difference: an operation that started
     * when the one before it on its queue ended then starts exactly where that one ends.
     * Rounding the start and the duration apart could end the first a nanosecond later, and
     * Perfetto drops an event that starts inside the one before it on its track. */
    long long start_ns = to_ns(s.start), end_ns = to_ns(s.end);
    sp_trace_printf(w, ",\n{\"name\":\"");
    sp_trace_put_json_text(w, t->name[e]);
    unsigned lane = sp_trace_lane_of(t, e, c);
    sp_trace_printf(w, " c%zu\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%zu,"
                       "\"ts\":%s,\"dur\":%s,\"args\":{\"chunk\":%zu,\"records\":%zu,"
                       "\"bytes\":%zu",
                    c, engine_category(t->kind[e]), TRACE_PID, track_of(t, e, lane),
                    ns_as_us(start_ns).text, ns_as_us(end_ns - start_ns).text, c,
                    sp_timeline_chunk_records(t, c), sp_timeline_chunk_bytes(t, e, c));
    if (sp_trace_lanes(t, e) > 1)
        sp_trace_printf(w, ",\"queue\":%u", lane);
    sp_trace_printf(w, "}}");
}

/* The report's figures: those of the timeline's run (sp_report_write_svg prints the same). */
static void put_figures(sp_trace_writer *w, const sp_report *r, const sp_timeline *t)
{
    sp_trace_printf(w, "\"otherData\":{\"backend\":\"%s\",\"records\":%zu,\"chunks\":%zu,"
                       "\"chunk_records\":%zu,\"depth\":%u,",
                    sp_report_timeline_backend(r), t->n_records, t->chunks,
                    t->chunk_records, sp_report_timeline_depth(r));
    sp_trace_printf(w, "\"makespan_ms\":%s,\"bound_ms\":%s,\"efficiency\":%s,"
                       "\"hidden_transfer\":%s,\"model_ms\":%s,\"serial_ms\":%s,"
                       "\"h2d_gbps\":%s,\"d2h_gbps\":%s,\"bottleneck\":\"",
                    sp_trace_fixed(r->makespan_s * 1e3, 6).text,
                    sp_trace_fixed(r->bound_s * 1e3, 6).text, sp_trace_fixed(r->efficiency, 6).text,
                    sp_trace_fixed(r->hidden_transfer, 6).text,
                    sp_trace_fixed(r->model_s * 1e3, 6).text,
                    sp_trace_fixed(r->serial_s * 1e3, 6).text, sp_trace_fixed(r->h2d_gbps, 3).text,
                    sp_trace_fixed(r->d2h_gbps, 3).text);
    sp_trace_put_json_text(w, r->bottleneck);
    sp_trace_printf(w, "\"}");
}

sp_status sp_report_write_trace(const sp_report *report, FILE *f)
{
    sp_trace_writer w;
    const sp_timeline *t = NULL;
    sp_status st = sp_trace_begin(report, f, "sp_report_write_trace", &w, &t);
    if (st != SP_OK)
        return st;
    sp_trace_printf(&w, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    put_track_names(&w, report, t);
    for (size_t e = 0; e < t->engines; e++)
        for (size_t c = 0; t->active[e] && c < t->chunks; c++)
            put_chunk_event(&w, t, e, c);
    sp_trace_printf(&w, "\n],\n");
    put_figures(&w, report, t);
    sp_trace_printf(&w, "}\n");
    return sp_trace_end(&w);
}
