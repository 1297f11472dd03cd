/* `streampipe run --input FILE --output FILE --stages LIST`: options (declared once, in the
 * table below, from which getopt's list and the usage text come), then the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "options.h"
#include "report_out.h"
#include "run_cmd.h"
#include "run_files.h"
#include "run_mpi.h"
#include "run_signal.h"
#include "stats.h"

static const cli_option options[] = {
    CLI_REQUIRED("input", "FILE", run_options, input_path,
                 "little-endian records to read (a regular file): raw, or an LZ4\n"
                 "or Zstandard file of them, told by its magic number (--input-format)"),
    CLI_CHOICE("input-format", "auto|raw|lz4|zstd", run_options, input_format,
               "what --input holds (default auto: by its first four bytes, never its\n"
               "name). LZ4: frames of independent blocks (lz4's default); zstd:\n"
               "frames that declare their size, several decoded in parallel, a\n"
               "single frame in order on one thread"),
    CLI_REQUIRED("output", "FILE", run_options, output_path,
                 "where the results go; written beside it under a temporary name and\n"
                 "moved into place only when the whole run succeeded. An existing\n"
                 "device or FIFO is written in place (never replaced or truncated);\n"
                 "'-' is stdout (the report then goes to stderr); a directory or a\n"
                 "socket is refused, and under mpirun anything but a regular file"),
    CLI_REQUIRED("stages", "LIST", run_options, stages_text,
                 "the stage chain, joined by ',': sinmix:iters=N (float32 records),\n"
                 "mlp:MODEL.safetensors[:fp32|tf32] (64-byte images in; out, the\n"
                 "head's records: one little-endian int32 label per image, 0..9)"),
    CLI_BACKEND_OPTION(run_options),
    CLI_DEVICE_OPTION(run_options),
    CLI_COUNT("chunk", "N", run_options, chunk_records, 1, 1ULL << 32,
              "records per chunk (default: the library's, about 8 MiB; less to fit\n"
              "--max-pinned)"),
    CLI_COUNT("depth", "K", run_options, depth, 0, SP_MAX_DEPTH,
              "slots in the buffer ring (default: the library's choice)"),
    CLI_COUNT("max-pinned", "BYTES", run_options, max_pinned, 4096, 1ULL << 40,
              "most pinned staging memory to hold (depth x chunk x the bytes\n"
              "of a record in and out); the chunk shrinks to fit (default: no\n"
              "bound, the chunk and depth decide)"),
    CLI_COUNT("threads", "N", run_options, staging_threads, 0, 1024,
              "staging threads reading and writing the files (default: the CPUs)"),
    CLI_JSON_OPTION(run_options),
};

static const cli_command_options command = {
    "run",
    "usage: streampipe run --input FILE --output FILE --stages LIST [options]\n\n"
    "Streams a file of records through the stage chain into another file with\n"
    "sp_pipeline_run_io: the staging threads read and write the files positionally\n"
    "(pread/pwrite) straight into and out of pinned memory, which stays bounded\n"
    "whatever the file's size. A progress line shows on terminals.\n"
    "Under mpirun (a build with SP_WITH_MPI) each rank takes an even contiguous\n"
    "range of the records and the GPU of its place on its host (not --device),\n"
    "and rank 0 prints one report; any rank failing fails them all.\n\n",
    options, sizeof options / sizeof options[0],
    "\nCounts take k/M/G suffixes (powers of 1024) or 2^N. Exit 0 on success, 1 when\n"
    "the run or a file failed (no output is left behind; a full disk or device says\n"
    "\"no space\"), 64 on bad usage. SIGINT, SIGTERM and SIGHUP remove the temporary\n"
    "output (.NAME.partial-XXXXXX beside it) and end the run as killed by the signal.\n"
    "SIGKILL leaves it behind; the next run of the same output removes it, unless a\n"
    "live run holds its lock (every run holds one on its own while it writes).\n",
    NULL};

/* The depth the library would choose for this chain (asked of a one-record pipeline, so
 * that the rule stays the library's alone). */
