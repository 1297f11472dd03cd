/* Parsing of option values, shared by the subcommands. */
#ifndef SP_CLI_ARGS_H
#define SP_CLI_ARGS_H

#include <stddef.h>

#include "streampipe.h"

/* A count: decimal digits with an optional binary suffix (k = 2^10, M = 2^20, G = 2^30), or a
 * power of two written "2^N". Returns 0 and sets *out when `text` is one and is <= max;
 * -1 otherwise. "128M", "2^27" and "134217728" are the same count. */
int args_parse_count(const char *text, unsigned long long max, unsigned long long *out);

/* The index of `text` among names[0..n), or -1. */
int args_parse_choice(const char *text, const char *const *names, size_t n);

/* The value of option --name as a count in [min, max] into *field; CLI_EXIT_OK, or a usage
 * error (exit 64) naming the option. */
int args_count_option(const char *name, const char *value, unsigned long long min,
                      unsigned long long max, unsigned long long *field);
/* --backend auto|host|cuda. */
int args_backend_option(const char *value, sp_backend_kind *kind);
/* --graph off|on|auto. */
int args_graph_option(const char *value, sp_graph_mode *mode);
/* --device N. */
int args_device_option(const char *value, int *device);

#endif /* SP_CLI_ARGS_H */
