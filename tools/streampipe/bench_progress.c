/* The progress line on stderr. On a terminal, one line is rewritten in place as runs finish
 * and erased at the end, so the screen keeps only the result. Anywhere else (a log file, a
 * pipe, --json, NO_PROGRESS set) carriage returns would only garble the text, so a plain line
 * follows each step instead. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* A longer line would wrap, and "\r" returns only to the start of its last row. */
#define LIVE_COLUMNS 79

void bench_progress_init(bench_progress *progress, int json)
{
    progress->live = !json && getenv("NO_PROGRESS") == NULL && isatty(STDERR_FILENO);
    progress->shown = 0;
    progress->panel = NULL;
}

/* The live panel shows the runs: it went over the line, which is not ours any more. */
static int muted(const bench_progress *progress) { return cli_live_flag_shown(progress->panel); }

void bench_progress_update(bench_progress *progress, const char *text)
{
    if (!progress->live || muted(progress))
        return;
    int columns = (int)strnlen(text, LIVE_COLUMNS);
    fprintf(stderr, "\r%.*s", columns, text);
    /* Blanks over whatever a longer earlier text left beyond this one. */
    if (columns < progress->shown)
        fprintf(stderr, "%*s", progress->shown - columns, "");
    if (columns > progress->shown)
        progress->shown = columns;
    fflush(stderr);
}

void bench_progress_note(bench_progress *progress, const char *text)
{
    if (!progress->live && !muted(progress))
        fprintf(stderr, "%s\n", text);
}

void bench_progress_clear(bench_progress *progress)
{
    if (muted(progress))
        progress->shown = 0;
    if (!progress->live || progress->shown == 0)
        return;
    fprintf(stderr, "\r%*s\r", progress->shown, "");
    progress->shown = 0;
    fflush(stderr);
}
