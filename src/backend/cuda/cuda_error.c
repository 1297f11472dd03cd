/* The one place where CUDA errors become sp_status values and reasons. */
#include "backend/cuda/cuda_error.h"

#include <string.h>

#include "backend/backend.h"

int sp_cuda_is_sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
    case cudaErrorMpsClientTerminated:
    case cudaErrorContextIsDestroyed:
    case cudaErrorCudartUnloading:
    case cudaErrorUnknown:
        return 1;
    default:
        return 0;
    }
}

sp_status sp_cuda_status(cudaError_t err)
{
    if (err == cudaSuccess)
        return SP_OK;
    if (sp_cuda_is_sticky(err))
        return SP_ERR_DEVICE_LOST;
    switch (err) {
    case cudaErrorMemoryAllocation:
        return SP_ERR_OUT_OF_DEVICE_MEMORY;
    /* The machine cannot run CUDA (or this build of it) at all: callers may fall back. */
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNotSupported:
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
        return SP_ERR_UNSUPPORTED;
    default:
        return SP_ERR_BACKEND;
    }
}

sp_status sp_cuda_absorb(cudaError_t err)
{
    if (err != cudaSuccess && !sp_cuda_is_sticky(err)) {
        /* The runtime also keeps err as this thread's "last error"; clear it so a later
         * cudaGetLastError() (after a kernel launch) does not blame the wrong call. The
         * value returned is err itself, already handled. */
        (void)cudaGetLastError();
    }
    return sp_cuda_status(err);
}

/* "src/backend/cuda/x.c" rather than the absolute path of the build machine: from the last
 * "src/" on, since the checkout itself may sit below a directory called src. */
static const char *short_path(const char *file)
{
    if (!file)
        return "?";
    const char *from_src = file;
    for (const char *hit = strstr(file, "src/"); hit; hit = strstr(hit + 1, "src/"))
        from_src = hit;
    return from_src;
}

static void store_reason(cudaError_t err, const char *call, const char *what, const char *file,
                         int line)
{
    sp_backend_fail("%s failed%s: %s (%s) at %s:%d", call ? call : "CUDA call", what,
                    cudaGetErrorName(err), cudaGetErrorString(err), short_path(file), line);
}

sp_status sp_cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return SP_OK;
    store_reason(err, call, "", file, line);
    return sp_cuda_absorb(err);
}

sp_status sp_cuda_check_pinned(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return SP_OK;
    if (err == cudaErrorMemoryAllocation) {
        store_reason(err, call, " (out of pinned host memory)", file, line);
        (void)sp_cuda_absorb(err);
        return SP_ERR_OUT_OF_MEMORY;
    }
    store_reason(err, call, " (pinned host memory)", file, line);
    return sp_cuda_absorb(err);
}

/* The public face of the mapping (streampipe.h), for stages outside the library. */
sp_status sp_cuda_error_status(int cuda_error) { return sp_cuda_absorb((cudaError_t)cuda_error); }
