/* `streampipe run --input FILE --output FILE --stages LIST`: options (declared once, in the
 * table below, from which getopt's list and the usage text come), then the run. */
#include <pthread.h>
#include <signal.h>
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
                 "or Zstandard file of them, told by its magic number (--input-format);\n"
                 "'-' is stdin, raw records read until it ends (a pipe: lz4 -dc F |),\n"
                 "a part record at its end an error; no journal, no --resume"),
    CLI_CHOICE("input-format", "auto|raw|lz4|zstd", run_options, input_format,
               "what --input holds (default auto: by its first four bytes, never its\n"
               "name). LZ4: frames of independent blocks (lz4's default); zstd:\n"
               "frames that declare their size, several decoded in parallel, a\n"
               "single frame in order on one thread"),
    CLI_CHOICE("decompress", "auto|staging|ring", run_options, decompress,
               "where a compressed input's blocks are decompressed (default auto: in\n"
               "the ring when chunks can be whole blocks: the h2d carries them\n"
               "compressed and the device decodes them, on CUDA with nvCOMP, found\n"
               "by $SP_NVCOMP_LIBRARY or the library path; else on the staging\n"
               "threads, the report saying why). ring: fail where it cannot"),
    CLI_CHOICE("output-format", "raw|lz4|zstd", run_options, output_format,
               "what --output holds (default raw; never told by its name): lz4 or\n"
               "zstd, a frame per piece of a chunk with its size and checksums (lz4:\n"
               "independent 4 MiB blocks, block and content checksums; zstd: as pzstd\n"
               "writes); --input reads either back.\n"
               "Compressed on the host's staging threads as the results are written,\n"
               "in parallel, appended in order; lz4 -d / zstd -d read it back. No\n"
               "journal: --resume needs --output-format raw"),
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
    CLI_CHUNK_OPTION(run_options, chunk_records, 1ULL << 32,
                     "records per chunk (default auto, also 0: the library's, about 8 MiB;\n"
                     "an input decompressed in the ring: 4096 blocks or the whole file;\n"
                     "less to fit --max-pinned)"),
    CLI_DEPTH_OPTION(run_options, depth),
    CLI_COUNT("max-pinned", "BYTES", run_options, max_pinned, 4096, 1ULL << 40,
              "most pinned staging memory to hold (depth x chunk x the bytes\n"
              "of a record in and out); the library's depth, then chunk, shrink\n"
              "to fit (default: no bound, the chunk and depth decide)"),
    CLI_COUNT("max-device", "BYTES", run_options, max_device, 4096, 1ULL << 40,
              "most device memory to hold (the slots' buffers and scratch), as\n"
              "--max-pinned (default: no bound)"),
    CLI_COUNT("threads", "N", run_options, staging_threads, 0, 1024,
              "staging threads reading and writing the files (default: the CPUs)"),
    CLI_FLAG("resume", run_options, resume,
             "carry on from where an interrupted run of the same --input, --output\n"
             "and --stages stopped (killed, a power cut, SIGINT): every run of a\n"
             "regular output keeps a journal .NAME.journal beside its temporary\n"
             "output, recording the records made durable (the output is flushed\n"
             "with fdatasync before each journal record, itself flushed, is\n"
             "written). Only the records it does not hold are run again; the\n"
             "output is the same, byte for byte. A journal of another input\n"
             "(size, mtime, first and last blocks), other stages or record sizes\n"
             "is refused; without a journal the run starts at the first record"),
    CLI_FLAG("no-journal", run_options, no_journal,
             "keep no journal (the output is flushed once, at the end, as for a\n"
             "pipe): a run that is interrupted starts again; not with --resume"),
    CLI_LIVE_OPTIONS(run_options, live),
    CLI_FLIGHT_OPTIONS(run_options, flight),
    CLI_JSON_OPTION(run_options),
};

