/* The dispatch both programs share (`streampipe`, tools/streampipe/main.c, and
 * `streampipe-mlp`, tools/streampipe-mlp/main.c): --help, --version, a command by name. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_usage(const cli_program *program, FILE *out)
{
    fprintf(out, "usage: %s [--help | --version] <command> [options]\n\n", program->name);
    if (program->about)
        fprintf(out, "%s\n\n", program->about);
    fputs("commands:\n", out);
    for (size_t i = 0; i < program->n_commands; i++)
        fprintf(out, "  %-8s %s\n", program->commands[i].name, program->commands[i].summary);
    fprintf(out, "\n'%s <command> --help' describes a command's options.\n", program->name);
}

static const cli_command *find_command(const cli_program *program, const char *name)
{
    for (size_t i = 0; i < program->n_commands; i++)
        if (strcmp(program->commands[i].name, name) == 0)
            return &program->commands[i];
    return NULL;
}

/* A result that did not reach stdout (a full disk, a closed pipe) is a failure, for every
 * command and for --help and --version alike. fflush alone misses a write that failed earlier:
 * a text longer than stdout's buffer is written (and lost) while it is printed, which leaves
 * only the error flag set and nothing for fflush to fail on. */
static int finish_stdout(int rc)
{
    if (rc == CLI_EXIT_HELP)
        rc = CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("streampipe: writing the result to stdout failed\n", stderr);
        return CLI_EXIT_FAILURE;
    }
    return rc;
}

int cli_main(const cli_program *program, int argc, char **argv)
{
    if (argc < 2) {
        print_usage(program, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
        strcmp(first, "help") == 0) {
        print_usage(program, stdout);
        return finish_stdout(CLI_EXIT_OK);
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("%s %s\n", program->name, sp_version());
        return finish_stdout(CLI_EXIT_OK);
    }
    const cli_command *command = find_command(program, first);
    if (command == NULL) {
        if (first[0] == '-')
            cli_usage_error("unknown option '%s'", first);
        else
            cli_usage_error("unknown command '%s'", first);
        print_usage(program, stderr);
        return CLI_EXIT_USAGE;
    }
    /* The subcommand sees its own name as argv[0], as getopt expects. */
    return finish_stdout(command->run(argc - 1, argv + 1));
}
