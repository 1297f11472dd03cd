// One fully connected layer, relu(X W^T + b), as one cuBLASLt matmul with the bias and the
// ReLU fused into its epilogue (CUBLASLT_EPILOGUE_RELU_BIAS): the activations are written once
// and never re-read for a separate bias or ReLU pass.
//
// Layouts. cuBLASLt is column-major; our buffers are row-major:
//   X: records x inputs, row-major  == column-major [inputs x records], ld = inputs
//   W: outputs x inputs, row-major  == column-major [inputs x outputs], ld = inputs
//   Y: records x outputs, row-major == column-major [outputs x records], ld = outputs
// so the column-major product is Y^T = W X^T: A = W's storage with TRANSA = T (op(A) is
// outputs x inputs), B = X's storage with TRANSB = N, D = Y's storage; m = outputs,
// n = records, k = inputs. The epilogue's bias has one value per row of D, i.e. per output.
//
// The reference this must match is sp_mlp_dense_relu_host (src/mlp/mlp_host.c).
//
// cuBLASLt is not linked: its functions come from the table mlp_cublaslt.c fills with dlopen
// (mlp_cublaslt.h) when the first GEMM stage is made; cublasLt.h gives the types and enums.
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include <cublasLt.h>

#include "mlp/mlp_cublaslt.h"
#include "mlp/mlp_cuda.h"
#include "mlp/mlp_cuda_check.h"

// Each entry of the table has the type of the function cublasLt.h declares (decltype does not
// use the function, so nothing here refers to libcublasLt's symbols).
#define SAME_TYPE_AS_HEADER(fn)                                                            \
    static_assert(std::is_same<decltype(sp_mlp_cublaslt::fn), decltype(&fn)>::value,        \
                  "sp_mlp_cublaslt::" #fn " differs from cublasLt.h's " #fn)
SAME_TYPE_AS_HEADER(cublasLtCreate);
SAME_TYPE_AS_HEADER(cublasLtDestroy);
SAME_TYPE_AS_HEADER(cublasLtGetStatusName);
SAME_TYPE_AS_HEADER(cublasLtGetStatusString);
SAME_TYPE_AS_HEADER(cublasLtMatmulDescCreate);
SAME_TYPE_AS_HEADER(cublasLtMatmulDescDestroy);
SAME_TYPE_AS_HEADER(cublasLtMatmulDescSetAttribute);
SAME_TYPE_AS_HEADER(cublasLtMatrixLayoutCreate);
SAME_TYPE_AS_HEADER(cublasLtMatrixLayoutDestroy);
SAME_TYPE_AS_HEADER(cublasLtMatrixLayoutSetAttribute);
SAME_TYPE_AS_HEADER(cublasLtMatmulPreferenceCreate);
SAME_TYPE_AS_HEADER(cublasLtMatmulPreferenceDestroy);
SAME_TYPE_AS_HEADER(cublasLtMatmulPreferenceSetAttribute);
SAME_TYPE_AS_HEADER(cublasLtMatmulAlgoGetHeuristic);
SAME_TYPE_AS_HEADER(cublasLtMatmul);
static_assert(sizeof(sp_mlp_cublaslt) == 15 * sizeof(void (*)(void)),
              "a new entry of sp_mlp_cublaslt needs its SAME_TYPE_AS_HEADER line");

#define GEMM_PLAN_CACHE 4 // record counts seen: the full chunk, the short last one, ...

// The algorithm cuBLASLt's heuristic picked for one record count.
struct gemm_plan {
    uint64_t records; // 0: empty entry
    cublasLtMatmulAlgo_t algo;
};

struct sp_mlp_gemm {
    const sp_mlp_cublaslt *lt; // the process's cuBLASLt functions
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t weight_layout, in_layout, out_layout;
    cublasLtMatmulPreference_t preference;
    const float *weight, *bias;
    uint64_t inputs, outputs;
    uint64_t layout_records; // the column count in_layout and out_layout hold now
    gemm_plan plans[GEMM_PLAN_CACHE];
    size_t next_plan; // round-robin replacement
};

static sp_status blas_status(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return SP_OK;
    case CUBLAS_STATUS_ALLOC_FAILED: return SP_ERR_OUT_OF_DEVICE_MEMORY;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return SP_ERR_UNSUPPORTED;
    default: return SP_ERR_BACKEND;
    }
}

static sp_status blas_check(const sp_mlp_cublaslt *lt, cublasStatus_t s, const char *call,
                            int line, char *err, size_t err_size)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return SP_OK;
    return sp_model_fail(err, err_size, blas_status(s), "%s failed: %s (%s) at %s:%d", call,
                         lt->cublasLtGetStatusName(s), lt->cublasLtGetStatusString(s),
                         __FILE__, line);
}

