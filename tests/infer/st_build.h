/*
 * Safetensors files built in memory for the loader tests: a valid digits MLP (six F32
 * tensors with deterministic finite values) described field by field as JSON text, so that a
 * test can break exactly one field and write the file again.
 */
#ifndef SP_TEST_ST_BUILD_H
#define SP_TEST_ST_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_mlp.h"

#define ST_MAX_ENTRIES 16
#define ST_ERROR_SIZE 320 /* room for a loader's reason */

/* sp_mlp_load_bytes / sp_mlp_load_file as these tests use them: the model's reason copied
 * into err (NULL allowed), and a model that failed to load freed and *out set to NULL, so
 * that a rejection reads as one call. */
sp_status st_load_bytes(const void *bytes, size_t size, sp_mlp **out, char *err,
                        size_t err_size);
sp_status st_load_file(const char *path, sp_mlp **out, char *err, size_t err_size);

/* One header entry. Each field is JSON text written as is ("\"F32\"", "[256,64]"), so a test
 * can put anything there; `raw`, when set, replaces the whole value ({...}) instead. */
typedef struct st_entry {
    char name[160];
    char dtype[48];
    char shape[96];
    char offsets[96];
    char raw[256];
} st_entry;

typedef struct st_spec {
    st_entry entries[ST_MAX_ENTRIES];
    size_t n;
    char metadata[256]; /* the "__metadata__" value as JSON text; "" leaves it out */
    unsigned char *data; /* the data section (owned) */
    size_t data_bytes;
} st_spec;

/* The valid digits MLP: fc1..fc3 weights and biases, tiled in that order, with values drawn
 * from `seed` (small, finite, little-endian F32). */
int st_spec_digits(st_spec *spec, uint64_t seed);
void st_spec_free(st_spec *spec);

/* The header JSON of spec (malloc'd). */
char *st_header_text(const st_spec *spec);
/* length (8 bytes LE) + header + padding spaces to a multiple of 8 + data (malloc'd). */
unsigned char *st_file_bytes(const char *header, const unsigned char *data, size_t data_bytes,
                             size_t *size);
/* st_file_bytes of spec's own header. */
unsigned char *st_spec_file(const st_spec *spec, size_t *size);

/* The index of the entry called `name`, or -1. */
int st_find(const st_spec *spec, const char *name);

/* Reads a whole file (malloc'd); NULL when it cannot. */
unsigned char *st_read_file(const char *path, size_t *size);

#endif /* SP_TEST_ST_BUILD_H */
