/* The decompressors (codec.h) in a build without liblz4 and libzstd: every compressed input
 * is refused at open, saying what the build lacks. */
#include <stdio.h>

#include "io/codec.h"

sp_status sp_codec_create(sp_codec **out, char *why, size_t why_size)
{
    *out = NULL;
    snprintf(why, why_size, "this build has no liblz4 and libzstd (Debian: liblz4-dev "
             "libzstd-dev; configure again with SP_WITH_COMPRESSION)");
    return SP_ERR_UNSUPPORTED;
}

void sp_codec_free(sp_codec *c)
{
    (void)c;
}

sp_status sp_codec_decode(sp_codec *c, const sp_block *b, const void *src, void *dst,
                          size_t room, size_t *made, char *why, size_t why_size)
{
    (void)c, (void)b, (void)src, (void)dst, (void)room, (void)made;
    snprintf(why, why_size, "no decompressors in this build");
    return SP_ERR_UNSUPPORTED;
}

sp_status sp_codec_stream_restart(sp_codec *c, char *why, size_t why_size)
{
    (void)c;
    snprintf(why, why_size, "no decompressors in this build");
    return SP_ERR_UNSUPPORTED;
}

sp_status sp_codec_stream(sp_codec *c, const void *src, size_t in, size_t *used, void *dst,
                          size_t room, size_t *made, int *frame_end, char *why,
                          size_t why_size)
{
    (void)c, (void)src, (void)in, (void)used, (void)dst, (void)room, (void)made;
    (void)frame_end;
    snprintf(why, why_size, "no decompressors in this build");
    return SP_ERR_UNSUPPORTED;
}

sp_status sp_codec_measure(sp_codec *c, const void *src, size_t n, uint64_t *bytes, char *why,
                           size_t why_size)
{
    (void)c, (void)src, (void)n, (void)bytes;
    snprintf(why, why_size, "no decompressors in this build");
    return SP_ERR_UNSUPPORTED;
}
