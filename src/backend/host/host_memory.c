/* Host backend memory; see host_memory.h. One mutex guards both tables and the nested
 * registrations: calls are rare (pipeline setup, user registration), never per chunk. */
#include "backend/host/host_memory.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "backend/host/host_array.h"

/* cudaMalloc aligns to 256 bytes and cudaHostAlloc to a page; match them so that code
 * which silently relies on that alignment behaves the same on HOST. */
#define DEVICE_ALIGNMENT 256u
#define PINNED_ALIGNMENT 4096u

sp_status sp_host_memory_init(host_memory *memory)
{
    *memory = (host_memory){.device = HOST_RANGES_EMPTY, .pinned = HOST_RANGES_EMPTY};
    if (pthread_mutex_init(&memory->lock, NULL) != 0) {
        sp_backend_fail("host backend: pthread_mutex_init failed for the memory registry");
        return SP_ERR_BACKEND;
    }
    return SP_OK;
}

static void free_owned(host_ranges *set)
{
    for (size_t i = 0; i < set->count; i++)
        if (set->items[i].owned)
            free((void *)set->items[i].base);
    sp_host_ranges_free(set);
}

void sp_host_memory_release_all(host_memory *memory)
{
    free_owned(&memory->device);
    free_owned(&memory->pinned);
    free(memory->nested);
    memory->nested = NULL;
    memory->nested_count = 0;
    memory->nested_capacity = 0;
    pthread_mutex_destroy(&memory->lock);
}

/* Under the lock: a block of `set` came or went. */
static void count_held(host_memory *memory, const host_ranges *set, size_t bytes, int came)
{
    int pinned = set == &memory->pinned;
    size_t *held = pinned ? &memory->pinned_held : &memory->device_held;
    size_t *peak = pinned ? &memory->pinned_peak : &memory->device_peak;
    *held = came ? *held + bytes : *held - bytes;
    *peak = *held > *peak ? *held : *peak;
}

void sp_host_memory_held(host_memory *memory, size_t held[2], size_t peak[2])
{
    pthread_mutex_lock(&memory->lock);
    held[0] = memory->pinned_held, held[1] = memory->device_held;
    peak[0] = memory->pinned_peak, peak[1] = memory->device_peak;
    pthread_mutex_unlock(&memory->lock);
}

/* Allocates an owned block and enters it in `set`. */
static sp_status alloc_block(host_memory *memory, host_ranges *set, size_t alignment,
                             size_t bytes, void **out)
{
    void *block = NULL;
    if (posix_memalign(&block, alignment, bytes) != 0)
        return SP_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory->lock);
    sp_status status = sp_host_ranges_insert(set, (host_range){(uintptr_t)block, bytes, 1});
    if (status == SP_OK)
        count_held(memory, set, bytes, 1);
    pthread_mutex_unlock(&memory->lock);
    if (status != SP_OK) {
        free(block);
        return status;
    }
    *out = block;
    return SP_OK;
}

/* Removes an owned block from `set` and frees it; unknown pointers are left alone. */
static void free_block(host_memory *memory, host_ranges *set, void *ptr)
{
    if (!ptr)
        return;
    pthread_mutex_lock(&memory->lock);
    const host_range *range = sp_host_ranges_at(set, (uintptr_t)ptr);
    int ours = range && range->owned;
    host_range removed;
    if (ours) {
        sp_host_ranges_remove(set, (uintptr_t)ptr, &removed);
        count_held(memory, set, removed.bytes, 0);
        if (set == &memory->pinned)
            sp_host_memory_forget_nested(memory, removed);
    }
    pthread_mutex_unlock(&memory->lock);
    if (ours)
        free(ptr);
}

sp_status sp_host_memory_device_alloc(host_memory *memory, size_t bytes, void **out)
{
    if (bytes == 0) {
        sp_backend_fail("host device_alloc: bytes is 0");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = alloc_block(memory, &memory->device, DEVICE_ALIGNMENT, bytes, out);
    if (status == SP_OK)
        return SP_OK;
    sp_backend_fail("host device_alloc: cannot allocate %zu bytes", bytes);
    return SP_ERR_OUT_OF_DEVICE_MEMORY;
}

void sp_host_memory_device_free(host_memory *memory, void *ptr)
{
    free_block(memory, &memory->device, ptr);
}

sp_status sp_host_memory_pinned_alloc(host_memory *memory, size_t bytes, void **out)
{
    if (bytes == 0) {
        sp_backend_fail("host pinned_alloc: bytes is 0");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = alloc_block(memory, &memory->pinned, PINNED_ALIGNMENT, bytes, out);
    if (status != SP_OK)
        sp_backend_fail("host pinned_alloc: cannot allocate %zu bytes", bytes);
    return status;
}

void sp_host_memory_pinned_free(host_memory *memory, void *ptr)
{
    free_block(memory, &memory->pinned, ptr);
}