static const cli_command_options command = {
    "run",
    "usage: streampipe run --input FILE --output FILE --stages LIST [options]\n\n"
    "Streams a file of records through the stage chain into another file with\n"
    "sp_pipeline_run_io: the staging threads read and write the files positionally\n"
    "(pread/pwrite) straight into and out of pinned memory, which stays bounded\n"
    "whatever the file's size. A progress line shows on terminals, and the live\n"
    "panel in its place once the run has gone on " LIVE_TEXT(LIVE_AUTO_AFTER_S) " s (--live: from\n"
    "the start; --no-live: never).\n"
    "Under mpirun (a build with SP_WITH_MPI) each rank takes an even contiguous\n"
    "range of the records and the GPU of its place on its host (not --device),\n"
    "and rank 0 prints one report; any rank failing fails them all.\n\n",
    options, sizeof options / sizeof options[0],
    "\nCounts take k/M/G suffixes (powers of 1024) or 2^N. Exit 0 on success, 1 when\n"
    "the run or a file failed (no output is in place; a full disk or device says\n"
    "\"no space\"), 64 on bad usage. A regular output is written as .NAME.partial-XXXXXX\n"
    "with its journal .NAME.journal beside it: a failed run, SIGKILL or a power cut\n"
    "leaves both for --resume. SIGINT, SIGTERM and SIGHUP stop feeding, let the chunks\n"
    "in flight finish (at most --depth of them), make the journal durable and end the\n"
    "run as killed by the signal (130, 143), saying how to resume; a second signal\n"
    "ends it at once, as safely. A run without --resume removes the leftovers of\n"
    "killed runs, unless a live run holds their lock. Under mpirun each rank keeps a\n"
    "journal (.NAME.journal.R-of-N.TOKEN); --resume takes them all, with the same or\n"
    "another number of ranks. For stdout, a FIFO or a device there is no journal: a\n"
    "signal removes the temporary output.\n",
    NULL};

