/*
 * The digits MLP's parameters: loaded from a checked safetensors file (safetensors.c), then
 * checked against the one architecture this library runs, 64-256-256-10.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp/model/model_error.h"
#include "mlp/model/model_file.h"
#include "mlp/model/safetensors.h"
#include "streampipe_mlp.h"

struct sp_mlp {
    sp_mlp_layer layers[SP_MLP_LAYERS];
    float *storage; /* every weight and bias, one allocation; NULL when loading failed */
    char error[SP_MLP_ERROR_SIZE]; /* why loading failed; "" when it did not */
};

typedef struct layer_shape {
    const char *weight_name, *bias_name;
    size_t inputs, outputs;
} layer_shape;

static const layer_shape expected[SP_MLP_LAYERS] = {
    {"fc1.weight", "fc1.bias", SP_MLP_INPUTS, SP_MLP_HIDDEN},
    {"fc2.weight", "fc2.bias", SP_MLP_HIDDEN, SP_MLP_HIDDEN},
    {"fc3.weight", "fc3.bias", SP_MLP_HIDDEN, SP_MLP_CLASSES},
};

static size_t expected_floats(void)
{
    size_t total = 0;
    for (size_t i = 0; i < SP_MLP_LAYERS; i++)
        total += expected[i].outputs * expected[i].inputs + expected[i].outputs;
    return total;
}

/* ---- checking the file's tensors against the architecture ---------------------------------- */

static sp_status check_tensor(const sp_st_file *file, const char *name, size_t rank,
                              uint64_t dim0, uint64_t dim1, char *err, size_t size)
{
    const sp_st_tensor *t = sp_st_find(file, name);
    if (t == NULL)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT, "tensor '%s' is missing", name);
    if (t->dtype != SP_ST_F32)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s' has dtype %s; F32 is required", name,
                             sp_st_dtype_name(t->dtype));
    int shape_ok = t->rank == rank && t->shape[0] == dim0 && (rank < 2 || t->shape[1] == dim1);
    if (!shape_ok) {
        char want[48];
        if (rank == 2)
            snprintf(want, sizeof want, "[%llu, %llu]", (unsigned long long)dim0,
                     (unsigned long long)dim1);
        else
            snprintf(want, sizeof want, "[%llu]", (unsigned long long)dim0);
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "tensor '%s' has rank %zu shape [%llu%s...]; %s is required", name,
                             t->rank, t->rank > 0 ? (unsigned long long)t->shape[0] : 0ull,
                             t->rank > 1 ? ", " : "", want);
    }
    return SP_OK;
}

static int is_expected_name(const char *name)
{
    for (size_t l = 0; l < SP_MLP_LAYERS; l++)
        if (!strcmp(name, expected[l].weight_name) || !strcmp(name, expected[l].bias_name))
            return 1;
    return 0;
}

/* Every expected tensor, with its dtype and shape, and nothing else (names are unique: the
 * reader has checked that). */
static sp_status check_architecture(const sp_st_file *file, char *err, size_t size)
{
    for (size_t i = 0; i < SP_MLP_LAYERS; i++) {
        const layer_shape *l = &expected[i];
        sp_status st = check_tensor(file, l->weight_name, 2, l->outputs, l->inputs, err, size);
        if (st == SP_OK)
            st = check_tensor(file, l->bias_name, 1, l->outputs, 0, err, size);
        if (st != SP_OK)
            return st;
    }
    for (size_t i = 0; i < file->n_tensors; i++)
        if (!is_expected_name(file->tensors[i].name))
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "unexpected tensor '%s' (a 64-256-256-10 MLP has the weights "
                                 "and biases of fc1..fc3 only)", file->tensors[i].name);
    return SP_OK;
}

/* ---- copying the values out --------------------------------------------------------------- */

/* Little-endian F32 bytes -> floats, whatever the host's byte order; every value must be
 * finite (a NaN or infinity would make every prediction meaningless). */
