/* See model_file.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model_error.h"
#include "model/model_file.h"

/* The size from fstat, then exactly that many bytes; a file that grows meanwhile is an error
 * rather than silently cut. */
static sp_status read_exactly(FILE *f, const char *path, unsigned char **bytes, size_t *size,
                              char *err, size_t err_size)
{
    struct stat info;
    if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode))
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "'%s' is not a regular file", path);
    if (info.st_size < 0 || (unsigned long long)info.st_size > SP_MODEL_MAX_FILE_BYTES)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "'%s' has %lld bytes; model files over %zu bytes are refused", path,
                             (long long)info.st_size, SP_MODEL_MAX_FILE_BYTES);
    size_t n = (size_t)info.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (buf == NULL)
        return sp_model_fail(err, err_size, SP_ERR_OUT_OF_MEMORY,
                             "no memory to read the %zu bytes of '%s'", n, path);
    if (fread(buf, 1, n, f) != n || fgetc(f) != EOF) {
        free(buf);
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "reading '%s' failed or its size changed while reading", path);
    }
    *bytes = buf;
    *size = n;
    return SP_OK;
}

sp_status sp_model_read_file(const char *path, unsigned char **bytes, size_t *size, char *err,
                             size_t err_size)
{
    if (path == NULL || bytes == NULL || size == NULL)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_model_read_file: NULL argument");
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        char reason[128] = "unknown error";
        (void)strerror_r(errno, reason, sizeof reason); /* strerror is not thread-safe */
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT, "cannot open '%s': %s",
                             path, reason);
    }
    sp_status st = read_exactly(f, path, bytes, size, err, err_size);
    fclose(f);
    return st;
}
