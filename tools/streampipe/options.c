/* The option tables of options.h: getopt_long's list, value checks and the usage text. Values
 * are checked strictly: a typo must be a usage error, never a silent zero. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

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

static int suffix_shift(const char *suffix, unsigned *shift)
{
    static const char units[] = "kmg";
    const char *unit = suffix[0] != '\0' ? strchr(units, tolower((unsigned char)suffix[0]))
                                         : NULL;
    if (suffix[0] == '\0')
        *shift = 0;
    else if (unit != NULL && suffix[1] == '\0')
        *shift = 10 * (unsigned)(unit - units + 1);
    else
        return -1;
    return 0;
}

int cli_parse_count(const char *text, unsigned long long max, unsigned long long *out)
{
    unsigned long long value = 0;
    const char *end = NULL;
    unsigned shift = 0;
    if (strncmp(text, "2^", 2) == 0) {
        if (parse_digits(text + 2, &value, &end) != 0 || *end != '\0' || value > 63)
            return -1;
        value = 1ULL << value;
    } else {
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

int cli_next_item(const char **cursor, char *item, size_t size)
{
    const char *comma = strchr(*cursor, ',');
    size_t length = comma != NULL ? (size_t)(comma - *cursor) : strlen(*cursor);
    if (length >= size)
        return -1;
    memcpy(item, *cursor, length);
    item[length] = '\0';
    *cursor = comma != NULL ? comma + 1 : NULL;
    return 0;
}

/* ---- one value into its field ------------------------------------------------------------ */

/* Fields are unsigned, int or enum (4 bytes), or unsigned long long or size_t (8); the
 * option's range keeps the value inside the field's type. Returns -1 for another size. */
static int store(void *field, size_t size, unsigned long long value)
{
    unsigned narrow = (unsigned)value;
    if (size == sizeof narrow)
        memcpy(field, &narrow, sizeof narrow);
    else if (size == sizeof value)
        memcpy(field, &value, sizeof value);
    else
        return -1;
    return 0;
}

/* The index of `text` in "a|b|c", or -1. */
static int choice_index(const char *names, const char *text)
{
    size_t length = strlen(text);
    int index = 0;
    for (const char *name = names; name != NULL; index++) {
        const char *bar = strchr(name, '|');
        size_t n = bar != NULL ? (size_t)(bar - name) : strlen(name);
        if (n == length && strncmp(name, text, n) == 0)
            return index;
        name = bar != NULL ? bar + 1 : NULL;
    }
    return -1;
}

/* "--graph: 'x' is not off, on or auto". */
static int choice_error(const cli_option *o, const char *text)
{
    char list[256] = "";
    const char *last_bar = strrchr(o->value, '|');
    size_t used = 0;
    for (const char *c = o->value; *c != '\0' && used + 5 < sizeof list; c++) {
        if (*c != '|') {
            list[used++] = *c;
            continue;
        }
        const char *joint = c == last_bar ? " or " : ", ";
        memcpy(list + used, joint, strlen(joint));
        used += strlen(joint);
    }
    list[used] = '\0';
    return cli_usage_error("--%s: '%s' is not %s", o->name, text, list);
}

/* A COUNT or AUTO option's one value: "auto" is 0, the library's choice, where it is taken. */
static int parse_count_value(const cli_option *o, const char *text, unsigned long long *count)
{
    *count = 0;
    if (o->kind == CLI_OPT_AUTO && strcmp(text, "auto") == 0)
        return CLI_EXIT_OK;
    if (cli_parse_count(text, o->max, count) != 0 || *count < o->min)
        return cli_usage_error("--%s: '%s' is not a count in [%llu, %llu]", o->name, text,
                               o->min, o->max);
    return CLI_EXIT_OK;
}

