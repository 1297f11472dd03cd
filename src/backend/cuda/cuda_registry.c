/* The registered-pieces list: a growable array behind a mutex. Lists stay short (one entry
 * per GiB registered), so linear search is the simple and fast choice. */
#include "backend/cuda/cuda_registry.h"

#include <stdlib.h>

#include "backend/backend.h"

sp_status sp_cuda_registry_init(sp_cuda_registry *reg)
{
    reg->pieces = NULL;
    reg->count = 0;
    reg->capacity = 0;
    if (pthread_mutex_init(&reg->lock, NULL) != 0) {
        sp_backend_fail("pthread_mutex_init failed for the CUDA host-register list");
        return SP_ERR_OUT_OF_MEMORY;
    }
    return SP_OK;
}

void sp_cuda_registry_destroy(sp_cuda_registry *reg)
{
    free(reg->pieces);
    reg->pieces = NULL;
    reg->count = 0;
    reg->capacity = 0;
    (void)pthread_mutex_destroy(&reg->lock);
}

void sp_cuda_registry_lock(sp_cuda_registry *reg) { (void)pthread_mutex_lock(&reg->lock); }

void sp_cuda_registry_unlock(sp_cuda_registry *reg) { (void)pthread_mutex_unlock(&reg->lock); }

static sp_status reserve_failed(const sp_cuda_registry *reg, size_t extra)
{
    sp_backend_fail("out of host memory for the CUDA host-register list (%zu + %zu pieces)",
                    reg->count, extra);
    return SP_ERR_OUT_OF_MEMORY;
}

sp_status sp_cuda_registry_reserve(sp_cuda_registry *reg, size_t extra)
{
    size_t needed = 0;
    size_t bytes = 0;
    if (__builtin_add_overflow(reg->count, extra, &needed))
        return reserve_failed(reg, extra);
    if (needed <= reg->capacity)
        return SP_OK;
    if (needed < 2 * reg->capacity)
        needed = 2 * reg->capacity; /* amortise repeated small registrations */
    if (__builtin_mul_overflow(needed, sizeof *reg->pieces, &bytes))
        return reserve_failed(reg, extra);
    sp_cuda_piece *grown = realloc(reg->pieces, bytes);
    if (!grown)
        return reserve_failed(reg, extra);
    reg->pieces = grown;
    reg->capacity = needed;
    return SP_OK;
}

void sp_cuda_registry_append(sp_cuda_registry *reg, const void *owner, void *base)
{
    reg->pieces[reg->count].owner = owner;
    reg->pieces[reg->count].base = base;
    reg->count++;
}

int sp_cuda_registry_pop(sp_cuda_registry *reg, sp_cuda_piece *out)
{
    if (reg->count == 0)
        return 0;
    *out = reg->pieces[--reg->count];
    return 1;
}

int sp_cuda_registry_take(sp_cuda_registry *reg, const void *owner, sp_cuda_piece *out)
{
    for (size_t i = reg->count; i-- > 0;) {
        if (reg->pieces[i].owner != owner)
            continue;
        *out = reg->pieces[i];
        reg->pieces[i] = reg->pieces[reg->count - 1]; /* order does not matter */
        reg->count--;
        return 1;
    }
    return 0;
}
