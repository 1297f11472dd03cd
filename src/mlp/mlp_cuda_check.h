// CUDA runtime errors -> sp_status plus the reason in a caller's buffer, for the MLP's .cu
// files only. The mapping and consuming policy is the library's, through its public
// sp_cuda_error_status (what any user's CUDA stage would call); this adds the reason text.
#ifndef SP_MLP_CUDA_CHECK_H
#define SP_MLP_CUDA_CHECK_H

#include <cstring>
#include <cuda_runtime.h>

#include "mlp/model/model_error.h"

// "src/mlp/x.cu" rather than the build machine's absolute path: from the last "src/" on.
static inline const char *mlp_short_path(const char *file)
{
    const char *from_src = file;
    for (const char *hit = std::strstr(file, "src/"); hit; hit = std::strstr(hit + 1, "src/"))
        from_src = hit;
    return from_src;
}

static inline sp_status mlp_cuda_check(cudaError_t error, const char *call, const char *file,
                                       int line, char *err, size_t err_size)
{
    if (error == cudaSuccess)
        return SP_OK;
    sp_status status = sp_cuda_error_status((int)error);
    return sp_model_fail(err, err_size, status, "%s failed: %s (%s) at %s:%d", call,
                         cudaGetErrorName(error), cudaGetErrorString(error),
                         mlp_short_path(file), line);
}

#define MLP_CUDA_CHECK(call, err, err_size) \
    mlp_cuda_check((call), #call, __FILE__, __LINE__, (err), (err_size))

#endif // SP_MLP_CUDA_CHECK_H
