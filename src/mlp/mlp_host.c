/*
 * The digits MLP's stages on the CPU, float32. The GEMM is blocked over ROW_BLOCK records so
 * that each weight row, read once, serves several records: enough to keep the HOST backend
 * usable for tests and small runs, without a BLAS dependency.
 */
#include "mlp/mlp_host.h"

#define ROW_BLOCK 4

void sp_mlp_preprocess_host(const unsigned char *pixels, float *x, size_t records)
{
    const float scale = 1.0f / SP_MLP_MAX_PIXEL; /* a power of two: the product is exact */
    for (size_t i = 0; i < records * SP_MLP_INPUTS; i++)
        x[i] = (float)pixels[i] * scale;
}

/* Dot products of one weight row with ROW_BLOCK input rows at once (`rows` <= ROW_BLOCK). */
static void dot_rows(const float *weight_row, const float *in, size_t inputs, size_t rows,
                     float sums[ROW_BLOCK])
{
    for (size_t r = 0; r < ROW_BLOCK; r++)
        sums[r] = 0.0f;
    if (rows == ROW_BLOCK) {
        for (size_t k = 0; k < inputs; k++) {
            const float w = weight_row[k];
            sums[0] += w * in[k];
            sums[1] += w * in[inputs + k];
            sums[2] += w * in[2 * inputs + k];
            sums[3] += w * in[3 * inputs + k];
        }
        return;
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < inputs; k++)
            sums[r] += weight_row[k] * in[r * inputs + k];
}

/* out[r][o] = sum_k in[r][k] w[o][k] + b[o] for up to ROW_BLOCK rows, ReLU when asked. */
static void dense_block(const sp_mlp_layer *layer, const float *in, float *out, size_t rows,
                        int relu)
{
    float sums[ROW_BLOCK];
    for (size_t o = 0; o < layer->outputs; o++) {
        dot_rows(layer->weight + o * layer->inputs, in, layer->inputs, rows, sums);
        for (size_t r = 0; r < rows; r++) {
            float v = sums[r] + layer->bias[o];
            out[r * layer->outputs + o] = relu && v < 0.0f ? 0.0f : v;
        }
    }
}

void sp_mlp_dense_relu_host(const sp_mlp_layer *layer, const float *in, float *out,
                            size_t records)
{
    for (size_t r = 0; r < records; r += ROW_BLOCK) {
        size_t rows = records - r < ROW_BLOCK ? records - r : ROW_BLOCK;
        dense_block(layer, in + r * layer->inputs, out + r * layer->outputs, rows, 1);
    }
}

static int32_t argmax(const float *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[best]) /* strictly greater: the lowest index wins a tie */
            best = i;
    return (int32_t)best;
}

void sp_mlp_head_host(const sp_mlp_layer *layer, const float *in, int32_t *labels,
                      size_t records)
{
    float logits[ROW_BLOCK * SP_MLP_CLASSES];
    const sp_mlp_layer head = {layer->inputs, SP_MLP_CLASSES, layer->weight, layer->bias};
    for (size_t r = 0; r < records; r += ROW_BLOCK) {
        size_t rows = records - r < ROW_BLOCK ? records - r : ROW_BLOCK;
        dense_block(&head, in + r * head.inputs, logits, rows, 0);
        for (size_t i = 0; i < rows; i++)
            labels[r + i] = argmax(logits + i * SP_MLP_CLASSES, SP_MLP_CLASSES);
    }
}