// `call` is through `lt`, the caller's local copy of g->lt, which also names the status.
#define BLAS_CHECK(call, err, err_size) \
    blas_check(lt, (call), #call, __LINE__, (err), (err_size))

// ---- setup --------------------------------------------------------------------------------

// Y^T = relu(op(A) B + bias) in fp32 (or tf32 inputs), alpha and beta read from the host.
static sp_status describe_op(sp_mlp_gemm *g, int tf32, char *err, size_t err_size)
{
    const sp_mlp_cublaslt *lt = g->lt;
    const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const int32_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
    const int32_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    const int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    const void *bias = g->bias;
    const struct {
        cublasLtMatmulDescAttributes_t attribute;
        const void *value;
        size_t size;
    } settings[] = {
        {CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose},
        {CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep},
        {CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue},
        {CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias},
        {CUBLASLT_MATMUL_DESC_POINTER_MODE, &pointer_mode, sizeof pointer_mode},
    };
    sp_status st = BLAS_CHECK(lt->cublasLtMatmulDescCreate(&g->op, compute, CUDA_R_32F), err,
                              err_size);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0] && st == SP_OK; i++)
        st = BLAS_CHECK(lt->cublasLtMatmulDescSetAttribute(g->op, settings[i].attribute,
                                                           settings[i].value, settings[i].size),
                        err, err_size);
    return st;
}

// The record count (columns of X^T and Y^T) starts at 1 and changes per call (set_records).
static sp_status describe_layouts(sp_mlp_gemm *g, char *err, size_t err_size)
{
    const sp_mlp_cublaslt *lt = g->lt;
    sp_status st = BLAS_CHECK(lt->cublasLtMatrixLayoutCreate(&g->weight_layout, CUDA_R_32F,
                                                             g->inputs, g->outputs,
                                                             (int64_t)g->inputs),
                              err, err_size);
    if (st == SP_OK)
        st = BLAS_CHECK(lt->cublasLtMatrixLayoutCreate(&g->in_layout, CUDA_R_32F, g->inputs,
                                                       1, (int64_t)g->inputs),
                        err, err_size);
    if (st == SP_OK)
        st = BLAS_CHECK(lt->cublasLtMatrixLayoutCreate(&g->out_layout, CUDA_R_32F, g->outputs,
                                                       1, (int64_t)g->outputs),
                        err, err_size);
    g->layout_records = 1;
    return st;
}

static sp_status describe_preference(sp_mlp_gemm *g, char *err, size_t err_size)
{
    const sp_mlp_cublaslt *lt = g->lt;
    const uint64_t workspace = SP_MLP_GEMM_WORKSPACE_BYTES;
    sp_status st = BLAS_CHECK(lt->cublasLtMatmulPreferenceCreate(&g->preference), err,
                              err_size);
    if (st == SP_OK)
        st = BLAS_CHECK(lt->cublasLtMatmulPreferenceSetAttribute(
                            g->preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                            sizeof workspace),
                        err, err_size);
    return st;
}

extern "C" sp_status sp_mlp_gemm_create(const float *weight, const float *bias, size_t inputs,
                                        size_t outputs, int tf32, sp_mlp_gemm **out, char *err,
                                        size_t err_size)
{
    if (weight == nullptr || bias == nullptr || out == nullptr || inputs == 0 || outputs == 0)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_gemm_create: bad argument");
    *out = nullptr;
    const sp_mlp_cublaslt *lt = nullptr; // opened here, at the first GEMM stage made
    sp_status st = sp_mlp_cublaslt_get(&lt, err, err_size);
    if (st != SP_OK)
        return st;
    sp_mlp_gemm *g = static_cast<sp_mlp_gemm *>(calloc(1, sizeof *g));
    if (g == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_OUT_OF_MEMORY, "no memory for a GEMM stage");
    g->lt = lt;
    g->weight = weight;
    g->bias = bias;
    g->inputs = inputs;
    g->outputs = outputs;
    st = BLAS_CHECK(lt->cublasLtCreate(&g->handle), err, err_size);
    if (st == SP_OK)
        st = describe_op(g, tf32, err, err_size);
    if (st == SP_OK)
        st = describe_layouts(g, err, err_size);
    if (st == SP_OK)
        st = describe_preference(g, err, err_size);
    if (st != SP_OK) {
        sp_mlp_gemm_destroy(g);
        return st;
    }
    *out = g;
    return SP_OK;
}

