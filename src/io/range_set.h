/* A small set of record ranges [first, end), kept sorted, disjoint and merged: the records a
 * journaled output holds (file_journal.c). The staging threads finish pieces out of order, so
 * the set has a few ranges while a run is going and one when it is done. Not thread-safe:
 * its owner locks around it. */
#ifndef SP_IO_RANGE_SET_H
#define SP_IO_RANGE_SET_H

#include <stddef.h>

typedef struct sp_range {
    size_t first, end;
} sp_range;

typedef struct sp_range_set {
    sp_range *r;
    size_t n, cap;
} sp_range_set;

/* Adds [first, end) (merged with the ranges it touches). 0: no memory (the set is unchanged). */
int sp_range_set_add(sp_range_set *s, size_t first, size_t end);
/* The records the set holds. */
size_t sp_range_set_count(const sp_range_set *s);
/* 1 when [first, end) is wholly in the set. */
int sp_range_set_covers(const sp_range_set *s, size_t first, size_t end);
/* The first range of [0, total) that the set does not hold: 1 and *first, *end; 0 when the
 * set holds all of it. */
int sp_range_set_first_gap(const sp_range_set *s, size_t total, size_t *first, size_t *end);
/* The same from record `from` on: the first range of [from, total) the set does not hold. */
int sp_range_set_gap_from(const sp_range_set *s, size_t from, size_t total, size_t *first,
                          size_t *end);
/* dst becomes a copy of src. 0: no memory (dst is unchanged). */
int sp_range_set_copy(sp_range_set *dst, const sp_range_set *src);
void sp_range_set_free(sp_range_set *s);

#endif
