/*
 * The safetensors JSON header -> a table of tensors, with cJSON (the one file that uses it).
 * Only structure and value types are checked here; sizes and offsets in safetensors.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp/model/model_error.h"
#include "mlp/model/safetensors.h"

#ifdef SP_HAVE_CJSON
#include <cjson/cJSON.h>

#define METADATA_KEY "__metadata__"
#define EXACT_INTEGER_LIMIT 9007199254740992.0 /* 2^53: cJSON holds numbers as doubles */

/* A JSON number that is a whole number in [0, 2^53): from 2^53 on, a double no longer holds
 * every integer, so 2^53 + 1 would read as 2^53. The range is checked before the conversion,
 * which would be undefined behaviour out of range. */
static int json_to_u64(const cJSON *item, uint64_t *out)
{
    if (!cJSON_IsNumber(item))
        return -1;
    double v = item->valuedouble;
    if (!(v >= 0.0 && v < EXACT_INTEGER_LIMIT) || floor(v) != v)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static sp_status parse_shape(const cJSON *shape, sp_st_tensor *t, char *err, size_t size)
{
    if (!cJSON_IsArray(shape))
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': \"shape\" is not an array", t->name);
    const cJSON *dim;
    t->rank = 0;
    cJSON_ArrayForEach(dim, shape)
    {
        if (t->rank == SP_ST_MAX_RANK)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s': more than %d dimensions", t->name, SP_ST_MAX_RANK);
        if (json_to_u64(dim, &t->shape[t->rank]) != 0)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s': dimension %zu is not a whole number in [0, 2^53)",
                                 t->name, t->rank);
        t->rank++;
    }
    return SP_OK;
}

static sp_status parse_offsets(const cJSON *offsets, sp_st_tensor *t, char *err, size_t size)
{
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': \"data_offsets\" is not an array of two numbers",
                             t->name);
    if (json_to_u64(cJSON_GetArrayItem(offsets, 0), &t->begin) != 0 ||
        json_to_u64(cJSON_GetArrayItem(offsets, 1), &t->end) != 0)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': a data offset is not a whole number in [0, 2^53)",
                             t->name);
    return SP_OK;
}

static sp_status parse_dtype(const cJSON *dtype, sp_st_tensor *t, char *err, size_t size)
{
    if (!cJSON_IsString(dtype))
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': \"dtype\" is not a string", t->name);
    int known = sp_st_dtype_from_name(dtype->valuestring);
    if (known < 0)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': unknown dtype \"%.32s\"", t->name, dtype->valuestring);
    t->dtype = (sp_st_dtype)known;
    return SP_OK;
}

/* {"dtype", "shape", "data_offsets"}: each exactly once, nothing else. */
static sp_status parse_entry(const cJSON *entry, sp_st_tensor *t, char *err, size_t size)
{
    if (!cJSON_IsObject(entry))
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': its entry is not an object", t->name);
    int seen_dtype = 0, seen_shape = 0, seen_offsets = 0;
    const cJSON *field;
    cJSON_ArrayForEach(field, entry)
    {
        const char *key = field->string ? field->string : "";
        int *seen = strcmp(key, "dtype") == 0          ? &seen_dtype
                    : strcmp(key, "shape") == 0        ? &seen_shape
                    : strcmp(key, "data_offsets") == 0 ? &seen_offsets
                                                       : NULL;
        if (seen == NULL)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s': unknown field \"%.32s\"", t->name, key);
        if ((*seen)++)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s': field \"%s\" appears twice", t->name, key);
        sp_status st = seen == &seen_dtype   ? parse_dtype(field, t, err, size)
                       : seen == &seen_shape ? parse_shape(field, t, err, size)
                                             : parse_offsets(field, t, err, size);
        if (st != SP_OK)
            return st;
    }
    if (!seen_dtype || !seen_shape || !seen_offsets)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': missing \"%s\"", t->name,
                             !seen_dtype ? "dtype" : !seen_shape ? "shape" : "data_offsets");
    return SP_OK;
}

static sp_status check_metadata(const cJSON *metadata, char *err, size_t size)
{
    if (!cJSON_IsObject(metadata))
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "\"" METADATA_KEY "\" is not an object");
    const cJSON *item;
    cJSON_ArrayForEach(item, metadata)
    {
        if (!cJSON_IsString(item))
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "\"" METADATA_KEY "\" value \"%.32s\" is not a string",
                                 item->string ? item->string : "");
    }
    return SP_OK;
}

