/* `streampipe bench` options, preset jobs and the defaults that depend on the backend: the
 * plan. Every value is checked here; later stages trust them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "stats.h"
#include "options.h"
#include "par_for.h"

typedef struct bench_workload {
    const char *name;
    unsigned long long records;
    unsigned iters;
    unsigned long long chunk_records; /* 0 = library's choice */
    const char *about;
} bench_workload;

static const bench_workload workloads[] = {
    {"seed", 1ULL << 27, 100, 0, "copies and a moderate kernel (default on cuda)"},
    {"transfer", 1ULL << 28, 0, 0, "1 GiB each way, next to no compute"},
    {"compute", 1ULL << 27, 1000, 0, "a heavy kernel: compute-bound"},
    {"tiny", 1ULL << 24, 0, 16384, "64 KiB chunks: per-copy overhead shows"},
    {"small", 1ULL << 22, 10, 0, "seconds on two CPU cores (default on host)"},
};

#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])
#define DEFAULT_CUDA_WORKLOAD 0
#define DEFAULT_HOST_WORKLOAD 4

/* The textbook serial loop copies 16M records (64 MiB of floats) per synchronous step. */
#define CUDA_SERIAL_CHUNK_RECORDS ((size_t)16 << 20)

/* "sweep" as the value of --iters, --chunk or --depth: these lists. */
static const cli_list sweep_chunks = {6, 0, {262144, 524288, 1048576, 2097152, 4194304,
                                              8388608}};
static const cli_list sweep_depths = {6, 0, {2, 3, 4, 5, 6, 8}};
static const cli_list sweep_iters_cuda = {4, 0, {0, 10, 100, 1000}};
/* A tenth of the CUDA list, as long: on two CPU cores iters 1000 takes half a minute per run
 * of the small workload, so the CUDA list would take minutes where this one takes seconds. */
static const cli_list sweep_iters_host = {4, 0, {0, 1, 10, 100}};

static void print_sweep_list(const char *name, const cli_list *list, const char *after,
                             FILE *out)
{
    fputs(name, out);
    for (size_t i = 0; i < list->n; i++)
        fprintf(out, "%c%llu", i == 0 ? ' ' : ',', list->items[i]);
    fputs(after, out);
}

static void print_sweep_lists(FILE *out)
{
    print_sweep_list("  chunk:", &sweep_chunks, " records\n", out);
    print_sweep_list("  depth:", &sweep_depths, "\n", out);
    print_sweep_list("  iters:", &sweep_iters_cuda, " on cuda;", out);
    print_sweep_list("", &sweep_iters_host, " on host (a CPU takes minutes at 1000)\n", out);
}

