/*
 * cuBLASLt, opened with dlopen (mlp_cublaslt.c), not linked: libstreampipe_mlp.so, the CLI and
 * the Python module start without libcublasLt, which only the MLP's CUDA GEMM stages
 * (mlp_gemm_cublaslt.cu) use. Only built with CUDA. cublasLt.h is included for its types and
 * enums; its functions are reached through this table, never called by name.
 */
#ifndef SP_MLP_CUBLASLT_H
#define SP_MLP_CUBLASLT_H

#include <stddef.h>

#include <cublasLt.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLASLt functions the GEMM stages call, each member named and typed as cublasLt.h
 * declares that function (mlp_gemm_cublaslt.cu checks each type against the header's). */
typedef struct sp_mlp_cublaslt {
    cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t *lightHandle);
    cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t lightHandle);
    const char *(*cublasLtGetStatusName)(cublasStatus_t status);
    const char *(*cublasLtGetStatusString)(cublasStatus_t status);
    cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *matmulDesc,
                                               cublasComputeType_t computeType,
                                               cudaDataType_t scaleType);
    cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t matmulDesc);
    cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t matmulDesc,
                                                     cublasLtMatmulDescAttributes_t attr,
                                                     const void *buf, size_t sizeInBytes);
    cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *matLayout,
                                                 cudaDataType type, uint64_t rows,
                                                 uint64_t cols, int64_t ld);
    cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t matLayout);
    cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t matLayout,
                                                       cublasLtMatrixLayoutAttribute_t attr,
                                                       const void *buf, size_t sizeInBytes);
    cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *pref);
    cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref);
    cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(
        cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
        const void *buf, size_t sizeInBytes);
    cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
        cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
        cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
        cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference,
        int requestedAlgoCount, cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
        int *returnAlgoCount);
    cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t lightHandle,
                                     cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                     const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                     cublasLtMatrixLayout_t Bdesc, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                     cublasLtMatrixLayout_t Ddesc,
                                     const cublasLtMatmulAlgo_t *algo, void *workspace,
                                     size_t workspaceSizeInBytes, cudaStream_t stream);
} sp_mlp_cublaslt;

/* The soname of the cuBLASLt whose header this is built with (libcublasLt.so.13 for cuBLAS
 * 13): a library of another major version may differ in the types above, so none is tried. */
#define SP_MLP_CUBLASLT_STR_(x) #x
#define SP_MLP_CUBLASLT_STR(x) SP_MLP_CUBLASLT_STR_(x)
#define SP_MLP_CUBLASLT_SONAME "libcublasLt.so." SP_MLP_CUBLASLT_STR(CUBLAS_VER_MAJOR)

/* The process's table, filled on the first call (thread-safe, once): libcublasLt is looked
 * for as SP_MLP_CUBLASLT_SONAME (the loader's path: the calling object's RUNPATH,
 * LD_LIBRARY_PATH, ld.so.cache), then in the lib folder of the toolkit the library was built
 * with (SP_CUBLASLT_DIR, from CMake). It stays open for the life of the process. Where it is
 * missing, or lacks a function, every call returns SP_ERR_UNSUPPORTED with the reason in
 * err[0..err_size): the library, what dlopen or dlsym said. */
sp_status sp_mlp_cublaslt_get(const sp_mlp_cublaslt **out, char *err, size_t err_size);

/* What sp_mlp_cublaslt_get does once, from these names (tried in order) into *table: a test's
 * way to the failures, with names that are not there or a library that is not cuBLASLt. On
 * success *library is the dlopen handle (the caller's to dlclose); on failure nothing is left
 * open, *table is zeroed and the reason (SP_ERR_UNSUPPORTED) is in err. */
sp_status sp_mlp_cublaslt_open(const char *const *names, size_t n_names, sp_mlp_cublaslt *table,
                               void **library, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* SP_MLP_CUBLASLT_H */
