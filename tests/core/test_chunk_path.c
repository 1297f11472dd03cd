/* The path of one chunk through src/core (issue 22: "one chunk of a pageable timed run enters
 * at most 6 files of src/core, each once on the way down").
 *
 * This binary links a copy of src/core's objects compiled with -finstrument-functions (and
 * -g; tests/CMakeLists.txt), so that every function entered there, static and inlined ones
 * included, calls the hooks below. It makes one pageable run (malloc'd memory: staged through
 * the pinned slots) on the HOST backend with a report and the full timeline, records the
 * calls made on the calling thread (the scheduler's), and reads back which file each function
 * is defined in (addr2line, from the debug lines). Then:
 *   - the loop is a frame whose calls repeat with a period, once per chunk (sched.c's loop
 *     over chunks; of several such loops, the one whose turn does the most): one period of
 *     its calls is one turn, the host turn that retires chunk i-K and stages chunk i, and
 *     chunk i's enqueueing;
 *   - a frame's file is the .c file of src/core its function is defined in; a function
 *     defined in a header (a static inline helper) is its owner's code read by include, not
 *     a file entered: it counts as the file of the frame that called it;
 *   - the files a turn enters are the loop's file and every file of the frames under that
 *     turn; a file "re-entered on the way down" is one entered from below itself (the file
 *     is already on the call stack, with another file between: a call back up);
 *   - every steady-state turn (the middle half of them) is judged, and the one entering the
 *     most files is printed with its calls across files.
 * It fails when the files are more than SP_PATH_MAX_FILES, when any is re-entered, and when
 * the trace cannot be read (no instrumentation, no addr2line): never skipped.
 *
 * Worker threads (the HOST backend's queues calling the stage trampoline, stage_call.c; the
 * staging threads running copy jobs) are not the scheduler's path and are not recorded. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "streampipe.h"

#define SP_PATH_MAX_FILES 6

#define RECORDS_PER_CHUNK 256
#define CHUNKS 64
#define DEPTH 4

/* ---- the hooks: calls on the recording thread, as (function, depth) ------------------- */

#define MAX_EVENTS (1u << 20)

typedef struct call {
    void *fn;
    int depth;
} call;

static call calls[MAX_EVENTS];
static size_t n_calls;
static int overflowed;
static _Thread_local int recording; /* this thread, between arm and disarm */
static _Thread_local int depth;

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    if (!recording)
        return;
    if (n_calls == MAX_EVENTS)
        overflowed = 1;
    else
        calls[n_calls++] = (call){fn, depth};
    depth++;
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    if (recording)
        depth--;
}

/* ---- the run ---------------------------------------------------------------------------- */

static sp_status scale(const sp_chunk *chunk, void *user)
{
    (void)user;
    const float *in = chunk->in;
    float *out = chunk->out;
    for (size_t i = 0; i < chunk->records; i++)
        out[i] = in[i] * 2.0f;
    return SP_OK;
}

static sp_status add_index(const sp_chunk *chunk, void *user)
{
    (void)user;
    const float *in = chunk->in;
    float *out = chunk->out;
    for (size_t i = 0; i < chunk->records; i++)
        out[i] = in[i] + (float)((chunk->first_record + i) % 1000);
    return SP_OK;
}

/* One pageable run with a report and the full timeline, recorded; 0 when it ran and every
 * output is right. `watched`: its live counters are read first (as the CLI's live panel
 * does), so that timed chunks are read back while the run goes, on the chunk's path. */
