/*
 * test_safetensors [filter]: the model loader against broken files. A valid digits MLP file
 * is built in memory, then broken in many ways: truncated at every length, every header byte
 * flipped, the length field set to absurd values, offsets that overlap, leave holes or run
 * past the end, wrong dtypes and shapes, missing, repeated and extra tensors, malformed JSON,
 * non-finite values, and thousands of random mutations. Every broken file must be rejected
 * with SP_ERR_INVALID_ARGUMENT and a reason, without crashing (CI runs this under ASan and
 * UBSan); a mutation that still leaves a valid file (a changed metadata character, say) must
 * load exactly the original weights.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "mlp/model/safetensors.h"
#include "digits_data.h"
#include "st_build.h"
#include "streampipe_mlp.h"

#ifndef SP_MODELS_DIR
#error "SP_MODELS_DIR must name the models/ folder"
#endif

static unsigned long g_rejected, g_accepted;

/* ---- helpers ------------------------------------------------------------------------------- */

static int same_weights(const sp_mlp *a, const sp_mlp *b)
{
    for (size_t l = 0; l < SP_MLP_LAYERS; l++) {
        sp_mlp_layer x = sp_mlp_layer_at(a, l), y = sp_mlp_layer_at(b, l);
        if (x.inputs != y.inputs || x.outputs != y.outputs ||
            memcmp(x.weight, y.weight, x.inputs * x.outputs * sizeof(float)) != 0 ||
            memcmp(x.bias, y.bias, x.outputs * sizeof(float)) != 0)
            return 0;
    }
    return 1;
}

/* Loads bytes: a rejection must say why and leave *out NULL; an acceptance must give exactly
 * `original` (NULL: acceptance is a failure). Returns 1 when rejected. */
static int verdict(const unsigned char *bytes, size_t size, const sp_mlp *original,
                   const char *what)
{
    static char sentinel;
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = (sp_mlp *)&sentinel; /* not NULL: the loader must clear it */
    sp_status st = st_load_bytes(bytes, size, &model, err, sizeof err);
    if (st != SP_OK) {
        g_rejected++;
        CHECK_MSG(st == SP_ERR_INVALID_ARGUMENT, "%s: status %s (%s)", what, sp_status_name(st),
                  err);
        CHECK_MSG(err[0] != '\0', "%s: rejected without a reason", what);
        CHECK_MSG(model == NULL, "%s: rejected but *out was not cleared", what);
        return 1;
    }
    g_accepted++;
    CHECK_MSG(original != NULL, "%s: a broken file was accepted", what);
    if (original != NULL)
        CHECK_MSG(same_weights(model, original), "%s: accepted with different weights", what);
    sp_mlp_free(model);
    return 0;
}

static void expect_rejected(const unsigned char *bytes, size_t size, const char *what)
{
    verdict(bytes, size, NULL, what);
}

/* Expects a rejection of bytes[0..size) whose reason contains `reason`; frees bytes. */
static void expect_bytes_rejected(unsigned char *bytes, size_t size, const char *reason,
                                  const char *what)
{
    if (!CHECK(bytes != NULL))
        return;
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = NULL;
    sp_status st = st_load_bytes(bytes, size, &model, err, sizeof err);
    harness_context("%s", what);
    if (CHECK_MSG(st == SP_ERR_INVALID_ARGUMENT, "%s: status %s", what, sp_status_name(st))) {
        g_rejected++;
        CHECK_HAS(err, reason);
    } else {
        g_accepted++;
    }
    harness_context("%s", "");
    sp_mlp_free(model);
    free(bytes);
}

/* Writes spec to bytes and expects a rejection whose reason contains `reason`. */
static void expect_spec_rejected(const st_spec *spec, const char *reason, const char *what)
{
    size_t size = 0;
    unsigned char *bytes = st_spec_file(spec, &size);
    expect_bytes_rejected(bytes, size, reason, what);
}

typedef struct valid_file {
    st_spec spec;
    unsigned char *bytes;
    size_t size;
    sp_mlp *model;
    size_t header_len;
} valid_file;

static int valid_file_make(valid_file *v)
{
    memset(v, 0, sizeof *v);
    if (!CHECK(st_spec_digits(&v->spec, harness_seed() ^ 0x57) == 0))
        return -1;
    v->bytes = st_spec_file(&v->spec, &v->size);
    if (!CHECK(v->bytes != NULL))
        return -1;
    char err[ST_ERROR_SIZE] = "";
    sp_status st = st_load_bytes(v->bytes, v->size, &v->model, err, sizeof err);
    if (!CHECK_MSG(st == SP_OK, "the valid file was rejected: %s", err))
        return -1;
    v->header_len = 0;
    for (int i = 7; i >= 0; i--)
        v->header_len = v->header_len << 8 | v->bytes[i];
    return 0;
}

