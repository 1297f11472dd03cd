/*
 * The list of host memory pieces that this context registered with cudaHostRegister, so that
 * sp_host_unregister undoes exactly what sp_host_register did and nothing the user (or another
 * library) pinned. Plain C, no CUDA calls: the caller holds the lock around its CUDA calls so
 * that a register and an unregister of the same memory cannot interleave.
 */
#ifndef SP_CUDA_REGISTRY_H
#define SP_CUDA_REGISTRY_H

#include <pthread.h>
#include <stddef.h>

#include "streampipe.h"

typedef struct sp_cuda_piece {
    const void *owner; /* the pointer given to sp_host_register */
    void *base;        /* the start of this piece, as given to cudaHostRegister */
} sp_cuda_piece;

typedef struct sp_cuda_registry {
    pthread_mutex_t lock;
    sp_cuda_piece *pieces;
    size_t count;
    size_t capacity;
} sp_cuda_registry;

sp_status sp_cuda_registry_init(sp_cuda_registry *reg);
/* Frees the list; the pieces must have been unregistered already. */
void sp_cuda_registry_destroy(sp_cuda_registry *reg);

void sp_cuda_registry_lock(sp_cuda_registry *reg);
void sp_cuda_registry_unlock(sp_cuda_registry *reg);

/* The functions below need the lock held. */

/* Makes room for `extra` more pieces so that appending cannot fail half-way through. */
sp_status sp_cuda_registry_reserve(sp_cuda_registry *reg, size_t extra);
/* Appends into room made by sp_cuda_registry_reserve. */
void sp_cuda_registry_append(sp_cuda_registry *reg, const void *owner, void *base);
/* Removes the most recently appended piece into *out; 0 when the list is empty. */
int sp_cuda_registry_pop(sp_cuda_registry *reg, sp_cuda_piece *out);
/* Removes one piece belonging to owner into *out; 0 when owner has none left. */
int sp_cuda_registry_take(sp_cuda_registry *reg, const void *owner, sp_cuda_piece *out);

#endif /* SP_CUDA_REGISTRY_H */
