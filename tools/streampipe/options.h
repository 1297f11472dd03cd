/* Command-line options, declared once per command in a table: each entry gives the name, the
 * kind and range of its value, where it goes in the command's configuration struct and its
 * help. getopt_long's list, the checking of every value and the usage text all come from the
 * table, so an option is written in one place. */
#ifndef SP_CLI_OPTIONS_H
#define SP_CLI_OPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "streampipe.h"

typedef enum cli_option_kind {
    CLI_OPT_COUNT,  /* a count in [min, max] into an unsigned field (see cli_parse_count) */
    CLI_OPT_AUTO,   /* the same, or "auto" for 0: the library's choice (chunk, depth) */
    CLI_OPT_CHOICE, /* one of "a|b|c" into an int or enum field: its index in the list */
    CLI_OPT_FLAG,   /* no value; sets an int field to 1 */
    CLI_OPT_STRING, /* the text itself into a const char * field */
    CLI_OPT_APPLY   /* the text handed to `apply`, for values no other kind describes */
} cli_option_kind;

typedef struct cli_option {
    const char *name;
    cli_option_kind kind;
    const char *value;            /* the value's name in the usage ("N", "FILE"); CHOICE:
                                     the names, "off|on|auto"; NULL for a flag */
    unsigned long long min, max;  /* COUNT, AUTO */
    size_t offset, size;          /* the field in the command's configuration struct */
    int required;                 /* the command refuses to run without it */
    int (*apply)(const char *value, void *config); /* APPLY: CLI_EXIT_OK or a usage error */
    const char *help;             /* '\n' starts a continuation line */
    int list;                     /* COUNT, AUTO: a cli_list field, "A,B,..." or "sweep" */
} cli_option;

/* The most items of a list-valued option. */
#define CLI_MAX_LIST_ITEMS 32

/* A list-valued option's field, llama-bench style: "1M,4M,16M", each item checked as the
 * option's one value would be ("auto" is 0 where the option takes it), or "sweep": the
 * command's own list of values, which the command fills in. n is 0 until the option is
 * given; a later --NAME replaces an earlier one's list. */
typedef struct cli_list {
    size_t n;
    int sweep;
    unsigned long long items[CLI_MAX_LIST_ITEMS];
} cli_list;

#define CLI_FIELD(type, field) offsetof(type, field), sizeof(((type *)0)->field)

#define CLI_COUNT(name, value, type, field, min, max, help) \
    {name, CLI_OPT_COUNT, value, min, max, CLI_FIELD(type, field), 0, NULL, help, 0}
#define CLI_AUTO_COUNT(name, value, type, field, min, max, help) \
    {name, CLI_OPT_AUTO, value, min, max, CLI_FIELD(type, field), 0, NULL, help, 0}
/* The same two into a cli_list field. */
#define CLI_COUNT_LIST(name, value, type, field, min, max, help) \
    {name, CLI_OPT_COUNT, value, min, max, CLI_FIELD(type, field), 0, NULL, help, 1}
#define CLI_AUTO_LIST(name, value, type, field, min, max, help) \
    {name, CLI_OPT_AUTO, value, min, max, CLI_FIELD(type, field), 0, NULL, help, 1}
#define CLI_CHOICE(name, names, type, field, help) \
    {name, CLI_OPT_CHOICE, names, 0, 0, CLI_FIELD(type, field), 0, NULL, help, 0}
#define CLI_FLAG(name, type, field, help) \
    {name, CLI_OPT_FLAG, NULL, 0, 0, CLI_FIELD(type, field), 0, NULL, help, 0}
#define CLI_STRING(name, value, type, field, help) \
    {name, CLI_OPT_STRING, value, 0, 0, CLI_FIELD(type, field), 0, NULL, help, 0}
#define CLI_REQUIRED(name, value, type, field, help) \
    {name, CLI_OPT_STRING, value, 0, 0, CLI_FIELD(type, field), 1, NULL, help, 0}
#define CLI_APPLY(name, value, fn, help) {name, CLI_OPT_APPLY, value, 0, 0, 0, 0, 0, fn, help, 0}