static void valid_file_free(valid_file *v)
{
    sp_mlp_free(v->model);
    free(v->bytes);
    st_spec_free(&v->spec);
}

static void print_counts(const char *what)
{
    printf("  %s: %lu rejected, %lu accepted (still valid, same weights)\n", what, g_rejected,
           g_accepted);
    g_rejected = g_accepted = 0;
}

/* ---- valid files --------------------------------------------------------------------------- */

TEST(committed_model_loads)
{
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = NULL;
    sp_status st = st_load_file(SP_MODELS_DIR "/digits_mlp.safetensors", &model, err,
                                    sizeof err);
    if (!CHECK_MSG(st == SP_OK, "%s: %s", sp_status_name(st), err))
        return TEST_FAIL;
    static const size_t dims[SP_MLP_LAYERS][2] = {{64, 256}, {256, 256}, {256, 10}};
    for (size_t l = 0; l < SP_MLP_LAYERS; l++) {
        sp_mlp_layer layer = sp_mlp_layer_at(model, l);
        CHECK_EQ(layer.inputs, dims[l][0]);
        CHECK_EQ(layer.outputs, dims[l][1]);
        CHECK(layer.weight != NULL && layer.bias != NULL);
    }
    CHECK(sp_mlp_layer_at(model, SP_MLP_LAYERS).weight == NULL);
    CHECK(sp_mlp_layer_at(NULL, 0).weight == NULL);
    sp_mlp_free(model);
    sp_mlp_free(NULL);
    return TEST_OK;
}

TEST(built_model_round_trips)
{
    valid_file v;
    if (valid_file_make(&v) == 0) {
        /* the values come back exactly, in file order */
        const unsigned char *p = v.spec.data;
        for (size_t l = 0; l < SP_MLP_LAYERS; l++) {
            sp_mlp_layer layer = sp_mlp_layer_at(v.model, l);
            CHECK(memcmp(layer.weight, p, layer.inputs * layer.outputs * 4) == 0);
            p += layer.inputs * layer.outputs * 4;
            CHECK(memcmp(layer.bias, p, layer.outputs * 4) == 0);
            p += layer.outputs * 4;
        }
        CHECK_EQ(v.header_len % 8, 0);
    }
    valid_file_free(&v);
    return TEST_OK;
}

/* The generic reader: other dtypes, empty tensors, no metadata, tab padding, "{}". */
TEST(reader_accepts_other_valid_files)
{
    static const char *const headers[] = {
        "{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
        "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[3,11]},"
        "\"e\":{\"dtype\":\"F64\",\"shape\":[0,5],\"data_offsets\":[11,11]},"
        "\"s\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[11,15]}}",
        "{\"__metadata__\":{},\"x\":{\"shape\":[15],\"data_offsets\":[0,15],\"dtype\":\"I8\"}}\t",
    };
    unsigned char data[15];
    memset(data, 7, sizeof data);
    for (size_t i = 0; i < ARRAY_LEN(headers); i++) {
        size_t size = 0;
        unsigned char *bytes = st_file_bytes(headers[i], data, sizeof data, &size);
        sp_st_file file;
        char err[ST_ERROR_SIZE] = "";
        sp_status st = sp_st_parse(bytes, size, &file, err, sizeof err);
        CHECK_MSG(st == SP_OK, "header %zu: %s", i, err);
        if (st == SP_OK && i == 0) {
            const sp_st_tensor *b = sp_st_find(&file, "b"), *s = sp_st_find(&file, "s");
            CHECK(b != NULL && b->dtype == SP_ST_BF16 && b->rank == 2 && b->begin == 3);
            CHECK(s != NULL && s->rank == 0 && s->end == 15);
            CHECK(sp_st_find(&file, "missing") == NULL);
        }
        sp_st_release(&file);
        free(bytes);
    }
    size_t size = 0;
    unsigned char *empty = st_file_bytes("{}", NULL, 0, &size);
    sp_st_file file;
    CHECK(sp_st_parse(empty, size, &file, NULL, 0) == SP_OK && file.n_tensors == 0);
    sp_st_release(&file);
    /* ...but an MLP needs its tensors */
    expect_rejected(empty, size, "an empty header");
    free(empty);
    return TEST_OK;
}

