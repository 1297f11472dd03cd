/* Reading a whole input file into memory for the CLI, refusing up front what cannot work
 * (src/util/read_file.h does the reading; this reports in the CLI's style). */
#ifndef SP_CLI_WHOLE_FILE_H
#define SP_CLI_WHOLE_FILE_H

#include <stddef.h>

/* Reads all of `path` into a malloc'd buffer (*bytes, *size; free() it). `what` names the
 * file in messages ("input", "labels"). Refused at once, before a byte is read: a path that
 * is not a regular file (a FIFO would block until a writer comes, /dev/zero never ends), a
 * file over max_bytes, and one there is no memory for; each with its size. Prints why on
 * stderr and returns CLI_EXIT_FAILURE; CLI_EXIT_OK when the whole file was read. */
int cli_read_whole_file(const char *what, const char *path, size_t max_bytes,
                        unsigned char **bytes, size_t *size);

#endif /* SP_CLI_WHOLE_FILE_H */
