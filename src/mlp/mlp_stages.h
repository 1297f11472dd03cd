/* Inside the digits MLP's stages: what each stage function gets as its `user` pointer. */
#ifndef SP_MLP_STAGES_H
#define SP_MLP_STAGES_H

#include "mlp/model/model_error.h"
#include "streampipe_mlp.h"

#ifdef SP_HAVE_CUDA
#include "mlp/mlp_cuda.h"
#endif

typedef enum mlp_stage_id {
    MLP_STAGE_PREPROCESS = 0,
    MLP_STAGE_FC1,
    MLP_STAGE_FC2,
    MLP_STAGE_HEAD
} mlp_stage_id;

/* One stage's own state. Each stage runs one chunk at a time (one worker thread on HOST, the
 * run thread on CUDA), so nothing here is shared between threads during a run. */
typedef struct mlp_stage_state {
    struct sp_mlp_stages *owner;
    mlp_stage_id id;
    size_t layer; /* the model layer a GEMM or head stage computes */
#ifdef SP_HAVE_CUDA
    struct sp_mlp_gemm *gemm; /* fc1 and fc2 on CUDA */
#endif
} mlp_stage_state;

struct sp_mlp_stages {
    int created;                   /* 0: creation failed, `error` says why */
    char error[SP_MLP_ERROR_SIZE];
    const sp_mlp *model;
    sp_mlp_precision precision;
    int on_cuda;
#ifdef SP_HAVE_CUDA
    struct sp_mlp_device *device;
#endif
    mlp_stage_state state[SP_MLP_STAGES];
    sp_stage list[SP_MLP_STAGES];
};

/* Fills stages->list: names, record sizes, the host and cuda functions (mlp_stage_fns.c). */
void sp_mlp_describe_stages(struct sp_mlp_stages *stages);

#endif /* SP_MLP_STAGES_H */
