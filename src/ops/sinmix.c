/*
 * sinmix: the built-in test and benchmark stage. Its cost per element is set by `iters`, so
 * one stage covers both copy-bound and compute-bound pipelines. This file is the plain C
 * reference (and the HOST stage); the CUDA kernel is in sinmix_kernel.cu.
 *
 * The arithmetic is float throughout and each multiply and add is rounded on its own, so that
 * the kernel (which rounds each step explicitly) can match it: every operation is its own
 * statement, because Clang contracts a*b + c into an FMA within one expression, and GCC does
 * not contract at all in the ISO C11 mode the library is built in. The results then differ
 * only through sinf itself (CUDA's sinf is within 2 ulp, glibc's within 1).
 */
#include <math.h>

#include "streampipe_ops.h"

#ifdef SP_HAVE_CUDA
#include "ops/sinmix_cuda.h"
#endif

float sp_sinmix_one(float x, unsigned iters)
{
    float half = x * 0.5f;
    float square = x * x;
    float tenth_square = square * 0.1f;
    float v = half + tenth_square;
    for (unsigned k = 0; k < iters; k++) {
        float phase = v * 0.01f;
        v += sinf(phase);
    }
    return v;
}

void sp_sinmix_reference(const float *in, float *out, size_t n, unsigned iters)
{
    for (size_t i = 0; i < n; i++)
        out[i] = sp_sinmix_one(in[i], iters); /* reads in[i] before writing: in == out works */
}

/* Records are single floats: the pipeline's input record size must be 4 bytes. */
static sp_status sinmix_host(const sp_chunk *chunk, void *user)
{
    const sp_sinmix_params *params = user;
    if (!chunk || !params)
        return SP_ERR_INVALID_ARGUMENT;
    if (chunk->records > 0 && (!chunk->in || !chunk->out))
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "sinmix: NULL buffer");
    sp_sinmix_reference(chunk->in, chunk->out, chunk->records, params->iters);
    return SP_OK;
}

#ifdef SP_HAVE_CUDA
static sp_status sinmix_cuda(const sp_chunk *chunk, void *user)
{
    const sp_sinmix_params *params = user;
    if (!chunk || !params)
        return SP_ERR_INVALID_ARGUMENT;
    return sp_sinmix_cuda_enqueue(chunk, params->iters);
}
#endif

sp_stage sp_sinmix_stage(const sp_sinmix_params *params)
{
    sp_stage stage = {
        .name = "sinmix",
        .out_record_bytes = sizeof(float),
#ifdef SP_HAVE_CUDA
        .cuda = sinmix_cuda,
#else
        .cuda = NULL,
#endif
        .host = sinmix_host,
        .user = (void *)params, /* only ever read: the stage functions take it back as const */
    };
    return stage;
}
