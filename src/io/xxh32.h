/* XXH32, the 32-bit xxHash that LZ4 frames carry as header, block and content checksums,
 * written here from its specification (xxhash's doc/xxhash_spec.md) rather than taken from
 * libxxhash: it is forty lines, and the frame parsers' fuzz target then needs no library. */
#ifndef SP_IO_XXH32_H
#define SP_IO_XXH32_H

#include <stddef.h>
#include <stdint.h>

/* A hash computed over data given in pieces, in order (a frame's content, block by block). */
typedef struct sp_xxh32_state {
    uint32_t lane[4];       /* the four accumulators of 16-byte stripes */
    uint32_t seed;
    uint64_t total;         /* bytes hashed so far */
    unsigned char held[16]; /* the start of a stripe not yet complete */
    size_t n_held;
} sp_xxh32_state;

void sp_xxh32_begin(sp_xxh32_state *h, uint32_t seed);
void sp_xxh32_add(sp_xxh32_state *h, const void *data, size_t bytes);
uint32_t sp_xxh32_end(const sp_xxh32_state *h);
/* The hash of one buffer. */
uint32_t sp_xxh32(const void *data, size_t bytes, uint32_t seed);

#endif /* SP_IO_XXH32_H */