/* Tensors are every key but the metadata; the metadata may appear once. */
static sp_status count_tensors(const cJSON *root, size_t *count, char *err, size_t size)
{
    size_t tensors = 0, metadata = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (item->string != NULL && strcmp(item->string, METADATA_KEY) == 0)
            metadata++;
        else
            tensors++;
    }
    if (metadata > 1)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "\"" METADATA_KEY "\" appears %zu times", metadata);
    if (tensors > SP_ST_MAX_TENSORS)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "%zu tensors; at most %d are accepted", tensors, SP_ST_MAX_TENSORS);
    *count = tensors;
    return SP_OK;
}

static sp_status parse_tensor(const cJSON *item, sp_st_tensor *t, char *err, size_t size)
{
    const char *name = item->string ? item->string : "";
    size_t length = strlen(name);
    if (length == 0 || length > SP_ST_MAX_NAME)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "a tensor name is %s (%zu bytes; 1..%d accepted)",
                             length == 0 ? "empty" : "too long", length, SP_ST_MAX_NAME);
    memcpy(t->name, name, length + 1);
    return parse_entry(item, t, err, size);
}

static sp_status fill_tensors(const cJSON *root, sp_st_file *file, char *err, size_t size)
{
    sp_status st = count_tensors(root, &file->n_tensors, err, size);
    if (st != SP_OK)
        return st;
    file->tensors = calloc(file->n_tensors ? file->n_tensors : 1, sizeof *file->tensors);
    if (file->tensors == NULL)
        return sp_model_fail(err, size, SP_ERR_OUT_OF_MEMORY, "no memory for %zu tensors",
                             file->n_tensors);
    size_t next = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (item->string != NULL && strcmp(item->string, METADATA_KEY) == 0)
            st = check_metadata(item, err, size);
        else
            st = parse_tensor(item, &file->tensors[next++], err, size);
        if (st != SP_OK)
            return st;
    }
    return SP_OK;
}

/* The JSON must fill the header: only whitespace (the writers' padding) may follow it. */
static int only_whitespace(const char *p, const char *end)
{
    for (; p < end; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            return 0;
    return 1;
}

/* cJSON gets its own terminated copy: the file's bytes carry no terminator of their own. */
static sp_status parse_json(const char *text, size_t length, cJSON **root, char *err,
                            size_t size)
{
    char *copy = malloc(length + 1);
    if (copy == NULL)
        return sp_model_fail(err, size, SP_ERR_OUT_OF_MEMORY,
                             "no memory for the %zu-byte header", length);
    memcpy(copy, text, length);
    copy[length] = '\0';
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(copy, length, &end, 0);
    sp_status st = SP_OK;
    if (*root == NULL)
        st = sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                           "the header is not valid JSON (error near byte %td of %zu)",
                           end != NULL ? end - copy : (ptrdiff_t)0, length);
    else if (!only_whitespace(end, copy + length))
        st = sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                           "the header has bytes after its JSON value (at byte %td of %zu)",
                           end - copy, length);
    else if (!cJSON_IsObject(*root))
        st = sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                           "the header is JSON but not an object");
    free(copy);
    if (st != SP_OK) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    return st;
}

sp_status sp_st_parse_header(const char *text, size_t length, sp_st_file *file, char *err,
                             size_t err_size)
{
    cJSON *root = NULL;
    sp_status st = parse_json(text, length, &root, err, err_size);
    /* before any value is read: a name or dtype cut short at a NUL, or a float standing for
     * an integer, would otherwise read as a valid one */
    if (st == SP_OK)
        st = sp_st_check_header_text(text, length, err, err_size);
    if (st == SP_OK)
        st = fill_tensors(root, file, err, err_size);
    cJSON_Delete(root);
    return st;
}

#else /* no cJSON */

sp_status sp_st_parse_header(const char *text, size_t length, sp_st_file *file, char *err,
                             size_t err_size)
{
    (void)text;
    (void)length;
    (void)file;
    return sp_model_fail(err, err_size, SP_ERR_UNSUPPORTED,
                         "this build has no JSON parser (configure with cJSON: install "
                         "libcjson-dev or set SP_CJSON_ROOT) so it cannot read safetensors");
}

#endif
