/* Monotonic host time in seconds, for makespans and host-side engine timings, and the rate
 * of bytes over such a time. */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <time.h>

static inline double sp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GB/s (10^9 bytes per second); 0 for no time. */
static inline double sp_gbps(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}

#endif
