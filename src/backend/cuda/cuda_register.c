/*
 * Pinning memory the user already owns (cudaHostRegister), undoing exactly that, and asking
 * whether a range is pinned.
 *
 * Ranges are registered in pieces of at most 1 GiB: one huge registration can fail or stall
 * where smaller ones succeed, and a failure then costs only the rollback of what was done.
 * Piece boundaries sit at 2 MiB-aligned addresses so that two pieces never share a page
 * (a shared page would make the second registration fail as "already registered"). A piece
 * that is already registered (by the user, another library, or cudaHostAlloc) is accepted
 * and left alone; only the pieces we registered are recorded and later unregistered.
 */
#include <stdint.h>
#include <stdio.h>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/cuda_impl.h"

#define PIECE_BYTES ((size_t)1 << 30)
#define PIECE_ALIGN ((size_t)2 << 20)

/* A range [ptr, ptr + bytes) is cut at the addresses base + k * PIECE_BYTES (k >= 1), where
 * base is ptr rounded down to PIECE_ALIGN and lead = ptr - base. Offsets are from ptr. */
static size_t piece_begin(size_t lead, size_t k) { return k == 0 ? 0 : k * PIECE_BYTES - lead; }

static size_t piece_end(size_t lead, size_t bytes, size_t k)
{
    size_t boundary = (k + 1) * PIECE_BYTES - lead;
    return boundary < bytes ? boundary : bytes;
}

/* 0 when the range would wrap around the address space. */
static size_t piece_count(const void *ptr, size_t bytes, size_t *lead)
{
    size_t span = 0;
    *lead = (size_t)((uintptr_t)ptr % PIECE_ALIGN);
    if (bytes == 0 || __builtin_add_overflow(*lead, bytes, &span) ||
        (uintptr_t)ptr > UINTPTR_MAX - bytes)
        return 0;
    return (span - 1) / PIECE_BYTES + 1;
}

/* Page-locked host memory that CUDA knows about (cudaHostAlloc or registered). Pageable
 * memory reads as cudaMemoryTypeUnregistered; drivers before CUDA 11 said
 * cudaErrorInvalidValue instead, which means the same here. */
static sp_status byte_is_pinned(const char *byte, int *pinned)
{
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, byte);
    *pinned = 0;
    if (err == cudaErrorInvalidValue) {
        (void)sp_cuda_absorb(err);
        return SP_OK;
    }
    sp_status status = SP_CUDA_CHECK(err);
    if (status == SP_OK)
        *pinned = attr.type == cudaMemoryTypeHost;
    return status;
}

