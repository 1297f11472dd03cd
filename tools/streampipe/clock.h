/* Wall-clock helpers for timing and seeding. */
#ifndef SP_CLI_CLOCK_H
#define SP_CLI_CLOCK_H

/* Seconds on a monotonic clock, for intervals only. */
double cli_now_s(void);

/* A seed that differs from run to run, taken from the real-time clock. Kept below 2^32 so
 * that it survives a JSON reader that holds numbers as doubles. */
unsigned long long cli_clock_seed(void);

#endif /* SP_CLI_CLOCK_H */
