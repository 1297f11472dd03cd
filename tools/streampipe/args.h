/* Parsing of option values, shared by the subcommands. */
#ifndef SP_CLI_ARGS_H
#define SP_CLI_ARGS_H

#include <stddef.h>

/* A count: decimal digits with an optional binary suffix (k = 2^10, M = 2^20, G = 2^30), or a
 * power of two written "2^N". Returns 0 and sets *out when `text` is one and is <= max;
 * -1 otherwise. "128M", "2^27" and "134217728" are the same count. */
int args_parse_count(const char *text, unsigned long long max, unsigned long long *out);

/* The index of `text` among names[0..n), or -1. */
int args_parse_choice(const char *text, const char *const *names, size_t n);

#endif /* SP_CLI_ARGS_H */