int run_make_pipeline(run_job *job, const run_options *o)
{
    sp_pipeline_config config = {
        .size = sizeof config,
        .in_record_bytes = job->stages.in_record_bytes,
        .stages = job->stages.stages,
        .n_stages = job->stages.n,
        .chunk_records = (size_t)o->chunk_records, /* 0: the library's choice */
        .depth = (unsigned)o->depth,
        .staging_threads = (unsigned)o->staging_threads,
        /* the library fits the chunk and depth it chooses to the budget, and refuses one
         * that cannot hold a ring */
        .max_pinned_bytes = (size_t)o->max_pinned,
        .max_device_bytes = (size_t)o->max_device,
        .flight_recorder_s = (double)o->flight.seconds,
    };
    sp_status st = sp_pipeline_create(job->ctx, &config, &job->pipeline);
    if (st == SP_ERR_INVALID_ARGUMENT && (o->max_pinned || o->max_device)) {
        fprintf(stderr, "streampipe: run: --max-pinned/--max-device: %s\n",
                sp_context_last_error(job->ctx));
        return CLI_EXIT_USAGE;
    }
    return st == SP_OK ? CLI_EXIT_OK
                       : cli_report_failure("creating the pipeline", st,
                                            sp_context_last_error(job->ctx));
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

/* Whether the decompression in the ring hid behind another engine (the one busiest, its
 * name in *behind) or was the bottleneck. Stage 1's queue ran it, so stage 1's busy time
 * includes it: the stage's own is what is left. */
static int ring_hidden(const sp_report *r, double ring_s, const char **behind)
{
    double most = 0.0;
    *behind = "";
    for (size_t e = 0; r && e < r->n_engines; e++) {
        double busy = r->engines[e].busy_s;
        if (e > 0 && strcmp(r->engines[e - 1].name, "h2d") == 0)
            busy -= ring_s; /* the first stage */
        if (busy > most) {
            most = busy;
            *behind = r->engines[e].name;
        }
    }
    return most > ring_s;
}

/* Decompression in the ring: what the h2d carried, the decompression's busy time and rate,
 * and whether it was hidden. */
static void print_ring(fig_out *out, const sp_file_io_input *in, const sp_report *report,
                       double makespan_s)
{
    if (in->ring_chunks == 0)
        return;
    fig_uint(out, "ring_chunks", "ring chunks", "%llu (compressed through the h2d)",
             in->ring_chunks);
    fig_uint(out, "staging_chunks", "staging chunks", "%llu (decoded on the staging threads)",
             in->staging_chunks);
    fig_uint(out, "ring_blocks", "ring blocks", "%llu", in->ring_blocks);
    fig_uint(out, "ring_bytes_in", NULL, NULL, in->ring_bytes_in);
    fig_uint(out, "ring_bytes_out", NULL, NULL, in->ring_bytes_out);
    fig_text(out, "ring_bytes", "%.1f MiB over the h2d, %.1f MiB decompressed\n",
             (double)in->ring_bytes_in / (1 << 20), (double)in->ring_bytes_out / (1 << 20));
    fig_num(out, "ring_busy_s", "ring decompression", "%.4f s busy (a timed run; else 0)",
            in->ring_busy_s);
    fig_num(out, "ring_gbps", "ring decompression rate", "%.2f GB/s out while busy",
            cli_gbps((double)in->ring_bytes_out, in->ring_busy_s));
    fig_num(out, "effective_gbps", "effective input rate",
            "%.2f GB/s uncompressed into stage 1 (over the makespan)",
            cli_gbps((double)in->ring_bytes_out, makespan_s));
    if (in->ring_busy_s > 0.0 && report) {
        const char *behind;
        int hidden = ring_hidden(report, in->ring_busy_s, &behind);
        char text[64];
        snprintf(text, sizeof text, "%s%s", hidden ? "hidden behind " : "the bottleneck",
                 hidden ? behind : "");
        fig_str(out, "ring_overlap", "decompression", "%s", text);
    }
}

/* What a compressed input and output both say first: the format, the sizes and their ratio,
 * frames and blocks. Opens the group that the caller ends. */
static void print_compressed(fig_out *out, const char *key, const char *title,
                             int format, unsigned long long file_bytes,
                             unsigned long long stream_bytes, unsigned long long frames,
                             unsigned long long blocks)
{
    static const char *const names[] = {"auto", "raw", "lz4", "zstd"}; /* sp_input_format's */
    double ratio = file_bytes ? (double)stream_bytes / (double)file_bytes : 0.0;
    fig_group(out, key, title);
    fig_str(out, "format", "format", "%s", names[format]);
    fig_uint(out, "compressed_bytes", NULL, NULL, file_bytes);
    fig_uint(out, "uncompressed_bytes", NULL, NULL, stream_bytes);
    fig_text(out, "bytes", "%.1f MiB compressed, %.1f MiB uncompressed\n",
             (double)file_bytes / (1 << 20), (double)stream_bytes / (1 << 20));
    fig_num(out, "ratio", "ratio", "%.2f (uncompressed / compressed)", ratio);
    fig_uint(out, "frames", "frames", "%llu", frames);
    fig_uint(out, "blocks", "blocks", "%llu", blocks);
}

/* A compressed input: its sizes, ratio and the decompression's time on the staging threads
 * (summed over them: more than the makespan when several decoded at once). */
static void print_input(fig_out *out, const run_files *f, const sp_report *report,
                        double makespan_s)
{
    sp_file_io_input in;
    if (sp_file_io_input_get(f->io, &in) != SP_OK || in.format == SP_INPUT_FORMAT_RAW)
        return;
    print_compressed(out, "compression", "compressed input:", in.format, in.file_bytes,
                     in.stream_bytes, in.frames, in.blocks);
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
    print_ring(out, &in, report, makespan_s);
    fig_group_end(out);
}

/* A compressed output: its sizes and ratio as the input's are shown, and where it ran. */
static void print_output(fig_out *out, const run_files *f)
{
    sp_file_io_output o;
    if (sp_file_io_output_get(f->io, &o) != SP_OK || o.format == SP_INPUT_FORMAT_RAW)
        return;
    print_compressed(out, "output_compression", "compressed output:", o.format, o.file_bytes,
                     o.stream_bytes, o.frames, o.blocks);
    fig_uint(out, "blocks_stored", "stored", "%llu blocks (did not shrink)", o.blocks_stored);
    fig_num(out, "compress_s", "compression", "%.4f s (staging threads, summed)",
            o.compress_s);
    fig_num(out, "compress_gbps", "compression rate", "%.2f GB/s per thread busy",
            cli_gbps((double)o.stream_bytes, o.compress_s));
    fig_str(out, "how", "how", "%s", o.note);
    fig_group_end(out);
}

void run_phase_end(run_phases *p, double *phase)
{
    double now = cli_now_s();
    *phase = now - p->mark;
    p->mark = now;
}

/* Where the wall time went before the figures are printed (what comes after, the memory's
 * release, is not in it). */
static void print_phases(fig_out *out, const run_phases *p)
{
    fig_group(out, "phases", "phases:");
    fig_num(out, "context_s", "context", "%.3f s", p->context_s);
    fig_num(out, "stages_s", "stages", "%.3f s", p->stages_s);
    fig_num(out, "open_s", "files opened", "%.3f s", p->open_s);
    fig_num(out, "pipeline_s", "pipeline made", "%.3f s", p->pipeline_s);
    fig_num(out, "run_s", "streamed", "%.3f s", p->run_s);
    fig_num(out, "commit_s", "committed", "%.3f s", p->commit_s);
    fig_num(out, "total_s", "total", "%.3f s (the command, less its start and its exit)",
            p->mark - p->start);
    fig_group_end(out);
}

static void print_result(const run_job *job, const run_options *o, const sp_report *report,
                         size_t records_run, double makespan_s)
{
    const run_files *f = &job->files;
    double bytes = (double)records_run * (double)f->in_record_bytes;
    fig_out out;
    fig_begin(&out, f->to_stdout ? stderr : stdout, o->json); /* stdout holds the records */
    run_print_job(&out, job, o);
    fig_uint(&out, "resumed_records", "resumed records", "%llu",
             (unsigned long long)sp_file_io_resumed(f->io));
    fig_num(&out, "gbps_in", "rate in", "%.2f GB/s (over the makespan)",
            cli_gbps(bytes, makespan_s));
    fig_num(&out, "peak_rss_mib", "peak RSS", "%.1f MiB", run_peak_rss_mib());
    print_input(&out, f, report, makespan_s);
    print_output(&out, f);
    print_phases(&out, &job->phases);
    cli_report_figures(&out, "report:", report);
    cli_tune_list tune;
    cli_tune_list_read(&tune, job->pipeline);
    cli_tune_figures(&out, &tune);
    fig_end(&out);
}

/* A word of the command, quoted for a POSIX shell where it needs it. */
static void print_word(const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "-_./:=,+@%^") == strlen(w)) {
        fprintf(stderr, " %s", w);
        return;
    }
    fputs(" '", stderr);
    for (; *w; w++)
        fputs(*w == '\'' ? "'\\''" : (char[]){*w, 0}, stderr);
    fputs("'", stderr);
}

