/* XXH32 (xxh32.h), from the specification's description of the algorithm. */
#include <string.h>

#include "io/xxh32.h"

#define PRIME1 2654435761U
#define PRIME2 2246822519U
#define PRIME3 3266489917U
#define PRIME4 668265263U
#define PRIME5 374761393U

static uint32_t rotl(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t read32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t round_lane(uint32_t acc, uint32_t input)
{
    return rotl(acc + input * PRIME2, 13) * PRIME1;
}

static void stripe(sp_xxh32_state *h, const unsigned char *p)
{
    for (int i = 0; i < 4; i++)
        h->lane[i] = round_lane(h->lane[i], read32(p + 4 * i));
}

void sp_xxh32_begin(sp_xxh32_state *h, uint32_t seed)
{
    memset(h, 0, sizeof *h);
    h->seed = seed;
    h->lane[0] = seed + PRIME1 + PRIME2;
    h->lane[1] = seed + PRIME2;
    h->lane[2] = seed;
    h->lane[3] = seed - PRIME1;
}

void sp_xxh32_add(sp_xxh32_state *h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    h->total += bytes;
    if (h->n_held > 0) { /* complete the stripe begun by the last call first */
        size_t take = 16 - h->n_held < bytes ? 16 - h->n_held : bytes;
        memcpy(h->held + h->n_held, p, take);
        h->n_held += take;
        p += take;
        bytes -= take;
        if (h->n_held < 16)
            return;
        stripe(h, h->held);
        h->n_held = 0;
    }
    for (; bytes >= 16; p += 16, bytes -= 16)
        stripe(h, p);
    memcpy(h->held, p, bytes);
    h->n_held = bytes;
}

uint32_t sp_xxh32_end(const sp_xxh32_state *h)
{
    uint32_t acc = h->total >= 16 ? rotl(h->lane[0], 1) + rotl(h->lane[1], 7) +
                                        rotl(h->lane[2], 12) + rotl(h->lane[3], 18)
                                  : h->seed + PRIME5;
    acc += (uint32_t)h->total; /* the length modulo 2^32, as the specification says */
    const unsigned char *p = h->held;
    size_t left = h->n_held;
    for (; left >= 4; p += 4, left -= 4)
        acc = rotl(acc + read32(p) * PRIME3, 17) * PRIME4;
    for (; left > 0; p++, left--)
        acc = rotl(acc + *p * PRIME5, 11) * PRIME1;
    acc ^= acc >> 15;
    acc *= PRIME2;
    acc ^= acc >> 13;
    acc *= PRIME3;
    acc ^= acc >> 16;
    return acc;
}

uint32_t sp_xxh32(const void *data, size_t bytes, uint32_t seed)
{
    sp_xxh32_state h;
    sp_xxh32_begin(&h, seed);
    sp_xxh32_add(&h, data, bytes);
    return sp_xxh32_end(&h);
}
