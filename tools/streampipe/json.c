#include <math.h>

#include "json.h"

void json_begin(json_writer *w, FILE *out)
{
    w->out = out;
    w->depth = 0;
    w->has_items[0] = 0;
}

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

void json_object_open(json_writer *w, const char *key) { open_level(w, key, '{'); }
void json_object_close(json_writer *w) { close_level(w, '}'); }
void json_array_open(json_writer *w, const char *key) { open_level(w, key, '['); }
void json_array_close(json_writer *w) { close_level(w, ']'); }

void json_string(json_writer *w, const char *key, const char *value)
{
    item_prefix(w, key);
    write_escaped(w->out, value);
}

void json_number(json_writer *w, const char *key, double value)
{
    item_prefix(w, key);
    if (isfinite(value))
        fprintf(w->out, "%.9g", value);
    else
        fputs("null", w->out);
}

void json_uint(json_writer *w, const char *key, unsigned long long value)
{
    item_prefix(w, key);
    fprintf(w->out, "%llu", value);
}

void json_bool(json_writer *w, const char *key, int value)
{
    item_prefix(w, key);
    fputs(value ? "true" : "false", w->out);
}

void json_end(json_writer *w)
{
    fputc('\n', w->out);
}
