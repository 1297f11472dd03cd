/*
 * The CUDA backend's private types and the functions its ops table is made of. Only files in
 * src/backend/cuda include this.
 */
#ifndef SP_CUDA_IMPL_H
#define SP_CUDA_IMPL_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_registry.h"

typedef struct sp_cuda_impl {
    int device;
    char name[256];         /* cudaDeviceProp.name */
    int async_engines;      /* copy engines; 2 or more let H2D and D2H overlap */
    int sm_count;
    int priority_least;     /* numerically largest stream priority (lowest priority), 0 */
    int priority_greatest;  /* numerically smallest (highest priority), e.g. -5 */
    sp_cuda_registry registry; /* the pieces of user memory that *we* registered */
} sp_cuda_impl;

struct sp_bqueue {
    cudaStream_t stream;    /* non-blocking: never synchronizes with the legacy stream */
    char name[32];          /* for error messages */
};

struct sp_bevent {
    cudaEvent_t event;
};

/* Makes impl's device current on the calling thread. Every entry point calls it first: one
 * thread may drive several devices, and a CUDA call made while another device is current
 * would act on (or initialize a context on) that device. */
sp_status sp_cuda_use_device(const sp_cuda_impl *impl);

/* cuda_device.c */
sp_status sp_cuda_open(int device, void **impl);
void sp_cuda_close(void *impl);

/* cuda_queue.c */
sp_status sp_cuda_queue_create(void *impl, const char *name, int priority, sp_bqueue **out);
void sp_cuda_queue_destroy(void *impl, sp_bqueue *q);
sp_status sp_cuda_queue_sync(void *impl, sp_bqueue *q);
sp_status sp_cuda_queue_delay(void *impl, sp_bqueue *q, unsigned usec);

/* cuda_launch.c */
sp_status sp_cuda_launch(void *impl, sp_bqueue *q, sp_launch_fn fn, void *arg,
                         const sp_chunk *chunk);

/* cuda_event.c */
sp_status sp_cuda_event_create(void *impl, unsigned flags, sp_bevent **out);
void sp_cuda_event_destroy(void *impl, sp_bevent *e);
sp_status sp_cuda_event_record(void *impl, sp_bevent *e, sp_bqueue *q);
sp_status sp_cuda_queue_wait(void *impl, sp_bqueue *q, sp_bevent *e);
sp_status sp_cuda_event_sync(void *impl, sp_bevent *e);
sp_status sp_cuda_event_elapsed(void *impl, sp_bevent *from, sp_bevent *to, double *seconds);
sp_status sp_cuda_event_query(void *impl, sp_bevent *e, int *complete);

/* cuda_memory.c */
sp_status sp_cuda_device_alloc(void *impl, size_t bytes, void **out);
void sp_cuda_device_free(void *impl, void *ptr);
sp_status sp_cuda_pinned_alloc(void *impl, size_t bytes, void **out);
void sp_cuda_pinned_free(void *impl, void *ptr);

/* cuda_register.c */
sp_status sp_cuda_host_register(void *impl, void *ptr, size_t bytes);
sp_status sp_cuda_host_unregister(void *impl, void *ptr);
sp_status sp_cuda_is_pinned(void *impl, const void *ptr, size_t bytes, int *pinned);
/* Unregisters whatever is still in the registry (close() of a context whose user forgot). */
void sp_cuda_unregister_all(sp_cuda_impl *impl);

/* cuda_copy.c */
sp_status sp_cuda_copy_h2d(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
sp_status sp_cuda_copy_d2h(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
sp_status sp_cuda_copy_d2d(void *impl, void *dst, const void *src, size_t bytes, sp_bqueue *q);
sp_status sp_cuda_external_wait(void *impl, void *native_queue, sp_bevent *e);
/* cuda_decompress.c: nvCOMP's batched decompression (loaded by sp_nvcomp_load) */
sp_status sp_cuda_decompress_prepare(void *impl, int format, size_t max_units,
                                     size_t max_unit_bytes, size_t max_total_bytes,
                                     size_t *temp_bytes);
sp_status sp_cuda_decompress(void *impl, const sp_decompress_args *args, sp_bqueue *q);
/* cuda_memory_kind.c */
sp_status sp_cuda_memory_kind(void *impl, const void *ptr, size_t bytes, sp_mem_kind *kind);
/* A kernel on q copying between pinned host memory (mapped) and device memory. */
sp_status sp_cuda_copy_kernel(void *impl, void *dst, const void *src, size_t bytes,
                              sp_bqueue *q);

/* cuda_graph.c */
sp_status sp_cuda_capture_begin(void *impl, sp_bqueue *q);
sp_status sp_cuda_capture_end(void *impl, sp_bqueue *q, sp_bgraph **out);
sp_status sp_cuda_graph_rebase(void *impl, sp_bgraph *g, int to_device, const void *old_base,
                               const void *new_base, size_t bytes);
sp_status sp_cuda_graph_launch(void *impl, sp_bgraph *g, sp_bqueue *q);
void sp_cuda_graph_destroy(void *impl, sp_bgraph *g);

/* cuda_nvtx.c */
void sp_cuda_trace_push(void *impl, const char *label);
void sp_cuda_trace_pop(void *impl);
/* Shows `name` for the stream in Nsight Systems; NULL or "" leaves it unnamed. */
void sp_cuda_name_stream(cudaStream_t stream, const char *name);

/* cuda_activity.c, built when CUPTI is found (SP_HAVE_CUPTI): activity timing. */
sp_status sp_cuda_activity_start(void *impl);
sp_status sp_cuda_activity_push(void *impl, uint64_t id);
void sp_cuda_activity_pop(void *impl);
sp_status sp_cuda_activity_collect(void *impl, sp_activity_fn fn, void *user);

#endif /* SP_CUDA_IMPL_H */
