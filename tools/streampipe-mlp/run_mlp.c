/* The mlp stage of `streampipe run --stages mlp:MODEL[:fp32|tf32]` (run_cmd.h): the model
 * loaded and its stages built on the run's context. Here, beside the MLP library, and not in
 * `streampipe`, which then links neither cJSON nor cuBLASLt. */
#include "cli.h"
#include "run_cmd.h"

const int run_mlp_linked = 1;

int run_mlp_build(run_stage_list *list, sp_context *ctx)
{
    sp_status st = sp_mlp_load_file(list->mlp_path, &list->model);
    if (st != SP_OK) {
        int rc = cli_report_failure("loading the model", st, sp_mlp_last_error(list->model));
        run_free_stages(list);
        return rc;
    }
    st = sp_mlp_stages_create(ctx, list->model, list->mlp_precision, &list->mlp);
    if (st != SP_OK) {
        int rc = cli_report_failure("building the model's stages", st,
                                    sp_mlp_stages_last_error(list->mlp));
        run_free_stages(list);
        return rc;
    }
    const sp_stage *built = sp_mlp_stages_list(list->mlp);
    for (size_t k = 0; k < SP_MLP_STAGES; k++)
        list->stages[list->mlp_at + k] = built[k];
    list->out_record_bytes = built[SP_MLP_STAGES - 1].out_record_bytes;
    return CLI_EXIT_OK;
}

void run_free_stages(run_stage_list *list)
{
    sp_mlp_stages_destroy(list->mlp); /* after the pipeline, before the context */
    sp_mlp_free(list->model);
    list->mlp = NULL;
    list->model = NULL;
}