/* ---- truncation and framing ----------------------------------------------------------------- */

/* Every prefix is rejected. Cuts that end inside the framing or the header get a buffer of
 * exactly their length, so that ASan sees any read past the end; longer cuts (into the data,
 * which the loader reads only once every check has passed) reuse the whole file's buffer with
 * a shorter size, which keeps 340 K parses fast. */
TEST(truncated_at_every_length)
{
    valid_file v;
    if (valid_file_make(&v) == 0) {
        const size_t exact_until = 8 + v.header_len + 64;
        for (size_t len = 0; len < v.size; len++) {
            unsigned char *cut = len <= exact_until ? malloc(len ? len : 1) : v.bytes;
            if (!CHECK(cut != NULL))
                break;
            if (cut != v.bytes)
                memcpy(cut, v.bytes, len);
            char what[64];
            snprintf(what, sizeof what, "truncated to %zu of %zu bytes", len, v.size);
            int rejected = verdict(cut, len, NULL, what);
            if (cut != v.bytes)
                free(cut);
            if (!CHECK_MSG(rejected, "%s: accepted", what))
                break;
        }
        /* one byte too many is as wrong as one too few */
        unsigned char *longer = malloc(v.size + 1);
        if (CHECK(longer != NULL)) {
            memcpy(longer, v.bytes, v.size);
            longer[v.size] = 0;
            expect_rejected(longer, v.size + 1, "a trailing byte after the data");
        }
        free(longer);
        print_counts("truncations");
    }
    valid_file_free(&v);
    return TEST_OK;
}

static void set_length_field(unsigned char *bytes, uint64_t value)
{
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)(value >> (8 * i));
}

TEST(header_length_field)
{
    valid_file v;
    if (valid_file_make(&v) == 0) {
        const uint64_t n = v.header_len, size = v.size;
        const uint64_t values[] = {0, 1, 2, n - 1, n + 1, n + 8, size - 8, size - 7, size,
                                   SP_ST_MAX_HEADER_BYTES, SP_ST_MAX_HEADER_BYTES + 1ull,
                                   1ull << 32, 1ull << 63, UINT64_MAX, UINT64_MAX - 7};
        for (size_t i = 0; i < ARRAY_LEN(values); i++) {
            set_length_field(v.bytes, values[i]);
            char what[64];
            snprintf(what, sizeof what, "header length %llu (real %llu)",
                     (unsigned long long)values[i], (unsigned long long)n);
            expect_rejected(v.bytes, v.size, what);
        }
        set_length_field(v.bytes, n);
        CHECK(verdict(v.bytes, v.size, v.model, "the restored file") == 0);
        print_counts("length fields");
    }
    valid_file_free(&v);
    return TEST_OK;
}

/* ---- the header, byte by byte ---------------------------------------------------------------- */

TEST(every_header_byte_flipped)
{
    static const unsigned char replacements[] = {'{', '}', '[', ']', '"', ':', ',', '0', '9',
                                                 '-', '.', 'e', ' ', 'A', '\\', 0, 0x80, 0xff};
    valid_file v;
    if (valid_file_make(&v) == 0) {
        for (size_t at = 8; at < 8 + v.header_len; at++) {
            const unsigned char keep = v.bytes[at];
            for (size_t r = 0; r < ARRAY_LEN(replacements) + 3; r++) {
                const unsigned bit = 1u << (r * 3 % 8);
                const unsigned char flipped =
                    r < ARRAY_LEN(replacements) ? replacements[r] : (unsigned char)(keep ^ bit);
                if (flipped == keep)
                    continue;
                v.bytes[at] = flipped;
                char what[80];
                snprintf(what, sizeof what, "header byte %zu: 0x%02x -> 0x%02x", at - 8, keep,
                         flipped);
                verdict(v.bytes, v.size, v.model, what);
            }
            v.bytes[at] = keep;
        }
        print_counts("header byte flips");
    }
    valid_file_free(&v);
    return TEST_OK;
}

/* ---- one field at a time --------------------------------------------------------------------- */

typedef struct field_case {
    const char *tensor;
    int field; /* 0 dtype, 1 shape, 2 offsets, 3 raw */
    const char *text;
    const char *reason; /* a word the rejection must contain */
} field_case;

