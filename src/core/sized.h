/* Reading a caller's "sized" struct: one that begins with `size_t size` (streampipe.h, the
 * top: structs that grow). Header-only, so that the optional targets (fault, probe) read
 * theirs the same way without linking anything of the core for it. */
#ifndef SP_SIZED_H
#define SP_SIZED_H

#include <stddef.h>
#include <string.h>

#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_probe.h"

/* The bytes of `type` up to the end of `member`: how a layout's size is written down for
 * good (the 0.5 layouts), whatever is appended later. */
#define SP_SIZE_THROUGH(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* What size 0 stands for: the 0.5 layouts, through their last 0.5 field. Never change these
 * when a field is appended. */
#define SP_PIPELINE_CONFIG_SIZE_0_5 SP_SIZE_THROUGH(sp_pipeline_config, copy_by_kernel)
#define SP_STREAM_CONFIG_SIZE_0_5 SP_SIZE_THROUGH(sp_stream_config, input_released_events)
#define SP_IO_SIZE_0_5 SP_SIZE_THROUGH(sp_io, positional)
#define SP_FAULT_CONFIG_SIZE_0_5 SP_SIZE_THROUGH(sp_fault_config, fail_persist)
#define SP_PROBE_CONFIG_SIZE_0_5 SP_SIZE_THROUGH(sp_probe_config, overhead_ops)
/* sp_stats came in 0.7: its size 0 stands for that first layout. */
#define SP_STATS_SIZE_0_7 SP_SIZE_THROUGH(sp_stats, engines)

/* The caller's size: its size field, or `size_0_5` for 0 (the first sized layout). */
static inline size_t sp_sized_size(const void *src, size_t size_0_5)
{
    size_t size;
    memcpy(&size, src, sizeof size);
    return size ? size : size_0_5;
}

/* Copies the caller's struct at src into dst (the library's own, dst_size bytes) as Linux's
 * copy_struct_from_user does: what the caller's size does not cover is zero (the fields'
 * defaults); a larger struct (from a newer header) is taken when the bytes past dst_size are
 * all zero, since its newer fields then ask for nothing. dst's size becomes dst_size.
 * Refused: a size smaller than the size field (SP_ERR_INVALID_ARGUMENT), unknown fields set
 * (SP_ERR_UNSUPPORTED); *why then says so. */
static inline sp_status sp_sized_read(void *dst, size_t dst_size, const void *src,
                                      size_t size_0_5, const char **why)
{
    size_t size = sp_sized_size(src, size_0_5);
    *why = "";
    if (size < sizeof size) {
        *why = "its size field says it is smaller than the size field itself";
        return SP_ERR_INVALID_ARGUMENT;
    }
    memset(dst, 0, dst_size);
    memcpy(dst, src, size < dst_size ? size : dst_size);
    memcpy(dst, &dst_size, sizeof dst_size);
    for (size_t i = dst_size; i < size; i++)
        if (((const unsigned char *)src)[i] != 0) {
            *why = "it sets fields this library does not know (built against a newer "
                   "streampipe?)";
            return SP_ERR_UNSUPPORTED;
        }
    return SP_OK;
}

#endif /* SP_SIZED_H */
