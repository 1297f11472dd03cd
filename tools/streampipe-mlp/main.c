/* streampipe-mlp: the commands that use the digits MLP, beside its library (cJSON for model
 * files, cuBLASLt on CUDA), so that `streampipe` links neither. `streampipe infer ...` and
 * `streampipe run --stages mlp:...` come here (cli_exec_mlp); run is the same command as
 * `streampipe run`, from the same code (streampipe_cli_common), with the mlp stage built in. */
#include "cli.h"

static const cli_command commands[] = {
    {"infer", infer_main, CLI_INFER_SUMMARY},
    {"run", run_main, "`streampipe run`, for a stage chain that starts with an mlp stage"},
};

int main(int argc, char **argv)
{
    static const cli_program program = {
        CLI_MLP_PROGRAM,
        "The digits MLP's commands, beside its library; `streampipe infer` and `streampipe run\n"
        "--stages mlp:...` run this program, so their options and outputs are those commands'.",
        commands, sizeof commands / sizeof commands[0]};
    return cli_main(&program, argc, argv);
}
