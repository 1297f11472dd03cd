/* The digits MLP's stages in plain C, float32: the HOST backend runs these. Checked against
 * the double-precision sp_mlp_reference_logits, which shares no code with them. */
#ifndef SP_MLP_HOST_H
#define SP_MLP_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_mlp.h"

/* x[i] = pixels[i] / 16 for records x SP_MLP_INPUTS values. */
void sp_mlp_preprocess_host(const unsigned char *pixels, float *x, size_t records);

/* out = relu(in W^T + b): in is records x layer->inputs, out records x layer->outputs, both
 * row-major. out must not overlap in. */
void sp_mlp_dense_relu_host(const sp_mlp_layer *layer, const float *in, float *out,
                            size_t records);

/* labels[r] = argmax over the logits in[r] W^T + b (the lowest class wins a tie); layer is fc3,
 * with SP_MLP_CLASSES outputs. */
void sp_mlp_head_host(const sp_mlp_layer *layer, const float *in, int32_t *labels,
                      size_t records);

#endif /* SP_MLP_HOST_H */