static sp_status register_piece(sp_cuda_impl *impl, void *ptr, size_t bytes, size_t lead,
                                size_t k, size_t pieces)
{
    size_t begin = piece_begin(lead, k);
    size_t length = piece_end(lead, bytes, k) - begin;
    char *base = (char *)ptr + begin;
    /* Pinned already (cudaHostAlloc memory, or registered by someone else): left alone. Asked
     * first because CUDA's answer to registering such memory differs between kinds of it. */
    int pinned_first = 0;
    int pinned_last = 0;
    sp_status status = byte_is_pinned(base, &pinned_first);
    if (status == SP_OK && pinned_first)
        status = byte_is_pinned(base + length - 1, &pinned_last);
    if (status != SP_OK || (pinned_first && pinned_last))
        return status;
    /* Mapped as well as portable: only cudaHostRegisterDefault promises a device mapping (on
     * unified addressing), and a pipeline with copy_by_kernel has a kernel read and write this
     * memory directly (cuda_copy.c, copy_kernel); with Portable alone it may have no device
     * address. cudaHostAlloc memory is mapped whatever its flags. */
    cudaError_t err = cudaHostRegister(base, length,
                                       cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (err == cudaErrorHostMemoryAlreadyRegistered) {
        (void)sp_cuda_absorb(err); /* overlaps someone else's registration: accepted */
        return SP_OK;
    }
    char call[128];
    snprintf(call, sizeof call, "cudaHostRegister(piece %zu of %zu: %zu bytes at offset %zu)",
             k + 1, pieces, length, begin);
    status = sp_cuda_check_pinned(err, call, __FILE__, __LINE__);
    if (status == SP_OK)
        sp_cuda_registry_append(&impl->registry, ptr, base);
    return status;
}

/* Undoes the registrations appended after `mark`, keeping the reason of the first failure. */
static void roll_back_to(sp_cuda_registry *reg, size_t mark)
{
    sp_cuda_piece piece;
    while (reg->count > mark && sp_cuda_registry_pop(reg, &piece))
        (void)sp_cuda_absorb(cudaHostUnregister(piece.base));
}

sp_status sp_cuda_host_register(void *opaque, void *ptr, size_t bytes)
{
    sp_cuda_impl *impl = opaque;
    size_t lead = 0;
    size_t pieces = ptr ? piece_count(ptr, bytes, &lead) : 0;
    if (!impl || pieces == 0) {
        sp_backend_fail("cuda host_register: NULL pointer, zero bytes or a range that wraps");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    sp_cuda_registry_lock(&impl->registry);
    size_t mark = impl->registry.count;
    status = sp_cuda_registry_reserve(&impl->registry, pieces);
    for (size_t k = 0; status == SP_OK && k < pieces; k++)
        status = register_piece(impl, ptr, bytes, lead, k, pieces);
    if (status != SP_OK)
        roll_back_to(&impl->registry, mark);
    sp_cuda_registry_unlock(&impl->registry);
    return status;
}

/* Not ours: a successful no-op for pinned memory we did not register, an error otherwise. */
static sp_status unregister_foreign(const void *ptr)
{
    int pinned = 0;
    sp_status status = byte_is_pinned(ptr, &pinned);
    if (status != SP_OK || pinned)
        return status;
    sp_backend_fail("host_unregister: %p was not registered with this context and is not "
                    "pinned memory", ptr);
    return SP_ERR_INVALID_ARGUMENT;
}

sp_status sp_cuda_host_unregister(void *opaque, void *ptr)
{
    sp_cuda_impl *impl = opaque;
    if (!impl || !ptr) {
        sp_backend_fail("cuda host_unregister: NULL argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    int found = 0;
    sp_cuda_piece piece;
    sp_cuda_registry_lock(&impl->registry);
    while (sp_cuda_registry_take(&impl->registry, ptr, &piece)) {
        found = 1;
        cudaError_t err = cudaHostUnregister(piece.base);
        /* Keep going so that one bad piece does not leave the others pinned; the first
         * failure's reason is the one reported. */
        if (status == SP_OK)
            status = SP_CUDA_CHECK(err);
        else
            (void)sp_cuda_absorb(err);
    }
    sp_cuda_registry_unlock(&impl->registry);
    return found ? status : unregister_foreign(ptr);
}

void sp_cuda_unregister_all(sp_cuda_impl *impl)
{
    sp_cuda_registry_lock(&impl->registry);
    roll_back_to(&impl->registry, 0);
    sp_cuda_registry_unlock(&impl->registry);
}

/* Samples the first byte, the last byte and the first byte of every 1 GiB piece in between
 * (where a registration made by host_register starts), rather than every page. */
sp_status sp_cuda_is_pinned(void *opaque, const void *ptr, size_t bytes, int *pinned)
{
    sp_cuda_impl *impl = opaque;
    size_t lead = 0;
    size_t pieces = ptr ? piece_count(ptr, bytes ? bytes : 1, &lead) : 0;
    if (!impl || !pinned || pieces == 0) {
        sp_backend_fail("cuda is_pinned: NULL argument or a range that wraps");
        return SP_ERR_INVALID_ARGUMENT;
    }
    *pinned = 0;
    sp_status status = sp_cuda_use_device(impl);
    if (status != SP_OK)
        return status;
    const char *first = ptr;
    int ok = 0;
    status = byte_is_pinned(first, &ok);
    for (size_t k = 1; status == SP_OK && ok && k < pieces; k++)
        status = byte_is_pinned(first + piece_begin(lead, k), &ok);
    if (status == SP_OK && ok && bytes > 1)
        status = byte_is_pinned(first + bytes - 1, &ok);
    if (status == SP_OK)
        *pinned = ok;
    return status;
}
