/*
 * safetensors framing and consistency: the header length, each tensor's byte count against its
 * dtype and shape, and the tensors tiling the data section. The JSON itself is read in
 * safetensors_json.c. See safetensors.h for the format and the full list of checks.
 */
#include <stdlib.h>
#include <string.h>

#include "mlp/model/model_error.h"
#include "mlp/model/safetensors.h"

#define LENGTH_BYTES 8

static const struct {
    const char *name;
    size_t size;
} dtype_table[SP_ST_DTYPES] = {
    [SP_ST_BOOL] = {"BOOL", 1},  [SP_ST_U8] = {"U8", 1},     [SP_ST_I8] = {"I8", 1},
    [SP_ST_F8_E4M3] = {"F8_E4M3", 1}, [SP_ST_F8_E5M2] = {"F8_E5M2", 1},
    [SP_ST_U16] = {"U16", 2},    [SP_ST_I16] = {"I16", 2},   [SP_ST_F16] = {"F16", 2},
    [SP_ST_BF16] = {"BF16", 2},  [SP_ST_U32] = {"U32", 4},   [SP_ST_I32] = {"I32", 4},
    [SP_ST_F32] = {"F32", 4},    [SP_ST_U64] = {"U64", 8},   [SP_ST_I64] = {"I64", 8},
    [SP_ST_F64] = {"F64", 8},
};

const char *sp_st_dtype_name(sp_st_dtype dtype)
{
    return (unsigned)dtype < SP_ST_DTYPES ? dtype_table[dtype].name : "?";
}

size_t sp_st_dtype_size(sp_st_dtype dtype)
{
    return (unsigned)dtype < SP_ST_DTYPES ? dtype_table[dtype].size : 0;
}

int sp_st_dtype_from_name(const char *name)
{
    for (int i = 0; i < SP_ST_DTYPES; i++)
        if (name != NULL && strcmp(name, dtype_table[i].name) == 0)
            return i;
    return -1;
}

/* ---- the checks ---------------------------------------------------------------------------- */

/* Elements times element size, or an error when the product does not fit in 64 bits. */
static sp_status tensor_bytes(const sp_st_tensor *t, uint64_t *bytes, char *err, size_t size)
{
    uint64_t product = sp_st_dtype_size(t->dtype);
    for (size_t d = 0; d < t->rank; d++)
        if (__builtin_mul_overflow(product, t->shape[d], &product))
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s': its shape's byte count overflows", t->name);
    *bytes = product;
    return SP_OK;
}

static sp_status check_tensor(const sp_st_tensor *t, size_t data_bytes, char *err, size_t size)
{
    uint64_t bytes = 0;
    sp_status st = tensor_bytes(t, &bytes, err, size);
    if (st != SP_OK)
        return st;
    if (t->begin > t->end)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': data_offsets [%llu, %llu] have begin > end", t->name,
                             (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > data_bytes)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': data_offsets [%llu, %llu] are outside the %zu-byte "
                             "data section", t->name, (unsigned long long)t->begin,
                             (unsigned long long)t->end, data_bytes);
    if (t->end - t->begin != bytes)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s': data_offsets span %llu bytes but %s x shape needs %llu",
                             t->name, (unsigned long long)(t->end - t->begin),
                             sp_st_dtype_name(t->dtype), (unsigned long long)bytes);
    return SP_OK;
}

static int by_begin(const void *a, const void *b)
{
    const sp_st_tensor *x = *(const sp_st_tensor *const *)a, *y = *(const sp_st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end); /* empty tensors first at a shared offset */
}

static int by_name(const void *a, const void *b)
{
    const sp_st_tensor *x = *(const sp_st_tensor *const *)a, *y = *(const sp_st_tensor *const *)b;
    return strcmp(x->name, y->name);
}

/* Sorted by begin, each tensor must start where the previous one ended and the last must end
 * at the end of the data section: no overlap, no hole, no trailing bytes. */