static int traced_run(int watched)
{
    size_t n = (size_t)RECORDS_PER_CHUNK * CHUNKS;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    sp_context *ctx = NULL;
    sp_pipeline *p = NULL;
    int rc = 1;
    sp_stage stages[2] = {
        {.name = "scale", .out_record_bytes = sizeof(float), .host = scale},
        {.name = "add", .out_record_bytes = sizeof(float), .host = add_index},
    };
    sp_pipeline_config config = SP_PIPELINE_CONFIG_INIT;
    config.in_record_bytes = sizeof(float);
    config.stages = stages;
    config.n_stages = 2;
    config.chunk_records = RECORDS_PER_CHUNK;
    config.depth = DEPTH;
    config.staging_threads = 2;
    config.timeline = SP_TIMELINE_EVENTS;
    if (!in || !out)
        goto done;
    for (size_t i = 0; i < n; i++) {
        in[i] = (float)(i % 4093) * 0.25f;
        out[i] = NAN; /* poisoned: every element is checked */
    }
    sp_status st = sp_context_create(SP_BACKEND_HOST, 0, &ctx);
    if (st == SP_OK)
        st = sp_pipeline_create(ctx, &config, &p);
    if (st != SP_OK) {
        fprintf(stderr, "setup failed: %s: %s\n", sp_status_name(st), sp_context_last_error(ctx));
        goto done;
    }
    sp_report report;
    sp_stats stats = {.size = sizeof stats};
    if (watched && (st = sp_pipeline_stats(p, &stats)) != SP_OK) {
        fprintf(stderr, "sp_pipeline_stats: %s\n", sp_status_name(st));
        goto done;
    }
    recording = 1;
    st = sp_pipeline_run(p, in, n, out, &report);
    recording = 0;
    if (st != SP_OK) {
        fprintf(stderr, "the run failed: %s: %s\n", sp_status_name(st), sp_pipeline_last_error(p));
        goto done;
    }
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += out[i] != in[i] * 2.0f + (float)(i % 1000);
    if (wrong || report.chunks != CHUNKS || report.timed_chunks != CHUNKS) {
        fprintf(stderr, "the run is not the one asked for: %zu outputs wrong, %zu chunks (%zu "
                "timed), %d chunks wanted, all timed\n", wrong, report.chunks,
                report.timed_chunks, CHUNKS);
        goto done;
    }
    rc = 0;
done:
    sp_pipeline_destroy(p);
    sp_context_destroy(ctx);
    free(in);
    free(out);
    return rc;
}

/* ---- functions to files ----------------------------------------------------------------- */

typedef struct fn_info {
    void *fn;
    char name[96];
    char file[64];  /* "sched.c", "ring.h", or "" outside src/core */
    int counted;    /* a .c file of src/core */
} fn_info;

static fn_info fns[4096];
static size_t n_fns;

static int find_fn(void *fn)
{
    for (size_t k = 0; k < n_fns; k++)
        if (fns[k].fn == fn)
            return (int)k;
    return -1;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *bias)
{
    (void)size;
    *(uintptr_t *)bias = (uintptr_t)info->dlpi_addr;
    return 1; /* the program itself comes first */
}

/* "…/src/core/sched.c:123 (discriminator 2)" -> "sched.c" when in src/core, else "". */
static void core_file(const char *where, char *file, size_t size, int *counted)
{
    const char *at = strstr(where, "/src/core/");
    file[0] = '\0';
    *counted = 0;
    if (!at)
        return;
    at += strlen("/src/core/");
    size_t len = strcspn(at, ":");
    const char *slash = strchr(at, '/');
    if (len >= size || (slash && slash < at + len))
        return; /* a folder under src/core */
    memcpy(file, at, len);
    file[len] = '\0';
    *counted = len > 2 && strcmp(file + len - 2, ".c") == 0;
}

