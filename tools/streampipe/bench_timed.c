/* One timed run and the check of its whole output. The comparison, the sweep and the group
 * all time through here, so all keep the same rules: the output is poisoned before the run
 * and every element is checked after it (bench_check_output). */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"

int bench_create_pipeline(sp_context *ctx, const sp_stage *stage, sp_pipeline_config config,
                          const char *what, sp_pipeline **out)
{
    config.in_record_bytes = sizeof(float);
    config.stages = stage;
    config.n_stages = stage != NULL ? 1 : 0;
    return cli_create_pipeline(ctx, &config, what, out);
}

sp_pipeline_config bench_pipeline_config(const bench_plan *plan)
{
    sp_pipeline_config config = {
        .size = sizeof(sp_pipeline_config), /* the 0.8 layout: keep_timeline is read */
        .chunk_records = plan->chunk_records,
        .depth = plan->depth,
        .staging_threads = plan->staging_threads,
        .copy_piece_bytes = plan->copy_piece_bytes,
        .graph = plan->graph,
        .copy_by_kernel = plan->copy_kernel,
        .timeline = plan->timeline,
        .max_pinned_bytes = plan->max_pinned,
        .max_device_bytes = plan->max_device,
        .flight_recorder_s = (double)plan->flight.seconds,
        /* --trace and --svg are written from a run's report, which then keeps its timeline */
        .keep_timeline = plan->trace_path != NULL || plan->svg_path != NULL,
    };
    return config;
}

sp_stage bench_sinmix_stage(const bench_plan *plan, const sp_sinmix_params *params)
{
    sp_stage sinmix = sp_sinmix_stage(params);
    sinmix.streams = plan->stage_streams;
    return sinmix;
}

void bench_run_shape(const sp_pipeline *pipeline, size_t records, sp_report *shape)
{
    memset(shape, 0, sizeof *shape);
    shape->records = records;
    shape->chunk_records = sp_pipeline_chunk_records(pipeline, records);
    shape->chunks = shape->chunk_records != 0
                        ? (records + shape->chunk_records - 1) / shape->chunk_records
                        : 0;
    shape->depth = sp_pipeline_depth(pipeline);
    shape->submit_s = sp_pipeline_last_submit_s(pipeline);
    shape->wait_s = sp_pipeline_last_wait_s(pipeline);
}

/* A device output's host copy to or from the device, outside the timed span. */
static int copy_device_out(const bench_session *s, void *dst, const void *src,
                           const char *what, const char *label)
{
    sp_status status = sp_memcpy(s->ctx, dst, src, s->plan->records * sizeof(float));
    if (status == SP_OK)
        return CLI_EXIT_OK;
    bench_progress_clear(s->progress);
    char text[128];
    snprintf(text, sizeof text, "%s: %s", label, what);
    return cli_report_failure(text, status, sp_context_last_error(s->ctx));
}

/* The report says what crossed PCIe: each host end's bytes, a device end's none. */
static int check_pcie_bytes(const bench_session *s, const sp_report *report, const char *label)
{
    size_t want = bench_pcie_bytes(s->plan);
    if (report == NULL || report->pcie_bytes == want)
        return CLI_EXIT_OK;
    bench_progress_clear(s->progress);
    fprintf(stderr, "bench: %s: the report's pcie_bytes is %zu, but its ends move %zu\n", label,
            report->pcie_bytes, want);
    return CLI_EXIT_FAILURE;
}

