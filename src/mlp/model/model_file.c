/* See model_file.h. The reading and its refusals are src/util/read_file.c's, shared with the
 * CLI's input files; this maps them to the library's statuses. */
#include "mlp/model/model_error.h"
#include "mlp/model/model_file.h"
#include "util/read_file.h"

sp_status sp_model_read_file(const char *path, unsigned char **bytes, size_t *size, char *err,
                             size_t err_size)
{
    if (path == NULL || bytes == NULL || size == NULL)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_model_read_file: NULL argument");
    sp_read_result result =
        sp_read_regular_file("model", path, SP_MODEL_MAX_FILE_BYTES, bytes, size, err, err_size);
    if (result == SP_READ_OK)
        return SP_OK;
    /* running out of memory is the caller's to know apart; the rest are this file's fault */
    return result == SP_READ_NO_MEMORY ? SP_ERR_OUT_OF_MEMORY : SP_ERR_INVALID_ARGUMENT;
}
