// CUDA runtime errors -> sp_status plus the reason in a caller's buffer, for the MLP's .cu
// files only. The mapping and consuming policy is the backend's (sp_cuda_check); this only
// copies its reason out, because the MLP code reports through err buffers.
#ifndef SP_MLP_CUDA_CHECK_H
#define SP_MLP_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "backend/cuda/cuda_error.h"
#include "mlp/model/model_error.h"

extern "C" { // backend.h is a C header without C++ guards
#include "backend/backend.h"
}

static inline sp_status mlp_cuda_check(cudaError_t error, const char *call, const char *file,
                                       int line, char *err, size_t err_size)
{
    sp_status status = sp_cuda_check(error, call, file, line);
    if (status != SP_OK)
        sp_model_fail(err, err_size, status, "%s", sp_backend_error());
    return status;
}

#define MLP_CUDA_CHECK(call, err, err_size) \
    mlp_cuda_check((call), #call, __FILE__, __LINE__, (err), (err_size))

#endif // SP_MLP_CUDA_CHECK_H
