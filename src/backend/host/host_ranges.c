/* The sorted range table behind host_ranges.h: binary search for lookups, memmove for
 * inserts and removals (tables hold one entry per allocation, so they stay small). */
#include "backend/host/host_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "backend/host/host_array.h"

void sp_host_ranges_free(host_ranges *set)
{
    free(set->items);
    set->items = NULL;
    set->count = 0;
    set->capacity = 0;
}

/* Index of the first range whose base is above `base` (count when there is none). */
static size_t first_above(const host_ranges *set, uintptr_t base)
{
    size_t low = 0, high = set->count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (set->items[mid].base <= base)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

const host_range *sp_host_ranges_containing(const host_ranges *set, uintptr_t base,
                                            size_t bytes)
{
    size_t above = first_above(set, base);
    if (above == 0)
        return NULL;
    const host_range *range = &set->items[above - 1];
    size_t offset = base - range->base;
    if (offset > range->bytes || bytes > range->bytes - offset)
        return NULL;
    return range;
}

const host_range *sp_host_ranges_overlapping(const host_ranges *set, uintptr_t base,
                                             size_t bytes)
{
    size_t above = first_above(set, base);
    if (above > 0) {
        const host_range *below = &set->items[above - 1];
        if (base - below->base < below->bytes)
            return below;
    }
    if (above < set->count && set->items[above].base - base < bytes)
        return &set->items[above];
    return NULL;
}

sp_status sp_host_ranges_insert(host_ranges *set, host_range range)
{
    void *items = set->items;
    sp_status status =
        sp_host_array_reserve(&items, &set->capacity, sizeof *set->items, set->count + 1);
    set->items = items;
    if (status != SP_OK)
        return status;
    size_t at = first_above(set, range.base);
    memmove(&set->items[at + 1], &set->items[at], (set->count - at) * sizeof *set->items);
    set->items[at] = range;
    set->count++;
    return SP_OK;
}

/* Index of the range starting exactly at base, or count. */
static size_t index_at(const host_ranges *set, uintptr_t base)
{
    size_t above = first_above(set, base);
    if (above > 0 && set->items[above - 1].base == base)
        return above - 1;
    return set->count;
}

int sp_host_ranges_remove(host_ranges *set, uintptr_t base, host_range *removed)
{
    size_t at = index_at(set, base);
    if (at == set->count)
        return 0;
    *removed = set->items[at];
    memmove(&set->items[at], &set->items[at + 1], (set->count - at - 1) * sizeof *set->items);
    set->count--;
    return 1;
}

const host_range *sp_host_ranges_at(const host_ranges *set, uintptr_t base)
{
    size_t at = index_at(set, base);
    return at == set->count ? NULL : &set->items[at];
}
