/* --trace and --svg. The files are opened before the runs, so that a path that cannot be
 * written fails at once instead of after minutes of timing, and written after the runs from
 * the report of the run they show, which keeps its timeline (keep_timeline, bench_timed.c). A file that could not be written completely is
 * removed: a truncated trace would only mislead whoever opens it. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "cli.h"
#include "figures.h"
#include "streampipe_trace.h"

static const char *const kind_names[BENCH_EXPORT_KINDS] = {"trace", "svg"};

static int report_file_error(const char *action, bench_export_kind kind, const char *path,
                             int error)
{
    fprintf(stderr, "streampipe: %s the %s file '%s' failed: %s\n", action, kind_names[kind],
            path, strerror(error));
    return CLI_EXIT_FAILURE;
}

/* Only a regular file may be removed after a failure: a path like /dev/null or a FIFO names
 * something that is not ours. */
static int is_regular_file(FILE *file)
{
    struct stat info;
    return fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
}

int bench_exports_open(const bench_plan *plan, bench_exports *exports)
{
    memset(exports, 0, sizeof *exports);
    exports->path[BENCH_EXPORT_TRACE] = plan->trace_path;
    exports->path[BENCH_EXPORT_SVG] = plan->svg_path;
    for (int k = 0; k < BENCH_EXPORT_KINDS; k++) {
        if (exports->path[k] == NULL)
            continue;
        exports->file[k] = fopen(exports->path[k], "w");
        if (exports->file[k] == NULL) {
            int rc = report_file_error("opening", (bench_export_kind)k, exports->path[k], errno);
            bench_exports_abandon(exports);
            return rc;
        }
        exports->opened[k] = is_regular_file(exports->file[k]);
    }
    return CLI_EXIT_OK;
}

int bench_exports_wanted(const bench_exports *exports)
{
    return exports->path[BENCH_EXPORT_TRACE] != NULL || exports->path[BENCH_EXPORT_SVG] != NULL;
}

/* Writes one open file and closes it; the file stays unmarked (so is removed) on failure. */
static int write_and_close(bench_exports *exports, bench_export_kind kind,
                           const sp_report *report)
{
    FILE *file = exports->file[kind];
    sp_status status = kind == BENCH_EXPORT_TRACE ? sp_report_write_trace(report, file)
                                                  : sp_report_write_svg(report, file);
    exports->file[kind] = NULL;
    if (status != SP_OK) {
        char what[512];
        snprintf(what, sizeof what, "writing the %s file '%.400s'", kind_names[kind],
                 exports->path[kind]);
        fclose(file);
        return cli_report_failure(what, status, sp_report_last_error());
    }
    /* Buffered bytes reach the file only here: a full disk shows up at fclose. */
    if (fclose(file) != 0)
        return report_file_error("closing", kind, exports->path[kind], errno);
    exports->written[kind] = 1;
    return CLI_EXIT_OK;
}

int bench_exports_write(bench_exports *exports, const sp_report *report, const char *describes)
{
    snprintf(exports->describes, sizeof exports->describes, "%s", describes);
    for (int k = 0; k < BENCH_EXPORT_KINDS; k++) {
        if (exports->file[k] == NULL)
            continue;
        int rc = write_and_close(exports, (bench_export_kind)k, report);
        if (rc != CLI_EXIT_OK) {
            bench_exports_abandon(exports);
            return rc;
        }
    }
    return CLI_EXIT_OK;
}

void bench_exports_abandon(bench_exports *exports)
{
    for (int k = 0; k < BENCH_EXPORT_KINDS; k++) {
        if (exports->file[k] != NULL)
            fclose(exports->file[k]); /* being removed: its errors no longer matter */
        exports->file[k] = NULL;
        if (exports->opened[k] && !exports->written[k])
            remove(exports->path[k]);
        exports->opened[k] = 0;
    }
}

void bench_exports_figures(fig_out *o, const bench_exports *exports)
{
    static const char *const about[BENCH_EXPORT_KINDS] = {
        "%s (Chrome trace JSON: ui.perfetto.dev, chrome://tracing)",
        "%s (timeline with the run's figures)"};
    if (!bench_exports_wanted(exports))
        return;
    fig_text(o, NULL, "\n");
    fig_group(o, "files", "files:");
    for (int k = 0; k < BENCH_EXPORT_KINDS; k++)
        if (exports->written[k])
            fig_str(o, kind_names[k], kind_names[k], about[k], exports->path[k]);
    fig_str(o, "describes", "showing", "%s", exports->describes);
    fig_group_end(o);
}
