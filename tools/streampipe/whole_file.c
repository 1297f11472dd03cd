/* See whole_file.h. The library's model reader does the same for model files; the CLI cannot
 * reach that internal function, and reports in its own style. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "whole_file.h"

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "of another kind";
}

static int fail_errno(const char *doing, const char *what, const char *path)
{
    fprintf(stderr, "streampipe: %s the %s file '%s': %s\n", doing, what, path, strerror(errno));
    return CLI_EXIT_FAILURE;
}

static int clear_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

/* Opened with O_NONBLOCK, because a plain open of a FIFO waits for a writer before any check
 * can run; cleared again once fstat has shown a regular file. */
static int open_regular(const char *what, const char *path, size_t max_bytes, int *fd,
                        size_t *size)
{
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return fail_errno("cannot open", what, path);
    struct stat info;
    int rc = CLI_EXIT_OK;
    if (fstat(*fd, &info) != 0 || clear_nonblock(*fd) != 0) {
        rc = fail_errno("cannot read", what, path);
    } else if (!S_ISREG(info.st_mode)) {
        fprintf(stderr, "streampipe: the %s file '%s' is not a regular file (it is %s)\n",
                what, path, kind_of(info.st_mode));
        rc = CLI_EXIT_FAILURE;
    } else if (info.st_size < 0 || (unsigned long long)info.st_size > max_bytes) {
        fprintf(stderr, "streampipe: the %s file '%s' has %lld bytes; over %zu are refused\n",
                what, path, (long long)info.st_size, max_bytes);
        rc = CLI_EXIT_FAILURE;
    }
    if (rc != CLI_EXIT_OK) {
        close(*fd);
        *fd = -1;
        return rc;
    }
    *size = (size_t)info.st_size;
    return CLI_EXIT_OK;
}

/* Up to n bytes, retrying after signals: the count, or -1 with errno set. */
static ssize_t read_fully(int fd, unsigned char *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = read(fd, buf + done, n - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (ssize_t)done;
}

int cli_read_whole_file(const char *what, const char *path, size_t max_bytes,
                        unsigned char **bytes, size_t *size)
{
    int fd = -1;
    size_t n = 0;
    int rc = open_regular(what, path, max_bytes, &fd, &n);
    if (rc != CLI_EXIT_OK)
        return rc;
    unsigned char *buf = malloc(n ? n : 1);
    if (buf == NULL) {
        close(fd);
        fprintf(stderr, "streampipe: no memory for the %zu bytes of the %s file '%s'\n", n,
                what, path);
        return CLI_EXIT_FAILURE;
    }
    /* exactly the size fstat gave: a file that changes meanwhile is an error, not cut */
    unsigned char extra;
    ssize_t got = read_fully(fd, buf, n);
    if (got < 0)
        rc = fail_errno("reading", what, path);
    else if ((size_t)got != n || read_fully(fd, &extra, 1) != 0) {
        fprintf(stderr, "streampipe: the %s file '%s' changed size while it was read\n", what,
                path);
        rc = CLI_EXIT_FAILURE;
    }
    close(fd);
    if (rc != CLI_EXIT_OK) {
        free(buf);
        return rc;
    }
    *bytes = buf;
    *size = n;
    return CLI_EXIT_OK;
}
