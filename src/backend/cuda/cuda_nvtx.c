/* Profiler names through NVTX v3, so that an Nsight Systems capture shows the library's own
 * names: ranges such as "h2d c12" around each operation the core enqueues (Nsight projects
 * them onto the streams the work ran on), and each stream named after its queue.
 * NVTX v3 is header-only: with no profiler attached every call is one test of a function
 * pointer, cheap enough to leave on in every build. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include "backend/cuda/cuda_impl.h"

void sp_cuda_trace_push(void *impl, const char *label)
{
    (void)impl; /* NVTX ranges belong to the calling thread, not to a device */
    nvtxRangePushA(label);
}

void sp_cuda_trace_pop(void *impl)
{
    (void)impl;
    nvtxRangePop();
}

void sp_cuda_name_stream(cudaStream_t stream, const char *name)
{
    if (name && name[0])
        nvtxNameCudaStreamA(stream, name);
}
