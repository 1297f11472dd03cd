/*
 * cudaError_t -> sp_status, with the reason stored for the core (sp_backend_fail). Used by the
 * CUDA backend (C) and by the kernel launchers (.cu), hence the C linkage guards.
 *
 * Policy (DESIGN.md section 4):
 * - errors that corrupt the context (illegal address and kin) -> SP_ERR_DEVICE_LOST; CUDA keeps
 *   returning them ("sticky"), so there is nothing to consume;
 * - cudaErrorMemoryAllocation -> SP_ERR_OUT_OF_DEVICE_MEMORY (SP_ERR_OUT_OF_MEMORY for pinned
 *   host memory, see sp_cuda_check_pinned);
 * - no device / driver too old / not supported -> SP_ERR_UNSUPPORTED;
 * - everything else -> SP_ERR_BACKEND, and the error is consumed with cudaGetLastError() so
 *   that it is not reported again by a later, unrelated cudaGetLastError().
 */
#ifndef SP_CUDA_ERROR_H
#define SP_CUDA_ERROR_H

#include <cuda_runtime.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SP_OK for cudaSuccess. Otherwise stores "<call> failed: <name> (<text>) at <file>:<line>"
 * with sp_backend_fail, consumes the error when it is not sticky, and returns its mapping. */
sp_status sp_cuda_check(cudaError_t err, const char *call, const char *file, int line);

/* As sp_cuda_check, for calls that allocate or pin host memory: running out is reported as
 * SP_ERR_OUT_OF_MEMORY and the reason says "pinned host memory". */
sp_status sp_cuda_check_pinned(cudaError_t err, const char *call, const char *file, int line);

/* Maps and consumes like sp_cuda_check but stores no reason: for clean-up that follows an
 * earlier failure, whose reason must survive. */
sp_status sp_cuda_absorb(cudaError_t err);

/* The mapping alone: no reason stored, nothing consumed. */
sp_status sp_cuda_status(cudaError_t err);

/* 1 when err leaves the CUDA context unusable for the rest of the process. */
int sp_cuda_is_sticky(cudaError_t err);

#define SP_CUDA_CHECK(call) sp_cuda_check((call), #call, __FILE__, __LINE__)
#define SP_CUDA_CHECK_PINNED(call) sp_cuda_check_pinned((call), #call, __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif /* SP_CUDA_ERROR_H */
