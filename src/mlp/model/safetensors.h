/*
 * A reader for the safetensors format, which trusts nothing in the file.
 *
 * The format: an 8-byte little-endian header length N, N bytes of JSON, then the data
 * section. The JSON is one object mapping each tensor name to
 *     {"dtype": "F32", "shape": [256, 64], "data_offsets": [begin, end]}
 * (offsets in bytes, relative to the start of the data section), plus an optional
 * "__metadata__" object of strings. The header may end with spaces (writers pad it so that
 * the data starts aligned).
 *
 * What is checked, each failure with its own reason: N is at least 2, within the file and at
 * most SP_ST_MAX_HEADER_BYTES; the JSON parses (with cJSON), starts with '{' (no byte-order
 * mark), fills the header exactly (only whitespace after it) and has the shape above, with no
 * unknown or repeated keys; no string holds a NUL or a raw control byte; dtypes are known;
 * every number is an integer in plain digits (no sign, fraction, exponent or leading zero), so
 * shapes and offsets are non-negative integers, which must be below 2^53; begin <= end, and
 * end - begin equals the element count times the element size (with overflow checks); and the
 * tensors tile the data section exactly: no overlaps, no holes, nothing after the last tensor.
 */
#ifndef SP_SAFETENSORS_H
#define SP_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

#define SP_ST_MAX_HEADER_BYTES (16u << 20) /* real headers of large models are ~1 MiB */
#define SP_ST_MAX_TENSORS 4096
#define SP_ST_MAX_RANK 8
#define SP_ST_MAX_NAME 127

typedef enum sp_st_dtype {
    SP_ST_BOOL, SP_ST_U8, SP_ST_I8, SP_ST_F8_E4M3, SP_ST_F8_E5M2, SP_ST_U16, SP_ST_I16,
    SP_ST_F16, SP_ST_BF16, SP_ST_U32, SP_ST_I32, SP_ST_F32, SP_ST_U64, SP_ST_I64, SP_ST_F64,
    SP_ST_DTYPES
} sp_st_dtype;

typedef struct sp_st_tensor {
    char name[SP_ST_MAX_NAME + 1];
    sp_st_dtype dtype;
    size_t rank;
    uint64_t shape[SP_ST_MAX_RANK];
    uint64_t begin, end; /* byte range within the data section */
} sp_st_tensor;

typedef struct sp_st_file {
    const unsigned char *data; /* the data section: points into the bytes given to sp_st_parse */
    size_t data_bytes;
    size_t n_tensors;
    sp_st_tensor *tensors; /* owned; in header order */
} sp_st_file;

/* Parses and checks bytes[0..size) (see above). On success *file describes it and points
 * into `bytes`, which must outlive it; release it with sp_st_release. On failure nothing is
 * left to release and err holds the reason. Status: SP_ERR_INVALID_ARGUMENT for a malformed
 * file, SP_ERR_OUT_OF_MEMORY, SP_ERR_UNSUPPORTED when built without cJSON. */
sp_status sp_st_parse(const void *bytes, size_t size, sp_st_file *file, char *err,
                      size_t err_size);
void sp_st_release(sp_st_file *file);

/* The tensor called `name`, or NULL. */
const sp_st_tensor *sp_st_find(const sp_st_file *file, const char *name);

/* "F32" and kin; "?" outside the enum. */
const char *sp_st_dtype_name(sp_st_dtype dtype);
/* Bytes per element. */
size_t sp_st_dtype_size(sp_st_dtype dtype);
/* The dtype spelled `name`; -1 when it is not one. */
int sp_st_dtype_from_name(const char *name);

/* ---- inside the reader ------------------------------------------------------------------- */

/* Parses the JSON header text[0..length) into file->tensors and file->n_tensors (allocated
 * here, also on failure; the caller releases them). Checks the structure and the types of the
 * values only: sp_st_parse checks sizes and offsets afterwards. In safetensors_json.c, the
 * one file that uses cJSON. */
sp_status sp_st_parse_header(const char *text, size_t length, sp_st_file *file, char *err,
                             size_t err_size);

/* The header's text, for what cJSON accepts silently (safetensors_text.c): the first byte is
 * '{', no string holds a NUL (escaped or raw) or another raw control byte, and every number is
 * plain digits. Only for text that cJSON has parsed: its lexing relies on that. */
sp_status sp_st_check_header_text(const char *text, size_t length, char *err, size_t size);

#endif /* SP_SAFETENSORS_H */