static void run_field_cases(const field_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        st_spec spec;
        if (!CHECK(st_spec_digits(&spec, 3) == 0))
            return;
        int at = st_find(&spec, cases[i].tensor);
        if (!CHECK(at >= 0)) {
            st_spec_free(&spec);
            continue;
        }
        st_entry *e = &spec.entries[at];
        char *field[] = {e->dtype, e->shape, e->offsets, e->raw};
        const size_t field_size[] = {sizeof e->dtype, sizeof e->shape, sizeof e->offsets,
                                     sizeof e->raw};
        snprintf(field[cases[i].field], field_size[cases[i].field], "%s", cases[i].text);
        char what[200];
        snprintf(what, sizeof what, "%s field %d = %s", cases[i].tensor, cases[i].field,
                 cases[i].text);
        expect_spec_rejected(&spec, cases[i].reason, what);
        st_spec_free(&spec);
    }
}

TEST(bad_offsets)
{
    /* fc2.bias really is at [328704, 329728] */
    static const field_case cases[] = {
        {"fc2.bias", 2, "[0,1024]", "overlap"}, /* fc2.bias's size, on top of fc1.weight */
        {"fc2.bias", 2, "[328704,329724]", "span"},
        {"fc2.bias", 2, "[328708,329732]", "starts at"},
        {"fc2.bias", 2, "[329728,328704]", "begin > end"},
        {"fc2.bias", 2, "[329728,0]", "begin > end"},
        {"fc2.bias", 2, "[328704,999999999]", "outside"},
        {"fc2.bias", 2, "[-1,1023]", "whole number"},
        {"fc2.bias", 2, "[328704.5,329728]", "whole number"},
        {"fc2.bias", 2, "[1e300,1e300]", "whole number"},
        {"fc2.bias", 2, "[9007199254740993,9007199254740993]", "whole number"},
        {"fc2.bias", 2, "[18446744073709551615,0]", "whole number"},
        {"fc2.bias", 2, "[\"328704\",329728]", "whole number"},
        {"fc2.bias", 2, "[328704]", "two numbers"},
        {"fc2.bias", 2, "[328704,329728,0]", "two numbers"},
        {"fc2.bias", 2, "[]", "two numbers"},
        {"fc2.bias", 2, "{}", "two numbers"},
        {"fc2.bias", 2, "null", "two numbers"},
        {"fc1.weight", 2, "[0,65532]", "span"},
        {"fc3.bias", 2, "[339968,340012]", "outside"},
    };
    run_field_cases(cases, ARRAY_LEN(cases));
    /* overlap: fc1.bias moved onto the end of fc1.weight, the hole after it left empty */
    st_spec spec;
    if (CHECK(st_spec_digits(&spec, 4) == 0)) {
        snprintf(spec.entries[1].offsets, sizeof spec.entries[1].offsets, "[65532,66556]");
        expect_spec_rejected(&spec, "overlap", "fc1.bias overlapping fc1.weight");
        snprintf(spec.entries[1].offsets, sizeof spec.entries[1].offsets, "[65540,66564]");
        expect_spec_rejected(&spec, "", "fc1.bias leaving a hole");
        st_spec_free(&spec);
    }
    print_counts("offsets");
    return TEST_OK;
}

TEST(wrong_dtypes_and_shapes)
{
    static const field_case cases[] = {
        {"fc1.weight", 0, "\"F16\"", ""},   /* span mismatch or dtype, whichever is first */
        {"fc1.weight", 0, "\"F64\"", ""},
        {"fc1.bias", 0, "\"I32\"", "F32 is required"},
        {"fc1.bias", 0, "\"U32\"", "F32 is required"},
        {"fc1.bias", 0, "\"f32\"", "unknown dtype"},
        {"fc1.bias", 0, "\"F32 \"", "unknown dtype"},
        {"fc1.bias", 0, "\"\"", "unknown dtype"},
        {"fc1.bias", 0, "7", "not a string"},
        {"fc1.bias", 0, "null", "not a string"},
        {"fc1.weight", 1, "[64,256]", "required"},
        {"fc1.weight", 1, "[16384]", "required"},
        {"fc1.weight", 1, "[256,64,1]", "required"},
        {"fc1.weight", 1, "[1,256,64]", "required"},
        {"fc1.weight", 1, "[]", "span"},
        {"fc1.weight", 1, "[-256,64]", "whole number"},
        {"fc1.weight", 1, "[256.5,64]", "whole number"},
        {"fc1.weight", 1, "[\"256\",64]", "whole number"},
        {"fc1.weight", 1, "[4294967296,4294967296,4294967296]", "overflow"},
        {"fc1.weight", 1, "[1,1,1,1,1,1,1,1,1]", "dimensions"},
        {"fc1.weight", 1, "256", "not an array"},
        {"fc3.weight", 1, "[256,10]", "required"},
        {"fc3.bias", 1, "[10,1]", "required"},
    };
    run_field_cases(cases, ARRAY_LEN(cases));
    print_counts("dtypes and shapes");
    return TEST_OK;
}

