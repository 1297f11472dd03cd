/* Registration of user memory as pinned, and the is_pinned query (host_memory.h). */
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/host/host_array.h"
#include "backend/host/host_memory.h"

/* Called with the lock held. */
static sp_status add_nested(host_memory *memory, uintptr_t base)
{
    void *items = memory->nested;
    sp_status status = sp_host_array_reserve(&items, &memory->nested_capacity,
                                             sizeof *memory->nested, memory->nested_count + 1);
    memory->nested = items;
    if (status == SP_OK)
        memory->nested[memory->nested_count++] = base;
    return status;
}

/* Called with the lock held; 1 when a nested registration of base was there to remove. */
static int remove_nested(host_memory *memory, uintptr_t base)
{
    for (size_t i = memory->nested_count; i-- > 0;) {
        if (memory->nested[i] == base) {
            memory->nested[i] = memory->nested[--memory->nested_count];
            return 1;
        }
    }
    return 0;
}

void sp_host_memory_forget_nested(host_memory *memory, host_range range)
{
    for (size_t i = memory->nested_count; i-- > 0;) {
        if (memory->nested[i] - range.base < range.bytes)
            memory->nested[i] = memory->nested[--memory->nested_count];
    }
}

static sp_status register_locked(host_memory *memory, uintptr_t base, size_t bytes)
{
    if (sp_host_ranges_containing(&memory->pinned, base, bytes))
        return add_nested(memory, base);
    const host_range *other = sp_host_ranges_overlapping(&memory->pinned, base, bytes);
    if (other) {
        sp_backend_fail("host host_register: [%#jx, +%zu) straddles the edge of the pinned "
                        "range [%#jx, +%zu)", (uintmax_t)base, bytes, (uintmax_t)other->base,
                        other->bytes);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return sp_host_ranges_insert(&memory->pinned, (host_range){base, bytes, 0});
}

/* What is wrong with a range to register, or NULL. */
static const char *register_problem(uintptr_t base, size_t bytes)
{
    if (base == 0)
        return "ptr is NULL";
    if (bytes == 0)
        return "bytes is 0";
    if (base > UINTPTR_MAX - bytes)
        return "ptr + bytes overflows the address space";
    return NULL;
}

sp_status sp_host_memory_register(host_memory *memory, void *ptr, size_t bytes)
{
    uintptr_t base = (uintptr_t)ptr;
    const char *problem = register_problem(base, bytes);
    if (problem) {
        sp_backend_fail("host host_register: %s", problem);
        return SP_ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&memory->lock);
    sp_status status = register_locked(memory, base, bytes);
    pthread_mutex_unlock(&memory->lock);
    return status;
}

static sp_status unregister_locked(host_memory *memory, uintptr_t base)
{
    if (remove_nested(memory, base))
        return SP_OK;
    const host_range *range = sp_host_ranges_at(&memory->pinned, base);
    if (!range) {
        sp_backend_fail("host host_unregister: %#jx is not the start of a registered range",
                        (uintmax_t)base);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (range->owned) {
        sp_backend_fail("host host_unregister: %#jx came from pinned_alloc; free it with "
                        "pinned_free", (uintmax_t)base);
        return SP_ERR_INVALID_ARGUMENT;
    }
    host_range removed;
    sp_host_ranges_remove(&memory->pinned, base, &removed);
    sp_host_memory_forget_nested(memory, removed);
    return SP_OK;
}

sp_status sp_host_memory_unregister(host_memory *memory, void *ptr)
{
    if (!ptr) {
        sp_backend_fail("host host_unregister: ptr is NULL");
        return SP_ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&memory->lock);
    sp_status status = unregister_locked(memory, (uintptr_t)ptr);
    pthread_mutex_unlock(&memory->lock);
    return status;
}

int sp_host_memory_is_pinned(host_memory *memory, const void *ptr, size_t bytes)
{
    uintptr_t base = (uintptr_t)ptr;
    if (bytes == 0)
        bytes = 1; /* an empty range is pinned where its address is */
    if (!ptr || base > UINTPTR_MAX - bytes)
        return 0;
    pthread_mutex_lock(&memory->lock);
    int pinned = sp_host_ranges_containing(&memory->pinned, base, bytes) != NULL;
    pthread_mutex_unlock(&memory->lock);
    return pinned;
}

sp_mem_kind sp_host_memory_kind(host_memory *memory, const void *ptr, size_t bytes)
{
    uintptr_t base = (uintptr_t)ptr;
    if (bytes == 0)
        bytes = 1;
    if (!ptr || base > UINTPTR_MAX - bytes)
        return SP_MEM_PAGEABLE;
    pthread_mutex_lock(&memory->lock);
    sp_mem_kind kind = SP_MEM_PAGEABLE;
    if (sp_host_ranges_containing(&memory->device, base, bytes))
        kind = SP_MEM_DEVICE;
    else if (sp_host_ranges_overlapping(&memory->device, base, bytes))
        kind = SP_MEM_MIXED; /* begins or ends in a device block, but not inside one */
    else if (sp_host_ranges_containing(&memory->pinned, base, bytes))
        kind = SP_MEM_PINNED;
    pthread_mutex_unlock(&memory->lock);
    return kind;
}
