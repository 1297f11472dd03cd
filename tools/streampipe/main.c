/* streampipe: the command-line tool. main() only dispatches to a subcommand; `infer` is
 * streampipe-mlp's (the program beside the MLP library), which cli_exec_mlp runs, so that
 * this program links neither cJSON nor cuBLASLt. */
#include "cli.h"

static const cli_command commands[] = {
    {"bench", bench_main, "time pipelined vs serial streaming, verify every output, report"},
    {"probe", probe_main, "measure copy rates, pinning costs and per-operation overheads"},
    {"latency", latency_main, "small-request latency beside a streaming bulk pipeline"},
    {"infer", cli_exec_mlp, CLI_INFER_SUMMARY},
    {"run", run_main, "stream a file of records through a stage chain into another file"},
};

int main(int argc, char **argv)
{
    static const cli_program program = {"streampipe", NULL, commands,
                                        sizeof commands / sizeof commands[0]};
    return cli_main(&program, argc, argv);
}
