/* A sorted table of disjoint address ranges: the backend's allocations and registrations. */
#ifndef SP_HOST_RANGES_H
#define SP_HOST_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

typedef struct host_range {
    uintptr_t base;
    size_t bytes;
    int owned; /* 1: the backend allocated it and frees it; 0: the user's memory */
} host_range;

typedef struct host_ranges {
    host_range *items; /* sorted by base, pairwise disjoint */
    size_t count;
    size_t capacity;
} host_ranges;

#define HOST_RANGES_EMPTY {NULL, 0, 0}

void sp_host_ranges_free(host_ranges *set);
/* The range that holds all of [base, base+bytes), or NULL. base+bytes must not overflow. */
const host_range *sp_host_ranges_containing(const host_ranges *set, uintptr_t base,
                                            size_t bytes);
/* Some range sharing a byte with [base, base+bytes), or NULL. */
const host_range *sp_host_ranges_overlapping(const host_ranges *set, uintptr_t base,
                                             size_t bytes);
/* Adds a range that overlaps none in the set. */
sp_status sp_host_ranges_insert(host_ranges *set, host_range range);
/* Removes the range that starts exactly at base into *removed; 0 when there is none. */
int sp_host_ranges_remove(host_ranges *set, uintptr_t base, host_range *removed);
/* The range that starts exactly at base, or NULL. */
const host_range *sp_host_ranges_at(const host_ranges *set, uintptr_t base);

#endif /* SP_HOST_RANGES_H */
