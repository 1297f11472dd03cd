/*
 * The committed digits data for the inference tests (models/: the model, the held-out images
 * and their labels), an independent double-precision reference, and the rule for when a
 * predicted label counts as right.
 */
#ifndef SP_TEST_DIGITS_DATA_H
#define SP_TEST_DIGITS_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_mlp.h"

typedef struct digits_data {
    sp_mlp *model;
    unsigned char *images; /* n x SP_MLP_INPUTS grey levels */
    unsigned char *labels; /* n, 0..9 */
    size_t n;
    double *logits;        /* n x SP_MLP_CLASSES, from digits_reference_logits */
} digits_data;

/* A setup for harness_set_setup: TEST_OK when the library can read safetensors, TEST_SKIP
 * with the reason when it was built without cJSON. */
int digits_need_model_loader(void);

/* Loads everything and computes the reference logits; failures are reported as failed CHECKs
 * and return -1. */
int digits_load(digits_data *d);
void digits_free(digits_data *d);

/* The network in double precision, written here again from the definition (pixel / 16, then
 * relu(W x + b) twice, then W x + b), sharing no code with the library. */
void digits_reference_logits(const sp_mlp *model, const unsigned char *image,
                             double logits[SP_MLP_CLASSES]);

/* The first index of the largest value. */
int digits_argmax(const double *values, size_t n);

/* 1 when `label` is the reference's argmax, or when its logit is within `tolerance` of the
 * top one relative to max(1, largest |logit|): a near tie that rounding may decide either
 * way (1e-4 for fp32 arithmetic, 1e-2 for tf32). */
int digits_label_acceptable(const double logits[SP_MLP_CLASSES], int32_t label,
                            double tolerance);

#endif /* SP_TEST_DIGITS_DATA_H */
