#include "report_out.h"
#include "stats.h"

const char *cli_engine_kind_name(sp_engine_kind kind)
{
    switch (kind) {
    case SP_ENGINE_STAGE_IN: return "stage-in";
    case SP_ENGINE_H2D: return "h2d";
    case SP_ENGINE_COMPUTE: return "compute";
    case SP_ENGINE_D2H: return "d2h";
    case SP_ENGINE_STAGE_OUT: return "stage-out";
    }
    return "unknown";
}

const char *cli_format_bytes(double bytes, char *buf, size_t size)
{
    const double kib = 1024.0, mib = kib * 1024.0, gib = mib * 1024.0;
    if (bytes >= gib)
        snprintf(buf, size, "%.2f GiB", bytes / gib);
    else if (bytes >= mib)
        snprintf(buf, size, "%.1f MiB", bytes / mib);
    else
        snprintf(buf, size, "%.1f KiB", bytes / kib);
    return buf;
}

static void print_engines(const sp_report *report, FILE *out)
{
    char bytes[32];
    fprintf(out, "  %-16s %-9s %10s %12s %12s %10s\n", "engine", "kind", "busy s", "max chunk s",
            "bytes", "GB/s");
    for (size_t i = 0; i < report->n_engines && i < SP_MAX_ENGINES; i++) {
        const sp_engine_report *e = &report->engines[i];
        fprintf(out, "  %-16s %-9s %10.4f %12.6f %12s %10.2f\n", e->name,
                cli_engine_kind_name(e->kind), e->busy_s, e->max_chunk_s,
                cli_format_bytes((double)e->bytes, bytes, sizeof bytes), cli_gbps((double)e->bytes, e->busy_s));
    }
}

/* The memory the pipeline held, whatever the data's size. */
static void print_held(const sp_report *report, FILE *out)
{
    char bytes[32];
    fprintf(out, "  pinned staging   %s (%u slots of %zu records)\n",
            cli_format_bytes((double)report->pinned_bytes, bytes, sizeof bytes), report->depth,
            report->chunk_records);
}

void cli_print_report(const sp_report *report, FILE *out)
{
    print_held(report, out);
    if (report->n_engines == 0) { /* graph mode: replays are not timed per operation */
        fprintf(out, "  makespan         %.4f s; host submit %.4f s (%.4f s of it waiting for "
                "slots)\n", report->makespan_s, report->submit_s, report->wait_s);
        fprintf(out, "  per engine       not measured (graph mode: chunks replayed whole)\n");
        fprintf(out, "  notes            %s\n", report->notes[0] != '\0' ? report->notes : "(none)");
        return;
    }
    print_engines(report, out);
    fprintf(out, "  makespan         %.4f s\n", report->makespan_s);
    fprintf(out, "  bound            %.4f s (largest engine total; host staging counts the "
                 "time either direction was copying)\n", report->bound_s);
    fprintf(out, "  efficiency       %.1f%% (bound / makespan)\n", 100.0 * report->efficiency);
    fprintf(out, "  hidden transfer  %.1f%% of copy time overlapped compute\n",
            100.0 * report->hidden_transfer);
    fprintf(out, "  model            %.4f s vs makespan %.4f s; no overlap at all: %.4f s\n",
            report->model_s, report->makespan_s, report->serial_s);
    fprintf(out, "  copy rates       h2d %.2f GB/s, d2h %.2f GB/s\n", report->h2d_gbps,
            report->d2h_gbps);
    fprintf(out, "  bottleneck       %s\n", report->bottleneck);
    fprintf(out, "  notes            %s\n", report->notes[0] != '\0' ? report->notes : "(none)");
}

static void write_engines(json_writer *w, const sp_report *report)
{
    json_array_open(w, "engines");
    for (size_t i = 0; i < report->n_engines && i < SP_MAX_ENGINES; i++) {
        const sp_engine_report *e = &report->engines[i];
        json_object_open(w, NULL);
        json_string(w, "name", e->name);
        json_string(w, "kind", cli_engine_kind_name(e->kind));
        json_number(w, "busy_s", e->busy_s);
        json_number(w, "max_chunk_s", e->max_chunk_s);
        json_uint(w, "bytes", e->bytes);
        json_number(w, "gbps", cli_gbps((double)e->bytes, e->busy_s));
        json_object_close(w);
    }
    json_array_close(w);
}

void cli_json_report(json_writer *w, const sp_report *report)
{
    json_object_open(w, "report");
    json_uint(w, "records", report->records);
    json_uint(w, "chunks", report->chunks);
    json_uint(w, "chunk_records", report->chunk_records);
    json_uint(w, "depth", report->depth);
    json_uint(w, "staging_threads", report->staging_threads);
    json_bool(w, "staged_in", report->staged_in);
    json_bool(w, "staged_out", report->staged_out);
    json_number(w, "makespan_s", report->makespan_s);
    json_number(w, "submit_s", report->submit_s);
    json_number(w, "wait_s", report->wait_s);
    json_bool(w, "graph", report->graph);
    json_uint(w, "pinned_bytes", report->pinned_bytes);
    json_uint(w, "batches", report->batches);
    write_engines(w, report);
    json_number(w, "bound_s", report->bound_s);
    json_number(w, "efficiency", report->efficiency);
    json_number(w, "serial_s", report->serial_s);
    json_number(w, "model_s", report->model_s);
    json_number(w, "hidden_transfer", report->hidden_transfer);
    json_number(w, "h2d_gbps", report->h2d_gbps);
    json_number(w, "d2h_gbps", report->d2h_gbps);
    json_string(w, "bottleneck", report->bottleneck);
    json_string(w, "notes", report->notes);
    json_object_close(w);
}
