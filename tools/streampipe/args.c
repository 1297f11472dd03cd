/* Option values are checked strictly: a typo must be a usage error, never a silent zero. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "args.h"
#include "cli.h"

/* Decimal digits only: strtoull alone would accept signs, spaces and hex. */
static int parse_digits(const char *text, unsigned long long *out, const char **end)
{
    if (!isdigit((unsigned char)text[0]))
        return -1;
    char *stop = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &stop, 10);
    if (errno == ERANGE)
        return -1;
    *out = value;
    *end = stop;
    return 0;
}

static int parse_power_of_two(const char *text, unsigned long long *out)
{
    unsigned long long exponent = 0;
    const char *end = NULL;
    if (parse_digits(text, &exponent, &end) != 0 || *end != '\0' || exponent > 63)
        return -1;
    *out = 1ULL << exponent;
    return 0;
}

static int suffix_shift(const char *suffix, unsigned *shift)
{
    if (suffix[0] == '\0') {
        *shift = 0;
        return 0;
    }
    if (suffix[1] != '\0')
        return -1;
    switch (suffix[0]) {
    case 'k': case 'K': *shift = 10; return 0;
    case 'm': case 'M': *shift = 20; return 0;
    case 'g': case 'G': *shift = 30; return 0;
    default: return -1;
    }
}

int args_parse_count(const char *text, unsigned long long max, unsigned long long *out)
{
    unsigned long long value = 0;
    if (strncmp(text, "2^", 2) == 0) {
        if (parse_power_of_two(text + 2, &value) != 0)
            return -1;
    } else {
        const char *end = NULL;
        unsigned shift = 0;
        if (parse_digits(text, &value, &end) != 0 || suffix_shift(end, &shift) != 0)
            return -1;
        if (shift > 0 && value > (~0ULL >> shift))
            return -1;
        value <<= shift;
    }
    if (value > max)
        return -1;
    *out = value;
    return 0;
}

int args_parse_choice(const char *text, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0)
            return (int)i;
    return -1;
}

int args_count_option(const char *name, const char *value, unsigned long long min,
                      unsigned long long max, unsigned long long *field)
{
    unsigned long long parsed = 0;
    if (args_parse_count(value, max, &parsed) != 0 || parsed < min)
        return cli_usage_error("--%s: '%s' is not a count in [%llu, %llu]", name, value, min,
                               max);
    *field = parsed;
    return CLI_EXIT_OK;
}

int args_backend_option(const char *value, sp_backend_kind *kind)
{
    static const char *const names[] = {"auto", "host", "cuda"};
    static const sp_backend_kind kinds[] = {SP_BACKEND_AUTO, SP_BACKEND_HOST, SP_BACKEND_CUDA};
    int index = args_parse_choice(value, names, sizeof names / sizeof names[0]);
    if (index < 0)
        return cli_usage_error("--backend: '%s' is not auto, host or cuda", value);
    *kind = kinds[index];
    return CLI_EXIT_OK;
}

int args_device_option(const char *value, int *device)
{
    unsigned long long parsed = 0;
    int rc = args_count_option("device", value, 0, INT_MAX, &parsed);
    if (rc == CLI_EXIT_OK)
        *device = (int)parsed;
    return rc;
}

int args_graph_option(const char *value, sp_graph_mode *mode)
{
    static const char *const names[] = {"off", "on", "auto"};
    int k = args_parse_choice(value, names, 3);
    if (k < 0)
        return cli_usage_error("--graph: '%s' is not on, off or auto", value);
    *mode = (sp_graph_mode)k; /* the enum's order: OFF, ON, AUTO */
    return CLI_EXIT_OK;
}
