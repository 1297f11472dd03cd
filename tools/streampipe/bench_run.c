/* The comparison: serial baseline, pipelined run and copy-only ceiling, interleaved so that
 * drift in clocks or temperature touches all three alike. Every output is poisoned before
 * its run and fully verified after it (bench_timed.c). */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

/* One kind of timed run and where its results go. */
typedef struct run_kind {
    bench_run_spec spec;
    bench_series *series;
    int with_report; /* ask for a report (and so for per-chunk timing events) */
    sp_report *sampled; /* the full timeline's runs: each one's sampled figures go here */
} run_kind;

enum { SERIAL, PIPELINED, CEILING, STREAM, FULL, N_PIPELINES };

/* `params` must outlive the pipelines. */
static int create_pipelines(const bench_session *s, const sp_sinmix_params *params,
                            sp_pipeline *pipelines[N_PIPELINES])
{
    const bench_plan *plan = s->plan;
    sp_stage sinmix = sp_sinmix_stage(params);
    sp_stage sinmix_on_streams = bench_sinmix_stage(plan, params);
    sp_pipeline_config serial = {.chunk_records = plan->serial_chunk_records, .depth = 1};
    sp_pipeline_config pipelined = bench_pipeline_config(plan);
    /* The ceiling is what the copy engines reach on pinned memory at the library's own
     * choice of chunk and depth, independent of the user's choices. */
    sp_pipeline_config ceiling = {0};
    int rc = bench_create_pipeline(s->ctx, &sinmix, serial, "creating the serial pipeline",
                                   &pipelines[SERIAL]);
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, &sinmix_on_streams, pipelined,
                                   "creating the pipeline", &pipelines[PIPELINED]);
    if (rc == CLI_EXIT_OK)
        rc = bench_create_pipeline(s->ctx, NULL, ceiling, "creating the copy-only pipeline",
                                   &pipelines[CEILING]);
    /* Graph mode is measured against the same pipeline in stream mode, in the same process. */
    sp_pipeline_config stream = pipelined;
    stream.graph = SP_GRAPH_OFF;
    if (rc == CLI_EXIT_OK && plan->graph != SP_GRAPH_OFF)
        rc = bench_create_pipeline(s->ctx, &sinmix_on_streams, stream,
                                   "creating the stream-mode pipeline", &pipelines[STREAM]);
    /* The full timeline beside the sampled one: the same config, every operation timed. */
    sp_pipeline_config full = pipelined;
    full.timeline = SP_TIMELINE_EVENTS;
    full.keep_timeline = 1; /* each run's report, for its sampled figures */
    if (rc == CLI_EXIT_OK && plan->timeline_full)
        rc = bench_create_pipeline(s->ctx, &sinmix_on_streams, full,
                                   "creating the full-timeline pipeline", &pipelines[FULL]);
    return rc;
}

static int time_kind(const bench_session *s, const run_kind *kind, unsigned repeat_index)
{
    bench_series *series = kind->series;
    sp_report *report = &series->reports[series->runs];
    char label[64];
    snprintf(label, sizeof label, "%s run %u", kind->spec.name, repeat_index + 1);
    int rc = bench_timed_run(s, &kind->spec, label, kind->with_report ? report : NULL,
                             &series->seconds[series->runs]);
    if (rc != CLI_EXIT_OK)
        return rc;
    series->makespan[series->runs] = sp_pipeline_last_makespan_s(kind->spec.pipeline);
    if (kind->sampled) { /* the estimator alone: this run's figures from its windows */
        sp_status st = sp_report_sampled_figures(report, &kind->sampled[series->runs]);
        sp_report_release(report); /* its timeline served for that alone */
        if (st != SP_OK)
            return cli_report_failure("the full timeline's sampled figures", st,
                                      sp_report_last_error());
    }
    if (!kind->with_report) /* the shape of the run, which the library tells without one */
        bench_run_shape(kind->spec.pipeline, s->plan->records, report);
    series->runs++;
    return CLI_EXIT_OK;
}

