/* Handing a command to streampipe-mlp, git-style (cli.h, cli_exec_mlp). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The folder of this process's executable, with '/' and the program's name after it: where
 * `cmake --build` and `cmake --install` put the two programs. 0, or -1 when /proc cannot say
 * (then PATH alone is searched). */
static int beside_self(char *path, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", path, size - 1);
    char *slash = NULL;
    if (n > 0 && (size_t)n < size - 1) {
        path[n] = '\0';
        slash = strrchr(path, '/');
    }
    if (slash == NULL || (size_t)(slash + 1 - path) + sizeof CLI_MLP_PROGRAM > size) {
        path[0] = '\0';
        return -1;
    }
    memcpy(slash + 1, CLI_MLP_PROGRAM, sizeof CLI_MLP_PROGRAM);
    return 0;
}

int cli_exec_mlp(int argc, char **argv)
{
    /* argc + 2 pointers: the program's name, the command and its arguments, NULL */
    char **args = argc >= 1 && (size_t)argc < SIZE_MAX / sizeof *args - 2
                      ? calloc((size_t)argc + 2, sizeof *args) : NULL;
    if (args == NULL)
        return cli_report_failure("starting " CLI_MLP_PROGRAM, SP_ERR_OUT_OF_MEMORY, "");
    args[0] = CLI_MLP_PROGRAM;
    memcpy(args + 1, argv, (size_t)argc * sizeof *args);
    fflush(NULL); /* nothing buffered here may be lost, or written twice */
    char beside[PATH_MAX] = "";
    int beside_errno = ENOENT;
    if (beside_self(beside, sizeof beside) == 0) {
        execv(beside, args);
        beside_errno = errno;
    }
    if (beside_errno == ENOENT)
        execvp(CLI_MLP_PROGRAM, args); /* returns only on failure */
    int path_errno = beside_errno == ENOENT ? errno : 0;
    free(args);
    if (beside_errno != ENOENT) /* there, but not runnable: say so, do not run another */
        fprintf(stderr, "streampipe: %s: this needs '%s', which cannot be run: %s\n", argv[0],
                beside, strerror(beside_errno));
    else
        fprintf(stderr, "streampipe: %s: this needs the program %s (built and installed with "
                "the MLP library: target streampipe_mlp_cli, which a plain `cmake --build` "
                "makes), which is neither beside this program ('%s') nor on PATH (%s)\n",
                argv[0], CLI_MLP_PROGRAM, beside[0] ? beside : "/proc/self/exe unreadable",
                strerror(path_errno));
    return CLI_EXIT_FAILURE;
}
