/*
 * The digits MLP's stages as a set: building them for a context (on CUDA: the weights on the
 * device and one cuBLASLt GEMM per hidden layer), handing them to pipelines, their errors.
 */
#include <stdlib.h>
#include <string.h>

#include "mlp/mlp_stages.h"

const char *sp_mlp_precision_name(sp_mlp_precision precision)
{
    switch (precision) {
    case SP_MLP_FP32: return "fp32";
    case SP_MLP_TF32: return "tf32";
    }
    return "?";
}

static void init_states(sp_mlp_stages *s)
{
    static const size_t layer_of_stage[SP_MLP_STAGES] = {0, 0, 1, 2};
    for (size_t i = 0; i < SP_MLP_STAGES; i++) {
        s->state[i].owner = s;
        s->state[i].id = (mlp_stage_id)i;
        s->state[i].layer = layer_of_stage[i];
    }
    sp_mlp_describe_stages(s);
}

#ifdef SP_HAVE_CUDA
static sp_status setup_cuda(sp_mlp_stages *s)
{
    char *err = s->error;
    const size_t err_size = sizeof s->error;
    sp_status st = sp_mlp_device_create(s->model, &s->device, err, err_size);
    const mlp_stage_id gemm_stages[] = {MLP_STAGE_FC1, MLP_STAGE_FC2};
    for (size_t i = 0; i < 2 && st == SP_OK; i++) {
        mlp_stage_state *state = &s->state[gemm_stages[i]];
        const sp_mlp_layer layer = sp_mlp_layer_at(s->model, state->layer);
        st = sp_mlp_gemm_create(sp_mlp_device_weight(s->device, state->layer),
                                sp_mlp_device_bias(s->device, state->layer), layer.inputs,
                                layer.outputs, s->precision == SP_MLP_TF32, &state->gemm, err,
                                err_size);
    }
    return st;
}
#endif

static sp_status check_arguments(sp_mlp_stages *s, const sp_context *ctx, const sp_mlp *model,
                                 sp_mlp_precision precision)
{
    char *err = s->error;
    const size_t err_size = sizeof s->error;
    if (ctx == NULL || model == NULL)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_stages_create: NULL %s", ctx == NULL ? "ctx" : "model");
    if (sp_context_backend(ctx) == SP_BACKEND_AUTO) /* what a context that failed reports */
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_stages_create: the context did not open: %s",
                             sp_context_last_error(ctx));
    if (!sp_mlp_loaded(model))
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_stages_create: the model did not load: %s",
                             sp_mlp_last_error(model));
    if (precision != SP_MLP_FP32 && precision != SP_MLP_TF32)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_stages_create: unknown precision %d", (int)precision);
    return SP_OK;
}

/* The handle comes first, so that a failure has stages to be the last error of. */
sp_status sp_mlp_stages_create(sp_context *ctx, const sp_mlp *model, sp_mlp_precision precision,
                               sp_mlp_stages **out)
{
    if (out == NULL)
        return SP_ERR_INVALID_ARGUMENT;
    sp_mlp_stages *s = *out = calloc(1, sizeof *s);
    if (s == NULL)
        return SP_ERR_OUT_OF_MEMORY;
    sp_status st = check_arguments(s, ctx, model, precision);
    if (st != SP_OK)
        return st;
    s->model = model;
    s->precision = precision;
    s->on_cuda = sp_context_backend(ctx) == SP_BACKEND_CUDA;
    init_states(s);
#ifdef SP_HAVE_CUDA
    if (s->on_cuda)
        st = setup_cuda(s);
#endif
    s->created = st == SP_OK;
    return st;
}

void sp_mlp_stages_destroy(sp_mlp_stages *s)
{
    if (s == NULL)
        return;
#ifdef SP_HAVE_CUDA
    for (size_t i = 0; i < SP_MLP_STAGES; i++)
        sp_mlp_gemm_destroy(s->state[i].gemm);
    sp_mlp_device_destroy(s->device);
#endif
    free(s);
}

const sp_stage *sp_mlp_stages_list(const sp_mlp_stages *s)
{
    return s != NULL && s->created ? s->list : NULL;
}

const char *sp_mlp_stages_last_error(const sp_mlp_stages *s)
{
    return s != NULL ? s->error : "no stages: out of memory when they were created, or NULL";
}