static sp_status copy_floats(const sp_st_file *file, const char *name, float *dst, char *err,
                             size_t size)
{
    const sp_st_tensor *t = sp_st_find(file, name);
    const unsigned char *src = file->data + t->begin;
    size_t count = (size_t)(t->end - t->begin) / 4;
    for (size_t i = 0; i < count; i++) {
        const unsigned char *b = src + 4 * i;
        uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                        (uint32_t)b[3] << 24;
        memcpy(&dst[i], &bits, sizeof bits);
        if (!isfinite(dst[i]))
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "tensor '%s' holds a non-finite value at element %zu", name, i);
    }
    return SP_OK;
}

static sp_status fill_model(sp_mlp *model, const sp_st_file *file, char *err, size_t size)
{
    model->storage = malloc(expected_floats() * sizeof(float));
    if (model->storage == NULL)
        return sp_model_fail(err, size, SP_ERR_OUT_OF_MEMORY, "no memory for the weights");
    float *next = model->storage;
    for (size_t i = 0; i < SP_MLP_LAYERS; i++) {
        const layer_shape *l = &expected[i];
        float *weight = next, *bias = next + l->outputs * l->inputs;
        next = bias + l->outputs;
        sp_status st = copy_floats(file, l->weight_name, weight, err, size);
        if (st == SP_OK)
            st = copy_floats(file, l->bias_name, bias, err, size);
        if (st != SP_OK)
            return st;
        model->layers[i] = (sp_mlp_layer){l->inputs, l->outputs, weight, bias};
    }
    return SP_OK;
}

/* ---- the API -------------------------------------------------------------------------------- */

/* Parses and checks the file's bytes into `model`; on failure it keeps no weights and its
 * error says why. */
static sp_status load_into(sp_mlp *model, const void *bytes, size_t size)
{
    char *err = model->error;
    const size_t err_size = sizeof model->error;
    sp_st_file file;
    sp_status st = sp_st_parse(bytes, size, &file, err, err_size);
    if (st != SP_OK)
        return st;
    st = check_architecture(&file, err, err_size);
    if (st == SP_OK)
        st = fill_model(model, &file, err, err_size);
    sp_st_release(&file);
    if (st != SP_OK) {
        free(model->storage);
        model->storage = NULL;
        memset(model->layers, 0, sizeof model->layers);
    }
    return st;
}

/* The handle comes first, so that a failure has a model to be the last error of. */
static sp_status model_new(sp_mlp **out)
{
    if (out == NULL)
        return SP_ERR_INVALID_ARGUMENT;
    *out = calloc(1, sizeof **out);
    return *out != NULL ? SP_OK : SP_ERR_OUT_OF_MEMORY;
}

sp_status sp_mlp_load_bytes(const void *bytes, size_t size, sp_mlp **out)
{
    sp_status st = model_new(out);
    return st == SP_OK ? load_into(*out, bytes, size) : st;
}

sp_status sp_mlp_load_file(const char *path, sp_mlp **out)
{
    sp_status st = model_new(out);
    if (st != SP_OK)
        return st;
    sp_mlp *model = *out;
    unsigned char *bytes = NULL;
    size_t size = 0;
    st = sp_model_read_file(path, &bytes, &size, model->error, sizeof model->error);
    if (st != SP_OK)
        return st;
    st = load_into(model, bytes, size);
    free(bytes);
    if (st != SP_OK) {
        char reason[SP_MLP_ERROR_SIZE];
        snprintf(reason, sizeof reason, "%s", model->error);
        return sp_model_fail(model->error, sizeof model->error, st, "model file '%s': %s", path,
                             reason);
    }
    return SP_OK;
}

const char *sp_mlp_last_error(const sp_mlp *model)
{
    return model != NULL ? model->error
                         : "no model: out of memory when it was loaded, or model is NULL";
}

int sp_mlp_loaded(const sp_mlp *model) { return model != NULL && model->storage != NULL; }

void sp_mlp_free(sp_mlp *model)
{
    if (model == NULL)
        return;
    free(model->storage);
    free(model);
}

sp_mlp_layer sp_mlp_layer_at(const sp_mlp *model, size_t layer)
{
    sp_mlp_layer none = {0, 0, NULL, NULL};
    return model != NULL && layer < SP_MLP_LAYERS ? model->layers[layer] : none;
}
