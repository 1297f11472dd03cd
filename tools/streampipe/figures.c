/* figures.h: one description of each figure, written as text or as JSON (by the small
 * streaming writer below). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "figures.h"

/* The formats are the callers' string literals, each beside the figure it shows; they come
 * here as arguments, which -Wformat-nonliteral cannot follow. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/* ---- JSON ------------------------------------------------------------------------------- */

static void write_escaped(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

/* The comma and the key that go before every item. */
static void item_prefix(json_writer *w, const char *key)
{
    if (w->has_items[w->depth])
        fputc(',', w->out);
    w->has_items[w->depth] = 1;
    if (key != NULL) {
        write_escaped(w->out, key);
        fputc(':', w->out);
    }
}

static void open_level(json_writer *w, const char *key, char bracket)
{
    item_prefix(w, key);
    fputc(bracket, w->out);
    if (w->depth + 1 < JSON_MAX_DEPTH)
        w->depth++;
    w->has_items[w->depth] = 0;
}

static void close_level(json_writer *w, char bracket)
{
    fputc(bracket, w->out);
    if (w->depth > 0)
        w->depth--;
}

static void json_object_open(json_writer *w, const char *key) { open_level(w, key, '{'); }
static void json_object_close(json_writer *w) { close_level(w, '}'); }
static void json_array_open(json_writer *w, const char *key) { open_level(w, key, '['); }
static void json_array_close(json_writer *w) { close_level(w, ']'); }

static void json_string(json_writer *w, const char *key, const char *value)
{
    item_prefix(w, key);
    write_escaped(w->out, value);
}

/* Not-a-number and infinities are written as null: JSON has no spelling for them. */
static void json_number(json_writer *w, const char *key, double value)
{
    item_prefix(w, key);
    if (isfinite(value))
        fprintf(w->out, "%.9g", value);
    else
        fputs("null", w->out);
}

static void json_uint(json_writer *w, const char *key, unsigned long long value)
{
    item_prefix(w, key);
    fprintf(w->out, "%llu", value);
}

static void json_bool(json_writer *w, const char *key, int value)
{
    item_prefix(w, key);
    fputs(value ? "true" : "false", w->out);
}

/* ---- figures ---------------------------------------------------------------------------- */

/* Labels take a column this wide, with the space after them, whatever their indent. */
#define LABEL_COLUMN 17

void fig_begin(fig_out *o, FILE *out, int json)
{
    memset(o, 0, sizeof *o);
    o->out = out;
    o->json = json;
    if (json) {
        o->w.out = out;
        json_object_open(&o->w, NULL);
    }
}

void fig_end(fig_out *o)
{
    if (o->json) {
        json_object_close(&o->w);
        fputc('\n', o->out); /* the document ends the line */
    }
}

/* The label's column; 0 when the text has no place for this figure. */
static int text_label(fig_out *o, const char *label)
{
    if (o->json || label == NULL)
        return 0;
    fprintf(o->out, "%*s%-*s ", o->indent, "", LABEL_COLUMN - 1, label);
    return 1;
}

void fig_num(fig_out *o, const char *key, const char *label, const char *fmt, double value)
{
    if (o->json && key != NULL)
        json_number(&o->w, key, value);
    if (text_label(o, label)) {
        fprintf(o->out, fmt, value);
        fputc('\n', o->out);
    }
}

void fig_percent(fig_out *o, const char *key, const char *label, const char *fmt,
                 double fraction)
{
    if (o->json && key != NULL)
        json_number(&o->w, key, fraction);
    if (text_label(o, label)) {
        fprintf(o->out, fmt, 100.0 * fraction);
        fputc('\n', o->out);
    }
}

void fig_uint(fig_out *o, const char *key, const char *label, const char *fmt,
              unsigned long long value)
{
    if (o->json && key != NULL)
        json_uint(&o->w, key, value);
    if (text_label(o, label)) {
        fprintf(o->out, fmt, value);
        fputc('\n', o->out);
    }
}

void fig_str(fig_out *o, const char *key, const char *label, const char *fmt,
             const char *value)
{
    if (o->json && key != NULL)
        json_string(&o->w, key, value);
    if (text_label(o, label)) {
        fprintf(o->out, fmt, value);
        fputc('\n', o->out);
    }
}

void fig_bool(fig_out *o, const char *key, const char *label, int value, const char *yes,
              const char *no)
{
    if (o->json && key != NULL)
        json_bool(&o->w, key, value);
    if (text_label(o, label))
        fprintf(o->out, "%s\n", value ? yes : no);
}

void fig_text(fig_out *o, const char *label, const char *fmt, ...)
{
    if (o->json)
        return;
    text_label(o, label);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->out, fmt, ap);
    va_end(ap);
}

