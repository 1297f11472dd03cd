/* Growing a malloc'd array; see host_array.h. */
#include "backend/host/host_array.h"

#include <stdlib.h>

#include "backend/backend.h"

#define ARRAY_FIRST_CAPACITY 16u

sp_status sp_host_array_reserve(void **items, size_t *capacity, size_t item_bytes,
                                size_t needed)
{
    if (needed <= *capacity)
        return SP_OK;
    size_t grown = ARRAY_FIRST_CAPACITY, bytes;
    if (*capacity > 0 && __builtin_mul_overflow(*capacity, (size_t)2, &grown))
        grown = needed; /* doubling overflows; ask for exactly what is needed */
    if (grown < needed)
        grown = needed;
    if (__builtin_mul_overflow(grown, item_bytes, &bytes)) {
        sp_backend_fail("host backend: %zu items of %zu bytes overflow size_t", grown,
                        item_bytes);
        return SP_ERR_OUT_OF_MEMORY;
    }
    void *moved = realloc(*items, bytes);
    if (!moved) {
        sp_backend_fail("host backend: out of memory growing a table to %zu bytes", bytes);
        return SP_ERR_OUT_OF_MEMORY;
    }
    *items = moved;
    *capacity = grown;
    return SP_OK;
}
