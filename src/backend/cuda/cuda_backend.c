/* The CUDA backend's ops table: the only symbol the core sees. Built only with CUDA; without
 * it src/backend/registry.c returns NULL instead. */
#include "backend/cuda/cuda_impl.h"

static const sp_backend_ops cuda_ops = {
    .abi = SP_BACKEND_ABI,
    .name = "cuda",
    .kind = SP_BACKEND_CUDA,
    .open = sp_cuda_open,
    .close = sp_cuda_close,
    .queue_create = sp_cuda_queue_create,
    .queue_destroy = sp_cuda_queue_destroy,
    .queue_sync = sp_cuda_queue_sync,
    .queue_delay = sp_cuda_queue_delay,
    .event_create = sp_cuda_event_create,
    .event_destroy = sp_cuda_event_destroy,
    .event_record = sp_cuda_event_record,
    .queue_wait = sp_cuda_queue_wait,
    .event_sync = sp_cuda_event_sync,
    .event_elapsed = sp_cuda_event_elapsed,
    .event_query = sp_cuda_event_query,
    .device_alloc = sp_cuda_device_alloc,
    .device_free = sp_cuda_device_free,
    .pinned_alloc = sp_cuda_pinned_alloc,
    .pinned_free = sp_cuda_pinned_free,
    .host_register = sp_cuda_host_register,
    .host_unregister = sp_cuda_host_unregister,
    .is_pinned = sp_cuda_is_pinned,
    .copy_h2d = sp_cuda_copy_h2d,
    .copy_d2h = sp_cuda_copy_d2h,
    .copy_kernel = sp_cuda_copy_kernel,
    .launch = sp_cuda_launch,
    .trace_push = sp_cuda_trace_push,
    .trace_pop = sp_cuda_trace_pop,
    .capture_begin = sp_cuda_capture_begin,
    .capture_end = sp_cuda_capture_end,
    .graph_rebase = sp_cuda_graph_rebase,
    .graph_launch = sp_cuda_graph_launch,
    .graph_destroy = sp_cuda_graph_destroy,
#if defined(SP_HAVE_CUPTI)
    .activity_start = sp_cuda_activity_start,
    .activity_push = sp_cuda_activity_push,
    .activity_pop = sp_cuda_activity_pop,
    .activity_collect = sp_cuda_activity_collect,
#endif
    .memory_kind = sp_cuda_memory_kind,
    .copy_d2d = sp_cuda_copy_d2d,
    .external_wait = sp_cuda_external_wait,
    .decompress_prepare = sp_cuda_decompress_prepare,
    .decompress = sp_cuda_decompress,
};

const sp_backend_ops *sp_backend_cuda_ops(void) { return &cuda_ops; }
