/* streampipe: the command-line tool. main() only dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

static const cli_command commands[] = {
    {"bench", bench_main, "time pipelined vs serial streaming, verify every output, report"},
    {"probe", probe_main, "measure copy rates, pinning costs and per-operation overheads"},
    {"latency", latency_main, "small-request latency beside a streaming bulk pipeline"},
    {"infer", infer_main, "classify digits with an MLP streamed through the pipeline"},
    {"run", run_main, "stream a file of records through a stage chain into another file"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *out)
{
    fputs("usage: streampipe [--help | --version] <command> [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'streampipe <command> --help' describes a command's options.\n", out);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
        strcmp(first, "help") == 0) {
        print_usage(stdout);
        return finish_stdout(CLI_EXIT_OK);
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("streampipe %s\n", sp_version());
        return finish_stdout(CLI_EXIT_OK);
    }
    const cli_command *command = find_command(first);
    if (command == NULL) {
        if (first[0] == '-')
            cli_usage_error("unknown option '%s'", first);
        else
            cli_usage_error("unknown command '%s'", first);
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    /* The subcommand sees its own name as argv[0], as getopt expects. */
    return finish_stdout(command->run(argc - 1, argv + 1));
}
