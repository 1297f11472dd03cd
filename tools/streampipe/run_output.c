/* Where the output of `streampipe run` goes (run_files.h): a non-regular output written in
 * place, and the leftovers of killed runs removed from beside a regular one. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "run_files.h"

static const char *kind_name(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

static int refuse(const char *path, const char *why, mode_t mode)
{
    fprintf(stderr, "streampipe: run: the output '%s' is %s: %s\n", path, kind_name(mode), why);
    return CLI_EXIT_FAILURE;
}

/* How an open output is written: block devices (and regular files) take pwrite at any
 * offset; character devices, FIFOs and whatever stdout is are written in record order (a
 * tty or a pipe has no offsets, and stdout may be in append mode, where pwrite appends). */
static int set_up_in_place(run_files *f, int fd, const struct stat *st, int is_stdout)
{
    f->out_fd = fd;
    f->in_place = 1;
    f->to_stdout = is_stdout;
    f->positional = !is_stdout && S_ISBLK(st->st_mode);
    f->sync_output = S_ISBLK(st->st_mode) || S_ISREG(st->st_mode); /* the others can't */
    return CLI_EXIT_OK;
}

/* "-": a duplicate of stdout, so that closing the output leaves stdout to main. */
static int open_stdout(run_files *f)
{
    struct stat st;
    if (f->ranked) {
        fprintf(stderr, "streampipe: run: --output - under mpirun: the ranks write their "
                "ranges at their offsets, so the output must be a file\n");
        return CLI_EXIT_FAILURE;
    }
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "streampipe: run: cannot write stdout: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_EXIT_FAILURE;
    }
    return set_up_in_place(f, fd, &st, 1);
}

/* No O_CREAT, O_TRUNC or fallocate: the node stays what it is. A FIFO's open waits for a
 * reader, as any writer's does. */
static int open_node(run_files *f, const char *path, const struct stat *named)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "streampipe: cannot open the output '%s': %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_EXIT_FAILURE;
    }
    if ((st.st_mode & S_IFMT) != (named->st_mode & S_IFMT)) { /* replaced since the stat */
        close(fd);
        return refuse(path, "it changed while it was being opened", named->st_mode);
    }
    return set_up_in_place(f, fd, &st, 0);
}

int run_output_open_in_place(run_files *f, int *in_place)
{
    const char *path = f->output_path;
    struct stat st;
    *in_place = 0;
    if (strcmp(path, "-") == 0) {
        *in_place = 1;
        return open_stdout(f);
    }
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return CLI_EXIT_OK; /* a new name or a file: written beside it, then renamed */
    *in_place = 1;
    if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode))
        return refuse(path, "not written", st.st_mode);
    if (f->ranked)
        return refuse(path, "under mpirun the ranks write their ranges at their offsets, so "
                      "the output must be a regular file or a new name", st.st_mode);
    return open_node(f, path, &st);
}

/* ".BASE.partial-" and mkstemp's six letters and digits: this output's temporary names. */
static int is_partial_of(const char *entry, const char *base)
{
    size_t b = strlen(base);
    if (entry[0] != '.' || strncmp(entry + 1, base, b) != 0 ||
        strncmp(entry + 1 + b, ".partial-", 9) != 0)
        return 0;
    const char *x = entry + 1 + b + 9;
    for (int i = 0; i < 6; i++)
        if (!isalnum((unsigned char)x[i]))
            return 0;
    return x[6] == '\0';
}

/* Removed only while this process holds the lock a writer would hold, and only if the name
 * is still that file; EAGAIN or EACCES from the lock: a live run's, kept. */
static void remove_if_stale(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return;
    struct stat by_fd, by_name;
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET}; /* the whole file */
    if (fstat(fd, &by_fd) == 0 && S_ISREG(by_fd.st_mode) && fcntl(fd, F_SETLK, &lock) == 0 &&
        lstat(path, &by_name) == 0 && by_name.st_dev == by_fd.st_dev &&
        by_name.st_ino == by_fd.st_ino && unlink(path) == 0)
        fprintf(stderr, "streampipe: run: removed '%s', left by a run that was killed\n", path);
    close(fd);
}

void run_output_remove_stale(const char *output)
{
    char dir_buf[4096], path[4096 + 256];
    if (strlen(output) >= sizeof dir_buf)
        return;
    strcpy(dir_buf, output);
    const char *base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
    const char *dir = dirname(dir_buf);
    DIR *d = *base ? opendir(dir) : NULL;
    if (!d)
        return; /* creating the output beside it says why, if it cannot be */
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (is_partial_of(e->d_name, base) &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            remove_if_stale(path);
    }
    closedir(d);
}

int run_output_claim(int fd)
{
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    while (fcntl(fd, F_SETLKW, &lock) != 0)
        if (errno != EINTR)
            return 0; /* no locks on this file system: go on without */
    struct stat st; /* a cleanup that locked it first has unlinked it by now */
    return fstat(fd, &st) == 0 && st.st_nlink == 0;
}