static int library_depth(sp_context *ctx, const sp_pipeline_config *config, unsigned *depth)
{
    sp_pipeline_config probe = *config;
    probe.chunk_records = 1;
    sp_pipeline *p = NULL;
    int rc = cli_create_pipeline(ctx, &probe, "creating the pipeline", &p);
    if (rc != CLI_EXIT_OK)
        return rc;
    *depth = sp_pipeline_depth(p);
    sp_pipeline_destroy(p);
    return CLI_EXIT_OK;
}

/* --max-pinned: the chunk (and, left to the library, the depth) cut so that depth x chunk x
 * (in + out) bytes of staging fit. */
static int fit_pinned(sp_context *ctx, const run_options *o, const run_stage_list *list,
                      sp_pipeline_config *config)
{
    unsigned depth = config->depth;
    if (depth == 0) {
        int rc = library_depth(ctx, config, &depth);
        if (rc != CLI_EXIT_OK)
            return rc;
        config->depth = depth;
    }
    size_t per_slot_record = list->in_record_bytes + list->out_record_bytes;
    size_t per_slot = (size_t)o->max_pinned / depth; /* less the rounding of two buffers */
    size_t fit = per_slot > 2 * SP_SLOT_ALIGN ? (per_slot - 2 * SP_SLOT_ALIGN) / per_slot_record
                                              : 0;
    if (fit == 0) {
        fprintf(stderr, "streampipe: run: --max-pinned %llu cannot hold one record per slot "
                "(%u slots of %zu bytes in and out)\n", o->max_pinned, depth, per_slot_record);
        return CLI_EXIT_USAGE;
    }
    size_t chunk = config->chunk_records ? config->chunk_records
                                         : ((size_t)8 << 20) / list->in_record_bytes;
    config->chunk_records = chunk < fit ? chunk : fit;
    return CLI_EXIT_OK;
}

int run_make_pipeline(run_job *job, const run_options *o)
{
    sp_pipeline_config config = {
        .in_record_bytes = job->stages.in_record_bytes,
        .stages = job->stages.stages,
        .n_stages = job->stages.n,
        .chunk_records = (size_t)o->chunk_records, /* 0: the library's choice */
        .depth = (unsigned)o->depth,
        .staging_threads = (unsigned)o->staging_threads,
    };
    int rc = o->max_pinned ? fit_pinned(job->ctx, o, &job->stages, &config) : CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    return cli_create_pipeline(job->ctx, &config, "creating the pipeline", &job->pipeline);
}

double run_peak_rss_mib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0;
}

void run_print_job(fig_out *out, const run_job *job, const run_options *o)
{
    const run_files *f = &job->files;
    double bytes = (double)f->n_records * (double)f->in_record_bytes;
    cli_tool_figures(out, "run");
    fig_str(out, "backend", "backend", "%s", sp_backend_name(sp_context_backend(job->ctx)));
    fig_str(out, "input", "input", "%s", f->input_path);
    fig_str(out, "output", "output", "%s", f->output_path);
    fig_str(out, "stages", "stages", "%s", o->stages_text);
    fig_uint(out, "records", "records", "%llu", f->n_records);
    fig_uint(out, "bytes_in", NULL, NULL, (unsigned long long)bytes);
    fig_num(out, NULL, "bytes in", "%.1f MiB", bytes / (1 << 20));
}

/* A compressed input: its sizes, ratio and the decompression's time on the staging threads
 * (summed over them: more than the makespan when several decoded at once). */
