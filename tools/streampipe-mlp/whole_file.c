/* See whole_file.h. The reading and its refusals are src/util/read_file.c's, shared with the
 * library's model reader; the CLI adds its way of reporting them. */
#include <stdio.h>

#include "cli.h"
#include "read_file.h" /* src/util/: private, compiled into streampipe_mlp_static */
#include "whole_file.h"

/* Room for the reason with a long path in it. */
#define WHY_SIZE 8192

int cli_read_whole_file(const char *what, const char *path, size_t max_bytes,
                        unsigned char **bytes, size_t *size)
{
    char why[WHY_SIZE];
    if (sp_read_regular_file(what, path, max_bytes, bytes, size, why, sizeof why) != SP_READ_OK) {
        fprintf(stderr, "streampipe: %s\n", why);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}