TEST(entry_structure)
{
    static const field_case cases[] = {
        {"fc1.bias", 3, "[]", "not an object"},
        {"fc1.bias", 3, "\"F32\"", "not an object"},
        {"fc1.bias", 3, "{\"dtype\":\"F32\",\"shape\":[256]}", "missing"},
        {"fc1.bias", 3, "{\"dtype\":\"F32\",\"data_offsets\":[65536,66560]}", "missing"},
        {"fc1.bias", 3, "{\"shape\":[256],\"data_offsets\":[65536,66560]}", "missing"},
        {"fc1.bias", 3,
         "{\"dtype\":\"F32\",\"shape\":[256],\"data_offsets\":[65536,66560],\"extra\":1}",
         "unknown field"},
        {"fc1.bias", 3,
         "{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[256],\"data_offsets\":[65536,66560]}",
         "twice"},
        {"fc1.bias", 3,
         "{\"dtype\":\"F32\",\"shape\":[256],\"shape\":[256],\"data_offsets\":[65536,66560]}",
         "twice"},
    };
    run_field_cases(cases, ARRAY_LEN(cases));
    print_counts("entries");
    return TEST_OK;
}

/* What cJSON accepts silently but the reader must not: a NUL that cuts a name or dtype short
 * (fc1.bias\u0000evil read as fc1.bias), floats and other spellings standing for integers
 * ("65536.0" read as 65536), a byte-order mark before the '{'. Each of these used to load. */
TEST(strict_header_text)
{
    static const field_case cases[] = {
        {"fc1.bias", 0, "\"F32\\u0000\"", "escaped NUL"},
        {"fc1.bias", 0, "\"F32\\u0000junk\"", "escaped NUL"},
        {"fc1.bias", 2, "[65536.0,66560]", "whole number"},
        {"fc1.bias", 2, "[65536,6.656e4]", "whole number"},
        {"fc1.bias", 1, "[2.56e2]", "whole number"},
        {"fc1.bias", 1, "[256E0]", "whole number"},
        {"fc1.bias", 1, "[256e+0]", "whole number"},
        {"fc1.bias", 1, "[0256]", "leading zero"},
        {"fc1.weight", 2, "[-0,65536]", "no sign"},
        {"fc1.weight", 1, "[256,64.000]", "\"64.000\""},
    };
    run_field_cases(cases, ARRAY_LEN(cases));
    st_spec spec;
    if (!CHECK(st_spec_digits(&spec, 8) == 0))
        return TEST_FAIL;
    st_spec copy = spec;
    snprintf(copy.entries[1].name, sizeof copy.entries[1].name, "fc1.bias\\u0000evil");
    expect_spec_rejected(&copy, "escaped NUL", "the name fc1.bias\\u0000evil");
    copy = spec;
    snprintf(copy.metadata, sizeof copy.metadata, "{\"note\":\"a\\u0000b\"}");
    expect_spec_rejected(&copy, "escaped NUL", "a NUL in a metadata value");
    /* a raw NUL byte (and another control byte) in a name: '#' replaced in the file's bytes */
    static const unsigned char raw[] = {0x00, 0x1f};
    for (size_t i = 0; i < ARRAY_LEN(raw); i++) {
        copy = spec;
        snprintf(copy.entries[1].name, sizeof copy.entries[1].name, "fc1.bias#evil");
        size_t size = 0;
        unsigned char *bytes = st_spec_file(&copy, &size);
        unsigned char *mark = bytes ? memchr(bytes, '#', size) : NULL;
        if (CHECK(mark != NULL))
            *mark = raw[i];
        expect_bytes_rejected(bytes, size, "raw control byte", "a raw control byte in a name");
    }
    /* anything before the '{': a UTF-8 byte-order mark, a space */
    static const char *const prefixes[] = {"\xef\xbb\xbf", " "};
    static const char *const reasons[] = {"byte-order mark", "must start with '{'"};
    char *header = st_header_text(&spec);
    for (size_t i = 0; header != NULL && i < ARRAY_LEN(prefixes); i++) {
        char *prefixed = malloc(strlen(prefixes[i]) + strlen(header) + 1);
        if (!CHECK(prefixed != NULL))
            break;
        strcpy(prefixed, prefixes[i]);
        strcat(prefixed, header);
        size_t size = 0;
        unsigned char *bytes = st_file_bytes(prefixed, spec.data, spec.data_bytes, &size);
        expect_bytes_rejected(bytes, size, reasons[i], reasons[i]);
        free(prefixed);
    }
    CHECK(header != NULL);
    free(header);
    /* ...while strings that only look alike still load: an escaped backslash before u0000,
     * other escapes, number-like text */
    copy = spec;
    snprintf(copy.metadata, sizeof copy.metadata,
             "{\"note\":\"a\\\\u0000b \\u00e9 \\\"q\\\" 1.5e3 -0 065536\"}");
    size_t size = 0;
    unsigned char *bytes = st_spec_file(&copy, &size);
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = NULL;
    if (CHECK(bytes != NULL))
        CHECK_MSG(st_load_bytes(bytes, size, &model, err, sizeof err) == SP_OK,
                  "look-alike strings in the metadata: %s", err);
    sp_mlp_free(model);
    free(bytes);
    st_spec_free(&spec);
    print_counts("strict header text");
    return TEST_OK;
}

