/*
 * Built-in stages. Each has a CUDA kernel and a plain C reference side by side.
 */
#ifndef STREAMPIPE_OPS_H
#define STREAMPIPE_OPS_H

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sinmix: float32 in, float32 out. v = x*0.5 + x*x*0.1, then `iters` times v += sinf(v*0.01).
 * Cheap per element at iters 0 (copy-bound) and arbitrarily heavy as iters grows. */
/* Fixed (streampipe.h, top): a new parameter would be a new stage. */
typedef struct sp_sinmix_params {
    unsigned iters;
} sp_sinmix_params;

/* A stage running sinmix with *params (which must outlive the pipeline). Its cuda function is
 * NULL when the library was built without CUDA. (sp_stage keeps its size: streampipe.h.) */
SP_API sp_stage sp_sinmix_stage(const sp_sinmix_params *params);

/* The reference: out[i] = sinmix(in[i]) in plain C, float arithmetic. in == out is allowed. */
SP_API void sp_sinmix_reference(const float *in, float *out, size_t n, unsigned iters);
/* One element, for checks. */
SP_API float sp_sinmix_one(float x, unsigned iters);

/* 0.7, normalize_u8: uint8 in, float32 out, records of `elements` values (an image's pixels,
 * the pipeline's input record bytes): out = x * scale + shift, the multiply and the add each
 * rounded on its own, as images are made ready for a model (scale 1/255, shift -0.5: values
 * in [-0.5, 0.5]). A built-in stage runs without Python, so a Python pipeline's data path
 * (streampipe.torch.Loader's) never waits for the interpreter. */
/* Fixed (streampipe.h, top): a new parameter would be a new stage. */
typedef struct sp_normalize_u8_params {
    size_t elements; /* values per record (> 0): the stage's output record is 4x as long */
    float scale, shift;
} sp_normalize_u8_params;

/* A stage running normalize_u8 with *params (which must outlive the pipeline; elements 0
 * fails every chunk). Its cuda function is NULL when the library was built without CUDA. */
SP_API sp_stage sp_normalize_u8_stage(const sp_normalize_u8_params *params);
/* The reference: out[i] = in[i] * scale + shift for n values, in plain C float arithmetic. */
SP_API void sp_normalize_u8_reference(const unsigned char *in, float *out, size_t n,
                                      float scale, float shift);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_OPS_H */
