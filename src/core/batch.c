/* A batch's checks before it starts, and how its failures are recorded. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/batch.h"
#include "core/device_memory.h"
#include "core/sized.h"

/* The byte counts of n records in and out, and whether in and out are usable; the reason in
 * why. Touches nothing, so a stream's submit can call it beside a running engine. */
static sp_status check_buffers(const sp_pipeline *p, const void *in, size_t n, const void *out,
                               char *why, size_t why_size, size_t *in_bytes, size_t *out_bytes)
{
    int overflow = 0;
    *in_bytes = sp_mul_size(n, p->record_bytes[0], &overflow);
    if (!overflow)
        *out_bytes = sp_mul_size(n, p->record_bytes[p->n_stages], &overflow);
    if (overflow) {
        snprintf(why, why_size, "n_records (%zu) x record size overflows size_t", n);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if (n == 0)
        return SP_OK;
    if (!in || !out) {
        snprintf(why, why_size, "%s is NULL with n_records = %zu", !in ? "in" : "out", n);
        return SP_ERR_INVALID_ARGUMENT;
    }
    if ((uintptr_t)in > UINTPTR_MAX - *in_bytes || (uintptr_t)out > UINTPTR_MAX - *out_bytes) {
        snprintf(why, why_size, "buffer end overflows the address space");
        return SP_ERR_INVALID_ARGUMENT;
    }
    int exact_in_place = in == out && *in_bytes == *out_bytes &&
                         p->record_bytes[0] == p->record_bytes[p->n_stages];
    if (!exact_in_place && sp_ranges_overlap(in, *in_bytes, out, *out_bytes)) {
        snprintf(why, why_size,
                 "in [%p, +%zu) and out [%p, +%zu) overlap; only exact in-place (in == out "
                 "with equal record sizes) is allowed",
                 in, *in_bytes, out, *out_bytes);
        return SP_ERR_INVALID_ARGUMENT;
    }
    return SP_OK;
}

sp_status sp_batch_check_buffers(const sp_pipeline *p, const void *in, size_t n_records,
                                 const void *out, char *why, size_t why_size)
{
    size_t in_bytes, out_bytes;
    why[0] = '\0';
    return check_buffers(p, in, n_records, out, why, why_size, &in_bytes, &out_bytes);
}

sp_status sp_pipeline_check_buffers(const sp_pipeline *p, const void *in, size_t n_records,
                                    const void *out, char *why, size_t why_size)
{
    char own[256];
    char *text = why && why_size ? why : own;
    size_t size = why && why_size ? why_size : sizeof own;
    if (!p) {
        snprintf(text, size, "pipeline is NULL");
        return SP_ERR_INVALID_ARGUMENT;
    }
    return sp_batch_check_buffers(p, in, n_records, out, text, size);
}

/* A kind of memory a run cannot use, with the reason. */
static sp_status refuse_kind(sp_pipeline *p, const char *which, sp_mem_kind kind)
{
    return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "%s is %s%s", which,
                            sp_mem_kind_name(kind),
                            kind == SP_MEM_MIXED ? " (it begins and ends in different kinds)"
                                                 : ", not this pipeline's device's");
}

/* What the user's memory is: pageable (through pinned staging), pinned (the copy engines read
 * and write it), or device memory (copied device to device). */
static sp_status detect_memory(sp_batch *b, size_t in_bytes, size_t out_bytes)
{
    sp_pipeline *p = b->p;
    sp_mem_kind in = SP_MEM_PAGEABLE, out = SP_MEM_PAGEABLE;
    sp_status st = sp_memory_kind(p->ctx, b->in, in_bytes, &in);
    if (st == SP_OK)
        st = sp_memory_kind(p->ctx, b->out, out_bytes, &out);
    if (st != SP_OK)
        return sp_pipeline_backend_fail(p, st, "asking what the memory is");
    if (in >= SP_MEM_OTHER_DEVICE)
        return refuse_kind(p, "in", in);
    if (out >= SP_MEM_OTHER_DEVICE)
        return refuse_kind(p, "out", out);
    b->in_device = in == SP_MEM_DEVICE;
    b->out_device = out == SP_MEM_DEVICE;
    b->stage_in = in == SP_MEM_PAGEABLE;
    b->stage_out = out == SP_MEM_PAGEABLE;
    return SP_OK;
}