/* After a signal stopped a journaled run: the one line saying how to carry on. */
static void print_how_to_resume(const run_job *job, const run_options *o, int sig)
{
    fprintf(stderr, "streampipe: run: stopped by %s; %zu of %zu records are kept in '%s'; "
            "to resume: streampipe run", sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM"
                                                                    : "SIGHUP",
            sp_file_io_done(job->files.io), job->files.n_records,
            sp_file_io_journal_path(job->files.io));
    for (int i = 1; i < o->argc; i++)
        print_word(o->argv[i]);
    fprintf(stderr, "%s\n", o->resume ? "" : " --resume");
}

static void say_resumed(const run_job *job, const run_options *o)
{
    const sp_file_io *io = job->files.io;
    if (!o->resume || !job->files.journaled)
        return;
    if (sp_file_io_resumed(io))
        fprintf(stderr, "streampipe: run: resuming: %zu of %zu records were done (%s)\n",
                sp_file_io_resumed(io), job->files.n_records, sp_file_io_journal_path(io));
    else
        fprintf(stderr, "streampipe: run: --resume: no journal to resume from: starting at "
                "the first record\n");
}

/* --live and --metrics watch the job's pipeline; the panel replaces the progress line once
 * it shows (from the start with --live). */
static int start_live(run_job *job, const run_options *o, cli_live *live)
{
    int rc = cli_live_start(live, &o->live, o->json);
    job->files.panel = cli_live_panel_flag(live);
    pthread_mutex_lock(&live->watch.lock); /* the panel's thread reads them already */
    live->watch.planned_records = job->files.n_records;
    live->watch.records_before = sp_file_io_resumed(job->files.io);
    pthread_mutex_unlock(&live->watch.lock);
    live_watch_set(&live->watch, job->pipeline, "run");
    return rc;
}

