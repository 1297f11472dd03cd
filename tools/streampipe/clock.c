#include <time.h>

#include "clock.h"

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

unsigned long long cli_clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long mixed = (unsigned long long)ts.tv_sec * 1000000007ULL ^
                               (unsigned long long)ts.tv_nsec;
    return mixed & 0xFFFFFFFFULL;
}
