/* The latency command's results: a table and the verdict on the targets, or one JSON object. */
#include "json.h"
#include "latency.h"

double latency_p99_ratio(const latency_job *j)
{
    return j->rows[LATENCY_PRIORITY].request.p99_us / j->rows[LATENCY_ALONE].request.p99_us;
}

double latency_bulk_fraction(const latency_job *j, int phase)
{
    return j->rows[phase].bulk_gbps / j->rows[LATENCY_ALONE].bulk_gbps;
}

static const char *met(int yes)
{
    return yes ? "met" : "NOT met";
}

static void print_setup(const latency_job *j, FILE *out)
{
    const latency_options *o = &j->options;
    fprintf(out, "streampipe latency: backend %s, seed %llu\n",
            sp_backend_name(sp_context_backend(j->ctx)), o->seed);
    fprintf(out, "  requests  %llu per phase, %.2f MiB each, sinmix iters 0, pinned, one at a "
            "time\n", o->requests, (double)o->request_bytes / (1 << 20));
    fprintf(out, "  bulk      %llu records (%.1f MiB each way), %s, pinned, back to back; "
            "alone for %.1f s\n", o->bulk_records,
            (double)o->bulk_records * sizeof(float) / (1 << 20),
            o->bulk_stages ? "sinmix iters 0" : "copies only", j->bulk_alone_s);
    fprintf(out, "  priority  requests at priority -5, copies by %s, bulk copies in pieces of "
            "%.2f MiB", o->request_copy_kernel ? "kernel" : "the copy engines",
            (double)o->piece_bytes / (1 << 20));
    if (o->bulk_chunk_bytes)
        fprintf(out, ", bulk chunks of %.2f MiB", (double)o->bulk_chunk_bytes / (1 << 20));
    if (o->bulk_depth)
        fprintf(out, ", bulk depth %llu", o->bulk_depth);
    fputs("\n\n", out);
}

void latency_report_text(const latency_job *j, FILE *out)
{
    print_setup(j, out);
    fprintf(out, "  %-9s %10s %10s %10s %10s %9s %6s\n", "phase", "p50 us", "p99 us",
            "max us", "bulk GB/s", "of alone", "runs");
    for (int p = 0; p < LATENCY_PHASES; p++) {
        const latency_row *row = &j->rows[p];
        fprintf(out, "  %-9s %10.1f %10.1f %10.1f %10.2f %8.1f%% %6zu\n", row->name,
                row->request.p50_us, row->request.p99_us, row->request.max_us, row->bulk_gbps,
                100.0 * latency_bulk_fraction(j, p), row->bulk_runs);
    }
    fputs("  (alone: the requests and the bulk pipeline were measured apart)\n\n", out);
    double ratio = latency_p99_ratio(j), fraction = latency_bulk_fraction(j, LATENCY_PRIORITY);
    fprintf(out, "  target: p99 with priority <= %.0fx p99 alone: %.2fx, %s\n",
            LATENCY_P99_TARGET, ratio, met(ratio <= LATENCY_P99_TARGET));
    fprintf(out, "  target: bulk with priority >= %.0f%% of alone: %.1f%%, %s\n",
            100.0 * LATENCY_BULK_TARGET, 100.0 * fraction,
            met(fraction >= LATENCY_BULK_TARGET));
    fprintf(out, "  verified: every element of %zu requests; every element of %zu bulk runs "
            "(the first of each bulk pipeline, the last of each phase); %zu mismatches\n",
            j->requests.checked, j->bulk_checked, j->requests.mismatches + j->bulk_mismatches);
}

static void json_row(json_writer *w, const latency_job *j, int p)
{
    const latency_row *row = &j->rows[p];
    json_object_open(w, NULL);
    json_string(w, "phase", row->name);
    json_number(w, "p50_us", row->request.p50_us);
    json_number(w, "p99_us", row->request.p99_us);
    json_number(w, "max_us", row->request.max_us);
    json_number(w, "bulk_gbps", row->bulk_gbps);
    json_number(w, "bulk_fraction", latency_bulk_fraction(j, p));
    json_uint(w, "bulk_runs", row->bulk_runs);
    json_object_close(w);
}

static void json_setup(json_writer *w, const latency_job *j)
{
    const latency_options *o = &j->options;
    json_string(w, "command", "latency");
    json_string(w, "backend", sp_backend_name(sp_context_backend(j->ctx)));
    json_uint(w, "seed", o->seed);
    json_uint(w, "requests", o->requests);
    json_uint(w, "request_bytes", o->request_bytes);
    json_uint(w, "bulk_records", o->bulk_records);
    json_uint(w, "bulk_stages", o->bulk_stages);
    json_number(w, "bulk_alone_s", j->bulk_alone_s);
    json_uint(w, "piece_bytes", o->piece_bytes);
    json_uint(w, "bulk_chunk_bytes", o->bulk_chunk_bytes);
    json_uint(w, "bulk_depth", o->bulk_depth);
    json_number(w, "priority", -5);
    json_bool(w, "request_copy_by_kernel", o->request_copy_kernel);
}

void latency_report_json(const latency_job *j, FILE *out)
{
    json_writer w;
    json_begin(&w, out);
    json_object_open(&w, NULL);
    json_setup(&w, j);
    json_array_open(&w, "phases");
    for (int p = 0; p < LATENCY_PHASES; p++)
        json_row(&w, j, p);
    json_array_close(&w);
    double ratio = latency_p99_ratio(j), fraction = latency_bulk_fraction(j, LATENCY_PRIORITY);
    json_object_open(&w, "targets");
    json_number(&w, "p99_ratio", ratio);
    json_bool(&w, "p99_met", ratio <= LATENCY_P99_TARGET);
    json_number(&w, "bulk_fraction", fraction);
    json_bool(&w, "bulk_met", fraction >= LATENCY_BULK_TARGET);
    json_object_close(&w);
    json_object_open(&w, "verified");
    json_uint(&w, "requests", j->requests.checked);
    json_uint(&w, "bulk_runs", j->bulk_checked);
    json_string(&w, "bulk_runs_checked", "first of each bulk pipeline, last of each phase");
    json_uint(&w, "mismatches", j->requests.mismatches + j->bulk_mismatches);
    json_object_close(&w);
    json_object_close(&w);
    json_end(&w);
}
