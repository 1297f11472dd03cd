/* A minimal streaming JSON writer: enough for one object of numbers, strings and arrays. */
#ifndef SP_CLI_JSON_H
#define SP_CLI_JSON_H

#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json_writer {
    FILE *out;
    int depth;
    int has_items[JSON_MAX_DEPTH]; /* a comma is due before the next item at this depth */
} json_writer;

void json_begin(json_writer *w, FILE *out);
/* `key` is NULL for the top level and for array elements. */
void json_object_open(json_writer *w, const char *key);
void json_object_close(json_writer *w);
void json_array_open(json_writer *w, const char *key);
void json_array_close(json_writer *w);
void json_string(json_writer *w, const char *key, const char *value);
/* Not-a-number and infinities are written as null: JSON has no spelling for them. */
void json_number(json_writer *w, const char *key, double value);
void json_uint(json_writer *w, const char *key, unsigned long long value);
void json_bool(json_writer *w, const char *key, int value);
/* Ends the document with a newline. */
void json_end(json_writer *w);

#endif /* SP_CLI_JSON_H */
