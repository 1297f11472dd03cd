/* Host backend memory: "device" blocks, "pinned" blocks and the registry of user ranges the
 * copy engines may treat as pinned. On HOST all of it is ordinary memory; the registry exists
 * so that the core's pinned and pageable paths are both exercised without a GPU. */
#ifndef SP_HOST_MEMORY_H
#define SP_HOST_MEMORY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/host/host_ranges.h"
#include "streampipe.h"

typedef struct host_memory {
    pthread_mutex_t lock; /* guards everything below */
    host_ranges device;   /* device_alloc blocks, all owned */
    host_ranges pinned;   /* pinned_alloc blocks (owned) and host_register ranges */
    /* host_register calls that fell inside an already pinned range: each did nothing, so
     * its matching host_unregister does nothing either. A multiset of pointers, each inside
     * a range of `pinned` (they go when their range goes). */
    uintptr_t *nested;
    size_t nested_count;
    size_t nested_capacity;
    /* bytes of owned blocks held now and at most since the backend opened: what a memory
     * budget is checked against in the tests (sp_backend_host_memory_held) */
    size_t device_held, device_peak, pinned_held, pinned_peak;
} host_memory;

sp_status sp_host_memory_init(host_memory *memory);
/* Frees every block still allocated and forgets every registration (backend close). */
void sp_host_memory_release_all(host_memory *memory);

/* Owned bytes held now and at their peak: [0] pinned, [1] device. */
void sp_host_memory_held(host_memory *memory, size_t held[2], size_t peak[2]);
sp_status sp_host_memory_device_alloc(host_memory *memory, size_t bytes, void **out);
void sp_host_memory_device_free(host_memory *memory, void *ptr);
sp_status sp_host_memory_pinned_alloc(host_memory *memory, size_t bytes, void **out);
/* Frees a pinned_alloc block; anything else (NULL, a registered range) is left alone. */
void sp_host_memory_pinned_free(host_memory *memory, void *ptr);

/* A range inside an already pinned one is accepted as a no-op; a range that straddles the
 * edge of a pinned one is rejected (SP_ERR_INVALID_ARGUMENT), as cudaHostRegister does. */
sp_status sp_host_memory_register(host_memory *memory, void *ptr, size_t bytes);
sp_status sp_host_memory_unregister(host_memory *memory, void *ptr);
/* Called with the lock held, for a pinned range that is going away (unregistered or freed):
 * drops the nested registrations inside it. They did nothing and pair with nothing now; left
 * behind, a later unregister of the same address would consume one and keep a real range. */
void sp_host_memory_forget_nested(host_memory *memory, host_range range);
/* 1 when all of [ptr, ptr+bytes) lies within one pinned block or registered range. */
int sp_host_memory_is_pinned(host_memory *memory, const void *ptr, size_t bytes);
/* What [ptr, ptr+bytes) is: a device_alloc block's (device), pinned, pageable, or mixed. */
sp_mem_kind sp_host_memory_kind(host_memory *memory, const void *ptr, size_t bytes);

#endif /* SP_HOST_MEMORY_H */
