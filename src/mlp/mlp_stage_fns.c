/*
 * The digits MLP's four stage functions, per backend. HOST computes in place of the call
 * (mlp_host.c); CUDA enqueues on chunk->stream and returns (the .cu launchers). A failing
 * stage says why with sp_chunk_fail, as a user's stage would: the run's error then names the
 * stage, the chunk and the cause.
 */
#include <stdint.h>

#include "mlp/mlp_host.h"
#include "mlp/mlp_stages.h"

static int chunk_ok(const sp_chunk *chunk, const mlp_stage_state *state)
{
    if (chunk != NULL && state != NULL && (chunk->records == 0 || (chunk->in && chunk->out)))
        return 1;
    if (chunk != NULL)
        (void)sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "NULL %s",
                            state == NULL ? "stage state" : "chunk buffer");
    return 0;
}


static sp_mlp_layer layer_of(const mlp_stage_state *state)
{
    return sp_mlp_layer_at(state->owner->model, state->layer);
}

/* ---- HOST ---------------------------------------------------------------------------------- */

static sp_status preprocess_host(const sp_chunk *chunk, void *user)
{
    if (!chunk_ok(chunk, user))
        return SP_ERR_INVALID_ARGUMENT;
    sp_mlp_preprocess_host(chunk->in, chunk->out, chunk->records);
    return SP_OK;
}

static sp_status dense_host(const sp_chunk *chunk, void *user)
{
    if (!chunk_ok(chunk, user))
        return SP_ERR_INVALID_ARGUMENT;
    const sp_mlp_layer layer = layer_of(user);
    sp_mlp_dense_relu_host(&layer, chunk->in, chunk->out, chunk->records);
    return SP_OK;
}

static sp_status head_host(const sp_chunk *chunk, void *user)
{
    if (!chunk_ok(chunk, user))
        return SP_ERR_INVALID_ARGUMENT;
    const sp_mlp_layer layer = layer_of(user);
    sp_mlp_head_host(&layer, chunk->in, chunk->out, chunk->records);
    return SP_OK;
}

/* ---- CUDA ---------------------------------------------------------------------------------- */

#ifdef SP_HAVE_CUDA
/* A launcher's status, its reason (in `why`) handed to the run through sp_chunk_fail. */
static sp_status launched(const sp_chunk *chunk, sp_status status, const char *why)
{
    return status == SP_OK ? SP_OK : sp_chunk_fail(chunk, status, "%s", why);
}

static sp_status preprocess_cuda(const sp_chunk *chunk, void *user)
{
    mlp_stage_state *state = user;
    if (!chunk_ok(chunk, state))
        return SP_ERR_INVALID_ARGUMENT;
    char why[SP_MLP_ERROR_SIZE];
    sp_status st = sp_mlp_preprocess_enqueue(chunk->in, chunk->out, chunk->records,
                                             sp_mlp_device_sm_count(state->owner->device),
                                             chunk->stream, why, sizeof why);
    return launched(chunk, st, why);
}

static sp_status dense_cuda(const sp_chunk *chunk, void *user)
{
    mlp_stage_state *state = user;
    if (!chunk_ok(chunk, state))
        return SP_ERR_INVALID_ARGUMENT;
    char why[SP_MLP_ERROR_SIZE];
    sp_status st = sp_mlp_gemm_enqueue(state->gemm, chunk->in, chunk->out, chunk->records,
                                       chunk->scratch, chunk->stream, why, sizeof why);
    return launched(chunk, st, why);
}

static sp_status head_cuda(const sp_chunk *chunk, void *user)
{
    mlp_stage_state *state = user;
    if (!chunk_ok(chunk, state))
        return SP_ERR_INVALID_ARGUMENT;
    const sp_mlp_device *device = state->owner->device;
    char why[SP_MLP_ERROR_SIZE];
    sp_status st = sp_mlp_head_enqueue(sp_mlp_device_weight(device, state->layer),
                                       sp_mlp_device_bias(device, state->layer), chunk->in,
                                       chunk->out, chunk->records,
                                       sp_mlp_device_sm_count(device), chunk->stream, why,
                                       sizeof why);
    return launched(chunk, st, why);
}
#define CUDA_FN(fn) fn
#else
#define CUDA_FN(fn) NULL
#endif

/* ---- the descriptors ------------------------------------------------------------------------ */

void sp_mlp_describe_stages(struct sp_mlp_stages *stages)
{
    const sp_stage table[SP_MLP_STAGES] = {
        [MLP_STAGE_PREPROCESS] = {.name = "preprocess",
                                  .out_record_bytes = SP_MLP_INPUTS * sizeof(float),
                                  .cuda = CUDA_FN(preprocess_cuda), .host = preprocess_host},
        [MLP_STAGE_FC1] = {.name = "fc1", .out_record_bytes = SP_MLP_HIDDEN * sizeof(float),
                           .cuda = CUDA_FN(dense_cuda), .host = dense_host},
        [MLP_STAGE_FC2] = {.name = "fc2", .out_record_bytes = SP_MLP_HIDDEN * sizeof(float),
                           .cuda = CUDA_FN(dense_cuda), .host = dense_host},
        [MLP_STAGE_HEAD] = {.name = "head", .out_record_bytes = sizeof(int32_t),
                            .cuda = CUDA_FN(head_cuda), .host = head_host},
    };
    for (size_t i = 0; i < SP_MLP_STAGES; i++) {
        stages->list[i] = table[i];
        stages->list[i].user = &stages->state[i];
    }
    /* each GEMM chunk in flight gets a workspace of its own (its slot's scratch), so the
     * stages may run in graph mode and on several queues */
#ifdef SP_HAVE_CUDA
    if (stages->on_cuda) {
        stages->list[MLP_STAGE_FC1].scratch_bytes = SP_MLP_GEMM_WORKSPACE_BYTES;
        stages->list[MLP_STAGE_FC2].scratch_bytes = SP_MLP_GEMM_WORKSPACE_BYTES;
    }
#endif
}