int bench_timed_run(const bench_session *s, const bench_run_spec *spec, const char *label,
                    sp_report *report, double *seconds)
{
    size_t records = s->plan->records;
    const float *in = spec->run_in ? spec->run_in : spec->in;
    float *out = spec->run_out ? spec->run_out : spec->out;
    /* 0xFF bytes are NaN: an element the run never writes cannot pass the check. A device
     * output gets the poison copied in. */
    memset(spec->out, 0xFF, records * sizeof *spec->out);
    int rc = out != spec->out ? copy_device_out(s, out, spec->out, "poisoning the device "
                                                "output", label) : CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (s->live) /* a group's devices are not watched: it has no one pipeline */
        live_watch_set(&s->live->watch, spec->group ? NULL : spec->pipeline, label);
    double start = cli_now_s();
    sp_status status = spec->group != NULL
                           ? sp_group_run(spec->group, in, records, out, report)
                           : spec->run(spec->pipeline, in, records, out, report);
    *seconds = cli_now_s() - start;
    if (s->live) { /* counted; and watched no more: bench destroys its pipelines while the
                      panel's and the endpoint's threads still read the watch */
        live_watch_fold(&s->live->watch);
        live_watch_set(&s->live->watch, NULL, "");
    }
    if (status != SP_OK) {
        bench_progress_clear(s->progress);
        return cli_report_failure(label, status, spec->group != NULL
                                                     ? sp_group_last_error(spec->group)
                                                     : sp_pipeline_last_error(spec->pipeline));
    }
    rc = out != spec->out ? copy_device_out(s, spec->out, out, "reading the device output",
                                            label) : CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK && spec->group == NULL)
        rc = check_pcie_bytes(s, report, label);
    return rc == CLI_EXIT_OK ? bench_check_output(s, spec, label) : rc;
}

/* On a terminal: "[chunk 262144 (1/7)] run 2/3 0.204 s" after a run, "... run 3/3 ..." before
 * one (seconds < 0). */
static void show_live(const bench_session *s, const char *title, const char *what,
                      double seconds)
{
    char text[160];
    if (seconds < 0.0)
        snprintf(text, sizeof text, "[%s] %s ...", title, what);
    else
        snprintf(text, sizeof text, "[%s] %s %.3f s", title, what, seconds);
    bench_progress_update(s->progress, text);
}

int bench_time_repeats(const bench_session *s, const bench_run_spec *spec, const char *title,
                       double *seconds, size_t *runs, sp_report *report)
{
    unsigned repeat = s->plan->repeat;
    for (unsigned r = 0; r < repeat; r++) {
        char label[128], what[32];
        snprintf(label, sizeof label, "%s run %u at %s", spec->name, r + 1, title);
        snprintf(what, sizeof what, "run %u/%u", r + 1, repeat);
        show_live(s, title, what, -1.0);
        int rc = bench_timed_run(s, spec, label, NULL, &seconds[r]);
        if (rc != CLI_EXIT_OK)
            return rc;
        *runs = r + 1;
        show_live(s, title, what, seconds[r]);
    }
    /* The pipeline's only run with a report, and so the one its trace shows. */
    char label[128];
    snprintf(label, sizeof label, "%s run with a report at %s", spec->name, title);
    double with_report_s = 0.0;
    show_live(s, title, "run with a report", -1.0);
    int rc = bench_timed_run(s, spec, label, report, &with_report_s);
    if (rc == CLI_EXIT_OK)
        show_live(s, title, "run with a report", with_report_s);
    return rc;
}

int bench_time_kind(const bench_session *s, const bench_run_spec *spec,
                    bench_kind_series *series)
{
    series->name = spec->name;
    int rc = bench_time_repeats(s, spec, spec->name, series->seconds, &series->runs,
                                &series->report);
    series->median_s = cli_median(series->seconds, series->runs);
    series->gbps = bench_gbps(s->plan, series->median_s);
    return rc;
}

/* A SAMPLED check adopts the first serial output that passes it as the expected value of
 * every element (bench_verify.c), so a serial run comes before the row's (or the group's)
 * pipelined runs. */
int bench_adopt_serial_output(const bench_session *s, const bench_plan *setting,
                              const sp_sinmix_params *params)
{
    if (s->expected->method != BENCH_CHECK_SAMPLED || s->expected->have_values)
        return CLI_EXIT_OK;
    sp_stage sinmix = sp_sinmix_stage(params);
    sp_pipeline_config config = {.chunk_records = setting->serial_chunk_records, .depth = 1};
    sp_pipeline *serial = NULL;
    int rc = bench_create_pipeline(s->ctx, &sinmix, config, "creating the serial pipeline",
                                   &serial);
    if (rc == CLI_EXIT_OK) {
        bench_run_spec spec = {"serial", serial, sp_pipeline_run_serial, s->buffers->in,
                               s->buffers->out, 0, NULL, NULL, NULL};
        char label[96];
        snprintf(label, sizeof label, "serial run for the expected output at iters %u",
                 setting->iters);
        double seconds = 0.0;
        rc = bench_timed_run(s, &spec, label, NULL, &seconds);
    }
    sp_pipeline_destroy(serial);
    return rc;
}
