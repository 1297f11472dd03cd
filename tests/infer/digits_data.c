/* See digits_data.h. */
#include "digits_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "st_build.h"

void digits_reference_logits(const sp_mlp *model, const unsigned char *image,
                             double logits[SP_MLP_CLASSES])
{
    double a[SP_MLP_HIDDEN], b[SP_MLP_HIDDEN];
    for (size_t k = 0; k < SP_MLP_INPUTS; k++)
        a[k] = image[k] / 16.0;
    double *in = a, *out = b;
    for (size_t l = 0; l < SP_MLP_LAYERS; l++) {
        const sp_mlp_layer layer = sp_mlp_layer_at(model, l);
        double *dst = l + 1 == SP_MLP_LAYERS ? logits : out;
        for (size_t o = 0; o < layer.outputs; o++) {
            double sum = 0.0;
            for (size_t k = 0; k < layer.inputs; k++)
                sum += (double)layer.weight[o * layer.inputs + k] * in[k];
            sum += layer.bias[o];
            dst[o] = l + 1 < SP_MLP_LAYERS ? fmax(sum, 0.0) : sum;
        }
        double *t = in;
        in = out;
        out = t;
    }
}

int digits_argmax(const double *values, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (values[i] > values[best])
            best = i;
    return (int)best;
}

int digits_label_acceptable(const double logits[SP_MLP_CLASSES], int32_t label,
                            double tolerance)
{
    if (label < 0 || label >= SP_MLP_CLASSES)
        return 0;
    int top = digits_argmax(logits, SP_MLP_CLASSES);
    if (label == top)
        return 1;
    double scale = 1.0;
    for (size_t c = 0; c < SP_MLP_CLASSES; c++)
        scale = fmax(scale, fabs(logits[c]));
    return (logits[top] - logits[label]) / scale <= tolerance;
}

int digits_need_model_loader(void)
{
#ifdef SP_HAVE_CJSON
    return TEST_OK;
#else
    harness_skip_reason("built without cJSON, so no model can be loaded (install libcjson-dev "
                        "or set SP_CJSON_ROOT, then configure again)");
    return TEST_SKIP;
#endif
}

static unsigned char *read_exact(const char *path, size_t *size)
{
    unsigned char *bytes = st_read_file(path, size);
    CHECK_MSG(bytes != NULL, "cannot read %s", path);
    return bytes;
}

int digits_load(digits_data *d)
{
    memset(d, 0, sizeof *d);
    char err[ST_ERROR_SIZE] = "";
    sp_status st = st_load_file(SP_MODELS_DIR "/digits_mlp.safetensors", &d->model, err,
                                    sizeof err);
    if (!CHECK_MSG(st == SP_OK, "loading the model: %s", err))
        return -1;
    size_t image_bytes = 0, label_bytes = 0;
    d->images = read_exact(SP_MODELS_DIR "/digits_test_images.u8", &image_bytes);
    d->labels = read_exact(SP_MODELS_DIR "/digits_test_labels.u8", &label_bytes);
    if (d->images == NULL || d->labels == NULL)
        return -1;
    d->n = label_bytes;
    if (!CHECK_MSG(image_bytes == d->n * SP_MLP_INPUTS && d->n > 0,
                   "%zu image bytes for %zu labels", image_bytes, label_bytes))
        return -1;
    d->logits = malloc(d->n * SP_MLP_CLASSES * sizeof *d->logits);
    if (!CHECK(d->logits != NULL))
        return -1;
    for (size_t i = 0; i < d->n; i++)
        digits_reference_logits(d->model, d->images + i * SP_MLP_INPUTS,
                                d->logits + i * SP_MLP_CLASSES);
    return 0;
}

void digits_free(digits_data *d)
{
    sp_mlp_free(d->model);
    free(d->images);
    free(d->labels);
    free(d->logits);
    memset(d, 0, sizeof *d);
}