/* ---- the set of tensors ---------------------------------------------------------------------- */

TEST(missing_repeated_and_extra_tensors)
{
    st_spec spec;
    if (!CHECK(st_spec_digits(&spec, 5) == 0))
        return TEST_FAIL;
    /* fc3.bias, the last tensor, dropped with its data: a consistent file missing a tensor */
    spec.n--;
    spec.data_bytes -= 40;
    expect_spec_rejected(&spec, "missing", "fc3.bias missing");
    spec.n++;
    spec.data_bytes += 40;
    /* any other tensor dropped leaves a hole, or a missing name */
    for (size_t drop = 0; drop + 1 < spec.n; drop++) {
        st_spec copy = spec;
        memmove(&copy.entries[drop], &copy.entries[drop + 1],
                (copy.n - drop - 1) * sizeof copy.entries[0]);
        copy.n--;
        expect_spec_rejected(&copy, "", spec.entries[drop].name);
    }
    /* fc1.bias twice (same offsets) */
    spec.entries[spec.n] = spec.entries[1];
    spec.n++;
    expect_spec_rejected(&spec, "twice", "fc1.bias twice");
    /* an extra tensor with its own data */
    snprintf(spec.entries[spec.n - 1].name, sizeof spec.entries[0].name, "fc4.bias");
    snprintf(spec.entries[spec.n - 1].shape, sizeof spec.entries[0].shape, "[1]");
    snprintf(spec.entries[spec.n - 1].offsets, sizeof spec.entries[0].offsets, "[%zu,%zu]",
             spec.data_bytes, spec.data_bytes + 4);
    unsigned char *bigger = realloc(spec.data, spec.data_bytes + 4);
    if (CHECK(bigger != NULL)) {
        spec.data = bigger;
        memset(spec.data + spec.data_bytes, 0, 4);
        spec.data_bytes += 4;
        expect_spec_rejected(&spec, "unexpected tensor", "an extra tensor fc4.bias");
        spec.data_bytes -= 4;
    }
    spec.n--;
    /* names: renamed, empty, too long */
    static const char *const names[] = {"fc1.Weight", "", "fc1.weight ", "fc1"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        st_spec copy = spec;
        snprintf(copy.entries[0].name, sizeof copy.entries[0].name, "%s", names[i]);
        expect_spec_rejected(&copy, "", names[i]);
    }
    st_spec copy = spec;
    memset(copy.entries[0].name, 'n', 150);
    copy.entries[0].name[150] = '\0';
    expect_spec_rejected(&copy, "too long", "a 150-byte name");
    st_spec_free(&spec);
    print_counts("tensor sets");
    return TEST_OK;
}