static void print_input(fig_out *out, const run_files *f)
{
    sp_file_io_input in;
    if (sp_file_io_input_get(f->io, &in) != SP_OK || in.format == SP_INPUT_FORMAT_RAW)
        return;
    static const char *const names[] = {"auto", "raw", "lz4", "zstd"};
    double ratio = in.file_bytes ? (double)in.stream_bytes / (double)in.file_bytes : 0.0;
    fig_group(out, "compression", "compressed input:");
    fig_str(out, "format", "format", "%s", names[in.format]);
    fig_uint(out, "compressed_bytes", NULL, NULL, in.file_bytes);
    fig_uint(out, "uncompressed_bytes", NULL, NULL, in.stream_bytes);
    fig_text(out, "bytes", "%.1f MiB compressed, %.1f MiB uncompressed\n",
             (double)in.file_bytes / (1 << 20), (double)in.stream_bytes / (1 << 20));
    fig_num(out, "ratio", "ratio", "%.2f (uncompressed / compressed)", ratio);
    fig_uint(out, "frames", "frames", "%llu", in.frames);
    fig_uint(out, "blocks", "blocks", "%llu", in.blocks);
    fig_uint(out, "blocks_decompressed", "decompressed", "%llu blocks", in.blocks_decompressed);
    fig_uint(out, "blocks_reused", "reused", "%llu blocks (cut by a piece's edge, decoded once)",
             in.blocks_reused);
    fig_uint(out, "block_checksums", "block checksums", "%llu", in.block_checksums);
    fig_uint(out, "content_checked", "content checksums", "%llu checked", in.content_checked);
    fig_num(out, "decompress_s", "decompression", "%.4f s (staging threads, summed)",
            in.decompress_s);
    fig_num(out, "decompress_gbps", "decompression rate", "%.2f GB/s per thread busy",
            cli_gbps((double)in.bytes_decompressed, in.decompress_s));
    fig_str(out, "how", "how", "%s", in.note);
    fig_group_end(out);
}

static void print_result(const run_job *job, const run_options *o, const sp_report *report)
{
    const run_files *f = &job->files;
    double bytes = (double)f->n_records * (double)f->in_record_bytes;
    fig_out out;
    fig_begin(&out, f->to_stdout ? stderr : stdout, o->json); /* stdout holds the records */
    run_print_job(&out, job, o);
    fig_num(&out, "gbps_in", "rate in", "%.2f GB/s (over the makespan)",
            cli_gbps(bytes, report->makespan_s));
    fig_num(&out, "peak_rss_mib", "peak RSS", "%.1f MiB", run_peak_rss_mib());
    print_input(&out, f);
    cli_report_figures(&out, "report:", report);
    fig_end(&out);
}

static int run_job_go(run_job *job, const run_options *o)
{
    int rc = run_build_stages(&job->stages, job->ctx);
    if (rc == CLI_EXIT_OK)
        rc = run_files_open(&job->files, o->input_path, o->output_path,
                            job->stages.in_record_bytes, job->stages.out_record_bytes, 0, NULL,
                            o->input_format);
    if (rc == CLI_EXIT_OK)
        rc = run_make_pipeline(job, o);
    if (rc != CLI_EXIT_OK)
        return rc;
    const sp_io *io = run_files_range(&job->files, 0, job->files.n_records);
    sp_report report;
    sp_status st = job->files.n_records ? sp_pipeline_run_io(job->pipeline, io, &report)
                                        : SP_OK;
    if (!job->files.n_records)
        memset(&report, 0, sizeof report);
    if (st != SP_OK) {
        run_files_print_io_error(&job->files, "");
        return cli_report_failure("streaming the file", st,
                                  sp_pipeline_last_error(job->pipeline));
    }
    rc = run_files_commit(&job->files);
    if (rc == CLI_EXIT_OK)
        print_result(job, o, &report);
    return rc;
}

int run_main(int argc, char **argv)
{
    run_options o = {.backend = SP_BACKEND_AUTO};
    int rc = cli_parse_options(&command, argc, argv, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    run_mpi mpi;
    if (run_mpi_init(&mpi) != 0)
        return CLI_EXIT_FAILURE;
    run_job job;
    memset(&job, 0, sizeof job);
    rc = run_parse_stages(o.stages_text, &job.stages);
    /* under mpirun each rank takes the GPU of its place on its host (HOST ignores it) */
    int device = mpi.size > 1 ? mpi.local_rank : o.device;
    if (rc == CLI_EXIT_OK)
        rc = cli_open_context(o.backend, device, &job.ctx);
    if (mpi.size > 1)
        rc = run_ranks_go(&job, &o, &mpi, rc, device);
    else if (rc == CLI_EXIT_OK)
        rc = run_job_go(&job, &o);
    sp_pipeline_destroy(job.pipeline);
    run_free_stages(&job.stages);
    sp_context_destroy(job.ctx);
    run_files_close(&job.files);
    run_mpi_finalize(&mpi);
    run_signal_finish(); /* a SIGINT or SIGTERM seen once the output was safe ends us here */
    return rc;
}
