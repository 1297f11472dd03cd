/* Reading a whole model file into memory, with a size limit and clear reasons. */
#ifndef SP_MODEL_FILE_H
#define SP_MODEL_FILE_H

#include <stddef.h>

#include "streampipe.h"

/* Model files this library reads are small (the digits MLP is 340 KB); anything larger is
 * refused rather than read. */
#define SP_MODEL_MAX_FILE_BYTES ((size_t)256 << 20)

/* Reads all of `path` into a malloc'd buffer (*bytes, *size; free() it). Fails with
 * SP_ERR_INVALID_ARGUMENT when the file cannot be opened or read, is over the limit, or is not
 * a regular file (a FIFO, a device, a directory: refused at once, never waited on). */
sp_status sp_model_read_file(const char *path, unsigned char **bytes, size_t *size, char *err,
                             size_t err_size);

#endif /* SP_MODEL_FILE_H */
