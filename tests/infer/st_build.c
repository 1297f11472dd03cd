/* See st_build.h. */
#include "st_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const struct {
    const char *name;
    size_t rows, cols; /* cols 0: a vector */
} digits_tensors[] = {
    {"fc1.weight", 256, 64}, {"fc1.bias", 256, 0},  {"fc2.weight", 256, 256},
    {"fc2.bias", 256, 0},    {"fc3.weight", 10, 256}, {"fc3.bias", 10, 0},
};
#define N_DIGITS_TENSORS (sizeof digits_tensors / sizeof digits_tensors[0])

static void put_f32(unsigned char *p, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(bits >> (8 * i));
}

int st_spec_digits(st_spec *spec, uint64_t seed)
{
    memset(spec, 0, sizeof *spec);
    size_t offset = 0;
    for (size_t i = 0; i < N_DIGITS_TENSORS; i++) {
        st_entry *e = &spec->entries[i];
        size_t cols = digits_tensors[i].cols ? digits_tensors[i].cols : 1;
        size_t count = digits_tensors[i].rows * cols;
        snprintf(e->name, sizeof e->name, "%s", digits_tensors[i].name);
        snprintf(e->dtype, sizeof e->dtype, "\"F32\"");
        if (digits_tensors[i].cols)
            snprintf(e->shape, sizeof e->shape, "[%zu,%zu]", digits_tensors[i].rows,
                     digits_tensors[i].cols);
        else
            snprintf(e->shape, sizeof e->shape, "[%zu]", digits_tensors[i].rows);
        snprintf(e->offsets, sizeof e->offsets, "[%zu,%zu]", offset, offset + 4 * count);
        offset += 4 * count;
    }
    spec->n = N_DIGITS_TENSORS;
    snprintf(spec->metadata, sizeof spec->metadata, "{\"format\":\"pt\",\"note\":\"test\"}");
    spec->data = malloc(offset);
    if (spec->data == NULL)
        return -1;
    spec->data_bytes = offset;
    test_rng rng;
    rng_init(&rng, seed);
    for (size_t i = 0; i < offset / 4; i++)
        put_f32(spec->data + 4 * i, (float)((double)rng_below(&rng, 20001) / 50000.0 - 0.2));
    return 0;
}

void st_spec_free(st_spec *spec)
{
    free(spec->data);
    spec->data = NULL;
}

/* Appends to a growing string; returns -1 when out of memory. */
static int append(char **text, size_t *len, size_t *cap, const char *piece)
{
    size_t n = strlen(piece);
    if (*len + n + 1 > *cap) {
        size_t grown = (*cap + n + 1) * 2;
        char *bigger = realloc(*text, grown);
        if (bigger == NULL)
            return -1;
        *text = bigger;
        *cap = grown;
    }
    memcpy(*text + *len, piece, n + 1);
    *len += n;
    return 0;
}

char *st_header_text(const st_spec *spec)
{
    char *text = NULL, piece[1024];
    size_t len = 0, cap = 0;
    int failed = append(&text, &len, &cap, "{");
    for (size_t i = 0; i < spec->n && !failed; i++) {
        const st_entry *e = &spec->entries[i];
        if (e->raw[0] != '\0')
            snprintf(piece, sizeof piece, "%s\"%s\":%s", i ? "," : "", e->name, e->raw);
        else
            snprintf(piece, sizeof piece,
                     "%s\"%s\":{\"dtype\":%s,\"shape\":%s,\"data_offsets\":%s}", i ? "," : "",
                     e->name, e->dtype, e->shape, e->offsets);
        failed = append(&text, &len, &cap, piece);
    }
    if (!failed && spec->metadata[0] != '\0') {
        snprintf(piece, sizeof piece, "%s\"__metadata__\":%s", spec->n ? "," : "",
                 spec->metadata);
        failed = append(&text, &len, &cap, piece);
    }
    if (!failed)
        failed = append(&text, &len, &cap, "}");
    if (failed) {
        free(text);
        return NULL;
    }
    return text;
}

unsigned char *st_file_bytes(const char *header, const unsigned char *data, size_t data_bytes,
                             size_t *size)
{
    size_t header_len = strlen(header);
    size_t padded = header_len + (8 - (8 + header_len) % 8) % 8;
    *size = 8 + padded + data_bytes;
    unsigned char *bytes = malloc(*size);
    if (bytes == NULL)
        return NULL;
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(bytes + 8, header, header_len);
    memset(bytes + 8 + header_len, ' ', padded - header_len);
    if (data_bytes > 0)
        memcpy(bytes + 8 + padded, data, data_bytes);
    return bytes;
}

unsigned char *st_spec_file(const st_spec *spec, size_t *size)
{
    char *header = st_header_text(spec);
    if (header == NULL)
        return NULL;
    unsigned char *bytes = st_file_bytes(header, spec->data, spec->data_bytes, size);
    free(header);
    return bytes;
}

int st_find(const st_spec *spec, const char *name)
{
    for (size_t i = 0; i < spec->n; i++)
        if (strcmp(spec->entries[i].name, name) == 0)
            return (int)i;
    return -1;
}

unsigned char *st_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *bytes = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        bytes = malloc((size_t)n + 1);
        if (bytes != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
            free(bytes);
            bytes = NULL;
        }
    }
    fclose(f);
    *size = n >= 0 ? (size_t)n : 0;
    return bytes;
}

/* ---- the loader as one call -------------------------------------------------------------- */

static sp_status adopt_load(sp_status st, sp_mlp **out, char *err, size_t err_size)
{
    if (err != NULL && err_size > 0)
        snprintf(err, err_size, "%s", out != NULL ? sp_mlp_last_error(*out) : "out is NULL");
    if (st != SP_OK && out != NULL) {
        sp_mlp_free(*out);
        *out = NULL;
    }
    return st;
}

sp_status st_load_bytes(const void *bytes, size_t size, sp_mlp **out, char *err,
                        size_t err_size)
{
    return adopt_load(sp_mlp_load_bytes(bytes, size, out), out, err, err_size);
}

sp_status st_load_file(const char *path, sp_mlp **out, char *err, size_t err_size)
{
    return adopt_load(sp_mlp_load_file(path, out), out, err, err_size);
}
