/*
 * The digits MLP on CUDA: what the C side (mlp_stages.c, mlp_stage_fns.c) calls in the .cu
 * files. Only built with CUDA. Every function writes its reason into err[0..err_size) on
 * failure and returns the status: SP_ERR_DEVICE_LOST for errors that corrupt the context,
 * SP_ERR_OUT_OF_DEVICE_MEMORY, SP_ERR_UNSUPPORTED (no cuBLASLt algorithm), else
 * SP_ERR_BACKEND. Launchers enqueue on `stream` (a cudaStream_t, never NULL) and never
 * synchronize.
 */
#ifndef SP_MLP_CUDA_H
#define SP_MLP_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_mlp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the weights on the device (mlp_device.cu) ---------------------------------------------- */

typedef struct sp_mlp_device sp_mlp_device;

/* Copies every layer to the current device (through a private stream, synchronously: this is
 * setup, not the hot path) and notes the device's SM count for the launchers. */
sp_status sp_mlp_device_create(const sp_mlp *model, sp_mlp_device **out, char *err,
                               size_t err_size);
void sp_mlp_device_destroy(sp_mlp_device *device);
/* Device pointers of layer 0..SP_MLP_LAYERS-1. */
const float *sp_mlp_device_weight(const sp_mlp_device *device, size_t layer);
const float *sp_mlp_device_bias(const sp_mlp_device *device, size_t layer);
int sp_mlp_device_sm_count(const sp_mlp_device *device);

/* ---- one GEMM stage: relu(X W^T + b) through cuBLASLt (mlp_gemm_cublaslt.cu) -------------- */

typedef struct sp_mlp_gemm sp_mlp_gemm;

/* cuBLASLt's workspace for one GEMM chunk, what cuBLAS recommends for Hopper: the GEMM
 * stages' scratch_bytes on CUDA (HOST's GEMM needs none). */
#define SP_MLP_GEMM_WORKSPACE_BYTES ((size_t)32 << 20)

/* A cuBLASLt handle and a matmul description with the bias+ReLU epilogue for one layer whose
 * device weight (outputs x inputs, row-major) and bias are given. tf32 selects
 * CUBLAS_COMPUTE_32F_FAST_TF32 instead of CUBLAS_COMPUTE_32F. The workspace is the caller's:
 * the chunk's scratch, SP_MLP_GEMM_WORKSPACE_BYTES per slot, so that chunks in flight at once
 * (several queues, graph mode) never share one. */
sp_status sp_mlp_gemm_create(const float *weight, const float *bias, size_t inputs,
                             size_t outputs, int tf32, sp_mlp_gemm **out, char *err,
                             size_t err_size);
void sp_mlp_gemm_destroy(sp_mlp_gemm *gemm);
/* out (records x outputs) = relu(in (records x inputs) W^T + b), row-major, 16-byte aligned
 * device buffers, with `workspace` of SP_MLP_GEMM_WORKSPACE_BYTES. Not thread-safe on the
 * host (its layouts and plan cache): a stage's CUDA calls all come from the thread that
 * drives the pipeline; their device work may overlap, each with its own workspace. */
sp_status sp_mlp_gemm_enqueue(sp_mlp_gemm *gemm, const float *in, float *out, size_t records,
                              void *workspace, void *stream, char *err, size_t err_size);

/* ---- kernels ------------------------------------------------------------------------------ */

/* x = pixels / 16 for records x SP_MLP_INPUTS values (mlp_preprocess_kernel.cu). */
sp_status sp_mlp_preprocess_enqueue(const unsigned char *pixels, float *x, size_t records,
                                    int sm_count, void *stream, char *err, size_t err_size);

/* labels[r] = argmax(in[r] W3^T + b3) (mlp_head_kernel.cu): w3 is SP_MLP_CLASSES x
 * SP_MLP_HIDDEN, in records x SP_MLP_HIDDEN, all device memory, in 16-byte aligned. */
sp_status sp_mlp_head_enqueue(const float *w3, const float *b3, const float *in,
                              int32_t *labels, size_t records, int sm_count, void *stream,
                              char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* SP_MLP_CUDA_H */
