/* `streampipe probe`: options, then sp_probe_run on the chosen backend, then what was
 * measured as a table a person reads or one JSON object a script reads, from one
 * description. Progress goes to stderr so that --json output stays clean. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "figures.h"
#include "options.h"
#include "report_out.h"
#include "streampipe_probe.h"

typedef struct probe_options {
    sp_backend_kind backend;
    int device;
    int json;
    int quick;
} probe_options;

static const cli_option options[] = {
    CLI_BACKEND_OPTION(probe_options),
    CLI_DEVICE_OPTION(probe_options),
    CLI_FLAG("quick", probe_options, quick, "3 repeats and smaller copies (about 4x faster)"),
    CLI_FLAG("json", probe_options, json, "one JSON object on stdout instead of the table"),
};

static const cli_command_options command = {
    "probe",
    "usage: streampipe probe [options]\n\n"
    "Measures, in this process and through the chosen backend, what the copy paths\n"
    "of this machine reach: H2D, D2H and both at once (pinned and pageable), the\n"
    "pinned H2D rate by chunk size (64 KiB .. 64 MiB), the cost of pinning memory,\n"
    "pageable -> pinned host copies over 1..16 threads, the pipeline's staging copy\n"
    "while both copy engines run (and each alone), and the cost of one event\n"
    "record, queue wait, empty launch and 4 KiB copy. Each figure is the median of\n"
    "several runs on random data. On the host backend the copy rates are memcpy\n"
    "rates, not a bus.\n\n",
    options, sizeof options / sizeof options[0], NULL, NULL};

static const char *size_text(size_t bytes, char *buf, size_t size)
{
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        snprintf(buf, size, "%zu GiB", bytes >> 30);
    else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, size, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, size, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, size, "%zu B", bytes);
    return buf;
}

static void header(fig_out *o, const sp_probe_result *r, int device)
{
    char copy[32], pin[32];
    cli_tool_figures(o, "probe");
    fig_str(o, "backend", "backend", r->backend == SP_BACKEND_CUDA ? "%s" :
            "%s (CPU worker threads, no GPU)", sp_backend_name(r->backend));
    if (r->backend == SP_BACKEND_CUDA)
        fig_uint(o, "device", "device", "%llu", (unsigned long long)device);
    fig_uint(o, "repeats", "method", "median of %llu runs after a warm-up, random data",
             r->repeats);
    fig_uint(o, "copy_bytes", NULL, NULL, r->copy_bytes);
    fig_str(o, NULL, "copies of", "%s", size_text(r->copy_bytes, copy, sizeof copy));
    fig_uint(o, "pin_bytes", NULL, NULL, r->pin_bytes);
    fig_str(o, NULL, "pinning of", "%s", size_text(r->pin_bytes, pin, sizeof pin));
    fig_num(o, "seconds", NULL, NULL, r->seconds);
    fig_str(o, "notes", r->notes[0] ? "note" : NULL, "%s", r->notes);
}

static void copy_rates(fig_out *o, const sp_probe_result *r)
{
    fig_group(o, "copy_gbps", "\ncopy rates (GB/s):");
    fig_num(o, "h2d_pinned", "h2d pinned", "%9.2f", r->h2d_pinned_gbps);
    fig_num(o, "d2h_pinned", "d2h pinned", "%9.2f", r->d2h_pinned_gbps);
    fig_num(o, "h2d_pageable", "h2d pageable", "%9.2f", r->h2d_pageable_gbps);
    fig_num(o, "d2h_pageable", "d2h pageable", "%9.2f", r->d2h_pageable_gbps);
    fig_num(o, "both_h2d", "both at once h2d", "%9.2f", r->both_h2d_gbps);
    fig_num(o, "both_d2h", "both at once d2h", "%9.2f", r->both_d2h_gbps);
    fig_num(o, NULL, "together", "%9.2f", r->both_h2d_gbps + r->both_d2h_gbps);
    fig_group_end(o);
}

/* The pinned h2d rate by chunk size, or (`by_threads`) the host copy rate by thread count. */
static void rate_rows(fig_out *o, const sp_probe_result *r, int by_threads)
{
    const char *what = by_threads ? "threads" : "bytes";
    const fig_column columns[] = {
        {what, NULL, 0, NULL, FIG_UINT},
        {NULL, what, 10, "%s", FIG_STR},
        {"gbps", "GB/s", 9, "%.2f", FIG_NUM},
    };
    size_t n = by_threads ? r->n_thread_counts : r->n_chunk_sizes;
    fig_text(o, NULL, "\n%s\n", by_threads ? "host copy pageable -> pinned"
                                           : "pinned h2d by chunk size (back-to-back copies)");
    fig_table(o, by_threads ? "host_copy_gbps" : "chunk_h2d_gbps", columns, 3);
    for (size_t i = 0; i < n; i++) {
        unsigned long long x = by_threads ? r->host_copy[i].threads : r->chunk[i].bytes;
        char text[32];
        if (by_threads)
            snprintf(text, sizeof text, "%llu", x);
        else
            size_text((size_t)x, text, sizeof text);
        fig_value v[3] = {{.uint = x}, {.str = text},
                          {.num = by_threads ? r->host_copy[i].gbps : r->chunk[i].h2d_gbps}};
        fig_row(o, NULL, columns, 3, v);
    }
    fig_table_end(o);
}

