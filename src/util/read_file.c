/* See read_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/read_file.h"

/* The file being read, for the reasons. */
typedef struct reading {
    const char *what;
    const char *path;
    char *why;
    size_t why_size;
} reading;

static sp_read_result fail(const reading *r, sp_read_result result, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Writes the reason and returns `result`, so that a failure reads `return fail(...)`. */
static sp_read_result fail(const reading *r, sp_read_result result, const char *fmt, ...)
{
    if (r->why != NULL && r->why_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->why, r->why_size, fmt, ap);
        va_end(ap);
    }
    return result;
}

static sp_read_result fail_errno(const reading *r, sp_read_result result, const char *doing,
                                 int code)
{
    char reason[128] = "unknown error";
    (void)strerror_r(code, reason, sizeof reason); /* strerror is not thread-safe */
    return fail(r, result, "%s the %s file '%s': %s", doing, r->what, r->path, reason);
}

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "of another kind";
}

static int clear_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

/* Opens without blocking: a plain open of a FIFO waits for a writer for ever, before any check
 * could run. O_NONBLOCK is cleared again once fstat has shown a regular file, for which it
 * means nothing anyway. On success *fd is open and *size is fstat's. */
static sp_read_result open_regular(const reading *r, size_t max_bytes, int *fd, size_t *size)
{
    *fd = open(r->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return fail_errno(r, SP_READ_CANNOT_OPEN, "cannot open", errno);
    struct stat info;
    sp_read_result result = SP_READ_OK;
    if (fstat(*fd, &info) != 0)
        result = fail_errno(r, SP_READ_FAILED, "cannot read", errno);
    else if (!S_ISREG(info.st_mode))
        result = fail(r, SP_READ_NOT_REGULAR, "the %s file '%s' is not a regular file (it is %s)",
                      r->what, r->path, kind_of(info.st_mode));
    else if (info.st_size < 0 || (unsigned long long)info.st_size > max_bytes)
        result = fail(r, SP_READ_TOO_BIG, "the %s file '%s' has %lld bytes; over %zu are refused",
                      r->what, r->path, (long long)info.st_size, max_bytes);
    else if (clear_nonblock(*fd) != 0)
        result = fail_errno(r, SP_READ_FAILED, "cannot read", errno);
    if (result != SP_READ_OK) {
        close(*fd);
        *fd = -1;
        return result;
    }
    *size = (size_t)info.st_size;
    return SP_READ_OK;
}

/* Reads up to n bytes, retrying after signals; returns the count, or -1 with errno set. */
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

/* Exactly the n bytes fstat gave, then one more read that must find the end: a file that
 * shrinks or grows meanwhile is an error rather than silently cut. */
static sp_read_result read_exactly(const reading *r, int fd, size_t n, unsigned char **bytes)
{
    unsigned char *buf = malloc(n ? n : 1);
    if (buf == NULL)
        return fail(r, SP_READ_NO_MEMORY, "no memory for the %zu bytes of the %s file '%s'", n,
                    r->what, r->path);
    unsigned char extra;
    ssize_t got = read_fully(fd, buf, n);
    ssize_t past = got >= 0 && (size_t)got == n ? read_fully(fd, &extra, 1) : 0;
    if (got < 0 || past < 0) {
        int code = errno;
        free(buf);
        return fail_errno(r, SP_READ_FAILED, "cannot read", code);
    }
    if ((size_t)got != n || past != 0) {
        free(buf);
        return fail(r, SP_READ_SIZE_CHANGED, "the %s file '%s' changed size while it was read",
                    r->what, r->path);
    }
    *bytes = buf;
    return SP_READ_OK;
}

sp_read_result sp_read_regular_file(const char *what, const char *path, size_t max_bytes,
                                    unsigned char **bytes, size_t *size, char *why,
                                    size_t why_size)
{
    const reading r = {what, path, why, why_size};
    int fd = -1;
    size_t n = 0;
    sp_read_result result = open_regular(&r, max_bytes, &fd, &n);
    if (result != SP_READ_OK)
        return result;
    result = read_exactly(&r, fd, n, bytes);
    close(fd);
    if (result == SP_READ_OK)
        *size = n;
    return result;
}
