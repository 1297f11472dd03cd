/* Reading a whole regular file into memory, refusing up front what cannot work: one reader for
 * the model files of libstreampipe_mlp (sp_model_read_file) and streampipe-mlp's input and labels
 * files (cli_read_whole_file). Private: compiled into libstreampipe_mlp, declared in no public header.
 * It never prints and never exits; the reason goes into the caller's buffer. */
#ifndef SP_UTIL_READ_FILE_H
#define SP_UTIL_READ_FILE_H

#include <stddef.h>

/* What went wrong, for the caller to map to its own status (no memory apart from the rest). */
typedef enum sp_read_result {
    SP_READ_OK = 0,
    SP_READ_CANNOT_OPEN,  /* open failed: missing, no permission, ... */
    SP_READ_NOT_REGULAR,  /* a directory, a FIFO, a device, a socket */
    SP_READ_TOO_BIG,      /* over max_bytes */
    SP_READ_NO_MEMORY,    /* no buffer for the file's size */
    SP_READ_FAILED,       /* fstat, fcntl or read failed */
    SP_READ_SIZE_CHANGED, /* the file shrank or grew while it was read */
} sp_read_result;

/* Reads all of `path` into a malloc'd buffer (*bytes, *size; free() it; a 0-byte file gives a
 * buffer too). Refused before a byte is read: a path that is not a regular file (a FIFO would
 * block until a writer comes, /dev/zero never ends) and a file over max_bytes. Exactly the
 * size fstat gave is read: a file that changes meanwhile fails rather than being cut. `what`
 * names the file in the reason ("model" gives "the model file 'PATH' ..."). On failure the
 * reason is written into why[0..why_size) (always terminated; nothing when why is NULL or
 * why_size 0) and *bytes and *size are left as they were. Thread-safe. */
sp_read_result sp_read_regular_file(const char *what, const char *path, size_t max_bytes,
                                    unsigned char **bytes, size_t *size, char *why,
                                    size_t why_size);

#endif /* SP_UTIL_READ_FILE_H */