static void pinning(fig_out *o, const sp_probe_result *r)
{
    fig_group(o, "pinning_ms_per_gib", "\npinning (ms per GiB):");
    fig_num(o, "alloc", "sp_host_alloc", "%9.1f", r->alloc_ms_per_gib);
    fig_num(o, "free", "sp_host_free", "%9.1f", r->free_ms_per_gib);
    fig_num(o, "register", "sp_host_register", "%9.1f", r->register_ms_per_gib);
    fig_num(o, "unregister", "unregister", "%9.1f", r->unregister_ms_per_gib);
    fig_group_end(o);
}

/* The staging copy and the copy engines, alone and together; host memory's share is worked
 * out here so that a reader sees the sum the memory system delivers. */
static void under_dma(fig_out *o, const sp_probe_result *r)
{
    fig_group(o, "host_under_dma_gbps", "\nhost copy while both copy engines run (GB/s):");
    fig_uint(o, "staging_threads", "staging threads", "%llu, half pageable -> pinned and half "
             "back", r->under_dma_threads);
    fig_num(o, "staging_alone", "staging alone", "%9.2f", r->staging_alone_gbps);
    fig_num(o, "dma_alone", "h2d+d2h alone", "%9.2f", r->dma_alone_gbps);
    fig_num(o, "staging_under_dma", "staging, both", "%9.2f", r->staging_under_dma_gbps);
    fig_num(o, "dma_under_staging", "h2d+d2h, both", "%9.2f", r->dma_under_staging_gbps);
    fig_num(o, "host_memory_together", "host memory", "%9.2f (2 x staging + h2d+d2h: a read "
            "and a write per staged byte, one per copied byte)",
            2.0 * r->staging_under_dma_gbps + r->dma_under_staging_gbps);
    fig_group_end(o);
}

static void overheads(fig_out *o, const sp_probe_result *r)
{
    int graph = r->graph_launch_us > 0.0;
    fig_group(o, "per_operation_us", "\nper operation (us, back to back, then one sync):");
    fig_uint(o, "operations", "operations", "%llu", r->overhead_ops);
    fig_num(o, "event_record", "event record", "%8.2f (ordering)", r->event_record_us);
    fig_num(o, "timing_event_record", "", "%8.2f (timing)", r->timing_record_us);
    fig_num(o, "queue_wait", "queue wait", "%8.2f", r->queue_wait_us);
    fig_num(o, "empty_launch", "empty launch", "%8.2f", r->launch_us);
    fig_str(o, "empty_launch_is", "", "(%s)", r->launch_what);
    fig_num(o, "copy_4k_h2d", "4 KiB h2d copy", "%8.2f", r->small_copy_us);
    fig_num(o, "graph_launch", graph ? "graph replay" : NULL,
            "%8.2f (4 KiB h2d, empty launch, 4 KiB d2h; back to back)", r->graph_launch_us);
    fig_num(o, "graph_launch_host", graph ? "graph launch" : NULL, "%8.2f (the enqueue alone)",
            r->graph_enqueue_us);
    fig_num(o, "graph_update", graph ? "graph update" : NULL, "%8.2f (both copies; host time)",
            r->graph_update_us);
    fig_group_end(o);
}

static void print_result(const sp_probe_result *r, int device, int json, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, json);
    header(&o, r, device);
    if (r->parts & SP_PROBE_COPY_RATES)
        copy_rates(&o, r);
    if (r->parts & SP_PROBE_CHUNK_SIZES)
        rate_rows(&o, r, 0);
    if (r->parts & SP_PROBE_PINNING)
        pinning(&o, r);
    if (r->parts & SP_PROBE_HOST_COPY)
        rate_rows(&o, r, 1);
    if (r->parts & SP_PROBE_HOST_UNDER_DMA)
        under_dma(&o, r);
    if (r->parts & SP_PROBE_OVERHEADS)
        overheads(&o, r);
    fig_text(&o, NULL, "\nprobe took %.2f s\n", r->seconds);
    fig_end(&o);
}

int probe_main(int argc, char **argv)
{
    probe_options o = {.backend = SP_BACKEND_AUTO};
    int rc = cli_parse_options(&command, argc, argv, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    sp_context *ctx = NULL;
    rc = cli_open_context(o.backend, o.device, &ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    fprintf(stderr, "probe: measuring on %s%s...\n", sp_backend_name(sp_context_backend(ctx)),
            o.quick ? " (quick)" : "");
    sp_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.quick = o.quick;
    sp_probe_result result;
    sp_status st = sp_probe_run(ctx, &cfg, &result);
    if (st != SP_OK)
        rc = cli_report_failure("the probe", st, sp_context_last_error(ctx));
    else
        print_result(&result, o.device, o.json, stdout);
    sp_context_destroy(ctx);
    return rc;
}