/* A C name or a path, cut to fit. */
static void copy_text(char *dst, size_t size, const char *src)
{
    size_t len = strlen(src);
    len = len < size - 1 ? len : size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* One group of addr2line's output: "0x…", then function/file line pairs, the inlined ones
 * first: the last pair is the function itself. */
static int read_names(FILE *f)
{
    char line[1024], name[96] = "", where[1024] = "";
    int group = -1, expect_name = 1;
    for (;;) {
        char *got = fgets(line, sizeof line, f);
        if (!got || strncmp(line, "0x", 2) == 0) {
            if (group >= 0) {
                copy_text(fns[group].name, sizeof fns[group].name, name);
                core_file(where, fns[group].file, sizeof fns[group].file, &fns[group].counted);
            }
            if (!got)
                return group >= 0 ? 0 : -1;
            group++;
            expect_name = 1;
            if ((size_t)group >= n_fns)
                return -1;
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        if (expect_name)
            copy_text(name, sizeof name, line);
        else
            copy_text(where, sizeof where, line);
        expect_name = !expect_name;
    }
}

static int name_functions(void)
{
    for (size_t k = 0; k < n_calls; k++)
        if (find_fn(calls[k].fn) < 0) {
            if (n_fns == sizeof fns / sizeof fns[0])
                return -1;
            fns[n_fns++].fn = calls[k].fn;
        }
    char exe[512];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    uintptr_t bias = 0;
    dl_iterate_phdr(first_object, &bias);
    size_t size = 64 + strlen(exe) + n_fns * 20, used;
    char *cmd = malloc(size);
    if (!cmd)
        return -1;
    used = (size_t)snprintf(cmd, size, "addr2line -a -f -i -e '%s'", exe);
    for (size_t k = 0; k < n_fns; k++)
        used += (size_t)snprintf(cmd + used, size - used, " %#lx",
                                 (unsigned long)((uintptr_t)fns[k].fn - bias));
    FILE *f = popen(cmd, "r");
    free(cmd);
    if (!f)
        return -1;
    int rc = read_names(f);
    return pclose(f) == 0 ? rc : -1;
}

/* ---- the calls as frames ---------------------------------------------------------------- */

static int parent[MAX_EVENTS];   /* the frame that made the call, -1 for the top */
static int fn_of[MAX_EVENTS];    /* index in fns */
static int file_of[MAX_EVENTS];  /* index in fns of the frame giving its file: headers are
                                    their caller's; -1 outside src/core's .c files */
static int children[MAX_EVENTS];

static void build_frames(void)
{
    static int open[4096];
    for (size_t k = 0; k < n_calls; k++) {
        int d = calls[k].depth;
        parent[k] = d > 0 && d < 4096 ? open[d - 1] : -1;
        if (d < 4096)
            open[d] = (int)k;
        fn_of[k] = find_fn(calls[k].fn);
        file_of[k] = fns[fn_of[k]].counted ? fn_of[k] : parent[k] >= 0 ? file_of[parent[k]] : -1;
        if (parent[k] >= 0)
            children[parent[k]]++;
    }
}

static const char *file_name(int frame)
{
    return file_of[frame] >= 0 ? fns[file_of[frame]].file : "(outside src/core)";
}

/* The calls frame f made, in order (indices of calls), into out; how many. */
static size_t calls_of(int f, int *out)
{
    size_t n = 0;
    for (size_t k = (size_t)f + 1; k < n_calls && calls[k].depth > calls[f].depth; k++)
        if (parent[k] == f)
            out[n++] = (int)k;
    return n;
}

/* The shortest period of the functions of calls[seq[..n)] over the middle half of them. */
static size_t period_of(const int *seq, size_t n)
{
    for (size_t p = 1; p <= n / 4; p++) {
        int periodic = 1;
        for (size_t k = n / 4; periodic && k + p < 3 * n / 4; k++)
            periodic = fn_of[seq[k]] == fn_of[seq[k + p]];
        if (periodic)
            return p;
    }
    return 0;
}

/* A loop over the chunks: frame `loop`, whose `n` calls (loop_calls) repeat every `period`
 * calls, `turns` times. */
typedef struct chunk_loop {
    int loop;
    size_t n, period, turns;
} chunk_loop;

static int kids[MAX_EVENTS];
static int loop_calls[MAX_EVENTS];

/* The end of frame f's calls: the first call after it not under it. */
static size_t end_of(int f)
{
    size_t end = (size_t)f + 1;
    while (end < n_calls && calls[end].depth > calls[f].depth)
        end++;
    return end;
}

/* Frame f as a loop over the run's chunks: its calls repeat with a period, about once per
 * chunk (the ring's ramp and drain may take a few turns more or less); 0 when not. */
static int as_chunk_loop(int f, chunk_loop *l)
{
    size_t n = calls_of(f, kids);
    size_t p = n >= CHUNKS / 2 ? period_of(kids, n) : 0;
    if (p == 0 || n / p < CHUNKS / 2 || n / p > 2 * CHUNKS)
        return 0;
    *l = (chunk_loop){f, n, p, n / p};
    return 1;
}

/* Turn t of the loop: calls [*first, *last) of the recording. */
static void turn_bounds(const chunk_loop *l, size_t t, size_t *first, size_t *last)
{
    size_t from = t * l->period;
    *first = (size_t)loop_calls[from];
    *last = from + l->period < l->n ? (size_t)loop_calls[from + l->period] : end_of(l->loop);
}

/* The scheduler's loop: of the frames whose calls repeat once per chunk, the one whose
 * middle turn does the most (the loops that read the timeline back after the drain, say, do
 * far less per chunk than the host turn and the enqueueing). */
static int the_loop(chunk_loop *best)
{
    size_t best_size = 0;
    for (size_t k = 0; k < n_calls; k++) {
        chunk_loop l;
        if (children[k] < CHUNKS / 2 || !as_chunk_loop((int)k, &l))
            continue;
        size_t from = l.turns / 2 * l.period;
        size_t last = from + l.period < l.n ? (size_t)kids[from + l.period] : end_of(l.loop);
        if (last - (size_t)kids[from] > best_size) {
            best_size = last - (size_t)kids[from];
            *best = l;
        }
    }
    if (best_size > 0)
        calls_of(best->loop, loop_calls);
    return best_size > 0;
}

/* ---- the verdict ------------------------------------------------------------------------ */

typedef struct edge {
    const char *from, *to;
    char fns[512];
    unsigned calls;
} edge;

static edge edges[256];
static size_t n_edges;
static const char *files[64];
static size_t n_files;

static void note_file(const char *f)
{
    for (size_t k = 0; k < n_files; k++)
        if (strcmp(files[k], f) == 0)
            return;
    if (n_files < 64)
        files[n_files++] = f;
}

static void note_edge(const char *from, const char *to, const char *fn)
{
    edge *e = NULL;
    for (size_t k = 0; k < n_edges && !e; k++)
        if (strcmp(edges[k].from, from) == 0 && strcmp(edges[k].to, to) == 0)
            e = &edges[k];
    if (!e && n_edges < 256) {
        e = &edges[n_edges++];
        *e = (edge){from, to, "", 0};
    }
    if (!e)
        return;
    e->calls++;
    if (!strstr(e->fns, fn) && strlen(e->fns) + strlen(fn) + 3 < sizeof e->fns)
        strcat(strcat(e->fns, e->fns[0] ? ", " : ""), fn);
}

/* Whether the frame's file is on the stack above it with another file between. */
static int reentered(int frame)
{
    if (file_of[frame] < 0 || parent[frame] < 0 ||
        strcmp(file_name(parent[frame]), file_name(frame)) == 0)
        return 0;
    for (int up = parent[frame]; up >= 0; up = parent[up])
        if (file_of[up] >= 0 && strcmp(file_name(up), file_name(frame)) == 0)
            return 1;
    return 0;
}

static const fn_info *inlined[128]; /* header functions met: read by include, not entered */
static size_t n_inlined;

static void note_inlined(const fn_info *f)
{
    for (size_t k = 0; k < n_inlined; k++)
        if (strcmp(inlined[k]->name, f->name) == 0)
            return;
    if (n_inlined < 128)
        inlined[n_inlined++] = f;
}

/* The header functions met, by header. */
static void print_inlined(void)
{
    printf("read by include (header functions, not files entered):\n");
    for (size_t k = 0; k < n_inlined; k++) {
        size_t first = 0;
        while (strcmp(inlined[first]->file, inlined[k]->file) != 0)
            first++;
        if (first < k)
            continue; /* its header is printed already */
        printf("  %s:", inlined[k]->file);
        for (size_t j = k; j < n_inlined; j++)
            if (strcmp(inlined[j]->file, inlined[k]->file) == 0)
                printf(" %s", inlined[j]->name);
        printf("\n");
    }
}

/* Turn t's frames, and the loop's own file: the files entered, the calls across files, and
 * how many frames re-entered a file (printed when `say`). */
static int judge(const chunk_loop *l, size_t t, int say)
{
    int reentries = 0;
    size_t first, last;
    turn_bounds(l, t, &first, &last);
    n_files = n_edges = n_inlined = 0;
    note_file(file_name(l->loop));
    for (size_t k = first; k < last; k++) {
        if (fns[fn_of[k]].file[0] && !fns[fn_of[k]].counted)
            note_inlined(&fns[fn_of[k]]);
        if (file_of[k] < 0)
            continue;
        note_file(file_name((int)k));
        int up = parent[k];
        if (strcmp(file_name(up), file_name((int)k)) != 0)
            note_edge(file_name(up), file_name((int)k), fns[fn_of[k]].name);
        if (reentered((int)k)) {
            reentries++;
            if (say)
                printf("  re-entered: %s (%s) called from %s\n", file_name((int)k),
                       fns[fn_of[k]].name, file_name(up));
        }
    }
    return reentries;
}

static void print_way_to_loop(int loop)
{
    const char *way[64];
    size_t n = 0;
    for (int up = loop; up >= 0 && n < 64; up = parent[up])
        if (file_of[up] >= 0 && (n == 0 || strcmp(way[n - 1], file_name(up)) != 0))
            way[n++] = file_name(up);
    printf("the run's way to the loop (once per run):");
    for (size_t k = n; k > 0; k--)
        printf(" %s%s", way[k - 1], k > 1 ? " >" : "");
    printf("\n");
}

/* Every steady-state turn (the middle half: the ring full, no drain yet) judged; the one
 * entering the most files (the first such) printed. 0 when every turn passes. */
static int verdict(const chunk_loop *l, int watched)
{
    size_t worst = l->turns / 4, most = 0, fewest = SIZE_MAX;
    int reentries = 0;
    for (size_t t = l->turns / 4; t < 3 * l->turns / 4; t++) {
        reentries += judge(l, t, 0);
        if (n_files > most) {
            most = n_files;
            worst = t;
        }
        fewest = n_files < fewest ? n_files : fewest;
    }
    printf("\none steady-state chunk of a pageable run timed with the full timeline (HOST, %d "
           "chunks, depth %d%s), on the scheduler's thread:\n", CHUNKS, DEPTH,
           watched ? ", its live counters watched" : "");
    print_way_to_loop(l->loop);
    printf("the loop: %s (%s), %zu calls per turn, %zu turns; turns %zu..%zu judged, each "
           "entering %zu..%zu files; turn %zu shown:\n", fns[fn_of[l->loop]].name,
           file_name(l->loop), l->period, l->turns, l->turns / 4, 3 * l->turns / 4 - 1,
           fewest, most, worst);
    (void)judge(l, worst, 1);
    printf("calls into another file (caller > callee: functions, calls in the turn):\n");
    for (size_t k = 0; k < n_edges; k++)
        printf("  %s > %s: %s (%u)\n", edges[k].from, edges[k].to, edges[k].fns,
               edges[k].calls);
    print_inlined();
    printf("files of src/core entered: %zu (at most %d):", n_files, SP_PATH_MAX_FILES);
    for (size_t k = 0; k < n_files; k++)
        printf(" %s", files[k]);
    printf("\nre-entered on the way down, over the turns judged: %d (none allowed)\n",
           reentries);
    return most > SP_PATH_MAX_FILES || reentries > 0;
}

/* One run recorded and judged; 0 when it passes. */
static int check(int watched)
{
    n_calls = n_fns = 0;
    overflowed = 0;
    memset(children, 0, sizeof children);
    memset(fns, 0, sizeof fns);
    if (traced_run(watched) != 0)
        return 1;
    if (overflowed || n_calls == 0) {
        fprintf(stderr, "%s: the core's calls were not recorded (is it built with "
                "-finstrument-functions?)\n", overflowed ? "too many calls" : "no calls");
        return 1;
    }
    if (name_functions() != 0) {
        fprintf(stderr, "addr2line could not name the recorded functions (binutils; the core "
                "objects need -g)\n");
        return 1;
    }
    chunk_loop loop = {0};
    build_frames();
    if (!the_loop(&loop)) {
        fprintf(stderr, "no frame's calls repeat once per chunk: no loop over the %d chunks "
                "found\n", CHUNKS);
        return 1;
    }
    return verdict(&loop, watched);
}

int main(void)
{
    int failed = 0;
    for (int watched = 0; watched <= 1; watched++) {
        int bad = check(watched);
        printf("%s\n", bad ? "FAIL" : "OK");
        failed += bad;
    }
    printf("%d passed, %d failed, 0 skipped\n", 2 - failed, failed);
    return failed != 0;
}