/* "serial 0.2030 s, pipelined 0.2069 s" for the first n_done kinds of this repeat. */
static void format_times(const run_kind *kinds, size_t n_done, int decimals, char *text,
                         size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t k = 0; k < n_done && used < size; k++) {
        const bench_series *series = kinds[k].series;
        int n = snprintf(text + used, size - used, "%s%s %.*f s", k > 0 ? ", " : "",
                         kinds[k].spec.name, decimals, series->seconds[series->runs - 1]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* On a terminal, around every run: "[run 2/3] serial 0.203 s, pipelined ...", the times so
 * far and the run going on now (none when n_done == n_kinds). */
static void show_live(const bench_session *s, const run_kind *kinds, size_t n_done,
                      size_t n_kinds, unsigned repeat_index)
{
    char times[160], text[256];
    format_times(kinds, n_done, 3, times, sizeof times);
    snprintf(text, sizeof text, "[run %u/%u] %s%s%s%s", repeat_index + 1, s->plan->repeat,
             times, n_done > 0 && n_done < n_kinds ? ", " : "",
             n_done < n_kinds ? kinds[n_done].spec.name : "", n_done < n_kinds ? " ..." : "");
    bench_progress_update(s->progress, text);
}

/* Elsewhere, after every repeat: "run 2/3: serial 0.2030 s, ... (outputs verified)". */
static void note_repeat(const bench_session *s, const run_kind *kinds, size_t n_kinds,
                        unsigned repeat_index)
{
    char times[160], text[256];
    format_times(kinds, n_kinds, 4, times, sizeof times);
    snprintf(text, sizeof text, "run %u/%u: %s (outputs verified)", repeat_index + 1,
             s->plan->repeat, times);
    bench_progress_note(s->progress, text);
}

static int run_repeats(const bench_session *s, const run_kind *kinds, size_t n_kinds)
{
    int rc = CLI_EXIT_OK;
    for (unsigned r = 0; r < s->plan->repeat && rc == CLI_EXIT_OK; r++) {
        for (size_t k = 0; k < n_kinds && rc == CLI_EXIT_OK; k++) {
            show_live(s, kinds, k, n_kinds, r);
            rc = time_kind(s, &kinds[k], r);
        }
        if (rc == CLI_EXIT_OK)
            show_live(s, kinds, n_kinds, n_kinds, r);
        if (rc == CLI_EXIT_OK)
            note_repeat(s, kinds, n_kinds, r);
    }
    bench_progress_clear(s->progress);
    return rc;
}

/* The traced runs are the pipelined pipeline's only runs with a report (whose reports keep
 * their timelines when files are wanted): the last one is what the files show. */
static int export_last_traced(const bench_session *s, const bench_series *traced)
{
    if (!bench_exports_wanted(s->exports) || traced->runs == 0)
        return CLI_EXIT_OK;
    char describes[96];
    snprintf(describes, sizeof describes, "the last pipelined run with a report (traced run %zu)",
             traced->runs);
    return bench_exports_write(s->exports, &traced->reports[traced->runs - 1], describes);
}

/* The timelines the traced runs' reports kept; their figures stay, for the output. */
static void release_traced(bench_series *traced)
{
    for (size_t i = 0; i < traced->runs; i++)
        sp_report_release(&traced->reports[i]);
}

int bench_run_all(const bench_session *s, bench_results *results)
{
    const bench_buffers *b = s->buffers;
    sp_sinmix_params params = {s->plan->iters};
    sp_pipeline *pipelines[N_PIPELINES] = {NULL, NULL, NULL, NULL, NULL};
    int rc = create_pipelines(s, &params, pipelines);
    results->serial.name = "serial";
    results->pipelined.name = "pipelined";
    results->traced.name = "traced";
    results->ceiling.name = "ceiling";
    results->stream.name = "stream";
    results->full.name = "full";
    /* Serial first: a SAMPLED check adopts the first serial output as the expected one. The
     * pipelined run is timed bare and again with a report, which costs timing events: the
     * two median makespans side by side show what the per-chunk timeline costs the run, and
     * the traced runs' wall time beyond their makespan what reading it costs afterwards. */
    enum { KINDS = 6 };
    const run_kind kinds[KINDS] = {
        {{"serial", pipelines[SERIAL], sp_pipeline_run_serial, b->in, b->out, 0, NULL,
          b->device_in, b->device_out},
         &results->serial, 1, NULL},
        {{"pipelined", pipelines[PIPELINED], sp_pipeline_run, b->in, b->out, 0, NULL,
          b->device_in, b->device_out},
         &results->pipelined, 0, NULL},
        {{"traced", pipelines[PIPELINED], sp_pipeline_run, b->in, b->out, 0, NULL,
          b->device_in, b->device_out},
         &results->traced, 1, NULL},
        {{"ceiling", pipelines[CEILING], sp_pipeline_run, b->ceiling_in, b->ceiling_out, 1,
          NULL, b->device_in, b->device_out}, &results->ceiling, 1, NULL},
        {{"full", pipelines[FULL], sp_pipeline_run, b->in, b->out, 0, NULL, b->device_in,
          b->device_out}, &results->full, 1, results->full_sampled},
        {{"stream", pipelines[STREAM], sp_pipeline_run, b->in, b->out, 0, NULL,
          b->device_in, b->device_out},
         &results->stream, 0, NULL},
    };
    /* the kinds this job times, in the table's order: stream mode and the full timeline
       only when asked for */
    run_kind chosen[KINDS];
    size_t n_chosen = 0;
    for (size_t k = 0; k < KINDS; k++)
        if ((kinds[k].series != &results->stream || s->plan->graph != SP_GRAPH_OFF) &&
            (kinds[k].series != &results->full || s->plan->timeline_full))
            chosen[n_chosen++] = kinds[k];
    cli_flight flight; /* the pipelined pipeline's runs with a report: the ones it keeps */
    if (rc == CLI_EXIT_OK && cli_flight_start(&flight, &s->plan->flight,
                                              pipelines[PIPELINED]) != 0)
        rc = CLI_EXIT_FAILURE;
    else if (rc == CLI_EXIT_OK) {
        rc = run_repeats(s, chosen, n_chosen);
        if (rc != CLI_EXIT_OK)
            cli_flight_dump(&flight, "a run failed");
        cli_flight_stop(&flight);
    }
    if (rc == CLI_EXIT_OK)
        rc = export_last_traced(s, &results->traced);
    release_traced(&results->traced);
    cli_tune_list_read(&results->tune, pipelines[PIPELINED]);
    for (size_t k = 0; k < N_PIPELINES; k++)
        sp_pipeline_destroy(pipelines[k]);
    return rc;
}
