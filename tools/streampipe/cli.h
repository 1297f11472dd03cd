/* What the CLI's files share: exit codes, subcommand entry points and their dispatch, error
 * printing. Compiled once into streampipe_cli_common (tools/CMakeLists.txt), which both
 * programs link: `streampipe` and, beside the MLP library, `streampipe-mlp`. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stdio.h>

#include "streampipe.h"

/* sysexits.h values, spelled out so that we depend on nothing outside C11 and POSIX. */
enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILURE = 1, /* a runtime failure or a wrong answer */
    CLI_EXIT_USAGE = 64,  /* EX_USAGE: unknown command, bad option or value */
    CLI_EXIT_HELP = -1    /* not an exit status: --help was printed, so stop; main exits 0 */
};

/* The commands: `streampipe bench [options]` and so on, argv[0] the command's name. Each
 * returns a cli_exit code. infer_main is streampipe-mlp's (tools/streampipe-mlp/). */
int bench_main(int argc, char **argv);
int infer_main(int argc, char **argv);
int latency_main(int argc, char **argv);
int probe_main(int argc, char **argv);
int run_main(int argc, char **argv);

/* A program's commands, and the dispatch to them (cli_main.c): `PROGRAM --help` lists them,
 * `PROGRAM --version`, `PROGRAM COMMAND ARGS...` runs COMMAND's function with argv[0] its name,
 * stdout flushed and checked. Returns the exit status. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;
typedef struct cli_program {
    const char *name;  /* as it is run and installed */
    const char *about; /* a paragraph after the usage line, or NULL */
    const cli_command *commands;
    size_t n_commands;
} cli_program;
int cli_main(const cli_program *program, int argc, char **argv);

/* The program beside the MLP library (tools/streampipe-mlp/), which does `streampipe infer`
 * and `streampipe run` with an mlp stage, so that `streampipe` links neither cJSON nor
 * cuBLASLt. */
#define CLI_MLP_PROGRAM "streampipe-mlp"
#define CLI_INFER_SUMMARY "classify digits with an MLP streamed through the pipeline"
/* Runs `streampipe-mlp ARGV...` (argv[0] the command, "infer" or "run") in place of this
 * process, as git runs git-COMMAND: the one beside this program's executable
 * (/proc/self/exe's folder), else the one PATH finds. Returns only when neither can be run:
 * CLI_EXIT_FAILURE, with a message naming what is missing and where it was looked for. */
int cli_exec_mlp(int argc, char **argv);

/* Prints "streampipe: <what>: SP_ERR_x (message): <detail>" on stderr and returns
 * CLI_EXIT_FAILURE. `detail` is the library's last-error text and may be "" or NULL. */
int cli_report_failure(const char *what, sp_status status, const char *detail);

/* sp_context_create, or the failure reported as above ("opening the cuda backend"). */
int cli_open_context(sp_backend_kind backend, int device, sp_context **out);

/* sp_pipeline_create and sp_host_alloc, a failure reported as above with `what` and the
 * context's last error. */
int cli_create_pipeline(sp_context *ctx, const sp_pipeline_config *config, const char *what,
                        sp_pipeline **out);
int cli_host_alloc(sp_context *ctx, size_t bytes, const char *what, void **out);

/* Prints "streampipe: <message>" on stderr and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif /* SP_CLI_H */
