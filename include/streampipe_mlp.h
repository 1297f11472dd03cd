/*
 * The digits MLP: a 64-256-256-10 perceptron with ReLU that classifies 8x8 handwritten digits,
 * loaded from a safetensors file and run as four pipeline stages, each on its own queue:
 *
 *   preprocess  64 uint8 pixels (grey levels 0..16) -> 64 floats, pixel / 16      64 -> 256 B
 *   fc1         relu(W1 x + b1), 64 -> 256 floats (GEMM with bias and ReLU fused)   256 -> 1024 B
 *   fc2         relu(W2 x + b2), 256 -> 256 floats                                 1024 -> 1024 B
 *   head        W3 x + b3 -> 10 logits -> int32 label of the largest (fc3 + argmax) 1024 -> 4 B
 *
 * A record is one image: the pipeline's input record size is SP_MLP_INPUTS bytes and its
 * output one int32 label. Ties in the argmax go to the lowest class, as in numpy and torch.
 *
 * Model files hold F32 tensors "fc1.weight" [256,64], "fc1.bias" [256], "fc2.weight"
 * [256,256], "fc2.bias" [256], "fc3.weight" [10,256], "fc3.bias" [10]; weights are [out, in]
 * row-major (y = W x + b, as torch.nn.Linear stores them). models/train_digits.py writes one.
 *
 * Errors: as everywhere in streampipe (streampipe.h), one text per handle. Loading a model
 * and creating the stages yield their handle also when they fail, whose last error
 * (sp_mlp_last_error, sp_mlp_stages_last_error) says why; free it as usual. A stage failing
 * during a run says why through sp_chunk_fail: the pipeline's error names the stage, the
 * chunk and the cause (a cuBLAS status, a launch error). Nothing here prints.
 *
 * Link with streampipe::mlp (pkg-config streampipe-mlp): the core library needs neither
 * cuBLASLt nor cJSON, this one does.
 */
#ifndef STREAMPIPE_MLP_H
#define STREAMPIPE_MLP_H

#include <stddef.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SP_MLP_INPUTS 64   /* pixels per image, one byte each */
#define SP_MLP_HIDDEN 256  /* units in each hidden layer */
#define SP_MLP_CLASSES 10
#define SP_MLP_LAYERS 3    /* fc1, fc2, fc3 */
#define SP_MLP_MAX_PIXEL 16
#define SP_MLP_STAGES 4    /* preprocess, fc1, fc2, head */

/* ---- the model ------------------------------------------------------------------------------ */

typedef struct sp_mlp sp_mlp;

/* One layer's parameters, owned by the model. Fixed (streampipe.h, top). */
typedef struct sp_mlp_layer {
    size_t inputs, outputs;
    const float *weight; /* outputs x inputs, row-major */
    const float *bias;   /* outputs */
} sp_mlp_layer;

/* Reads a safetensors file and checks everything in it: the framing, the JSON header (parsed
 * with cJSON), names, dtypes, shapes and offsets (in bounds, no overlap, no hole, exactly
 * shape x 4 bytes each), no missing, repeated or extra tensors, every value finite. A
 * truncated, oversized (over 256 MiB) or inconsistent file, or a path that is not a regular
 * file (a FIFO or a device: refused at once, without waiting for a writer), gives
 * SP_ERR_INVALID_ARGUMENT; SP_ERR_UNSUPPORTED when the library was built without cJSON.
 * Whether or not it succeeds, *out is a model to free with sp_mlp_free (NULL only when there
 * was no memory for it, SP_ERR_OUT_OF_MEMORY, or out is NULL); a model that failed to load
 * says why in sp_mlp_last_error, has no layers, and sp_mlp_stages_create refuses it. */
SP_API sp_status sp_mlp_load_file(const char *path, sp_mlp **out);
/* The same from a file's bytes in memory (which need not outlive the model). */
SP_API sp_status sp_mlp_load_bytes(const void *bytes, size_t size, sp_mlp **out);
/* Why the model failed to load ("" when it loaded). */
SP_API const char *sp_mlp_last_error(const sp_mlp *model);
/* 1 when the model loaded (its layers are there), else 0 (NULL included). */
SP_API int sp_mlp_loaded(const sp_mlp *model);
SP_API void sp_mlp_free(sp_mlp *model);

/* Layer 0..SP_MLP_LAYERS-1 (fc1, fc2, fc3); all zero for a NULL model or a bad index. */
SP_API sp_mlp_layer sp_mlp_layer_at(const sp_mlp *model, size_t layer);

/* The model in double precision, written plainly, for checking every other path: logits
 * (n x SP_MLP_CLASSES) of n images (n x SP_MLP_INPUTS bytes). */
SP_API void sp_mlp_reference_logits(const sp_mlp *model, const unsigned char *pixels, size_t n,
                                    double *logits);

/* ---- the stages ----------------------------------------------------------------------------- */

typedef enum sp_mlp_precision {
    SP_MLP_FP32 = 0, /* float32 arithmetic throughout */
    SP_MLP_TF32 = 1  /* CUDA: fc1/fc2 on tensor cores with inputs rounded to tf32 (10-bit
                        mantissa), float32 accumulation; HOST computes float32 either way */
} sp_mlp_precision;

/* "fp32", "tf32"; "?" otherwise. */
SP_API const char *sp_mlp_precision_name(sp_mlp_precision precision);

typedef struct sp_mlp_stages sp_mlp_stages;

/* Builds the four stages for pipelines on `ctx`. On CUDA this uploads the weights and creates
 * a cuBLASLt handle per GEMM stage, and must run on a thread where the context's device is
 * current (as after sp_context_create); on HOST it only keeps a pointer to the model.
 * `model` must outlive the stages; the stages must outlive every pipeline built from them
 * and be destroyed before `ctx`. Several pipelines may use one set of stages, but only one of
 * them may run at a time (each stage keeps per-call host state: its handle, layouts and
 * chosen algorithms). The GEMM stages ask for a cuBLASLt workspace per chunk in flight
 * (sp_stage.scratch_bytes, 32 MiB per slot on CUDA), so the pipeline may use graph mode and
 * several queues per stage (set the list's `streams` before creating it).
 * Whether or not it succeeds, *out is a handle to destroy (NULL only for
 * SP_ERR_OUT_OF_MEMORY, or out NULL); one that failed says why in sp_mlp_stages_last_error
 * and has no stages (sp_mlp_stages_list gives NULL). */
SP_API sp_status sp_mlp_stages_create(sp_context *ctx, const sp_mlp *model,
                                      sp_mlp_precision precision, sp_mlp_stages **out);
SP_API void sp_mlp_stages_destroy(sp_mlp_stages *stages);

/* The SP_MLP_STAGES stages, in pipeline order, for sp_pipeline_config.stages; NULL when
 * their creation failed. */
SP_API const sp_stage *sp_mlp_stages_list(const sp_mlp_stages *stages);

/* Why creating the stages failed ("" when it did not). Failures during a run are the
 * pipeline's (sp_pipeline_last_error), which the stages give their cause through
 * sp_chunk_fail. */
SP_API const char *sp_mlp_stages_last_error(const sp_mlp_stages *stages);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_MLP_H */
