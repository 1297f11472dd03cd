/*
 * normalize_u8: uint8 values to float32, x * scale + shift (images made ready for a model).
 * This file is the plain C reference (and the HOST stage); the CUDA kernel is in
 * normalize_u8_kernel.cu. The multiply and the add are separate statements, each rounded on
 * its own (no contraction into an FMA, as in sinmix.c), so the kernel, which rounds each
 * explicitly, gives the same bits.
 */
#include "streampipe_ops.h"

#ifdef SP_HAVE_CUDA
#include "ops/normalize_u8_cuda.h"
#endif

void sp_normalize_u8_reference(const unsigned char *in, float *out, size_t n, float scale,
                               float shift)
{
    for (size_t i = 0; i < n; i++) {
        float scaled = (float)in[i] * scale;
        out[i] = scaled + shift;
    }
}

/* The chunk's values (records x elements) in *n, 0 for a chunk of no records: SP_OK, or
 * the chunk failed saying why. */
static sp_status values_of(const sp_chunk *chunk, const sp_normalize_u8_params *params,
                           size_t *n)
{
    *n = 0;
    if (!chunk || !params)
        return SP_ERR_INVALID_ARGUMENT;
    if (chunk->records == 0)
        return SP_OK;
    if (params->elements == 0)
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "normalize_u8: elements is 0");
    if (__builtin_mul_overflow(chunk->records, params->elements, n))
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "normalize_u8: %zu records of %zu "
                             "values overflow", chunk->records, params->elements);
    return SP_OK;
}

static sp_status normalize_host(const sp_chunk *chunk, void *user)
{
    const sp_normalize_u8_params *params = user;
    size_t n;
    sp_status st = values_of(chunk, params, &n);
    if (st != SP_OK || n == 0)
        return st;
    if (!chunk->in || !chunk->out)
        return sp_chunk_fail(chunk, SP_ERR_INVALID_ARGUMENT, "normalize_u8: NULL buffer");
    sp_normalize_u8_reference(chunk->in, chunk->out, n, params->scale, params->shift);
    return SP_OK;
}

#ifdef SP_HAVE_CUDA
static sp_status normalize_cuda(const sp_chunk *chunk, void *user)
{
    const sp_normalize_u8_params *params = user;
    size_t n;
    sp_status st = values_of(chunk, params, &n);
    if (st != SP_OK || n == 0)
        return st;
    return sp_normalize_u8_cuda_enqueue(chunk, n, params->scale, params->shift);
}
#endif

sp_stage sp_normalize_u8_stage(const sp_normalize_u8_params *params)
{
    size_t elements = params ? params->elements : 0;
    sp_stage stage = {
        .name = "normalize_u8",
        .out_record_bytes = elements <= SIZE_MAX / sizeof(float) ? elements * sizeof(float) : 0,
#ifdef SP_HAVE_CUDA
        .cuda = normalize_cuda,
#else
        .cuda = NULL,
#endif
        .host = normalize_host,
        .user = (void *)params, /* only ever read: the stage functions take it back as const */
    };
    return stage;
}
