/* See model_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlp/model/model_error.h"
#include "mlp/model/model_file.h"

static sp_status fail_errno(char *err, size_t err_size, const char *doing, const char *path,
                            int code)
{
    char reason[128] = "unknown error";
    (void)strerror_r(code, reason, sizeof reason); /* strerror is not thread-safe */
    return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT, "%s '%s': %s", doing, path,
                         reason);
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
 * means nothing anyway. */
static sp_status open_regular(const char *path, int *fd, size_t *size, char *err,
                              size_t err_size)
{
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return fail_errno(err, err_size, "cannot open", path, errno);
    struct stat info;
    sp_status st = SP_OK;
    if (fstat(*fd, &info) != 0)
        st = fail_errno(err, err_size, "cannot stat", path, errno);
    else if (!S_ISREG(info.st_mode))
        st = sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                           "'%s' is not a regular file (it is %s)", path, kind_of(info.st_mode));
    else if (info.st_size < 0 || (unsigned long long)info.st_size > SP_MODEL_MAX_FILE_BYTES)
        st = sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                           "'%s' has %lld bytes; model files over %zu bytes are refused", path,
                           (long long)info.st_size, SP_MODEL_MAX_FILE_BYTES);
    else if (clear_nonblock(*fd) != 0)
        st = fail_errno(err, err_size, "cannot read", path, errno);
    if (st != SP_OK) {
        close(*fd);
        *fd = -1;
        return st;
    }
    *size = (size_t)info.st_size;
    return SP_OK;
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

/* Exactly the size fstat gave; a file that shrinks or grows meanwhile is an error rather than
 * silently cut. */
static sp_status read_exactly(int fd, const char *path, size_t n, unsigned char **bytes,
                              char *err, size_t err_size)
{
    unsigned char *buf = malloc(n ? n : 1);
    if (buf == NULL)
        return sp_model_fail(err, err_size, SP_ERR_OUT_OF_MEMORY,
                             "no memory to read the %zu bytes of '%s'", n, path);
    unsigned char extra;
    ssize_t got = read_fully(fd, buf, n);
    if (got < 0 || (size_t)got != n || read_fully(fd, &extra, 1) != 0) {
        int code = errno;
        free(buf);
        if (got < 0)
            return fail_errno(err, err_size, "reading", path, code);
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "reading '%s' failed or its size changed while reading", path);
    }
    *bytes = buf;
    return SP_OK;
}

sp_status sp_model_read_file(const char *path, unsigned char **bytes, size_t *size, char *err,
                             size_t err_size)
{
    if (path == NULL || bytes == NULL || size == NULL)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_model_read_file: NULL argument");
    int fd = -1;
    size_t n = 0;
    sp_status st = open_regular(path, &fd, &n, err, err_size);
    if (st != SP_OK)
        return st;
    st = read_exactly(fd, path, n, bytes, err, err_size);
    close(fd);
    if (st == SP_OK)
        *size = n;
    return st;
}
