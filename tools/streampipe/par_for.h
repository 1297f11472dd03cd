/* A parallel for over [0, n): the CLI's pool of worker threads for big host-side loops
 * (filling the input, the reference, verification). */
#ifndef SP_CLI_PAR_FOR_H
#define SP_CLI_PAR_FOR_H

#include <stddef.h>

/* Runs on worker `worker` over [begin, end). */
typedef void (*par_range_fn)(size_t begin, size_t end, unsigned worker, void *arg);

/* CPUs online, at least 1. */
unsigned par_default_workers(void);

/* Cuts [0, n) into `workers` contiguous ranges in index order (range w goes to worker w, so
 * per-worker results merge in index order), runs them on threads and waits for all.
 * A range whose thread cannot be started runs on the calling thread instead. */
void par_for(size_t n, unsigned workers, par_range_fn fn, void *arg);

#endif /* SP_CLI_PAR_FOR_H */
