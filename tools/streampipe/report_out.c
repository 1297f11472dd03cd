#include <string.h>

#include "report_out.h"
#include "stats.h"

static const char *engine_kind_name(sp_engine_kind kind)
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

void cli_tool_figures(fig_out *o, const char *command)
{
    fig_str(o, "tool", NULL, NULL, "streampipe");
    fig_str(o, "version", NULL, NULL, sp_version());
    fig_str(o, "command", NULL, NULL, command);
    fig_text(o, NULL, "streampipe %s (library %s)\n", command, sp_version());
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

static const fig_column engine_columns[] = {
    {"name", "engine", -16, "%s", FIG_STR},
    {"kind", "kind", -9, "%s", FIG_STR},
    {"busy_s", "busy s", 10, "%.4f", FIG_NUM},
    {"max_chunk_s", "max chunk s", 12, "%.6f", FIG_NUM},
    {"bytes", NULL, 0, NULL, FIG_UINT},
    {NULL, "bytes", 12, "%s", FIG_STR},
    {"gbps", "GB/s", 10, "%.2f", FIG_NUM},
};
#define N_ENGINE_COLUMNS (sizeof engine_columns / sizeof engine_columns[0])

static void engine_table(fig_out *o, const sp_report *r)
{
    fig_table(o, "engines", engine_columns, N_ENGINE_COLUMNS);
    for (size_t i = 0; i < r->n_engines && i < SP_MAX_ENGINES; i++) {
        const sp_engine_report *e = &r->engines[i];
        char bytes[32];
        fig_value v[N_ENGINE_COLUMNS] = {
            {.str = e->name}, {.str = engine_kind_name(e->kind)}, {.num = e->busy_s},
            {.num = e->max_chunk_s}, {.uint = e->bytes},
            {.str = cli_format_bytes((double)e->bytes, bytes, sizeof bytes)},
            {.num = cli_gbps((double)e->bytes, e->busy_s)}};
        fig_row(o, NULL, engine_columns, N_ENGINE_COLUMNS, v);
    }
    fig_table_end(o);
}

/* The run's shape, and the memory the pipeline held whatever the data's size. */
static void shape(fig_out *o, const sp_report *r)
{
    char bytes[32];
    fig_uint(o, "records", NULL, NULL, r->records);
    fig_uint(o, "chunks", "chunks", "%llu", r->chunks);
    fig_uint(o, "chunk_records", NULL, NULL, r->chunk_records);
    fig_uint(o, "depth", NULL, NULL, r->depth);
    fig_uint(o, "staging_threads", "staging threads", "%llu", r->staging_threads);
    fig_bool(o, "staged_in", "staged in", r->staged_in, "yes", "no (the copies read it)");
    fig_bool(o, "staged_out", "staged out", r->staged_out, "yes", "no (the copies write it)");
    fig_bool(o, "graph", NULL, r->graph, NULL, NULL);
    fig_uint(o, "batches", NULL, NULL, r->batches);
    fig_uint(o, "pinned_bytes", NULL, NULL, r->pinned_bytes);
    fig_uint(o, "slot_records", NULL, NULL, r->slot_records);
    fig_uint(o, "tune_changes", "tune changes", "%llu (sp_pipeline_tune_changes lists them)",
             r->tune_changes);
    fig_text(o, "pinned staging", "%s (%u slots of %zu records, in and out)\n",
             cli_format_bytes((double)r->pinned_bytes, bytes, sizeof bytes), r->depth,
             r->slot_records);
}

/* The label, where the figure has a place in the text; NULL (JSON only) where not. */
static const char *when(int shown, const char *label)
{
    return shown ? label : NULL;
}

/* Why a report has no engine times, from what the report says rather than a guess: a run
 * that fed its batches through one ring without draining (a group's array run, a stream)
 * says "no per-operation timings" in its notes (streampipe.h, streampipe_group.h); one in
 * graph mode, which replays whole chunks, sets `graph`. */
static const char *untimed_reason(const sp_report *r)
{
    if (strstr(r->notes, "no per-operation timings") != NULL)
        return "batches fed through one ring, untimed: see the notes";
    if (r->graph)
        return "graph mode: chunks replayed whole";
    return "the report has no engine times";
}

void cli_report_figures(fig_out *o, const char *title, const sp_report *r)
{
    fig_group(o, "report", title);
    shape(o, r);
    int timed = r->n_engines > 0;
    if (timed)
        engine_table(o, r);
    fig_num(o, "makespan_s", "makespan", "%.4f s", r->makespan_s);
    fig_num(o, "submit_s", when(!timed, "host submit"), "%.4f s", r->submit_s);
    fig_num(o, "wait_s", when(!timed, "waiting for slots"), "%.4f s", r->wait_s);
    if (!timed)
        fig_text(o, "per engine", "not measured (%s)\n", untimed_reason(r));
    fig_num(o, "bound_s", when(timed, "bound"),
            "%.4f s (largest engine total; host staging counts the time either direction was "
            "copying)", r->bound_s);
    fig_percent(o, "efficiency", when(timed, "efficiency"), "%.1f%% (bound / makespan)",
                r->efficiency);
    fig_percent(o, "hidden_transfer", when(timed, "hidden transfer"),
                "%.1f%% of copy time overlapped compute", r->hidden_transfer);
    fig_num(o, "model_s", when(timed, "model"), "%.4f s", r->model_s);
    fig_num(o, "serial_s", when(timed, "no overlap"), "%.4f s (the stages one after another)",
            r->serial_s);
    fig_num(o, "h2d_gbps", when(timed, "copy rate h2d"), "%.2f GB/s", r->h2d_gbps);
    fig_num(o, "d2h_gbps", when(timed, "copy rate d2h"), "%.2f GB/s", r->d2h_gbps);
    fig_str(o, "bottleneck", when(timed, "bottleneck"), "%s", r->bottleneck);
    fig_uint(o, "timed_chunks", when(timed, "timed chunks"), "%llu of the run's chunks (the "
             "sampled ones: see the notes)", (unsigned long long)r->timed_chunks);
    fig_num(o, "flight_recorder_s", when(r->flight_recorder_s > 0.0, "flight recorder"),
            "%.0f s kept", r->flight_recorder_s);
    fig_uint(o, "flight_recorder_bytes", when(r->flight_recorder_s > 0.0, ""),
             "%llu bytes at most", (unsigned long long)r->flight_recorder_bytes);
    /* the JSON has "" where the text says so */
    fig_str(o, "notes", "notes", "%s", r->notes[0] != '\0' || o->json ? r->notes : "(none)");
    fig_group_end(o);
}

void cli_tune_list_read(cli_tune_list *list, const sp_pipeline *pipeline)
{
    list->n = 0;
    list->total = 0;
    if (pipeline && sp_pipeline_tune_changes(pipeline, list->change, SP_TUNE_CHANGES_KEPT,
                                             &list->n, &list->total) != SP_OK)
        list->n = 0;
}

static const fig_column tune_columns[] = {
    {"since_first_s", "after (s)", 9, "%.3f", FIG_NUM}, /* the first change's: at create */
    {"from_chunk", "chunk", 9, "%llu", FIG_UINT},
    {"to_chunk", "-> chunk", 9, "%llu", FIG_UINT},
    {"from_depth", "depth", 6, "%llu", FIG_UINT},
    {"to_depth", "-> depth", 9, "%llu", FIG_UINT},
    {"reason", "  why", -1, "  %s", FIG_STR},
};
#define N_TUNE_COLUMNS (sizeof tune_columns / sizeof tune_columns[0])

void cli_tune_figures(fig_out *o, const cli_tune_list *list)
{
    if (list->n == 0)
        return;
    fig_text(o, NULL, "tune changes (%llu made; the first and the latest are kept):\n",
             (unsigned long long)list->total);
    fig_table(o, "tune_changes_list", tune_columns, N_TUNE_COLUMNS);
    for (size_t k = 0; k < list->n; k++) {
        const sp_tune_change *c = &list->change[k];
        fig_value v[N_TUNE_COLUMNS] = {{.num = c->at_s - list->change[0].at_s}, {.uint = c->from_chunk},
                                       {.uint = c->to_chunk}, {.uint = c->from_depth},
                                       {.uint = c->to_depth}, {.str = c->reason}};
        fig_row(o, NULL, tune_columns, N_TUNE_COLUMNS, v);
    }
    fig_table_end(o);
}
