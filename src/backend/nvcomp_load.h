/* nvCOMP, opened with dlopen (nvcomp_load.c), never linked and never shipped: NVIDIA's
 * library (the PyPI wheel nvidia-libnvcomp-cu13) is found by the caller and loaded with
 * sp_nvcomp_load (streampipe.h). These are our own declarations of the few calls used, from
 * nvCOMP's documented C API (nvcomp/lz4.h, nvcomp/zstd.h, nvcomp.h of version 5 and 6): the
 * options structs are 64 bytes whose all-zero value is the default, the statuses ints,
 * cudaStream_t a pointer. */
#ifndef SP_NVCOMP_LOAD_H
#define SP_NVCOMP_LOAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct sp_nvcomp_opts {
    char bytes[64]; /* nvcompBatched{LZ4,Zstd}DecompressOpts_t: zero is the default */
} sp_nvcomp_opts;

typedef int (*sp_nvcomp_temp_fn)(size_t num_chunks, size_t max_uncompressed_chunk_bytes,
                                 sp_nvcomp_opts opts, size_t *temp_bytes,
                                 size_t max_total_uncompressed_bytes, void *stream);
typedef int (*sp_nvcomp_decompress_fn)(const void *const *compressed_ptrs,
                                       const size_t *compressed_bytes,
                                       const size_t *uncompressed_buffer_bytes,
                                       size_t *uncompressed_bytes, size_t num_chunks,
                                       void *temp, size_t temp_bytes,
                                       void *const *uncompressed_ptrs, sp_nvcomp_opts opts,
                                       int *statuses, void *stream);
typedef struct sp_nvcomp_properties {
    uint32_t version, cudart_version;
} sp_nvcomp_properties;
typedef int (*sp_nvcomp_properties_fn)(sp_nvcomp_properties *out);

typedef struct sp_nvcomp_api {
    unsigned version; /* major * 1000 + minor * 100 + patch */
    sp_nvcomp_temp_fn lz4_temp, zstd_temp;
    sp_nvcomp_decompress_fn lz4_decompress, zstd_decompress;
} sp_nvcomp_api;

/* The loaded library's calls, or NULL (why: the last load's reason). */
const sp_nvcomp_api *sp_nvcomp_api_get(char *why, size_t why_size);

#endif
