/* Every figure a command prints is described once, by one call that names it for both
 * readers: the JSON key a script reads and the label and format a person reads. The same
 * code then writes either the text or the JSON object (--json), so the two cannot drift. */
#ifndef SP_CLI_FIGURES_H
#define SP_CLI_FIGURES_H

#include <stdio.h>

#define JSON_MAX_DEPTH 16

/* A minimal streaming JSON writer: one object of numbers, strings, objects and arrays. */
typedef struct json_writer {
    FILE *out;
    int depth;
    int has_items[JSON_MAX_DEPTH]; /* a comma is due before the next item at this depth */
} json_writer;

typedef struct fig_out {
    FILE *out;
    int json;
    json_writer w;
    int indent;                /* text: columns before a label */
    int indent_of[JSON_MAX_DEPTH];
    const char *table_key[JSON_MAX_DEPTH]; /* the open table's JSON array, or NULL */
    int depth;
} fig_out;

/* JSON: opens the top-level object. */
void fig_begin(fig_out *o, FILE *out, int json);
/* JSON: closes it and ends the line. */
void fig_end(fig_out *o);

/* One figure. Text: the label in a column of its own, then the value through `fmt` (a
 * printf format for one value, with any words around it). JSON: "key": value. A NULL key
 * leaves it out of the JSON, a NULL label out of the text. */
void fig_num(fig_out *o, const char *key, const char *label, const char *fmt, double value);
/* A fraction: the JSON has it as it is, the text as a percentage through `fmt`. */
void fig_percent(fig_out *o, const char *key, const char *label, const char *fmt,
                 double fraction);
void fig_uint(fig_out *o, const char *key, const char *label, const char *fmt,
              unsigned long long value);
void fig_str(fig_out *o, const char *key, const char *label, const char *fmt,
             const char *value);
/* JSON: true or false. Text: `yes` or `no` after the label. */
void fig_bool(fig_out *o, const char *key, const char *label, int value, const char *yes,
              const char *no);
/* Words for the text alone, printf-style: under `label` in the label column, or, with a NULL
 * label, as they are (a heading, a blank line). */
void fig_text(fig_out *o, const char *label, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A JSON object (an element of a list when key is NULL). Text: `title`, if not NULL, on a
 * line of its own, and what follows indented under it. */
void fig_group(fig_out *o, const char *key, const char *title);
void fig_group_end(fig_out *o);

/* A JSON array of numbers with no text: every run's time. */
void fig_numbers(fig_out *o, const char *key, const double *values, size_t n);

/* A table: text, a header line and a line per row; JSON, an object per row, in an array
 * named by fig_table's key, or, when that is NULL, each a member named by fig_row's key. */
typedef enum fig_kind {
    FIG_NUM,
    FIG_PERCENT, /* a fraction; the text shows it x 100 */
    FIG_UINT,
    FIG_STR,
    FIG_BOOL,
    FIG_LIST,    /* numbers: JSON only */
    FIG_AUTO     /* a uint where 0 is "auto", the library's choice: the string in both */
} fig_kind;

typedef struct fig_column {
    const char *key;    /* NULL: text only */
    const char *header; /* NULL: JSON only */
    int width;          /* text; negative: aligned left */
    const char *fmt;    /* text: the value's format, without the width */
    fig_kind kind;
} fig_column;

typedef union fig_value {
    double num;
    unsigned long long uint;
    const char *str;
    int flag;
    struct {
        const double *values;
        size_t n;
    } list;
} fig_value;

void fig_table(fig_out *o, const char *key, const fig_column *columns, size_t n_columns);
void fig_row(fig_out *o, const char *key, const fig_column *columns, size_t n_columns,
             const fig_value *values);
void fig_table_end(fig_out *o);

#endif /* SP_CLI_FIGURES_H */
