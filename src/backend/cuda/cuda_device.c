/* Opening and closing the CUDA backend on one device, and keeping that device current. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

sp_status sp_cuda_use_device(const sp_cuda_impl *impl)
{
    int current = -1;
    sp_status status = SP_CUDA_CHECK(cudaGetDevice(&current));
    if (status != SP_OK || current == impl->device)
        return status;
    return SP_CUDA_CHECK(cudaSetDevice(impl->device));
}

/* UNSUPPORTED (so that AUTO can fall back to HOST) when CUDA finds no device at all;
 * INVALID_ARGUMENT when there are devices but not this one. */
static sp_status check_device_exists(int device)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        sp_backend_fail("no CUDA device: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(err),
                        cudaGetErrorName(err));
        (void)sp_cuda_absorb(err);
        return SP_ERR_UNSUPPORTED;
    }
    if (count <= 0) {
        sp_backend_fail("no CUDA device: cudaGetDeviceCount found none");
        return SP_ERR_UNSUPPORTED;
    }
    if (device < 0 || device >= count) {
        sp_backend_fail("CUDA device %d does not exist: there %s %d (0..%d)", device,
                        count == 1 ? "is" : "are", count, count - 1);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return SP_OK;
}

static sp_status read_properties(sp_cuda_impl *impl)
{
    struct cudaDeviceProp prop;
    sp_status status = SP_CUDA_CHECK(cudaGetDeviceProperties(&prop, impl->device));
    if (status != SP_OK)
        return status;
    snprintf(impl->name, sizeof impl->name, "%s", prop.name);
    impl->async_engines = prop.asyncEngineCount;
    impl->sm_count = prop.multiProcessorCount;
    /* Needs the device current, which the caller made it. */
    return SP_CUDA_CHECK(
        cudaDeviceGetStreamPriorityRange(&impl->priority_least, &impl->priority_greatest));
}

sp_status sp_cuda_open(int device, void **out)
{
    if (!out) {
        sp_backend_fail("cuda open: NULL output pointer");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    sp_status status = check_device_exists(device);
    if (status != SP_OK)
        return status;
    sp_cuda_impl *impl = calloc(1, sizeof *impl);
    if (!impl) {
        sp_backend_fail("out of host memory opening CUDA device %d", device);
        return SP_ERR_OUT_OF_MEMORY;
    }
    impl->device = device;
    /* Since CUDA 12 cudaSetDevice also creates the primary context, so a broken device is
     * reported here rather than by the first queue or allocation. */
    status = SP_CUDA_CHECK(cudaSetDevice(device));
    if (status == SP_OK)
        status = read_properties(impl);
    if (status == SP_OK)
        status = sp_cuda_registry_init(&impl->registry);
    if (status != SP_OK) {
        free(impl);
        return status;
    }
    *out = impl;
    return SP_OK;
}

/* Queues, events and buffers were released by the core before close; only registrations the
 * user forgot to undo are left. The primary context is not reset: it belongs to the process
 * and may be in use by the application. */
void sp_cuda_close(void *opaque)
{
    sp_cuda_impl *impl = opaque;
    if (!impl)
        return;
    if (sp_cuda_use_device(impl) == SP_OK)
        sp_cuda_unregister_all(impl);
    sp_cuda_registry_destroy(&impl->registry);
    free(impl);
}