/* Every range still to do, one run each (one for a fresh start; the journal's gaps on a
 * resume). The report is the last run's; *records_run and *makespan_s add up. */
static sp_status run_ranges(run_job *job, live_watch *watch, sp_report *report,
                            size_t *records_run, double *makespan_s)
{
    size_t first = 0, count = job->files.n_records;
    sp_status st = SP_OK;
    memset(report, 0, sizeof *report);
    *records_run = 0;
    *makespan_s = 0;
    if (job->files.from_stdin) { /* one run, until stdin ends: its size is known after */
        st = sp_pipeline_run_io(job->pipeline, run_files_range(&job->files, 0, 0), report);
        live_watch_fold(watch);
        job->files.n_records = *records_run = sp_file_io_records(job->files.io);
        *makespan_s = st == SP_OK ? report->makespan_s : 0;
        return st;
    }
    while (st == SP_OK && (job->files.journaled ? sp_file_io_todo(job->files.io, &first, &count)
                                                : *records_run < count)) {
        const sp_io *io = run_files_range(&job->files, first, count);
        st = count ? sp_pipeline_run_io(job->pipeline, io, report) : SP_OK;
        live_watch_fold(watch);
        if (st == SP_OK) {
            *records_run += count;
            *makespan_s += report->makespan_s;
        }
        if (!count)
            break;
    }
    return st;
}

/* The files, with a journal unless --no-journal, a compressed output or stdin (written or
 * read once, in order: nothing to resume from). */
static int open_files(run_job *job, const run_options *o)
{
    int raw = o->output_format == 0, from_stdin = strcmp(o->input_path, "-") == 0;
    run_files_set_output_format(SP_INPUT_FORMAT_RAW + o->output_format);
    if (o->resume && (o->no_journal || !raw || from_stdin)) {
        fprintf(stderr, "streampipe: run: --resume needs %s\n",
                o->no_journal ? "the journal that --no-journal turns off"
                : !raw ? "--output-format raw (a compressed output is written once, in "
                         "order, with no journal)"
                       : "a file --input (stdin is read once, with no journal)");
        return CLI_EXIT_USAGE;
    }
    if (o->no_journal || !raw || from_stdin)
        return run_files_open(&job->files, o->input_path, o->output_path,
                              job->stages.in_record_bytes, job->stages.out_record_bytes, 0,
                              NULL, o->input_format);
    return run_files_open_journaled(&job->files, o->input_path, o->output_path,
                                    job->stages.in_record_bytes, job->stages.out_record_bytes,
                                    o->stages_text, o->resume, o->input_format);
}

/* nvCOMP for decompression in the ring on CUDA: $SP_NVCOMP_LIBRARY names the library file,
 * else the dynamic linker's search finds libnvcomp.so.6. Without it the run decompresses on
 * the staging threads and its input's note gives the reason. */
static void load_nvcomp(const run_options *o)
{
    if (o->backend == SP_BACKEND_HOST || o->decompress == SP_DECOMPRESS_STAGING)
        return;
    const char *path = getenv("SP_NVCOMP_LIBRARY");
    char why[256];
    (void)sp_nvcomp_load(path && *path ? path : NULL, why, sizeof why);
}