static int find_workload(const char *name)
{
    for (size_t i = 0; i < N_WORKLOADS; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void print_workloads(FILE *out)
{
    fputs("workloads (float32 sinmix):\n", out);
    for (size_t i = 0; i < N_WORKLOADS; i++) {
        const bench_workload *w = &workloads[i];
        char chunk[32] = "chosen";
        if (w->chunk_records != 0)
            snprintf(chunk, sizeof chunk, "%llu", w->chunk_records);
        fprintf(out, "  %-9s records %-10llu iters %-5u chunk %-7s %s\n", w->name, w->records,
                w->iters, chunk, w->about);
    }
}

/* Appends a sentence to the plan's notes, "; " between sentences. */
static void add_note(bench_plan *plan, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add_note(bench_plan *plan, const char *fmt, ...)
{
    size_t used = strlen(plan->notes);
    if (used > 0 && used + 2 < sizeof plan->notes) {
        memcpy(plan->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notes + used, sizeof plan->notes - used, fmt, ap);
    va_end(ap);
}

/* The library allocates a pipeline's whole chunk, for every slot, when it is created: it
 * cannot know that no run will have that many records. A chunk above the records runs as one
 * chunk of the records either way, so it is cut to them rather than allocated (2^40 records
 * of floats are 4 TiB), and the notes say so. */
static void clamp_chunk(bench_plan *plan, const char *what, size_t *chunk_records)
{
    if (*chunk_records <= plan->records)
        return;
    add_note(plan, "%s %zu records is more than the %zu records: cut to %zu (one chunk)", what,
             *chunk_records, plan->records, plan->records);
    *chunk_records = plan->records;
}

/* The same for a list of chunks: a value above the records becomes the records, listed once
 * (two rows of one setting would only differ by noise). */
static void clamp_chunk_list(bench_plan *plan, cli_list *list)
{
    size_t above = 0, kept = 0;
    for (size_t i = 0; i < list->n; i++) {
        unsigned long long value = list->items[i];
        above += value > plan->records;
        value = value > plan->records ? plan->records : value;
        int listed = 0;
        for (size_t k = 0; k < kept; k++)
            listed |= list->items[k] == value;
        if (!listed)
            list->items[kept++] = value;
    }
    list->n = kept;
    if (above > 0)
        add_note(plan, "%zu --chunk value%s above the %zu records ran as %zu (one chunk)",
                 above, above == 1 ? "" : "s", plan->records, plan->records);
}

/* Each list once the plan's values are known: "sweep"'s values, or the one value in effect
 * where the option was no list (the workload's where not given). */
static void fill_list(cli_list *list, const cli_list *sweep, unsigned long long value)
{
    if (list->sweep) {
        *list = *sweep;
    } else if (list->n <= 1) {
        list->items[0] = value;
        list->n = 1;
    }
}

static void resolve_lists(bench_plan *plan, sp_backend_kind backend)
{
    clamp_chunk(plan, "chunk", &plan->chunk_records);
    clamp_chunk(plan, "serial chunk", &plan->serial_chunk_records);
    fill_list(&plan->iters_list, backend == SP_BACKEND_CUDA ? &sweep_iters_cuda
                                                            : &sweep_iters_host, plan->iters);
    fill_list(&plan->chunk_list, &sweep_chunks, plan->chunk_records);
    fill_list(&plan->depth_list, &sweep_depths, plan->depth);
    clamp_chunk_list(plan, &plan->chunk_list);
}

/* Where no option set them, the workload's values; a list's value is the row's. */
static void take_workload(bench_plan *plan, const bench_workload *w)
{
    plan->workload = w->name;
    if (!plan->records_given)
        plan->records = (size_t)w->records;
    if (!plan->iters_given || plan->iters == BENCH_UNSET_UINT)
        plan->iters = w->iters;
    if (!plan->chunk_given || plan->chunk_records == BENCH_UNSET_SIZE)
        plan->chunk_records = (size_t)w->chunk_records;
    if (!plan->serial_chunk_given)
        plan->serial_chunk_records = plan->backend == SP_BACKEND_CUDA ? CUDA_SERIAL_CHUNK_RECORDS
                                                                      : plan->chunk_records;
}

/* The default workload where none was given; with several, the buffers hold the most records
 * of any, and the job is named by the list. */
static void resolve_workloads(bench_plan *plan)
{
    if (plan->n_workloads == 0) {
        plan->workload_indices[0] = plan->backend == SP_BACKEND_CUDA ? DEFAULT_CUDA_WORKLOAD
                                                                     : DEFAULT_HOST_WORKLOAD;
        plan->n_workloads = 1;
    }
    size_t most = 0, used = 0;
    for (size_t i = 0; i < plan->n_workloads; i++) {
        const bench_workload *w = &workloads[plan->workload_indices[i]];
        most = w->records > most ? (size_t)w->records : most;
        used += (size_t)snprintf(plan->workload_names + used, sizeof plan->workload_names - used,
                                 "%s%s", i == 0 ? "" : ",", w->name);
    }
    take_workload(plan, &workloads[plan->workload_indices[0]]);
    if (plan->n_workloads > 1) {
        plan->workload = plan->workload_names;
        plan->records = plan->records_given ? plan->records : most;
    }
}

void bench_plan_workload(const bench_plan *plan, size_t index, bench_plan *setting)
{
    *setting = *plan;
    take_workload(setting, &workloads[plan->workload_indices[index]]);
    /* As clamp_chunk does, without a note: the row's report shows the chunk in effect. */
    if (setting->chunk_records > setting->records)
        setting->chunk_records = setting->records;
    if (setting->serial_chunk_records > setting->records)
        setting->serial_chunk_records = setting->records;
}

void bench_plan_resolve(bench_plan *plan, sp_backend_kind backend)
{
    int on_cuda = backend == SP_BACKEND_CUDA;
    plan->backend = backend;
    plan->records_given = plan->records != BENCH_UNSET_SIZE;
    plan->iters_given = plan->iters_list.n > 0 || plan->iters_list.sweep;
    plan->chunk_given = plan->chunk_list.n > 0 || plan->chunk_list.sweep;
    plan->serial_chunk_given = plan->serial_chunk_records != BENCH_UNSET_SIZE;
    plan->workload_changed = plan->records_given || plan->iters_given || plan->chunk_given;
    resolve_workloads(plan);
    if (plan->repeat == BENCH_UNSET_UINT)
        plan->repeat = on_cuda ? 5 : 3;
    if (plan->timeline == BENCH_UNSET_TIMELINE) /* a trace shows every operation */
        plan->timeline = plan->trace_path || plan->svg_path ? SP_TIMELINE_EVENTS
                                                            : SP_TIMELINE_SAMPLED;
    if (plan->seed == BENCH_UNSET_SEED)
        plan->seed = cli_clock_seed();
    plan->host_workers = par_default_workers();
    if (plan->source)
        add_note(plan, "--source generator: the input is the generator's repeated pattern, not "
                 "data from the seed");
    resolve_lists(plan, backend);
}

const char *bench_memory_name(bench_memory memory)
{
    return memory == BENCH_MEMORY_PINNED ? "pinned" : "pageable";
}

/* Records are floats: 2^40 of them is 4 TiB per side, far beyond any host, and keeps every
 * byte count well inside size_t. */
#define MAX_RECORDS (1ULL << 40)

/* --workload NAME[,NAME...]: several make a row per workload (names may repeat). */
static int apply_workload(const char *value, void *config)
{
    bench_plan *plan = config;
    plan->n_workloads = 0;
    for (const char *cursor = value; cursor != NULL; plan->n_workloads++) {
        char name[24];
        if (plan->n_workloads == BENCH_MAX_WORKLOADS ||
            cli_next_item(&cursor, name, sizeof name) != 0 || name[0] == '\0')
            return cli_usage_error("--workload: '%s' is not a list of at most %d workloads",
                                   value, BENCH_MAX_WORKLOADS);
        int index = find_workload(name);
        if (index < 0)
            return cli_usage_error("--workload: unknown workload '%s' (see --help)", name);
        plan->workload_indices[plan->n_workloads] = index;
    }
    return CLI_EXIT_OK;
}

/* --devices all|-1|N,M,...: the devices of one sp_group run (on HOST, as many host
 * backends as listed). */
static int apply_devices(const char *value, void *config)
{
    bench_plan *plan = config;
    plan->group = 1;
    plan->n_devices = 0;
    if (strcmp(value, "all") == 0 || strcmp(value, "-1") == 0)
        return CLI_EXIT_OK;
    for (const char *cursor = value; cursor != NULL; plan->n_devices++) {
        char text[24];
        unsigned long long device = 0;
        if (plan->n_devices == BENCH_MAX_DEVICES || cli_next_item(&cursor, text, sizeof text))
            return cli_usage_error("--devices: '%s' is not all or a list of at most %d device "
                                   "numbers", value, BENCH_MAX_DEVICES);
        if (cli_parse_count(text, INT_MAX, &device) != 0)
            return cli_usage_error("--devices: '%s' in '%s' is not a device number", text,
                                   value);
        plan->devices[plan->n_devices] = (int)device;
    }
    return CLI_EXIT_OK;
}

/* Some of the limits are one below the type's largest value, which stands for "not given". */
static const cli_option options[] = {
    CLI_BACKEND_OPTION(bench_plan),
    CLI_DEVICE_OPTION(bench_plan),
    CLI_APPLY("workload", "NAME,...", apply_workload,
              "a preset job (the list below says which is the default);\n"
              "a list: see Lists"),
    CLI_COUNT("records", "N", bench_plan, records, 1, MAX_RECORDS,
              "records, float32 each (default: the workload's)"),
    CLI_COUNT_LIST("iters", "N,...", bench_plan, iters_list, 0, CLI_SINMIX_MAX_ITERS,
                   "sinmix iterations per element, the compute weight\n"
                   "(default: the workload's); a list or sweep: see Lists"),
    CLI_CHUNK_LIST_OPTION(bench_plan, chunk_list, MAX_RECORDS,
                          "records per chunk, auto or 0 = the library's choice,\n"
                          "re-picked under --max-pinned/--max-device while runs\n"
                          "without a report go (default: the workload's); one\n"
                          "above --records is cut to them (the notes say so);\n"
                          "a list or sweep: see Lists"),
    CLI_DEPTH_LIST_OPTION(bench_plan, depth_list, "; a list or\nsweep: see Lists"),
    CLI_COUNT("threads", "T", bench_plan, staging_threads, 0, 1024,
              "host staging threads (default 0: the library's\nchoice)"),
    CLI_COUNT("streams", "S", bench_plan, stage_streams, 0, SP_MAX_STAGE_STREAMS,
              "queues the sinmix stage's chunks take turns on\n"
              "(concurrent kernels; default 1)"),
    CLI_COUNT("max-pinned", "BYTES", bench_plan, max_pinned, 0, SIZE_MAX,
              "most pinned staging memory a pipelined run's pipeline\n"
              "holds (sizes like 256M); the library's chunk and depth\n"
              "shrink to fit (default 0: no bound)"),
    CLI_COUNT("max-device", "BYTES", bench_plan, max_device, 0, SIZE_MAX,
              "the same for device memory (default 0: no bound)"),
    CLI_COUNT("piece", "BYTES", bench_plan, copy_piece_bytes, 0, SIZE_MAX,
              "enqueue copies in pieces of at most BYTES (default\n0: whole chunks)"),
    CLI_CHOICE("graph", CLI_GRAPH_NAMES, bench_plan, graph,
               "replay groups of chunks from CUDA graphs (default\n"
               "off); not off: stream mode is timed beside it"),
    CLI_CHOICE("timeline", CLI_TIMELINE_NAMES, bench_plan, timeline,
               "how the run with a report times its operations: sampled\n"
               "windows of chunks (default; events with --trace or\n"
               "--svg), CUPTI's activity records, off, or events for\n"
               "every operation (the full timeline)"),
    CLI_FLAG("timeline-full", bench_plan, timeline_full,
             "also time a run with the full timeline (events) in\n"
             "every repeat: its cost, and how far the sampled figures\n"
             "are from its (bench/sampled_check.sh)"),
    CLI_FLAG("copy-kernel", bench_plan, copy_kernel,
             "the pipelined runs copy by a kernel reading and\n"
             "writing pinned host memory over PCIe instead of the\n"
             "copy engines (copy_by_kernel; the ceiling keeps them)"),
    /* bench_memory's order: PAGEABLE, PINNED */
    CLI_CHOICE("memory", "pageable|pinned", bench_plan, memory,
               "user memory: malloc, or sp_host_alloc (default pageable)"),
    /* host = 0, device = 1 */
    CLI_CHOICE("in", "host|device", bench_plan, in_device,
               "where the input lies: host memory (--memory) or\n"
               "device memory (sp_device_alloc: no host-to-device\n"
               "copy; the ceiling is then the copies left); default host"),
    CLI_CHOICE("out", "host|device", bench_plan, out_device,
               "where the output goes: host memory (--memory) or\n"
               "device memory (no device-to-host copy); default host"),
    CLI_COUNT("repeat", "N", bench_plan, repeat, 1, BENCH_MAX_REPEAT,
              "timed runs of each kind; medians are quoted\n(default 5 on cuda, 3 on host)"),
    CLI_COUNT("serial-chunk", "N", bench_plan, serial_chunk_records, 0, MAX_RECORDS,
              "records per chunk of the serial baseline, 0 =\n"
              "library's choice (default 16M records on cuda, else\n"
              "the same as --chunk)"),
    CLI_COUNT("seed", "S", bench_plan, seed, 0, BENCH_UNSET_SEED - 1,
              "input data seed (default from the clock; printed)"),
    CLI_JSON_OPTION(bench_plan),
    CLI_LIVE_OPTIONS(bench_plan, live),
    CLI_FLIGHT_OPTIONS(bench_plan, flight),
    CLI_STRING("trace", "FILE.json", bench_plan, trace_path,
               "after the runs, write the Chrome trace (Perfetto,\n"
               "chrome://tracing) of the last pipelined run made\nwith a report"),
    CLI_STRING("svg", "FILE.svg", bench_plan, svg_path,
               "write the SVG timeline of that run, with its figures"),
    CLI_COUNT("batches", "B", bench_plan, batches, 1, MAX_RECORDS,
              "time one run of the records against B runs of B slices\n"
              "and the slices as B batches through one stream\n"
              "(sp_stream_submit), instead of the comparison (default:\n"
              "no batches)"),
    CLI_COUNT_LIST("group-size", "N,...", bench_plan, group_list, 0, BENCH_MAX_DEVICES,
                   "0: the plain pipeline; N: one sp_group run over N\n"
                   "pipelines on --device (default 0); a list: a row each\n"
                   "(--group-size 0,1,2: plain against groups of 1 and 2)"),
    /* array = 0, generator = 1 */
    CLI_CHOICE("source", "array|generator", bench_plan, source,
               "generator: the input made by a positional generator\n"
               "source (sp_pipeline_run_io, into and out of the pinned\n"
               "staging) timed against the same values as arrays,\n"
               "instead of the comparison (default array)"),
    CLI_APPLY("devices", "all|N,M,...", apply_devices,
              "one sp_group run over these devices (all or -1: every\n"
              "visible GPU; on host, as many host backends as listed),\n"
              "instead of the comparison; merged and per-device figures\n"
              "(default: no group run)"),
};

static void print_more(FILE *out)
{
    fprintf(out, "Counts take k/M/G suffixes (powers of 1024) or 2^N.\n\n"
            "Lists: --iters, --chunk and --depth each take a comma-separated list of at most\n"
            "%d values (--chunk 1M,4M,16M --depth 2,3,4), or sweep for the list below;\n"
            "--workload takes at most %d names (--workload small,tiny: each row has its\n"
            "workload's records, iters and chunk where no option sets them); --group-size\n"
            "a list of group sizes (0: the plain pipeline).\n"
            "With more than one value the job is a row per combination (workload, group size,\n"
            "iters, chunk, then depth; at most %d rows) instead of the comparison: each row's\n"
            "pipeline (or group) runs --repeat times without a report (the median is quoted)\n"
            "and once with one (efficiency, bottleneck), every element verified (the expected\n"
            "values computed again for each workload and iters). '*' marks the fastest row;\n"
            "--trace and --svg show its run with a report. sweep is, for each option:\n", CLI_MAX_LIST_ITEMS,
            BENCH_MAX_WORKLOADS, BENCH_MAX_ROWS);
    print_sweep_lists(out);
    fputs("\nProgress goes to stderr. When stderr is a terminal, one line (\"[run 2/3] serial\n"
          "0.123 s, ...\") is rewritten in place as runs finish and erased at the end; with\n"
          "--json, with NO_PROGRESS set in the environment, or when stderr is not a terminal,\n"
          "a plain line follows each repeat (each row, given lists) instead. On a terminal\n"
          "the live panel takes the line's place once the runs have gone on "
          LIVE_TEXT(LIVE_AUTO_AFTER_S) " s\n"
          "(--live: from the start; --no-live: never).\n\n", out);
    print_workloads(out);
}

static const cli_command_options command = {
    "bench",
    "usage: streampipe bench [options]\n\n"
    "Times a float32 sinmix job three ways in one process: the serial baseline (a\n"
    "synchronous copy, kernel, copy per chunk), the pipelined run, and a copy-only run\n"
    "on pinned memory (the copy-engine ceiling). Given lists of --workload,\n"
    "--group-size, --iters, --chunk or --depth, times the pipelined run (or group) at\n"
    "each combination instead; --batches and --source generator time other comparisons\n"
    "instead. Every output element of every timed run is verified.\n\n",
    options, sizeof options / sizeof options[0], "\n", print_more};

static void set_defaults(bench_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->backend = SP_BACKEND_AUTO;
    plan->records = BENCH_UNSET_SIZE;
    plan->iters = BENCH_UNSET_UINT;
    plan->chunk_records = BENCH_UNSET_SIZE;
    plan->serial_chunk_records = BENCH_UNSET_SIZE;
    plan->repeat = BENCH_UNSET_UINT;
    plan->seed = BENCH_UNSET_SEED;
    plan->memory = BENCH_MEMORY_PAGEABLE;
    plan->timeline = BENCH_UNSET_TIMELINE;
}

/* What can only be judged once every option is known. */
static int check_combinations(const bench_plan *plan)
{
    if (plan->trace_path != NULL && plan->svg_path != NULL &&
        strcmp(plan->trace_path, plan->svg_path) == 0)
        return cli_usage_error("bench: --trace and --svg name the same file '%s'",
                               plan->trace_path);
    if (plan->group_list.n > 1 && (plan->trace_path || plan->svg_path))
        return cli_usage_error("bench: --trace and --svg show a pipeline's run, which a list of "
                               "--group-size does not always have");
    if (plan->group && (plan->rows || plan->trace_path || plan->svg_path))
        return cli_usage_error("bench: --devices (or one --group-size above 0) runs a group, which takes one value of "
                               "--workload, --group-size, --iters, --chunk and --depth, and no "
                               "--trace or --svg");
    if (plan->source && (plan->batches || plan->group || plan->rows || plan->trace_path ||
                         plan->svg_path))
        return cli_usage_error("bench: --source generator times one setting, not --batches, "
                               "--devices, --trace, --svg or lists of --workload, --iters, "
                               "--chunk or --depth");
    if (plan->batches && (plan->group || plan->rows || plan->trace_path || plan->svg_path))
        return cli_usage_error("bench: --batches times one setting, not --devices, --trace, "
                               "--svg or lists of --workload, --iters, --chunk or --depth");
    if ((plan->in_device || plan->out_device) &&
        (plan->group || plan->rows || plan->batches || plan->source))
        return cli_usage_error("bench: --in device and --out device are for the comparison, "
                               "not --batches, --source, --devices or lists of --workload, --iters, --chunk or "
                               "--depth");
    return CLI_EXIT_OK;
}

/* How many values a list option makes: "sweep"'s, its items, or the one value. */
static size_t list_count(const cli_list *list, const cli_list *sweep)
{
    return list->sweep ? sweep->n : list->n > 1 ? list->n : 1;
}

/* One --group-size N above 0: the group job, as --devices D,D,... (N times) would be. */
static int take_group_size(bench_plan *plan)
{
    if (plan->group_list.sweep)
        return cli_usage_error("--group-size: 'sweep' is not a list of group sizes");
    if (plan->group_list.n == 0)
        return CLI_EXIT_OK;
    if (plan->group)
        return cli_usage_error("bench: --group-size and --devices both say which devices run");
    if (plan->group_list.n > 1 || plan->group_list.items[0] == 0)
        return CLI_EXIT_OK;
    plan->group = 1;
    plan->n_devices = (size_t)plan->group_list.items[0];
    for (size_t k = 0; k < plan->n_devices; k++)
        plan->devices[k] = plan->device;
    return CLI_EXIT_OK;
}

/* A list of one value is that value, as before lists; more make rows, at most BENCH_MAX_ROWS. */
static int take_lists(bench_plan *plan)
{
    int rc = take_group_size(plan);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t n_work = plan->n_workloads > 1 ? plan->n_workloads : 1;
    size_t n_group = plan->group_list.n > 1 ? plan->group_list.n : 1;
    size_t n_iters = list_count(&plan->iters_list, &sweep_iters_cuda); /* as long on host */
    size_t n_chunk = list_count(&plan->chunk_list, &sweep_chunks);
    size_t n_depth = list_count(&plan->depth_list, &sweep_depths);
    size_t n_rows = n_work * n_group * n_iters * n_chunk * n_depth;
    if (plan->iters_list.n == 1 && !plan->iters_list.sweep)
        plan->iters = (unsigned)plan->iters_list.items[0];
    if (plan->chunk_list.n == 1 && !plan->chunk_list.sweep)
        plan->chunk_records = (size_t)plan->chunk_list.items[0];
    if (plan->depth_list.n == 1 && !plan->depth_list.sweep)
        plan->depth = (unsigned)plan->depth_list.items[0];
    plan->rows = n_rows > 1;
    if (n_rows > BENCH_MAX_ROWS)
        return cli_usage_error("bench: --workload, --group-size, --iters, --chunk and --depth "
                               "make %zu x %zu x %zu x %zu x %zu = %zu rows, more than %d",
                               n_work, n_group, n_iters, n_chunk, n_depth, n_rows,
                               BENCH_MAX_ROWS);
    return CLI_EXIT_OK;
}

int bench_parse_args(int argc, char **argv, bench_plan *plan)
{
    set_defaults(plan);
    int rc = cli_parse_options(&command, argc, argv, plan);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = take_lists(plan);
    return rc == CLI_EXIT_OK ? check_combinations(plan) : rc;
}
