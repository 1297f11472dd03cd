/* The Chrome trace JSON of a pipeline's last timed run ("JSON object format", which Perfetto
 * and chrome://tracing read): a metadata event naming the process and each engine's track,
 * one complete ("X") event per chunk per engine, and the run's figures in "otherData".
 * Times are microseconds with nanosecond decimals. */
#include "core/trace_common.h"
#include "streampipe_trace.h"

#define TRACE_PID 1 /* one process: the pipeline; tracks are its engines, tid = engine + 1 */

static const char *engine_category(sp_engine_kind kind)
{
    switch (kind) {
    case SP_ENGINE_H2D:
    case SP_ENGINE_D2H: return "copy";
    case SP_ENGINE_COMPUTE: return "compute";
    default: return "host staging";
    }
}

static void put_track_names(sp_trace_writer *w, const sp_pipeline *p, const sp_timeline *t)
{
    sp_trace_printf(w, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                       "\"args\":{\"name\":\"streampipe %s pipeline: %zu chunks, depth %u\"}}",
                    TRACE_PID, sp_trace_backend_name(p), t->chunks, p->depth);
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e])
            continue;
        sp_trace_printf(w, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%zu,"
                           "\"args\":{\"name\":\"", TRACE_PID, e + 1);
        sp_trace_put_json_text(w, t->name[e]);
        sp_trace_printf(w, "\"}}");
        /* keep the tracks in pipeline order rather than alphabetical */
        sp_trace_printf(w, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                           "\"tid\":%zu,\"args\":{\"sort_index\":%zu}}", TRACE_PID, e + 1, e);
    }
}

static void put_chunk_event(sp_trace_writer *w, const sp_timeline *t, size_t e, size_t c)
{
    sp_span s = t->spans[e * t->chunks + c];
    if (s.end < s.start)
        return; /* never recorded */
    sp_trace_printf(w, ",\n{\"name\":\"");
    sp_trace_put_json_text(w, t->name[e]);
    sp_trace_printf(w, " c%zu\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%zu,"
                       "\"ts\":%s,\"dur\":%s,\"args\":{\"chunk\":%zu,\"records\":%zu,"
                       "\"bytes\":%zu}}",
                    c, engine_category(t->kind[e]), TRACE_PID, e + 1,
                    sp_trace_fixed(s.start * 1e6, 3).text,
                    sp_trace_fixed((s.end - s.start) * 1e6, 3).text, c,
                    sp_timeline_chunk_records(t, c), sp_timeline_chunk_bytes(t, e, c));
}

static void put_figures(sp_trace_writer *w, const sp_pipeline *p, const sp_timeline *t)
{
    sp_report r;
    sp_trace_figures(t, &r);
    sp_trace_printf(w, "\"otherData\":{\"backend\":\"%s\",\"records\":%zu,\"chunks\":%zu,"
                       "\"chunk_records\":%zu,\"depth\":%u,",
                    sp_trace_backend_name(p), t->n_records, t->chunks, t->chunk_records,
                    p->depth);
    sp_trace_printf(w, "\"makespan_ms\":%s,\"bound_ms\":%s,\"efficiency\":%s,"
                       "\"hidden_transfer\":%s,\"model_ms\":%s,\"serial_ms\":%s,"
                       "\"h2d_gbps\":%s,\"d2h_gbps\":%s,\"bottleneck\":\"",
                    sp_trace_fixed(r.makespan_s * 1e3, 6).text,
                    sp_trace_fixed(r.bound_s * 1e3, 6).text, sp_trace_fixed(r.efficiency, 6).text,
                    sp_trace_fixed(r.hidden_transfer, 6).text,
                    sp_trace_fixed(r.model_s * 1e3, 6).text,
                    sp_trace_fixed(r.serial_s * 1e3, 6).text, sp_trace_fixed(r.h2d_gbps, 3).text,
                    sp_trace_fixed(r.d2h_gbps, 3).text);
    sp_trace_put_json_text(w, r.bottleneck);
    sp_trace_printf(w, "\"}");
}

sp_status sp_pipeline_write_trace(const sp_pipeline *p, FILE *f)
{
    sp_trace_writer w;
    const sp_timeline *t = NULL;
    sp_status st = sp_trace_begin(p, f, "sp_pipeline_write_trace", &w, &t);
    if (st != SP_OK)
        return st;
    sp_trace_printf(&w, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    put_track_names(&w, p, t);
    for (size_t e = 0; e < t->engines; e++)
        for (size_t c = 0; t->active[e] && c < t->chunks; c++)
            put_chunk_event(&w, t, e, c);
    sp_trace_printf(&w, "\n],\n");
    put_figures(&w, p, t);
    sp_trace_printf(&w, "}\n");
    return sp_trace_end(p, &w);
}
