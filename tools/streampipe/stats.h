/* Clocks, medians and rates of repeated runs, for every command that times them. */
#ifndef SP_CLI_STATS_H
#define SP_CLI_STATS_H

#include <stddef.h>

/* Seconds on a monotonic clock, for intervals only. */
double cli_now_s(void);

/* A seed that differs from run to run, taken from the real-time clock. Kept below 2^32 so
 * that it survives a JSON reader that holds numbers as doubles. */
unsigned long long cli_clock_seed(void);

/* At most this many values: the commands' repeat limits. */
#define CLI_MAX_SAMPLES 100

/* Sorts values[0..n) in place, smallest first. */
void cli_sort(double *values, size_t n);

/* The median of values[0..n) (the mean of the middle two for even n); 0 when n is 0 or more
 * than CLI_MAX_SAMPLES. */
double cli_median(const double *values, size_t n);

/* The index of the lower median of values[0..n): a real run's, not an average of two; 0 when
 * n is 0 or more than CLI_MAX_SAMPLES. */
size_t cli_lower_median_index(const double *values, size_t n);

/* GB/s (1e9 bytes per second); 0 when no time passed. The one rate every command quotes. */
double cli_gbps(double bytes, double seconds);

#endif /* SP_CLI_STATS_H */
