/* A memcpy for staging: large copies whose destination is not read again soon (pinned
 * staging read by the copy engine, or a user's output). Non-temporal stores skip reading
 * each destination line before writing it, which saves a third of the memory traffic of a
 * plain copy when the host's memory bandwidth is the limit. */
#ifndef SP_STREAM_COPY_H
#define SP_STREAM_COPY_H

#include <stddef.h>

void sp_stream_copy(void *dst, const void *src, size_t bytes);

#endif
