/* `streampipe`'s stand-in for the mlp stage's model (run_cmd.h): this program does not link
 * the MLP library; run_main hands a run with an mlp stage to streampipe-mlp instead. */
#include "cli.h"
#include "run_cmd.h"

const int run_mlp_linked = 0;

int run_mlp_build(run_stage_list *list, sp_context *ctx)
{
    (void)ctx;
    return cli_usage_error("--stages: '%s': this program has no MLP; %s runs it",
                           list->mlp_path, CLI_MLP_PROGRAM);
}

void run_free_stages(run_stage_list *list)
{
    (void)list;
}
