/* The compressors (encode.h) in a build without liblz4 and libzstd: a compressed output is
 * refused at open, saying what the build lacks. */
#include <stdio.h>

#include "io/encode.h"

sp_status sp_encode_available(char *why, size_t why_size)
{
    snprintf(why, why_size, "this build has no liblz4 and libzstd (Debian: liblz4-dev "
             "libzstd-dev; configure again with SP_WITH_COMPRESSION)");
    return SP_ERR_UNSUPPORTED;
}

size_t sp_encode_bound(int format, size_t bytes)
{
    (void)format, (void)bytes;
    return 0;
}

sp_status sp_encode_piece(int format, const void *src, size_t bytes, void *dst, size_t room,
                          sp_encoded *out, char *why, size_t why_size)
{
    (void)format, (void)src, (void)bytes, (void)dst, (void)room, (void)out;
    snprintf(why, why_size, "no compressors in this build");
    return SP_ERR_UNSUPPORTED;
}
