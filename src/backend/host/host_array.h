/* Growing a malloc'd array with checked size arithmetic. */
#ifndef SP_HOST_ARRAY_H
#define SP_HOST_ARRAY_H

#include <stddef.h>

#include "streampipe.h"

/* Makes room for `needed` items of item_bytes each in *items (capacity in items), at least
 * doubling. SP_ERR_OUT_OF_MEMORY (reason set, array untouched) on failure or overflow. */
sp_status sp_host_array_reserve(void **items, size_t *capacity, size_t item_bytes,
                                size_t needed);

#endif /* SP_HOST_ARRAY_H */
