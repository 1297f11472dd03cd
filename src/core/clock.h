/* Monotonic host time in seconds, for makespans and host-side engine timings. */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <time.h>

static inline double sp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
