/* `streampipe probe` output: a table a person reads, or one JSON object a script reads.
 * Both print only the parts that were measured. */
#include <stdio.h>

#include "json.h"
#include "probe_cmd.h"

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

static void print_header(const sp_probe_result *r, int device, FILE *out)
{
    char copy[32], pin[32];
    fprintf(out, "streampipe probe (library %s)\n", sp_version());
    if (r->backend == SP_BACKEND_CUDA)
        fprintf(out, "backend      cuda, device %d\n", device);
    else
        fprintf(out, "backend      host (CPU worker threads, no GPU)\n");
    fprintf(out, "method       median of %u runs after a warm-up, random data; copies of %s, "
                 "pinning of %s\n", r->repeats, size_text(r->copy_bytes, copy, sizeof copy),
            size_text(r->pin_bytes, pin, sizeof pin));
    if (r->notes[0])
        fprintf(out, "note         %s\n", r->notes);
}

static void print_copy_rates(const sp_probe_result *r, FILE *out)
{
    fprintf(out, "\ncopy rates (GB/s)             h2d       d2h\n");
    fprintf(out, "  pinned                 %9.2f %9.2f\n", r->h2d_pinned_gbps, r->d2h_pinned_gbps);
    fprintf(out, "  pageable               %9.2f %9.2f\n", r->h2d_pageable_gbps,
            r->d2h_pageable_gbps);
    fprintf(out, "  pinned, both at once   %9.2f %9.2f   (%.2f together)\n", r->both_h2d_gbps,
            r->both_d2h_gbps, r->both_h2d_gbps + r->both_d2h_gbps);
}

static void print_chunk_sizes(const sp_probe_result *r, FILE *out)
{
    fprintf(out, "\npinned h2d by chunk size (back-to-back copies)\n");
    for (size_t i = 0; i < r->n_chunk_sizes; i++) {
        char size[32];
        fprintf(out, "  %-8s %9.2f GB/s\n", size_text(r->chunk[i].bytes, size, sizeof size),
                r->chunk[i].h2d_gbps);
    }
}

static void print_host_side(const sp_probe_result *r, FILE *out)
{
    if (r->parts & SP_PROBE_PINNING) {
        fprintf(out, "\npinning (ms per GiB)\n");
        fprintf(out, "  sp_host_alloc     %9.1f    sp_host_free       %9.1f\n",
                r->alloc_ms_per_gib, r->free_ms_per_gib);
        fprintf(out, "  sp_host_register  %9.1f    sp_host_unregister %9.1f\n",
                r->register_ms_per_gib, r->unregister_ms_per_gib);
    }
    if (r->parts & SP_PROBE_HOST_COPY) {
        fprintf(out, "\nhost copy pageable -> pinned\n  threads      GB/s\n");
        for (size_t i = 0; i < r->n_thread_counts; i++)
            fprintf(out, "  %7u %9.2f\n", r->host_copy[i].threads, r->host_copy[i].gbps);
    }
}

/* The staging copy and the copy engines, alone and together; host memory's share is worked
 * out here so that a reader sees the sum the memory system delivers. */
static void print_under_dma(const sp_probe_result *r, FILE *out)
{
    double staging = r->staging_alone_gbps, dma = r->dma_alone_gbps;
    double staging_both = r->staging_under_dma_gbps, dma_both = r->dma_under_staging_gbps;
    fprintf(out, "\nhost copy while both copy engines run (GB/s)\n");
    fprintf(out, "                          staging   h2d+d2h   host memory\n");
    fprintf(out, "  staging copy alone     %9.2f         - %13.2f\n", staging, 2.0 * staging);
    fprintf(out, "  copy engines alone             - %9.2f %13.2f\n", dma, dma);
    fprintf(out, "  both at once           %9.2f %9.2f %13.2f\n", staging_both, dma_both,
            2.0 * staging_both + dma_both);
    fprintf(out, "  staging: the pipeline's copy over %u threads, half pageable -> pinned and "
                 "half back\n", r->under_dma_threads);
    fprintf(out, "  h2d+d2h: pinned copies both ways at once\n");
    fprintf(out, "  host memory: 2 x staging + h2d+d2h (a read and a write per staged byte, "
                 "one per copied byte)\n");
}

static void print_overheads(const sp_probe_result *r, FILE *out)
{
    fprintf(out, "\nper operation (us; %u back to back, then one sync)\n", r->overhead_ops);
    fprintf(out, "  event record (ordering)   %8.2f\n", r->event_record_us);
    fprintf(out, "  event record (timing)     %8.2f\n", r->timing_record_us);
    fprintf(out, "  queue wait                %8.2f\n", r->queue_wait_us);
    fprintf(out, "  empty launch              %8.2f   (%s)\n", r->launch_us, r->launch_what);
    fprintf(out, "  4 KiB h2d copy            %8.2f\n", r->small_copy_us);
    if (r->graph_launch_us > 0.0) {
        fprintf(out, "  graph replay              %8.2f   (4 KiB h2d, empty launch, 4 KiB d2h; "
                "back to back)\n", r->graph_launch_us);
        fprintf(out, "  graph launch, host        %8.2f   (the enqueue alone)\n",
                r->graph_enqueue_us);
        fprintf(out, "  graph copy update         %8.2f   (both copies; host time)\n",
                r->graph_update_us);
    }
}

