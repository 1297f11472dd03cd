/* The ranks' journals under mpirun (run_rank_journal.h): their names, the list a killed job
 * left, and each rank's share of what is still to run. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_rank_journal.h"

/* OUTPUT's folder into dir (cap bytes) and its last component: 0, or -1 when too long. */
static int split_output(const char *output, char *dir, size_t cap, const char **base)
{
    const char *slash = strrchr(output, '/');
    *base = slash ? slash + 1 : output;
    size_t len = !slash ? 1 : slash == output ? 1 : (size_t)(slash - output);
    if (len >= cap)
        return -1;
    memcpy(dir, slash ? output : ".", len);
    dir[len] = '\0';
    return 0;
}

int rank_journal_name(char *name, size_t cap, const char *output, const char *token, int rank,
                      int size)
{
    char dir[4096];
    const char *base;
    if (split_output(output, dir, sizeof dir, &base) != 0)
        return -1;
    int n = snprintf(name, cap, ".%s%s%d-of-%d.%s", base, RANK_JOURNAL_MARK, rank, size, token);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int rank_journal_path(char *path, size_t cap, const char *output, const char *token, int rank,
                      int size)
{
    char dir[4096], name[4096];
    const char *base;
    if (split_output(output, dir, sizeof dir, &base) != 0 ||
        rank_journal_name(name, sizeof name, output, token, rank, size) != 0)
        return -1;
    int n = snprintf(path, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int rank_journals_found(const char *output, int remove, char *list, size_t cap)
{
    char dir[4096], prefix[4200];
    const char *base;
    if (split_output(output, dir, sizeof dir, &base) != 0)
        return -1;
    snprintf(prefix, sizeof prefix, ".%s%s", base, RANK_JOURNAL_MARK);
    size_t at = 0, plen = strlen(prefix);
    list[0] = '\0';
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* the open of the output says why, if it cannot be made */
    int rc = 0;
    for (struct dirent *e = readdir(d); e && rc == 0; e = readdir(d)) {
        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        char path[8400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove) {
            unlink(path); /* a fresh start: the killed job's records describe nothing kept */
            continue;
        }
        size_t len = strlen(path);
        if (at + len + 2 > cap)
            rc = -1;
        else {
            memcpy(list + at, path, len);
            list[at + len] = '\n';
            at += len + 1;
            list[at] = '\0';
        }
    }
    closedir(d);
    return rc;
}

size_t rank_journals_split(char *list, const char **paths, size_t most)
{
    size_t n = 0;
    for (char *line = list; *line && n + 1 < most;) {
        char *end = strchr(line, '\n');
        if (!end)
            break;
        *end = '\0';
        paths[n++] = line;
        line = end + 1;
    }
    paths[n] = NULL;
    return n;
}

/* Records [lo, hi) of the records still to do, counted in the order of the input, as ranges
 * of the input. */
static size_t todo_slice(const sp_file_io *io, size_t lo, size_t hi, rank_range *out,
                         size_t most)
{
    size_t from = 0, seen = 0, n = 0, first, count;
    while (seen < hi && n < most && sp_file_io_todo_from(io, from, &first, &count)) {
        size_t a = seen, b = seen + count; /* this gap holds todo records [a, b) */
        size_t take_lo = lo > a ? lo : a, take_hi = hi < b ? hi : b;
        if (take_lo < take_hi)
            out[n++] = (rank_range){first + (take_lo - a), take_hi - take_lo};
        seen = b;
        from = first + count;
    }
    return n;
}

size_t rank_share(const sp_file_io *io, size_t to_do, int rank, int size, rank_range *out,
                  size_t most)
{
    size_t r = (size_t)rank, ranks = (size_t)size;
    size_t base = to_do / ranks, extra = to_do % ranks;
    size_t lo = base * r + (r < extra ? r : extra), hi = lo + base + (r < extra);
    return lo < hi ? todo_slice(io, lo, hi, out, most) : 0;
}
