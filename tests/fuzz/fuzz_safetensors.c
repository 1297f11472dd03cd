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
    sp_mlp *model = NULL;
    sp_status st = sp_mlp_load_bytes(data, size, &model);
    if (st == SP_OK) {
        if (!model_is_sound(model) || sp_mlp_last_error(model)[0] != '\0')
            abort();
        sp_mlp_free(model);
        return 0;
    }
    /* a rejection: a documented status, a model without layers whose error says why (only
     * no memory for the model itself leaves none) */
    int documented = st == SP_ERR_INVALID_ARGUMENT || st == SP_ERR_OUT_OF_MEMORY;
    int explained = model == NULL ? st == SP_ERR_OUT_OF_MEMORY
                                  : !sp_mlp_loaded(model) && sp_mlp_last_error(model)[0] != '\0' &&
                                        strlen(sp_mlp_last_error(model)) < 320;
    sp_mlp_free(model);
    if (!documented || !explained)
        abort();
    return 0;
}