void probe_print_text(const sp_probe_result *r, int device, FILE *out)
{
    print_header(r, device, out);
    if (r->parts & SP_PROBE_COPY_RATES)
        print_copy_rates(r, out);
    if (r->parts & SP_PROBE_CHUNK_SIZES)
        print_chunk_sizes(r, out);
    print_host_side(r, out);
    if (r->parts & SP_PROBE_HOST_UNDER_DMA)
        print_under_dma(r, out);
    if (r->parts & SP_PROBE_OVERHEADS)
        print_overheads(r, out);
    fprintf(out, "\nprobe took %.2f s\n", r->seconds);
}

static void json_copy_rates(json_writer *w, const sp_probe_result *r)
{
    json_object_open(w, "copy_gbps");
    json_number(w, "h2d_pinned", r->h2d_pinned_gbps);
    json_number(w, "d2h_pinned", r->d2h_pinned_gbps);
    json_number(w, "h2d_pageable", r->h2d_pageable_gbps);
    json_number(w, "d2h_pageable", r->d2h_pageable_gbps);
    json_number(w, "both_h2d", r->both_h2d_gbps);
    json_number(w, "both_d2h", r->both_d2h_gbps);
    json_object_close(w);
}

static void json_chunk_sizes(json_writer *w, const sp_probe_result *r)
{
    json_array_open(w, "chunk_h2d_gbps");
    for (size_t i = 0; i < r->n_chunk_sizes; i++) {
        json_object_open(w, NULL);
        json_uint(w, "bytes", r->chunk[i].bytes);
        json_number(w, "gbps", r->chunk[i].h2d_gbps);
        json_object_close(w);
    }
    json_array_close(w);
}

static void json_pinning(json_writer *w, const sp_probe_result *r)
{
    json_object_open(w, "pinning_ms_per_gib");
    json_number(w, "alloc", r->alloc_ms_per_gib);
    json_number(w, "free", r->free_ms_per_gib);
    json_number(w, "register", r->register_ms_per_gib);
    json_number(w, "unregister", r->unregister_ms_per_gib);
    json_object_close(w);
}

static void json_host_copy(json_writer *w, const sp_probe_result *r)
{
    json_array_open(w, "host_copy_gbps");
    for (size_t i = 0; i < r->n_thread_counts; i++) {
        json_object_open(w, NULL);
        json_uint(w, "threads", r->host_copy[i].threads);
        json_number(w, "gbps", r->host_copy[i].gbps);
        json_object_close(w);
    }
    json_array_close(w);
}

static void json_under_dma(json_writer *w, const sp_probe_result *r)
{
    json_object_open(w, "host_under_dma_gbps");
    json_uint(w, "staging_threads", r->under_dma_threads);
    json_number(w, "staging_alone", r->staging_alone_gbps);
    json_number(w, "dma_alone", r->dma_alone_gbps);
    json_number(w, "staging_under_dma", r->staging_under_dma_gbps);
    json_number(w, "dma_under_staging", r->dma_under_staging_gbps);
    json_number(w, "host_memory_together",
                2.0 * r->staging_under_dma_gbps + r->dma_under_staging_gbps);
    json_object_close(w);
}

static void json_overheads(json_writer *w, const sp_probe_result *r)
{
    json_object_open(w, "per_operation_us");
    json_uint(w, "operations", r->overhead_ops);
    json_number(w, "event_record", r->event_record_us);
    json_number(w, "timing_event_record", r->timing_record_us);
    json_number(w, "queue_wait", r->queue_wait_us);
    json_number(w, "empty_launch", r->launch_us);
    json_string(w, "empty_launch_is", r->launch_what);
    json_number(w, "copy_4k_h2d", r->small_copy_us);
    json_number(w, "graph_launch", r->graph_launch_us);
    json_number(w, "graph_launch_host", r->graph_enqueue_us);
    json_number(w, "graph_update", r->graph_update_us);
    json_object_close(w);
}

void probe_print_json(const sp_probe_result *r, int device, FILE *out)
{
    json_writer w;
    json_begin(&w, out);
    json_object_open(&w, NULL);
    json_string(&w, "library", sp_version());
    json_string(&w, "backend", sp_backend_name(r->backend));
    if (r->backend == SP_BACKEND_CUDA)
        json_uint(&w, "device", (unsigned long long)device);
    json_uint(&w, "repeats", r->repeats);
    json_uint(&w, "copy_bytes", r->copy_bytes);
    json_uint(&w, "pin_bytes", r->pin_bytes);
    json_number(&w, "seconds", r->seconds);
    json_string(&w, "notes", r->notes);
    static const struct {
        unsigned part;
        void (*write)(json_writer *w, const sp_probe_result *r);
    } sections[] = {{SP_PROBE_COPY_RATES, json_copy_rates},
                    {SP_PROBE_CHUNK_SIZES, json_chunk_sizes},
                    {SP_PROBE_PINNING, json_pinning},
                    {SP_PROBE_HOST_COPY, json_host_copy},
                    {SP_PROBE_HOST_UNDER_DMA, json_under_dma},
                    {SP_PROBE_OVERHEADS, json_overheads}};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (r->parts & sections[i].part)
            sections[i].write(&w, r);
    json_object_close(&w);
    json_end(&w);
}
