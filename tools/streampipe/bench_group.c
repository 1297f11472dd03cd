/* --devices: the bench workload as one sp_group run over several devices (on HOST, as many
 * host backends), timed --repeat times without a report and once with one, every element of
 * every output checked as in the comparison (bench_timed.c); then the merged figures and each
 * device's share and rate. */
#include <stdio.h>

#include "bench.h"
#include "cli.h"
#include "report_out.h"
#include "stats.h"

int bench_create_group(const bench_session *s, const sp_stage *sinmix, sp_group **group)
{
    const bench_plan *plan = s->plan;
    sp_pipeline_config config = bench_pipeline_config(plan);
    config.in_record_bytes = sizeof(float);
    config.stages = sinmix;
    config.n_stages = 1;
    sp_status st = sp_group_create(plan->backend, plan->n_devices ? plan->devices : NULL,
                                   plan->n_devices, &config, group);
    if (st != SP_OK) { /* a failed creation still yields a handle, whose error says why */
        int rc = cli_report_failure("creating the device group", st, sp_group_last_error(*group));
        sp_group_destroy(*group);
        *group = NULL;
        return rc;
    }
    return CLI_EXIT_OK;
}

int bench_group_all(const bench_session *s, bench_group_result *g)
{
    sp_sinmix_params params = {s->plan->iters};
    sp_stage sinmix = bench_sinmix_stage(s->plan, &params);
    sp_group *group = NULL;
    int rc = bench_create_group(s, &sinmix, &group);
    if (rc != CLI_EXIT_OK)
        return rc;
    g->n_devices = sp_group_size(group);
    if (g->n_devices > BENCH_MAX_DEVICES)
        g->n_devices = BENCH_MAX_DEVICES;
    fprintf(stderr, "bench: one group run over %zu %s devices, %u runs + 1 with a report\n",
            g->n_devices, sp_backend_name(s->plan->backend), s->plan->repeat);
    rc = bench_adopt_serial_output(s, s->plan, &params);
    bench_run_spec spec = {"group", NULL, NULL, s->buffers->in, s->buffers->out, 0, group,
                           NULL, NULL};
    char title[64];
    snprintf(title, sizeof title, "%zu devices", g->n_devices);
    if (rc == CLI_EXIT_OK)
        rc = bench_time_repeats(s, &spec, title, g->seconds, &g->runs, &g->report);
    bench_progress_clear(s->progress);
    for (size_t k = 0; k < g->n_devices && rc == CLI_EXIT_OK; k++)
        sp_group_device_stats_get(group, k, &g->stats[k]);
    if (rc == CLI_EXIT_OK) {
        char text[128];
        snprintf(text, sizeof text, "group of %s: median %.4f s of %zu runs (outputs verified)",
                 title, cli_median(g->seconds, g->runs), g->runs);
        bench_progress_note(s->progress, text);
    }
    sp_group_destroy(group);
    return rc;
}

static const fig_column device_columns[] = {
    {"device", "device", 6, "%llu", FIG_UINT},
    {"units", "units", 6, "%llu", FIG_UINT},
    {"records", "records", 12, "%llu", FIG_UINT},
    {"share", "share", 7, "%.1f%%", FIG_PERCENT},
    {"busy_s", "busy s", 10, "%.4f", FIG_NUM},
    {"gbps", "GB/s in+out", 12, "%.2f", FIG_NUM},
};
#define N_DEVICE_COLUMNS (sizeof device_columns / sizeof device_columns[0])

/* Each device's part of the run with a report: a slower device takes fewer units. */
static void device_table(fig_out *o, const bench_plan *plan, const bench_group_result *g)
{
    fig_text(o, NULL, "\n");
    fig_table(o, "per_device", device_columns, N_DEVICE_COLUMNS);
    for (size_t k = 0; k < g->n_devices; k++) {
        const sp_group_device_stats *d = &g->stats[k];
        double bytes = 2.0 * (double)d->records * sizeof(float);
        fig_value v[N_DEVICE_COLUMNS] = {
            {.uint = (unsigned long long)d->device}, {.uint = d->units},
            {.uint = d->records},
            {.num = plan->records ? (double)d->records / (double)plan->records : 0.0},
            {.num = d->busy_s}, {.num = cli_gbps(bytes, d->busy_s)}};
        fig_row(o, NULL, device_columns, N_DEVICE_COLUMNS, v);
    }
    fig_table_end(o);
}

void bench_group_print_result(const bench_plan *plan, const bench_expected *expected,
                              const bench_group_result *g, FILE *out)
{
    double median_s = cli_median(g->seconds, g->runs);
    fig_out o;
    fig_begin(&o, out, plan->json);
    bench_job_figures(&o, plan);
    fig_uint(&o, "repeat", "repeats", "%llu runs without a report (median below), then one "
             "with a report", plan->repeat);
    bench_verification_figures(&o, expected, &g->checks);
    fig_text(&o, NULL, "\n");
    fig_group(&o, "group", NULL);
    fig_uint(&o, "devices", "devices", "%llu in one sp_group run", g->n_devices);
    fig_numbers(&o, "seconds", g->seconds, g->runs);
    fig_num(&o, "median_s", "median", "%.4f s", median_s);
    fig_num(&o, "gbps", "rate", "%.2f GB/s in+out",
            bench_gbps(plan, median_s));
    device_table(&o, plan, g);
    fig_group_end(&o);
    fig_text(&o, NULL, "\n");
    cli_report_figures(&o, "the run with a report, merged over the devices:", &g->report);
    fig_end(&o);
}