static int run_job_go(run_job *job, const run_options *o)
{
    load_nvcomp(o);
    run_files_set_decompress(o->decompress);
    run_phases *ph = &job->phases;
    int rc = run_build_stages(&job->stages, job->ctx);
    run_phase_end(ph, &ph->stages_s);
    if (rc == CLI_EXIT_OK)
        rc = open_files(job, o);
    run_phase_end(ph, &ph->open_s);
    if (rc == CLI_EXIT_OK)
        rc = run_make_pipeline(job, o);
    run_phase_end(ph, &ph->pipeline_s);
    if (rc != CLI_EXIT_OK)
        return rc;
    say_resumed(job, o);
    sp_report report;
    size_t records_run = 0;
    double makespan_s = 0;
    cli_live live;
    cli_flight flight;
    if (cli_flight_start(&flight, &o->flight, job->pipeline) != 0)
        return CLI_EXIT_FAILURE;
    rc = start_live(job, o, &live);
    sp_status st = rc == CLI_EXIT_OK ? run_ranges(job, &live.watch, &report, &records_run,
                                                  &makespan_s)
                                     : SP_OK;
    run_phase_end(ph, &ph->run_s);
    cli_live_stop(&live); /* the panel erased before the report; the endpoint closed */
    job->files.progress = job->files.progress && !cli_live_panel_on(&live); /* it had the line */
    job->files.panel = NULL;
    if (st != SP_OK && rc == CLI_EXIT_OK && !run_signal_stop_requested())
        cli_flight_dump(&flight, "the run failed"); /* its last seconds, before any message */
    cli_flight_stop(&flight);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (st != SP_OK) {
        int sig = run_signal_stop_requested();
        if (sig) { /* the files' close makes the journal durable; then we die of sig */
            print_how_to_resume(job, o, sig);
            return CLI_EXIT_FAILURE;
        }
        run_files_print_io_error(&job->files, "");
        rc = cli_report_failure("streaming the file", st, sp_pipeline_last_error(job->pipeline));
        if (job->files.journaled) /* never a silent leftover: say what stays, and why */
            fprintf(stderr, "streampipe: run: the partial output and its journal %s are kept "
                    "for --resume (once the cause is fixed); a run without --resume starts "
                    "again and replaces them\n", sp_file_io_journal_path(job->files.io));
        return rc;
    }
    rc = run_files_commit(&job->files);
    run_phase_end(ph, &ph->commit_s);
    if (rc == CLI_EXIT_OK)
        print_result(job, o, &report, records_run, makespan_s);
    return rc;
}

int run_main(int argc, char **argv)
{
    run_options o = {.backend = SP_BACKEND_AUTO, .argc = argc, .argv = argv};
    int rc = cli_parse_options(&command, argc, argv, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    run_job job;
    memset(&job, 0, sizeof job);
    job.phases.start = job.phases.mark = cli_now_s();
    rc = run_parse_stages(o.stages_text, &job.stages);
    if (rc == CLI_EXIT_OK && job.stages.mlp_path && !run_mlp_linked)
        return cli_exec_mlp(argc, argv); /* before MPI starts: the program there starts it */
    run_mpi mpi;
    if (run_mpi_init(&mpi) != 0)
        return CLI_EXIT_FAILURE;
    /* under mpirun each rank takes the GPU of its place on its host (HOST ignores it) */
    int device = mpi.size > 1 ? mpi.local_rank : o.device;
    if (rc == CLI_EXIT_OK)
        rc = cli_open_context(o.backend, device, &job.ctx);
    run_phase_end(&job.phases, &job.phases.context_s); /* MPI's start in it, under mpirun */
    /* under mpirun, one rank too: its journal is a rank's, which a job of any rank count
     * resumes from (a single process's .NAME.journal is not) */
    if (mpi.initialized)
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