TEST(metadata)
{
    static const char *const bad[] = {"[]", "\"text\"", "{\"a\":1}", "{\"a\":{}}",
                                      "{\"a\":null}"};
    st_spec spec;
    if (!CHECK(st_spec_digits(&spec, 6) == 0))
        return TEST_FAIL;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(spec.metadata, sizeof spec.metadata, "%s", bad[i]);
        expect_spec_rejected(&spec, "__metadata__", bad[i]);
    }
    /* twice: the second copy rides in as a raw entry */
    snprintf(spec.metadata, sizeof spec.metadata, "{}");
    spec.entries[spec.n] = spec.entries[0];
    snprintf(spec.entries[spec.n].name, sizeof spec.entries[0].name, "__metadata__");
    snprintf(spec.entries[spec.n].raw, sizeof spec.entries[0].raw, "{}");
    spec.n++;
    expect_spec_rejected(&spec, "appears 2 times", "__metadata__ twice");
    st_spec_free(&spec);
    print_counts("metadata");
    return TEST_OK;
}

/* ---- malformed JSON and values -------------------------------------------------------------- */

TEST(malformed_json)
{
    static const char *const headers[] = {
        "[]", "null", "{", "{}}", "{} x", "{\"a\":}", "{\"a\" 1}", "{'a':1}", "  ", "{,}",
        "{\"fc1.weight\":{\"dtype\":\"F32\",\"shape\":[256,64],\"data_offsets\":[0,65536]},}",
    };
    for (size_t i = 0; i < ARRAY_LEN(headers); i++) {
        size_t size = 0;
        unsigned char *bytes = st_file_bytes(headers[i], NULL, 0, &size);
        if (CHECK(bytes != NULL))
            expect_rejected(bytes, size, headers[i]);
        free(bytes);
    }
    /* nesting far past cJSON's limit must be refused, not recursed into */
    enum { DEPTH = 100000 };
    char *deep = malloc(2 * DEPTH + 8);
    if (CHECK(deep != NULL)) {
        memset(deep, '[', DEPTH);
        memset(deep + DEPTH, ']', DEPTH);
        deep[2 * DEPTH] = '\0';
        size_t size = 0;
        unsigned char *bytes = st_file_bytes(deep, NULL, 0, &size);
        if (CHECK(bytes != NULL))
            expect_rejected(bytes, size, "100000 nested arrays");
        free(bytes);
    }
    free(deep);
    /* a NUL inside the header, where padding should be */
    valid_file v;
    if (valid_file_make(&v) == 0) {
        v.bytes[8 + v.header_len - 1] = '\0';
        expect_rejected(v.bytes, v.size, "a NUL in the header padding");
    }
    valid_file_free(&v);
    print_counts("malformed JSON");
    return TEST_OK;
}

static void set_f32(unsigned char *p, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(bits >> (8 * i));
}

TEST(non_finite_values)
{
    valid_file v;
    if (valid_file_make(&v) == 0) {
        const size_t data_at = 8 + v.header_len;
        const size_t places[] = {0, 65536 + 4 * 255, v.spec.data_bytes - 4};
        const float values[] = {NAN, INFINITY, -INFINITY};
        for (size_t i = 0; i < ARRAY_LEN(places); i++) {
            unsigned char keep[4];
            memcpy(keep, v.bytes + data_at + places[i], 4);
            set_f32(v.bytes + data_at + places[i], values[i]);
            expect_rejected(v.bytes, v.size, "a non-finite value");
            memcpy(v.bytes + data_at + places[i], keep, 4);
        }
        CHECK(verdict(v.bytes, v.size, v.model, "the restored file") == 0);
        print_counts("non-finite values");
    }
    valid_file_free(&v);
    return TEST_OK;
}

/* ---- random mutations ------------------------------------------------------------------------ */

/* One random change to a copy of the file: overwrite, insert or delete a few header bytes
 * (updating the length field or not), rewrite the length, or cut the file. Changes stay out
 * of the data section, so that a file which is still valid must hold the original weights. */
static unsigned char *mutate(const valid_file *v, test_rng *rng, size_t *size)
{
    unsigned char *m = malloc(v->size + 16);
    if (m == NULL)
        return NULL;
    memcpy(m, v->bytes, v->size);
    *size = v->size;
    const size_t header_end = 8 + v->header_len;
    const size_t at = 8 + rng_below(rng, v->header_len);
    size_t count = 1 + rng_below(rng, 4);
    if (count > header_end - at)
        count = header_end - at;
    switch (rng_below(rng, 5)) {
    case 0: /* overwrite */
        for (size_t i = 0; i < count; i++)
            m[at + i] = (unsigned char)rng_next(rng);
        break;
    case 1: /* insert, length field updated */
        memmove(m + at + count, m + at, v->size - at);
        rng_fill(rng, m + at, count);
        *size += count;
        set_length_field(m, v->header_len + count);
        break;
    case 2: /* delete, length field updated or not */
        memmove(m + at, m + at + count, v->size - at - count);
        *size -= count;
        if (rng_below(rng, 2))
            set_length_field(m, v->header_len - count);
        break;
    case 3: /* a random length field near the real one, or anywhere */
        set_length_field(m, rng_below(rng, 2) ? v->header_len + rng_below(rng, 17) - 8
                                              : rng_next(rng));
        break;
    default: /* cut */
        *size = rng_below(rng, v->size);
        break;
    }
    return m;
}

