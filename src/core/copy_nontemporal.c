/* sp_copy_nontemporal (streampipe.h): the staging pool's copies, and sources' and sinks'. */
#include <stdint.h>
#include <string.h>

#include "streampipe.h"

#if defined(__SSE2__) && !defined(SP_STAGING_PLAIN_MEMCPY)
#include <emmintrin.h>

/* Below this a plain memcpy is as fast and keeps the data in cache for whoever reads it. */
#define SP_NONTEMPORAL_MIN (64u * 1024u)

void sp_copy_nontemporal(void *dst, const void *src, size_t bytes)
{
    if (bytes < SP_NONTEMPORAL_MIN) {
        if (bytes > 0)
            memcpy(dst, src, bytes);
        return;
    }
    char *d = dst;
    const char *s = src;
    size_t head = (16u - ((uintptr_t)d & 15u)) & 15u; /* streaming stores need 16-byte aligned */
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    size_t lines = bytes / 64u;
    for (size_t i = 0; i < lines; i++, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
    memcpy(d, s, bytes % 64u);
    _mm_sfence(); /* streaming stores are weakly ordered: make them visible before returning */
}

#else

void sp_copy_nontemporal(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

#endif
