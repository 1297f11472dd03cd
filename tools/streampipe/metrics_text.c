/* The Prometheus text format of a live sample (metrics.h): HELP and TYPE before each family,
 * label values escaped, counters as the command's totals (they only grow across its runs),
 * gauges as the moment's. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

typedef struct out {
    char *buf;
    size_t size, used;
} out;

static void put(out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->used < o->size ? o->buf + o->used : NULL,
                      o->used < o->size ? o->size - o->used : 0, fmt, ap);
    va_end(ap);
    o->used += n > 0 ? (size_t)n : 0;
}

static void family(out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped, as the format asks. */
static void escaped(const char *text, char *buf, size_t size)
{
    size_t k = 0;
    for (const char *c = text; *c && k + 3 < size; c++) {
        if (*c == '\\' || *c == '"' || *c == '\n')
            buf[k++] = '\\';
        buf[k++] = *c == '\n' ? 'n' : *c;
    }
    buf[k] = '\0';
}

static void per_engine(out *o, const live_totals *t, int busy)
{
    for (size_t k = 0; k < t->n_engines; k++) {
        const live_engine_total *e = &t->engines[k];
        char name[80];
        escaped(e->name, name, sizeof name);
        if (!busy)
            put(o, "streampipe_bytes_total{engine=\"%s\"} %llu\n", name,
                (unsigned long long)e->bytes);
        else if (e->busy_measured)
            put(o, "streampipe_busy_seconds_total{engine=\"%s\"} %.9g\n", name, e->busy_s);
    }
}

size_t metrics_format(const live_sample *s, char *buf, size_t size)
{
    out o = {buf, size, 0};
    const live_totals *t = &s->total;
    if (size)
        buf[0] = '\0';
    family(&o, "streampipe_records_total", "counter",
           "Records whose chunks left the ring, output handed on (all the command's runs).");
    put(&o, "streampipe_records_total %llu\n", (unsigned long long)t->records_done);
    family(&o, "streampipe_bytes_total", "counter",
           "Bytes each engine moved (copies) or read (stages).");
    per_engine(&o, t, 0);
    family(&o, "streampipe_busy_seconds_total", "counter",
           "Seconds each engine was busy: the host staging engines always; the GPU engines "
           "in runs with a report, estimated from their sampled chunks (not listed when "
           "unmeasured).");
    per_engine(&o, t, 1);
    family(&o, "streampipe_wait_seconds_total", "counter",
           "Seconds the host waited for a ring slot to come free (the device was the limit).");
    put(&o, "streampipe_wait_seconds_total %.9g\n", t->wait_s);
    family(&o, "streampipe_errors_total", "counter", "Failed runs and failed stream batches.");
    put(&o, "streampipe_errors_total %llu\n", (unsigned long long)t->errors);
    family(&o, "streampipe_in_flight_chunks", "gauge", "Ring slots holding a chunk now.");
    put(&o, "streampipe_in_flight_chunks %u\n", s->now.chunks_in_flight);
    family(&o, "streampipe_in_flight_batches", "gauge", "Stream batches held now.");
    put(&o, "streampipe_in_flight_batches %u\n", s->now.batches_in_flight);
    family(&o, "streampipe_pinned_bytes", "gauge", "Pinned staging memory the pipeline holds.");
    put(&o, "streampipe_pinned_bytes %zu\n", s->now.pinned_bytes);
    family(&o, "streampipe_device_bytes", "gauge", "Device memory the pipeline holds.");
    put(&o, "streampipe_device_bytes %zu\n", s->now.device_bytes);
    family(&o, "streampipe_hidden_transfer_ratio", "gauge",
           "Fraction of copy time hidden under compute so far in the current run, estimated "
           "from its sampled chunks; no sample while unknown (a run without a report).");
    if (s->now.hidden_transfer >= 0.0) /* known: a run with a report, a window timed */
        put(&o, "streampipe_hidden_transfer_ratio %.6g\n", s->now.hidden_transfer);
    return o.used;
}
