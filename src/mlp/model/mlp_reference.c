/*
 * The digits MLP in double precision, written as plainly as possible: the yardstick that the
 * float32 host stages and the GPU stages are checked against. Nothing here is shared with
 * those stages, so a mistake in one does not hide in the other.
 */
#include "streampipe_mlp.h"

/* out[o] = sum_k w[o][k] in[k] + b[o], then ReLU unless this is the last layer. */
static void layer_f64(const sp_mlp_layer *layer, const double *in, double *out, int relu)
{
    for (size_t o = 0; o < layer->outputs; o++) {
        double sum = layer->bias[o];
        const float *row = layer->weight + o * layer->inputs;
        for (size_t k = 0; k < layer->inputs; k++)
            sum += (double)row[k] * in[k];
        out[o] = relu && sum < 0.0 ? 0.0 : sum;
    }
}

void sp_mlp_reference_logits(const sp_mlp *model, const unsigned char *pixels, size_t n,
                             double *logits)
{
    if (!sp_mlp_loaded(model) || pixels == NULL || logits == NULL)
        return;
    const sp_mlp_layer fc1 = sp_mlp_layer_at(model, 0), fc2 = sp_mlp_layer_at(model, 1),
                       fc3 = sp_mlp_layer_at(model, 2);
    double x[SP_MLP_INPUTS], h1[SP_MLP_HIDDEN], h2[SP_MLP_HIDDEN];
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < SP_MLP_INPUTS; k++)
            x[k] = pixels[i * SP_MLP_INPUTS + k] / (double)SP_MLP_MAX_PIXEL;
        layer_f64(&fc1, x, h1, 1);
        layer_f64(&fc2, h1, h2, 1);
        layer_f64(&fc3, h2, logits + i * SP_MLP_CLASSES, 0);
    }
}