/* "A,B,..." item by item into the cli_list field, or "sweep". */
static int apply_list(const cli_option *o, const char *text, cli_list *list)
{
    memset(list, 0, sizeof *list);
    if (strcmp(text, "sweep") == 0) {
        list->sweep = 1;
        return CLI_EXIT_OK;
    }
    for (const char *cursor = text; cursor != NULL; list->n++) {
        char item[32];
        if (list->n == CLI_MAX_LIST_ITEMS)
            return cli_usage_error("--%s: '%s' has more than %d items", o->name, text,
                                   CLI_MAX_LIST_ITEMS);
        if (cli_next_item(&cursor, item, sizeof item) != 0)
            return cli_usage_error("--%s: '%s' has an item too long to be a count", o->name,
                                   text);
        if (item[0] == '\0')
            return cli_usage_error("--%s: '%s' has an empty item", o->name, text);
        int rc = parse_count_value(o, item, &list->items[list->n]);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

static int apply_value(const cli_option *o, const char *text, void *config)
{
    char *field = (char *)config + o->offset;
    unsigned long long count = 0;
    int index = 0;
    int rc = CLI_EXIT_OK;
    switch (o->kind) {
    case CLI_OPT_AUTO:
    case CLI_OPT_COUNT:
        if (o->list && o->size != sizeof(cli_list))
            return cli_usage_error("internal: --%s's field is no cli_list", o->name);
        if (o->list)
            return apply_list(o, text, (cli_list *)(void *)field);
        rc = parse_count_value(o, text, &count);
        if (rc != CLI_EXIT_OK)
            return rc;
        break;
    case CLI_OPT_CHOICE:
        index = choice_index(o->value, text);
        if (index < 0)
            return choice_error(o, text);
        count = (unsigned long long)index;
        break;
    case CLI_OPT_FLAG: count = 1; break;
    case CLI_OPT_STRING: memcpy(field, &text, sizeof text); return CLI_EXIT_OK;
    case CLI_OPT_APPLY: return o->apply(text, config);
    }
    if (store(field, o->size, count) != 0)
        return cli_usage_error("internal: --%s's field has an unusual size", o->name);
    return CLI_EXIT_OK;
}

/* ---- the usage text ---------------------------------------------------------------------- */

#define HELP_COLUMN 26
#define HELP_INDENT (2 + HELP_COLUMN + 1) /* where each line of an option's help starts */
#define HELP_WIDTH 80                     /* a count's range goes on a line of its own past it */

/* A count as --help shows it: powers of two from 2^16 as "2^N", which the parser takes too
 * (2^40 reads better than 1099511627776), the others in decimal. */
static void format_count(unsigned long long value, char *buf, size_t size)
{
    int bit = 0;
    while (bit < 63 && (1ULL << bit) < value)
        bit++;
    if (value >= 1ULL << 16 && value == 1ULL << bit)
        snprintf(buf, size, "2^%d", bit);
    else
        snprintf(buf, size, "%llu", value);
}

/* "[1, 2^40]": a count's range, made from its table entry so that the help cannot drift from
 * what the parser takes; "" for other kinds. */
static const char *range_text(const cli_option *o, char *buf, size_t size)
{
    char min[32], max[32];
    if (o->kind != CLI_OPT_COUNT && o->kind != CLI_OPT_AUTO)
        return "";
    format_count(o->min, min, sizeof min);
    format_count(o->max, max, sizeof max);
    snprintf(buf, size, "[%s, %s]", min, max);
    return buf;
}

/* The help, its continuation lines indented, then `range` after its last line, or under it
 * when the line would pass HELP_WIDTH. */
static void print_option(FILE *out, const char *name, const char *value, const char *help,
                         const char *range)
{
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", name, value ? " " : "", value ? value : "");
    if (strlen(left) > HELP_COLUMN) /* a long one has its help on the lines below */
        fprintf(out, "  %s\n  %-*s ", left, HELP_COLUMN, "");
    else
        fprintf(out, "  %-*s ", HELP_COLUMN, left);
    size_t column = HELP_INDENT;
    for (const char *c = help; *c != '\0'; c++) {
        fputc(*c, out);
        column++;
        if (*c == '\n') {
            fprintf(out, "  %-*s ", HELP_COLUMN, "");
            column = HELP_INDENT;
        }
    }
    if (range[0] != '\0' && column + 1 + strlen(range) > HELP_WIDTH)
        fprintf(out, "\n  %-*s %s", HELP_COLUMN, "", range);
    else if (range[0] != '\0')
        fprintf(out, " %s", range);
    fputc('\n', out);
}

static void print_usage(const cli_command_options *command, FILE *out)
{
    fputs(command->intro, out);
    for (size_t i = 0; i < command->n_options; i++) {
        const cli_option *o = &command->options[i];
        char range[80];
        print_option(out, o->name, o->value, o->help, range_text(o, range, sizeof range));
    }
    print_option(out, "help", NULL, "this text", "");
    if (command->outro != NULL)
        fputs(command->outro, out);
    if (command->print_more != NULL)
        command->print_more(out);
}

const cli_option *cli_find_option(const cli_command_options *command, const char *name)
{
    for (size_t i = 0; i < command->n_options; i++)
        if (strcmp(command->options[i].name, name) == 0)
            return &command->options[i];
    return NULL;
}

/* ---- parsing ----------------------------------------------------------------------------- */

#define MAX_OPTIONS 64
#define HELP_CODE (256 + MAX_OPTIONS)

/* "infer: --model and --input are required (see --help)" when one of them is missing. */
static int check_required(const cli_command_options *command, const void *config)
{
    char names[256] = "";
    size_t n_required = 0, missing = 0, used = 0;
    for (size_t i = 0; i < command->n_options; i++)
        n_required += command->options[i].required;
    for (size_t i = 0, k = 0; i < command->n_options; i++) {
        const cli_option *o = &command->options[i];
        if (!o->required)
            continue;
        const char *value = NULL;
        memcpy(&value, (const char *)config + o->offset, sizeof value);
        missing += value == NULL;
        k++;
        const char *joint = k == 1 ? "" : k == n_required ? " and " : ", ";
        used += (size_t)snprintf(names + used, used < sizeof names ? sizeof names - used : 0,
                                 "%s--%s", joint, o->name);
    }
    if (missing == 0)
        return CLI_EXIT_OK;
    return cli_usage_error("%s: %s %s required (see --help)", command->command, names,
                           n_required == 1 ? "is" : "are");
}

int cli_parse_options(const cli_command_options *command, int argc, char **argv, void *config)
{
    struct option long_options[MAX_OPTIONS + 2];
    size_t n = command->n_options < MAX_OPTIONS ? command->n_options : MAX_OPTIONS;
    for (size_t i = 0; i < n; i++) {
        const cli_option *o = &command->options[i];
        int has_value = o->kind != CLI_OPT_FLAG;
        long_options[i] = (struct option){o->name, has_value ? required_argument : no_argument,
                                          NULL, (int)(256 + i)};
    }
    long_options[n] = (struct option){"help", no_argument, NULL, HELP_CODE};
    long_options[n + 1] = (struct option){NULL, 0, NULL, 0};
    optind = 1;
    opterr = 0; /* our own messages: getopt would name the program after the command */
    int code;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (code == 'h' || code == HELP_CODE) {
            print_usage(command, stdout);
            return CLI_EXIT_HELP;
        }
        if (code == '?')
            return cli_usage_error("%s: unknown option '%s' (see --help)", command->command,
                                   argv[optind - 1]);
        if (code == ':')
            return cli_usage_error("%s: option '%s' needs a value", command->command,
                                   argv[optind - 1]);
        int rc = apply_value(&command->options[code - 256], optarg, config);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("%s: unexpected argument '%s'", command->command, argv[optind]);
    return check_required(command, config);
}
