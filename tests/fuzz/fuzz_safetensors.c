/* The fuzz target for the model loader: any bytes must be loaded or rejected as the API says,
 * and nothing may crash, leak or read out of bounds (the fuzzer runs with ASan and UBSan).
 * Built with libFuzzer (clang, -DSP_FUZZ=ON; run.sh) and, with replay.c's main(), as a plain
 * program that ctest runs with every compiler. See tests/fuzz/CMakeLists.txt. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streampipe_mlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A loaded model holds every layer, with finite values only (the loader's promise). */
static int model_is_sound(const sp_mlp *model)
{
    for (size_t l = 0; l < SP_MLP_LAYERS; l++) {
        sp_mlp_layer layer = sp_mlp_layer_at(model, l);
        if (layer.weight == NULL || layer.bias == NULL)
            return 0;
        for (size_t i = 0; i < layer.inputs * layer.outputs; i++)
            if (!isfinite(layer.weight[i]))
                return 0;
        for (size_t o = 0; o < layer.outputs; o++)
            if (!isfinite(layer.bias[o]))
                return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sentinel;
    char err[SP_MLP_ERROR_SIZE];
    memset(err, 0, sizeof err);
    sp_mlp *model = (sp_mlp *)&sentinel; /* not NULL: a rejection must clear it */
    sp_status st = sp_mlp_load_bytes(data, size, &model, err, sizeof err);
    if (st == SP_OK) {
        if (!model_is_sound(model))
            abort();
        sp_mlp_free(model);
        return 0;
    }
    /* a rejection: a documented status, a terminated reason, no model */
    int documented = st == SP_ERR_INVALID_ARGUMENT || st == SP_ERR_OUT_OF_MEMORY;
    if (!documented || err[0] == '\0' || err[sizeof err - 1] != '\0' || model != NULL)
        abort();
    return 0;
}
