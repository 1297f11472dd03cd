// The digits MLP's weights on the device: one allocation holding every layer, each tensor at
// a 256-byte boundary (cuBLASLt's default alignment assumption, and float4 loads in kernels).
#include <cstdlib>
#include <cstring>

#include "mlp/mlp_cuda.h"
#include "mlp/mlp_cuda_check.h"

#define TENSOR_ALIGN_FLOATS 64 // 256 bytes

struct sp_mlp_device {
    float *storage; // device memory
    const float *weight[SP_MLP_LAYERS];
    const float *bias[SP_MLP_LAYERS];
    int sm_count;
};

static size_t aligned_floats(size_t n)
{
    return (n + TENSOR_ALIGN_FLOATS - 1) / TENSOR_ALIGN_FLOATS * TENSOR_ALIGN_FLOATS;
}

// Where each tensor goes in the device allocation; returns the floats needed in all.
static size_t plan_offsets(const sp_mlp *model, size_t weight_at[], size_t bias_at[])
{
    size_t total = 0;
    for (size_t i = 0; i < SP_MLP_LAYERS; i++) {
        const sp_mlp_layer layer = sp_mlp_layer_at(model, i);
        weight_at[i] = total;
        total += aligned_floats(layer.outputs * layer.inputs);
        bias_at[i] = total;
        total += aligned_floats(layer.outputs);
    }
    return total;
}

// The host weights gathered into the device layout, then one copy on a private non-blocking
// stream (the legacy default stream is never used), waited for here: this is setup, so a
// pageable source is fine.
static sp_status upload(const sp_mlp *model, sp_mlp_device *dev, const size_t weight_at[],
                        const size_t bias_at[], size_t total, char *err, size_t err_size)
{
    float *staging = static_cast<float *>(calloc(total, sizeof(float)));
    if (staging == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_OUT_OF_MEMORY,
                             "no memory to stage the weights");
    for (size_t i = 0; i < SP_MLP_LAYERS; i++) {
        const sp_mlp_layer layer = sp_mlp_layer_at(model, i);
        memcpy(staging + weight_at[i], layer.weight,
               layer.outputs * layer.inputs * sizeof(float));
        memcpy(staging + bias_at[i], layer.bias, layer.outputs * sizeof(float));
    }
    cudaStream_t stream = nullptr;
    sp_status st = MLP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                  err, err_size);
    if (st == SP_OK)
        st = MLP_CUDA_CHECK(cudaMemcpyAsync(dev->storage, staging, total * sizeof(float),
                                            cudaMemcpyHostToDevice, stream),
                            err, err_size);
    if (st == SP_OK)
        st = MLP_CUDA_CHECK(cudaStreamSynchronize(stream), err, err_size);
    if (stream != nullptr)
        (void)sp_cuda_error_status((int)cudaStreamDestroy(stream));
    free(staging);
    return st;
}

static sp_status query_sm_count(sp_mlp_device *dev, char *err, size_t err_size)
{
    int device = 0;
    sp_status st = MLP_CUDA_CHECK(cudaGetDevice(&device), err, err_size);
    if (st == SP_OK)
        st = MLP_CUDA_CHECK(
            cudaDeviceGetAttribute(&dev->sm_count, cudaDevAttrMultiProcessorCount, device), err,
            err_size);
    if (dev->sm_count < 1)
        dev->sm_count = 1;
    return st;
}

extern "C" sp_status sp_mlp_device_create(const sp_mlp *model, sp_mlp_device **out, char *err,
                                          size_t err_size)
{
    if (model == nullptr || out == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_INVALID_ARGUMENT,
                             "sp_mlp_device_create: NULL argument");
    *out = nullptr;
    sp_mlp_device *dev = static_cast<sp_mlp_device *>(calloc(1, sizeof *dev));
    if (dev == nullptr)
        return sp_model_fail(err, err_size, SP_ERR_OUT_OF_MEMORY, "no memory for the model");
    size_t weight_at[SP_MLP_LAYERS], bias_at[SP_MLP_LAYERS];
    const size_t total = plan_offsets(model, weight_at, bias_at);
    sp_status st = query_sm_count(dev, err, err_size);
    if (st == SP_OK)
        st = MLP_CUDA_CHECK(cudaMalloc(&dev->storage, total * sizeof(float)), err, err_size);
    if (st == SP_OK)
        st = upload(model, dev, weight_at, bias_at, total, err, err_size);
    if (st != SP_OK) {
        sp_mlp_device_destroy(dev);
        return st;
    }
    for (size_t i = 0; i < SP_MLP_LAYERS; i++) {
        dev->weight[i] = dev->storage + weight_at[i];
        dev->bias[i] = dev->storage + bias_at[i];
    }
    *out = dev;
    return SP_OK;
}

extern "C" void sp_mlp_device_destroy(sp_mlp_device *dev)
{
    if (dev == nullptr)
        return;
    if (dev->storage != nullptr)
        (void)sp_cuda_error_status((int)cudaFree(dev->storage));
    free(dev);
}

extern "C" const float *sp_mlp_device_weight(const sp_mlp_device *dev, size_t layer)
{
    return dev != nullptr && layer < SP_MLP_LAYERS ? dev->weight[layer] : nullptr;
}

extern "C" const float *sp_mlp_device_bias(const sp_mlp_device *dev, size_t layer)
{
    return dev != nullptr && layer < SP_MLP_LAYERS ? dev->bias[layer] : nullptr;
}

extern "C" int sp_mlp_device_sm_count(const sp_mlp_device *dev)
{
    return dev != nullptr ? dev->sm_count : 1;
}
