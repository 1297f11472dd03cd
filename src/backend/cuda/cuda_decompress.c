/* Decompression in the ring (backend.h: decompress_prepare, decompress) with nvCOMP's batched
 * C API, loaded by sp_nvcomp_load (src/backend/nvcomp_load.c): LZ4 blocks and Zstandard
 * frames decompressed on the queue, the per-unit sizes and statuses copied to pinned memory,
 * then the core's check called from a host function on the same queue. */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"
#include "backend/nvcomp_load.h"
#include "streampipe_io.h"

static const sp_nvcomp_api *api_for(int format)
{
    char why[256];
    const sp_nvcomp_api *api = sp_nvcomp_api_get(why, sizeof why);
    if (!api)
        sp_backend_fail("%s", why);
    else if (format != SP_INPUT_FORMAT_LZ4 && format != SP_INPUT_FORMAT_ZSTD) {
        sp_backend_fail("nvCOMP: format %d is neither LZ4 nor Zstandard", format);
        api = NULL;
    }
    return api;
}

sp_status sp_cuda_decompress_prepare(void *impl, int format, size_t max_units,
                                     size_t max_unit_bytes, size_t max_total_bytes,
                                     size_t *temp_bytes)
{
    const sp_nvcomp_api *api = api_for(format);
    if (!api)
        return SP_ERR_UNSUPPORTED;
    sp_status st = sp_cuda_use_device(impl);
    if (st != SP_OK)
        return st;
    sp_nvcomp_opts opts;
    memset(&opts, 0, sizeof opts); /* the defaults */
    sp_nvcomp_temp_fn temp = format == SP_INPUT_FORMAT_LZ4 ? api->lz4_temp : api->zstd_temp;
    *temp_bytes = 0;
    int err = temp(max_units, max_unit_bytes, opts, temp_bytes, max_total_bytes, NULL);
    if (err != 0) {
        sp_backend_fail("nvCOMP's %s temp-size query returned status %d for %zu units of up "
                        "to %zu bytes", format == SP_INPUT_FORMAT_LZ4 ? "LZ4" : "Zstandard",
                        err, max_units, max_unit_bytes);
        return SP_ERR_UNSUPPORTED;
    }
    return SP_OK;
}

sp_status sp_cuda_decompress(void *impl, const sp_decompress_args *a, sp_bqueue *q)
{
    const sp_nvcomp_api *api = api_for(a->format);
    if (!api)
        return SP_ERR_UNSUPPORTED;
    sp_status st = sp_cuda_use_device(impl);
    if (st != SP_OK)
        return st;
    sp_nvcomp_opts opts;
    memset(&opts, 0, sizeof opts);
    sp_nvcomp_decompress_fn fn = a->format == SP_INPUT_FORMAT_LZ4 ? api->lz4_decompress
                                                                  : api->zstd_decompress;
    int err = fn(a->src, a->src_bytes, a->dst_bytes, a->made, a->n, a->temp, a->temp_bytes,
                 a->dst, opts, a->status, q->stream);
    if (err != 0) {
        sp_backend_fail("nvCOMP's batched %s decompression of %zu units returned status %d",
                        a->format == SP_INPUT_FORMAT_LZ4 ? "LZ4" : "Zstandard", a->n, err);
        return SP_ERR_BACKEND;
    }
    st = SP_CUDA_CHECK(cudaMemcpyAsync(a->made_host, a->made, a->n * sizeof(size_t),
                                       cudaMemcpyDeviceToHost, q->stream));
    if (st == SP_OK)
        st = SP_CUDA_CHECK(cudaMemcpyAsync(a->status_host, a->status, a->n * sizeof(int),
                                           cudaMemcpyDeviceToHost, q->stream));
    if (st == SP_OK)
        st = SP_CUDA_CHECK(cudaLaunchHostFunc(q->stream, a->done, a->done_arg));
    return st;
}