static sp_status check_tiling(const sp_st_tensor **order, size_t n, size_t data_bytes,
                              char *err, size_t size)
{
    qsort(order, n, sizeof *order, by_begin);
    uint64_t covered = 0;
    for (size_t i = 0; i < n; i++) {
        if (order[i]->begin != covered)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s' starts at byte %llu of the data section, but the "
                                 "tensors before it end at %llu (%s)", order[i]->name,
                                 (unsigned long long)order[i]->begin,
                                 (unsigned long long)covered,
                                 order[i]->begin < covered ? "overlap" : "hole");
        covered = order[i]->end;
    }
    if (covered != data_bytes)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "the tensors cover %llu bytes but the data section has %zu",
                             (unsigned long long)covered, data_bytes);
    return SP_OK;
}

static sp_status check_unique_names(const sp_st_tensor **order, size_t n, char *err,
                                    size_t size)
{
    qsort(order, n, sizeof *order, by_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(order[i - 1]->name, order[i]->name) == 0)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s' appears twice in the header", order[i]->name);
    return SP_OK;
}

static sp_status check_all(const sp_st_file *file, char *err, size_t size)
{
    for (size_t i = 0; i < file->n_tensors; i++) {
        sp_status st = check_tensor(&file->tensors[i], file->data_bytes, err, size);
        if (st != SP_OK)
            return st;
    }
    const sp_st_tensor **order = malloc((file->n_tensors ? file->n_tensors : 1) * sizeof *order);
    if (order == NULL)
        return sp_model_fail(err, size, SP_ERR_OUT_OF_MEMORY, "no memory to sort %zu tensors",
                             file->n_tensors);
    for (size_t i = 0; i < file->n_tensors; i++)
        order[i] = &file->tensors[i];
    sp_status st = check_unique_names(order, file->n_tensors, err, size);
    if (st == SP_OK)
        st = check_tiling(order, file->n_tensors, file->data_bytes, err, size);
    free(order);
    return st;
}

/* ---- the file ------------------------------------------------------------------------------ */

static uint64_t read_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = LENGTH_BYTES - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static sp_status header_length(const unsigned char *bytes, size_t size, size_t *length,
                               char *err, size_t err_size)
{
    if (size < LENGTH_BYTES)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "the file has %zu bytes, fewer than the 8-byte header length",
                             size);
    uint64_t n = read_le64(bytes);
    if (n < 2 || n > SP_ST_MAX_HEADER_BYTES)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "header length %llu is not in [2, %u]", (unsigned long long)n,
                             SP_ST_MAX_HEADER_BYTES);
    if (n > size - LENGTH_BYTES)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "header length %llu runs past the end of the %zu-byte file "
                             "(truncated?)", (unsigned long long)n, size);
    *length = (size_t)n;
    return SP_OK;
}

sp_status sp_st_parse(const void *bytes, size_t size, sp_st_file *file, char *err,
                      size_t err_size)
{
    if (file == NULL || (bytes == NULL && size > 0))
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_st_parse: NULL argument");
    memset(file, 0, sizeof *file);
    const unsigned char *base = bytes;
    size_t length = 0;
    sp_status st = header_length(base, size, &length, err, err_size);
    if (st != SP_OK)
        return st;
    file->data = base + LENGTH_BYTES + length;
    file->data_bytes = size - LENGTH_BYTES - length;
    st = sp_st_parse_header((const char *)base + LENGTH_BYTES, length, file, err, err_size);
    if (st == SP_OK)
        st = check_all(file, err, err_size);
    if (st != SP_OK)
        sp_st_release(file);
    return st;
}

void sp_st_release(sp_st_file *file)
{
    if (file == NULL)
        return;
    free(file->tensors);
    memset(file, 0, sizeof *file);
}

const sp_st_tensor *sp_st_find(const sp_st_file *file, const char *name)
{
    for (size_t i = 0; file != NULL && name != NULL && i < file->n_tensors; i++)
        if (strcmp(file->tensors[i].name, name) == 0)
            return &file->tensors[i];
    return NULL;
}