/* The options every command that opens a context has, with the same words everywhere. The
 * choice's order is sp_backend_kind's: AUTO, HOST, CUDA. */
#define CLI_BACKEND_OPTION(type)                                                       \
    CLI_CHOICE("backend", "auto|host|cuda", type, backend,                             \
               "backend (default auto: CUDA when a GPU is present)")
#define CLI_DEVICE_OPTION(type) \
    CLI_COUNT("device", "N", type, device, 0, INT_MAX, "GPU index (default 0)")
/* The ring's settings where the library may choose them: auto, or 0, the library's pick
 * within --max-pinned / --max-device, the chunk re-picked (under such a budget) while a run
 * goes when no per-chunk timeline is being taken (sp_pipeline_tune_changes lists each
 * change). The chunk's help
 * says the command's default (a bench workload may set one). */
#define CLI_CHUNK_OPTION(type, field, max, help) \
    CLI_AUTO_COUNT("chunk", "N|auto", type, field, 0, max, help)
#define CLI_DEPTH_HELP "slots in the buffer ring (default auto, also 0:\nthe library's choice)"
#define CLI_DEPTH_OPTION(type, field) \
    CLI_AUTO_COUNT("depth", "K|auto", type, field, 0, SP_MAX_DEPTH, CLI_DEPTH_HELP)
/* bench's: a list of them (a cli_list field); `more` follows the depth's help. */
#define CLI_CHUNK_LIST_OPTION(type, field, max, help) \
    CLI_AUTO_LIST("chunk", "N|auto,...", type, field, 0, max, help)
#define CLI_DEPTH_LIST_OPTION(type, field, more) \
    CLI_AUTO_LIST("depth", "K|auto,...", type, field, 0, SP_MAX_DEPTH, CLI_DEPTH_HELP more)
#define CLI_JSON_OPTION(type) \
    CLI_FLAG("json", type, json, "one JSON object on stdout instead of text")
/* The most sinmix iterations per element that bench --iters (and its iters sweep) and run's
 * sinmix:iters=N take: on two CPU cores 1000 already takes half a minute over bench's small
 * workload, so a million is hours, and more only looks like a hang. */
#define CLI_SINMIX_MAX_ITERS 1000000ULL
/* sp_graph_mode's order: OFF, ON, AUTO. */
#define CLI_GRAPH_NAMES "off|on|auto"
/* sp_timeline_mode's order: SAMPLED, CUPTI, OFF, EVENTS. */
#define CLI_TIMELINE_NAMES "sampled|cupti|off|events"

/* A command: its options and the text around them in --help. */
typedef struct cli_command_options {
    const char *command;          /* "bench": names the command in messages */
    const char *intro;            /* the usage line and what the command does */
    const cli_option *options;
    size_t n_options;
    const char *outro;            /* after the option list; may be NULL */
    void (*print_more)(FILE *out); /* more text after that, made from other tables; or NULL */
} cli_command_options;

/* Parses argv (argv[0] is the command's name) into `config`, which holds the defaults.
 * --help and -h print the usage on stdout and return CLI_EXIT_HELP. Returns CLI_EXIT_OK, or
 * CLI_EXIT_USAGE after saying why on stderr. */
int cli_parse_options(const cli_command_options *command, int argc, char **argv, void *config);

/* The option called `name`, or NULL: for checks that take an option's range elsewhere. */
const cli_option *cli_find_option(const cli_command_options *command, const char *name);

/* A count: decimal digits with an optional binary suffix (k = 2^10, M = 2^20, G = 2^30), or a
 * power of two written "2^N". Returns 0 and sets *out when `text` is one and is <= max;
 * -1 otherwise. "128M", "2^27" and "134217728" are the same count. */
int cli_parse_count(const char *text, unsigned long long max, unsigned long long *out);

/* Copies the next comma-separated item of *cursor into item and moves past it (*cursor is
 * NULL after the last item). Returns -1 when the item does not fit. */
int cli_next_item(const char **cursor, char *item, size_t size);

#endif /* SP_CLI_OPTIONS_H */