TEST(random_mutations)
{
    valid_file v;
    if (valid_file_make(&v) == 0) {
        test_rng rng;
        rng_init(&rng, harness_seed() ^ 0xf022);
        const size_t rounds = harness_quick() ? 3000 : 30000;
        for (size_t i = 0; i < rounds; i++) {
            size_t size = 0;
            unsigned char *m = mutate(&v, &rng, &size);
            if (!CHECK(m != NULL))
                break;
            char what[48];
            snprintf(what, sizeof what, "random mutation %zu", i);
            verdict(m, size, v.model, what);
            free(m);
        }
        print_counts("random mutations");
    }
    valid_file_free(&v);
    return TEST_OK;
}

/* ---- files ----------------------------------------------------------------------------------- */

TEST(file_errors)
{
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = NULL;
    CHECK(st_load_file(SP_MODELS_DIR "/no_such_file.safetensors", &model, err,
                           sizeof err) == SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(err, "cannot open");
    CHECK(model == NULL);
    CHECK(st_load_file(SP_MODELS_DIR, &model, err, sizeof err) == SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(err, "not a regular file");
    /* the image file is not a model; the reason names the file */
    CHECK(st_load_file(SP_MODELS_DIR "/digits_test_images.u8", &model, err, sizeof err) ==
          SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(err, "digits_test_images.u8");
    CHECK(st_load_file(NULL, &model, NULL, 0) == SP_ERR_INVALID_ARGUMENT);
    CHECK(st_load_bytes("x", 1, NULL, err, sizeof err) == SP_ERR_INVALID_ARGUMENT);
    return TEST_OK;
}

/* A FIFO must be refused at once: opened plainly, it blocks until a writer comes, for ever.
 * The test's short timeout turns a hang into a failure. Devices are refused as well, before
 * a byte is read (/dev/zero never ends). */
TEST(file_not_regular)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512], fifo[600];
    snprintf(dir, sizeof dir, "%s/sp_fifo_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (!CHECK(mkdtemp(dir) != NULL))
        return TEST_FAIL;
    snprintf(fifo, sizeof fifo, "%s/model.safetensors", dir);
    char err[ST_ERROR_SIZE] = "";
    sp_mlp *model = NULL;
    if (CHECK(mkfifo(fifo, 0600) == 0)) {
        CHECK(st_load_file(fifo, &model, err, sizeof err) == SP_ERR_INVALID_ARGUMENT);
        CHECK_HAS(err, "not a regular file (it is a FIFO)");
        CHECK(model == NULL);
        CHECK(unlink(fifo) == 0);
    }
    CHECK(rmdir(dir) == 0);
    CHECK(st_load_file("/dev/zero", &model, err, sizeof err) == SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(err, "not a regular file (it is a character device)");
    CHECK(model == NULL);
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(committed_model_loads),
        TEST_ENTRY(built_model_round_trips),
        TEST_ENTRY(reader_accepts_other_valid_files),
        TEST_ENTRY_T(truncated_at_every_length, 600),
        TEST_ENTRY(header_length_field),
        TEST_ENTRY_T(every_header_byte_flipped, 300),
        TEST_ENTRY(bad_offsets),
        TEST_ENTRY(wrong_dtypes_and_shapes),
        TEST_ENTRY(entry_structure),
        TEST_ENTRY(strict_header_text),
        TEST_ENTRY(missing_repeated_and_extra_tensors),
        TEST_ENTRY(metadata),
        TEST_ENTRY(malformed_json),
        TEST_ENTRY(non_finite_values),
        TEST_ENTRY_T(random_mutations, 300),
        TEST_ENTRY(file_errors),
        TEST_ENTRY_T(file_not_regular, 10),
    };
    harness_set_setup(digits_need_model_loader, NULL);
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