sp_status sp_batch_prepare(sp_batch *b, sp_pipeline *p, const void *in, size_t n, void *out,
                           int timing)
{
    memset(b, 0, sizeof *b);
    b->p = p;
    b->in = in;
    b->out = out;
    b->timing = timing;
    if (atomic_load(&p->ctx->lost)) /* not via the context's text: another thread may write it */
        return sp_pipeline_fail(p, SP_ERR_DEVICE_LOST,
                                "the device context was lost earlier; destroy and recreate it");
    sp_plan_run(n, p->chunk_capacity, p->chunk_chosen, p->depth, p->widest_record, &b->plan);
    b->end = b->plan.chunks;
    if (n == 0)
        return SP_OK;
    char why[256];
    sp_status st = check_buffers(p, in, n, out, why, sizeof why, &b->plan.in_bytes,
                                 &b->plan.out_bytes);
    if (st != SP_OK)
        return sp_pipeline_fail(p, st, "%s", why);
    return detect_memory(b, b->plan.in_bytes, b->plan.out_bytes);
}

/* One end of a run_io batch that is memory: what kind, refused as a run's would be. */
static sp_status io_memory_end(sp_batch *b, const void *ptr, size_t bytes, const char *which,
                               int *device, int *staged)
{
    sp_pipeline *p = b->p;
    sp_mem_kind kind = SP_MEM_PAGEABLE;
    if ((uintptr_t)ptr > UINTPTR_MAX - bytes)
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_run_io: %s's end "
                                "overflows the address space", which);
    sp_status st = sp_memory_kind(p->ctx, ptr, bytes, &kind);
    if (st != SP_OK)
        return sp_pipeline_backend_fail(p, st, "asking what the memory is");
    if (kind >= SP_MEM_OTHER_DEVICE)
        return refuse_kind(p, which, kind);
    *device = kind == SP_MEM_DEVICE;
    *staged = kind == SP_MEM_PAGEABLE;
    return SP_OK;
}

sp_status sp_batch_io_ends(sp_batch *b, const void *in, void *out)
{
    b->in = in;
    b->out = out;
    b->stage_in = b->stage_out = 1; /* a source and a sink use the pinned slots */
    sp_status st = SP_OK;
    if (in)
        st = io_memory_end(b, in, b->plan.in_bytes, "io->in", &b->in_device, &b->stage_in);
    if (st == SP_OK && out)
        st = io_memory_end(b, out, b->plan.out_bytes, "io->out", &b->out_device,
                           &b->stage_out);
    return st;
}

sp_status sp_batch_fail(sp_batch *b, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_pipeline_vfail_work(b->p, status, fmt, ap);
    va_end(ap);
    if (b->status == SP_OK)
        b->status = status;
    return status;
}

sp_status sp_batch_fail_chunk(sp_batch *b, size_t i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* called on the staging threads, several at once: the record alone is written (under its
     * lock), never the batch, which the scheduler's thread owns */
    sp_status st = sp_pipeline_vfail_chunk(b->p, i, 0, SP_ERR_STAGE_FAILED, fmt, ap);
    va_end(ap);
    return st;
}

void sp_batch_resegment(sp_batch *b, size_t i, size_t chunk)
{
    b->seg_first = sp_chunk_first(b, i);
    b->seg_chunk = i - b->base;
    b->plan.chunk_records = chunk;
    size_t n = b->io ? b->io->n_records : b->plan.n_records;
    if (b->io && n == 0)
        return; /* a source of unknown length ends where it ends */
    size_t left = n > b->seg_first ? n - b->seg_first : 0;
    b->end = i + (left ? (left - 1) / chunk + 1 : 0);
    b->plan.chunks = b->end - b->base;
}