extern "C" void sp_mlp_gemm_destroy(sp_mlp_gemm *g)
{
    if (g == nullptr)
        return;
    const sp_mlp_cublaslt *lt = g->lt; // never NULL: create fails before calloc without it
    // Destroy calls only fail for NULL or uninitialised descriptors, which these are not.
    if (g->preference != nullptr)
        (void)lt->cublasLtMatmulPreferenceDestroy(g->preference);
    if (g->out_layout != nullptr)
        (void)lt->cublasLtMatrixLayoutDestroy(g->out_layout);
    if (g->in_layout != nullptr)
        (void)lt->cublasLtMatrixLayoutDestroy(g->in_layout);
    if (g->weight_layout != nullptr)
        (void)lt->cublasLtMatrixLayoutDestroy(g->weight_layout);
    if (g->op != nullptr)
        (void)lt->cublasLtMatmulDescDestroy(g->op);
    if (g->handle != nullptr)
        (void)lt->cublasLtDestroy(g->handle);
    free(g);
}

// ---- per chunk ----------------------------------------------------------------------------

static sp_status set_records(sp_mlp_gemm *g, uint64_t records, char *err, size_t err_size)
{
    const sp_mlp_cublaslt *lt = g->lt;
    if (g->layout_records == records)
        return SP_OK;
    sp_status st = BLAS_CHECK(lt->cublasLtMatrixLayoutSetAttribute(
                                  g->in_layout, CUBLASLT_MATRIX_LAYOUT_COLS, &records,
                                  sizeof records),
                              err, err_size);
    if (st == SP_OK)
        st = BLAS_CHECK(lt->cublasLtMatrixLayoutSetAttribute(
                            g->out_layout, CUBLASLT_MATRIX_LAYOUT_COLS, &records,
                            sizeof records),
                        err, err_size);
    g->layout_records = st == SP_OK ? records : 0; // 0 forces a reset next time
    return st;
}

// The heuristic runs once per record count (it costs tens of microseconds of host time, and
// every stage's launches share the one thread that drives the pipeline).
static sp_status find_plan(sp_mlp_gemm *g, uint64_t records, const gemm_plan **plan,
                           char *err, size_t err_size)
{
    const sp_mlp_cublaslt *lt = g->lt;
    for (size_t i = 0; i < GEMM_PLAN_CACHE; i++)
        if (g->plans[i].records == records) {
            *plan = &g->plans[i];
            return SP_OK;
        }
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    sp_status st = BLAS_CHECK(lt->cublasLtMatmulAlgoGetHeuristic(g->handle, g->op,
                                                                 g->weight_layout, g->in_layout,
                                                                 g->out_layout, g->out_layout,
                                                                 g->preference, 1, &result,
                                                                 &found),
                              err, err_size);
    if (st != SP_OK)
        return st;
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
        return sp_model_fail(err, err_size, SP_ERR_UNSUPPORTED,
                             "cuBLASLt has no algorithm for a %llux%llu layer with bias+ReLU on "
                             "%llu records", (unsigned long long)g->outputs,
                             (unsigned long long)g->inputs, (unsigned long long)records);
    gemm_plan *slot = &g->plans[g->next_plan];
    g->next_plan = (g->next_plan + 1) % GEMM_PLAN_CACHE;
    slot->records = records;
    slot->algo = result.algo;
    *plan = slot;
    return SP_OK;
}

extern "C" sp_status sp_mlp_gemm_enqueue(sp_mlp_gemm *g, const float *in, float *out,
                                         size_t records, void *workspace, void *stream,
                                         char *err, size_t err_size)
{
    if (records == 0)
        return SP_OK;
    if (g == nullptr || in == nullptr || out == nullptr || stream == nullptr ||
        workspace == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT, "GEMM stage: NULL %s",
                             stream == nullptr      ? "stream"
                             : workspace == nullptr ? "workspace (the chunk's scratch)"
                                                    : "argument");
    if (records > INT32_MAX) // cuBLASLt supports int32 dimensions
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "GEMM stage: %zu records in one chunk; at most %d", records,
                             INT32_MAX);
    const gemm_plan *plan = nullptr;
    sp_status st = set_records(g, records, err, err_size);
    if (st == SP_OK)
        st = find_plan(g, records, &plan, err, err_size);
    if (st != SP_OK)
        return st;
    const float alpha = 1.0f, beta = 0.0f; // host pointer mode, the default
    const sp_mlp_cublaslt *lt = g->lt;
    return BLAS_CHECK(lt->cublasLtMatmul(g->handle, g->op, &alpha, g->weight, g->weight_layout,
                                         in, g->in_layout, &beta, out, g->out_layout, out,
                                         g->out_layout, &plan->algo, workspace,
                                         SP_MLP_GEMM_WORKSPACE_BYTES,
                                         static_cast<cudaStream_t>(stream)),
                      err, err_size);
}