void fig_group(fig_out *o, const char *key, const char *title)
{
    if (o->depth + 1 < JSON_MAX_DEPTH)
        o->depth++;
    o->indent_of[o->depth] = o->indent;
    if (o->json) {
        json_object_open(&o->w, key);
    } else if (title != NULL) {
        fprintf(o->out, "%*s%s\n", o->indent, "", title);
        o->indent += 2;
    }
}

void fig_group_end(fig_out *o)
{
    if (o->json)
        json_object_close(&o->w);
    o->indent = o->indent_of[o->depth];
    if (o->depth > 0)
        o->depth--;
}

void fig_numbers(fig_out *o, const char *key, const double *values, size_t n)
{
    if (!o->json)
        return;
    json_array_open(&o->w, key);
    for (size_t i = 0; i < n; i++)
        json_number(&o->w, NULL, values[i]);
    json_array_close(&o->w);
}

void fig_table(fig_out *o, const char *key, const fig_column *columns, size_t n_columns)
{
    if (o->json) {
        if (key != NULL)
            json_array_open(&o->w, key);
        o->table_key[o->depth] = key;
        return;
    }
    const char *gap = "";
    fprintf(o->out, "%*s", o->indent, "");
    for (size_t c = 0; c < n_columns; c++) {
        if (columns[c].header == NULL)
            continue;
        fprintf(o->out, "%s%*s", gap, columns[c].width, columns[c].header);
        gap = " ";
    }
    fputc('\n', o->out);
}

static void json_cell(json_writer *w, const fig_column *column, const fig_value *value)
{
    switch (column->kind) {
    case FIG_NUM:
    case FIG_PERCENT: json_number(w, column->key, value->num); break;
    case FIG_UINT: json_uint(w, column->key, value->uint); break;
    case FIG_AUTO:
        if (value->uint == 0)
            json_string(w, column->key, "auto");
        else
            json_uint(w, column->key, value->uint);
        break;
    case FIG_STR: json_string(w, column->key, value->str); break;
    case FIG_BOOL: json_bool(w, column->key, value->flag); break;
    case FIG_LIST:
        json_array_open(w, column->key);
        for (size_t i = 0; i < value->list.n; i++)
            json_number(w, NULL, value->list.values[i]);
        json_array_close(w);
        break;
    }
}

static void text_cell(FILE *out, const fig_column *column, const fig_value *value)
{
    char cell[128];
    switch (column->kind) {
    case FIG_NUM: snprintf(cell, sizeof cell, column->fmt, value->num); break;
    case FIG_PERCENT: snprintf(cell, sizeof cell, column->fmt, 100.0 * value->num); break;
    case FIG_UINT: snprintf(cell, sizeof cell, column->fmt, value->uint); break;
    case FIG_AUTO:
        if (value->uint == 0)
            snprintf(cell, sizeof cell, "auto");
        else
            snprintf(cell, sizeof cell, column->fmt, value->uint);
        break;
    case FIG_STR: snprintf(cell, sizeof cell, column->fmt, value->str); break;
    case FIG_BOOL: snprintf(cell, sizeof cell, column->fmt, value->flag ? "yes" : ""); break;
    case FIG_LIST: cell[0] = '\0'; break;
    }
    fprintf(out, "%*s", column->width, cell);
}

void fig_row(fig_out *o, const char *key, const fig_column *columns, size_t n_columns,
             const fig_value *values)
{
    if (o->json) {
        json_object_open(&o->w, key);
        for (size_t c = 0; c < n_columns; c++)
            if (columns[c].key != NULL)
                json_cell(&o->w, &columns[c], &values[c]);
        json_object_close(&o->w);
        return;
    }
    const char *gap = "";
    fprintf(o->out, "%*s", o->indent, "");
    for (size_t c = 0; c < n_columns; c++) {
        if (columns[c].header == NULL)
            continue;
        fputs(gap, o->out);
        text_cell(o->out, &columns[c], &values[c]);
        gap = " ";
    }
    fputc('\n', o->out);
}

void fig_table_end(fig_out *o)
{
    if (o->json && o->table_key[o->depth] != NULL)
        json_array_close(&o->w);
}
