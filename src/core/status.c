/* The one table of status names and messages, the version, and backend names. */
#include <stdio.h>

#include "streampipe.h"

#define SP_STR2(x) #x
#define SP_STR(x) SP_STR2(x)

const char *sp_version(void)
{
    return SP_STR(SP_VERSION_MAJOR) "." SP_STR(SP_VERSION_MINOR) "." SP_STR(SP_VERSION_PATCH);
}

typedef struct status_entry {
    sp_status status;
    const char *name;
    const char *message;
} status_entry;

static const status_entry status_table[] = {
    {SP_OK, "SP_OK", "success"},
    {SP_ERR_INVALID_ARGUMENT, "SP_ERR_INVALID_ARGUMENT", "invalid argument"},
    {SP_ERR_OUT_OF_MEMORY, "SP_ERR_OUT_OF_MEMORY", "out of host memory"},
    {SP_ERR_OUT_OF_DEVICE_MEMORY, "SP_ERR_OUT_OF_DEVICE_MEMORY", "out of device memory"},
    {SP_ERR_UNSUPPORTED, "SP_ERR_UNSUPPORTED", "not supported by this backend or build"},
    {SP_ERR_STAGE_FAILED, "SP_ERR_STAGE_FAILED", "a pipeline stage failed"},
    {SP_ERR_BACKEND, "SP_ERR_BACKEND", "a backend call failed"},
    {SP_ERR_DEVICE_LOST, "SP_ERR_DEVICE_LOST", "the device context is lost"},
    {SP_ERR_CANCELLED, "SP_ERR_CANCELLED", "cancelled after an earlier failure"},
    {SP_ERR_WOULD_BLOCK, "SP_ERR_WOULD_BLOCK", "the stream holds max_in_flight batches"},
    {SP_ERR_TIMEOUT, "SP_ERR_TIMEOUT", "no stream event came in time"},
};

static const status_entry *status_find(sp_status status)
{
    for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
        if (status_table[i].status == status)
            return &status_table[i];
    return NULL;
}

const char *sp_status_name(sp_status status)
{
    const status_entry *e = status_find(status);
    return e ? e->name : "SP_UNKNOWN_STATUS";
}

const char *sp_status_message(sp_status status)
{
    const status_entry *e = status_find(status);
    return e ? e->message : "unknown status";
}

const char *sp_backend_name(sp_backend_kind kind)
{
    switch (kind) {
    case SP_BACKEND_AUTO: return "auto";
    case SP_BACKEND_HOST: return "host";
    case SP_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}
