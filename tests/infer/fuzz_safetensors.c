/* libFuzzer entry for the model loader (clang -fsanitize=fuzzer; see CMakeLists.txt). Any
 * input must be either rejected with a reason or loaded; nothing may crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include "streampipe_mlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SP_MLP_ERROR_SIZE];
    sp_mlp *model = NULL;
    if (sp_mlp_load_bytes(data, size, &model, err, sizeof err) == SP_OK)
        sp_mlp_free(model);
    return 0;
}
